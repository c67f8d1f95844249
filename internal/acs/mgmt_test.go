package acs

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/cwmp"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
	"cpesuite/internal/testutil"
)

// drive runs the rest of a session whose Inform was accepted: reply gives
// the CPE's answer to each RPC, and nil abandons the session there.
func drive(t *testing.T, c *fakeCPE, reply func(cwmp.Message) cwmp.Message) {
	t.Helper()
	var next *cwmp.Envelope
	for i := 0; i < 20; i++ {
		resp, body := c.post(next)
		if resp.StatusCode == http.StatusNoContent {
			return
		}
		env, err := cwmp.Decode(body)
		if err != nil {
			t.Fatalf("%d %s: %v", resp.StatusCode, body, err)
		}
		m := reply(env.Body)
		if m == nil {
			return
		}
		next = env.Reply(m)
	}
	t.Fatal("session did not end")
}

func mustInform(t *testing.T, c *fakeCPE, events ...string) {
	t.Helper()
	if resp, body := c.post(c.inform(events...)); resp.StatusCode != http.StatusOK {
		t.Fatalf("Inform: %d %s", resp.StatusCode, body)
	}
}

// TestWaitDeadlineShowsCurrentTask: when waitSeconds runs out the 202 used
// to show the task as enqueued (pending, 0 attempts) although the CPE had
// it already; the transaction is now read again at the deadline.
func TestWaitDeadlineShowsCurrentTask(t *testing.T) {
	a := startACS(t, sqltest.Open(t, sqlstore.SQLite), testConfig())
	fire := make(chan time.Time)
	a.waitDeadline = func(time.Duration) (<-chan time.Time, func()) { return fire, func() {} }
	cpe := newCPE(t, a.srv.URL, "WAIT1", DataModelTR098)
	cpe.session(cwmp.EventBootstrap)
	dev := deviceID(t, a, cpe)

	type answer struct {
		status int
		body   []byte
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		body := `{"tasks":[{"kind":"GetParameterValues","args":{"names":["InternetGatewayDevice.DeviceInfo.UpTime"]}}],"waitSeconds":60}`
		resp, err := http.Post(fmt.Sprintf("%s/acs/devices/%d/tasks", a.api.URL, dev), "application/json", strings.NewReader(body))
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answered <- answer{status: resp.StatusCode, body: b}
	}()
	testutil.Eventually(t, 30*time.Second, "the task to be enqueued", func() bool {
		open, err := a.store.OpenTasks(context.Background(), dev)
		return err == nil && len(open) == 1
	})
	// The CPE takes the GPV and is still working on it at the deadline.
	mustInform(t, cpe, cwmp.EventConnectionRequest)
	drive(t, cpe, func(cwmp.Message) cwmp.Message { return nil })
	close(fire)

	got := <-answered
	if got.err != nil {
		t.Fatal(got.err)
	}
	var resp EnqueueResponse
	if err := json.Unmarshal(got.body, &resp); err != nil {
		t.Fatalf("%v: %s", err, got.body)
	}
	if got.status != http.StatusAccepted || resp.State != TaskPending || len(resp.Tasks) != 1 {
		t.Fatalf("status %d: %s", got.status, got.body)
	}
	if task := resp.Tasks[0]; task.State != TaskRunning || task.Attempts != 1 || task.StartedAt == nil {
		t.Fatalf("task at the deadline: state %s, attempts %d, started %v; want running, 1, set", task.State, task.Attempts, task.StartedAt)
	}
}

// TestPeriodicIntervalFromSessionResults: periodicInformInterval used to be
// taken from Informs only; a GPV or SPV result of PeriodicInformInterval
// now updates it too.
func TestPeriodicIntervalFromSessionResults(t *testing.T) {
	const name = "InternetGatewayDevice.ManagementServer.PeriodicInformInterval"
	tests := []struct {
		name string
		kind TaskKind
		args string
		cpe  uint32 // the CPE's value after its Inform
		want int
	}{
		{"GPV of the object", KindGetParameterValues, `{"names":["InternetGatewayDevice.ManagementServer."]}`, 600, 600},
		{"GPV of the parameter", KindGetParameterValues, `{"names":["` + name + `"]}`, 1200, 1200},
		{"SPV", KindSetParameterValues, `{"values":[{"name":"` + name + `","value":"900","type":"xsd:unsignedInt"}]}`, 300, 900},
		{"GPV of something else", KindGetParameterValues, `{"names":["InternetGatewayDevice.DeviceInfo.UpTime"]}`, 700, 300},
	}
	forACS(t, func(t *testing.T, db *sqlstore.DB) {
		a := startACS(t, db, testConfig())
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				cpe := newCPE(t, a.srv.URL, fmt.Sprintf("PII%d", i), DataModelTR098)
				cpe.session(cwmp.EventBootstrap) // informs 300
				dev := deviceID(t, a, cpe)
				txn := enqueue(t, a, dev, tt.kind, tt.args)
				mustInform(t, cpe, cwmp.EventConnectionRequest)
				cpe.mu.Lock()
				cpe.params[name] = cwmp.UnsignedInt(tt.cpe)
				cpe.mu.Unlock()
				drive(t, cpe, cpe.answer)
				if s := txnState(t, a, txn.ID); s.State != TaskDone {
					t.Fatalf("task %+v", s.Tasks[0])
				}
				d, err := a.store.Device(context.Background(), dev)
				if err != nil {
					t.Fatal(err)
				}
				if d.PeriodicInterval != tt.want {
					t.Fatalf("periodicInformInterval %d, want %d", d.PeriodicInterval, tt.want)
				}
			})
		}
	})
}

// TestACSSideFaultCodes: faults the ACS decides used to carry code 0, which
// is no CWMP code; each reason now has its documented ACS fault code.
func TestACSSideFaultCodes(t *testing.T) {
	gpv := `{"names":["InternetGatewayDevice.DeviceInfo.UpTime"]}`
	tests := []struct {
		name string
		// run makes task (enqueued by the test for kind/args) end in a fault.
		kind TaskKind
		args string
		run  func(t *testing.T, a *testACS, cpe *fakeCPE, task int64)
		want int
	}{
		{"cancelled by the operator", KindReboot, `{}`, func(t *testing.T, a *testACS, _ *fakeCPE, task int64) {
			req, _ := http.NewRequest(http.MethodDelete, fmt.Sprintf("%s/acs/tasks/%d", a.api.URL, task), nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("cancel: %v %v", err, resp)
			}
			resp.Body.Close()
		}, FaultCodeRequestDenied},
		{"CPE answered another method", KindGetParameterValues, gpv, func(t *testing.T, _ *testACS, cpe *fakeCPE, _ int64) {
			mustInform(t, cpe, cwmp.EventPeriodic)
			drive(t, cpe, func(cwmp.Message) cwmp.Message { return &cwmp.RebootResponse{} })
		}, FaultCodeRequestDenied},
		{"stored arguments unreadable", KindGetParameterValues, `{"names":5}`, func(t *testing.T, _ *testACS, cpe *fakeCPE, _ int64) {
			mustInform(t, cpe, cwmp.EventPeriodic)
			drive(t, cpe, cpe.answer)
		}, FaultCodeInternal},
		{"SOAP fault without a CWMP code", KindGetParameterValues, gpv, func(t *testing.T, _ *testACS, cpe *fakeCPE, _ int64) {
			mustInform(t, cpe, cwmp.EventPeriodic)
			drive(t, cpe, func(cwmp.Message) cwmp.Message { return &cwmp.Fault{SOAPFaultCode: "Server", FaultString: "busy"} })
		}, FaultCodeInvalidArguments},
		{"CPE answer over TR-069 limits", KindGetParameterValues, gpv, func(t *testing.T, _ *testACS, cpe *fakeCPE, _ int64) {
			mustInform(t, cpe, cwmp.EventPeriodic)
			drive(t, cpe, func(cwmp.Message) cwmp.Message {
				return &cwmp.GetParameterValuesResponse{ParameterList: []cwmp.ParameterValueStruct{{Name: strings.Repeat("N", 300), Value: cwmp.String("v")}}}
			})
		}, FaultCodeInvalidArguments},
		{"no answer after the maximum attempts", KindGetParameterValues, gpv, func(t *testing.T, _ *testACS, cpe *fakeCPE, _ int64) {
			for i := 0; i < 3; i++ { // MaxAttempts sessions that each end before the answer
				mustInform(t, cpe, cwmp.EventPeriodic)
				drive(t, cpe, func(cwmp.Message) cwmp.Message { return nil })
			}
			cpe.session(cwmp.EventPeriodic)
		}, FaultCodeRetry},
		{"diagnostic not reported within the time-out", KindIPPing, `{"host":"127.0.0.1"}`, func(t *testing.T, a *testACS, cpe *fakeCPE, _ int64) {
			cpe.session(cwmp.EventPeriodic) // SPV accepted: the task waits for 8 DIAGNOSTICS COMPLETE
			if _, err := a.store.ExpireWaiting(context.Background(), time.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}, FaultCodeRetry},
	}
	forACS(t, func(t *testing.T, db *sqlstore.DB) {
		a := startACS(t, db, testConfig())
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				cpe := newCPE(t, a.srv.URL, fmt.Sprintf("FC%d", i), DataModelTR098)
				cpe.session(cwmp.EventBootstrap)
				dev := deviceID(t, a, cpe)
				txn, err := a.store.Enqueue(context.Background(), "", []NewTask{{DeviceID: dev, Kind: tt.kind, Args: json.RawMessage(tt.args)}})
				if err != nil {
					t.Fatal(err)
				}
				tt.run(t, a, cpe, txn.Tasks[0].ID)
				task, err := a.store.Task(context.Background(), txn.Tasks[0].ID)
				if err != nil {
					t.Fatal(err)
				}
				if task.State != TaskFault || task.Fault == nil || task.Fault.Code != tt.want {
					t.Fatalf("task %s %+v, want fault code %d", task.State, task.Fault, tt.want)
				}
			})
		}
	})
}
