// Package e2e drives real chains across targets started in one process
// with `cpesuite up`, on free ports and embedded backends.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/acs"
	"cpesuite/internal/acs/acsclient"
	"cpesuite/internal/app"
	"cpesuite/internal/testutil"
)

// platform is `cpesuite up` running in this process.
type platform struct {
	addrs map[string]string
	logs  *testutil.SyncBuffer
}

// up starts the given targets and waits until their ports answer.
func up(t *testing.T, targets string, extra map[string]string) *platform {
	t.Helper()
	p := &platform{addrs: map[string]string{
		"CPESUITE_ACS_ADDR": testutil.FreeAddr(t), "CPESUITE_ACS_API_ADDR": testutil.FreeAddr(t),
		"CPESUITE_SPEEDTEST_ADDR": testutil.FreeAddr(t), "CPESUITE_TR069_EMULATOR_ADDR": testutil.FreeAddr(t),
		"CPESUITE_FCC_ADDR": testutil.FreeAddr(t), "CPESUITE_CONFIGS_ADDR": testutil.FreeAddr(t), "CPESUITE_IOT_EMULATOR_ADDR": testutil.FreeAddr(t), "CPESUITE_IOT_EMULATOR_BROKER_ADDR": testutil.FreeAddr(t),
		"CPESUITE_WORKER_ADDR": testutil.FreeAddr(t), "CPESUITE_GATEWAY_ADDR": testutil.FreeAddr(t),
		"CPESUITE_MCP_EMULATOR_ADDR": testutil.FreeAddr(t), "CPESUITE_MCP_BROWSER_ADDR": testutil.FreeAddr(t),
	}, logs: &testutil.SyncBuffer{}}
	env := map[string]string{"CPESUITE_DATA_DIR": t.TempDir(), "CPESUITE_LOG_FORMAT": "json", "CPESUITE_LOG_LEVEL": "warn",
		"CPESUITE_ACS_SPEEDTEST_URL": "http://" + p.addrs["CPESUITE_SPEEDTEST_ADDR"],
		// Devices started without an ACS URL inform this platform's ACS.
		"DEFAULT_ACS_URL": "http://" + p.addrs["CPESUITE_ACS_ADDR"] + "/"}
	for k, v := range p.addrs {
		env[k] = v
	}
	for k, v := range extra {
		env[k] = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- app.CLI(ctx, []string{"up", "--only", targets}, io.Discard, p.logs, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("cpesuite up exited %d:\n%s", code, p.logs.String())
			}
		case <-time.After(platformDeadline):
			t.Errorf("cpesuite up did not stop within %s", platformDeadline)
		}
	})
	testutil.Eventually(t, platformDeadline, "the emulator API", func() bool {
		select {
		case code := <-done:
			t.Fatalf("cpesuite up exited %d:\n%s", code, p.logs.String())
		default:
		}
		resp, err := http.Get(p.url("CPESUITE_TR069_EMULATOR_ADDR", "/api/status"))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	return p
}

func (p *platform) url(key, path string) string { return "http://" + p.addrs[key] + path }

func post(t *testing.T, url string, body any) {
	t.Helper()
	data, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: %d %s", url, resp.StatusCode, b)
	}
}

// TestEmulatorBatchAgainstACS is the acceptance chain: the load test
// started through /api/start registers its devices in the ACS, and a device
// answers GPV, SPV, reboot and diagnostics tasks queued in the ACS.
func TestEmulatorBatchAgainstACS(t *testing.T) {
	p := up(t, "acs,speedtest,tr069-emulator", nil)
	emu := p.url("CPESUITE_TR069_EMULATOR_ADDR", "")
	host, port, _ := net.SplitHostPort(p.addrs["CPESUITE_ACS_ADDR"])
	portN, _ := strconv.Atoi(port)

	var props map[string]any
	resp, err := http.Get(emu + "/api/properties")
	if err != nil {
		t.Fatal(err)
	}
	_ = json.NewDecoder(resp.Body).Decode(&props)
	resp.Body.Close()
	props["host"], props["port"], props["url"] = host, portN, "/"
	props["groups"], props["concurrent"], props["registrationGroup"], props["delay"] = 2, 5, 5, 10
	for k := range props {
		if strings.HasPrefix(k, "taskDelay") {
			props[k] = 0
		}
	}
	post(t, emu+"/api/properties", props)
	post(t, emu+"/api/start", nil)

	client := acsclient.New(p.url("CPESUITE_ACS_API_ADDR", ""), nil)
	ctx := context.Background()
	testutil.Eventually(t, platformDeadline, "10 emulated devices in the ACS", func() bool {
		page, err := client.Devices(ctx, acsclient.DeviceQuery{SerialPrefix: "EMU"})
		return err == nil && page.Total == 10
	})
	page, err := client.Devices(ctx, acsclient.DeviceQuery{Serial: "EMU0000003"})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("device EMU0000003: %v %+v", err, page)
	}
	dev := page.Items[0]

	do := func(kind acs.TaskKind, args any) acs.Task {
		t.Helper()
		raw, _ := json.Marshal(args)
		res, _, err := client.Enqueue(ctx, dev.ID, acs.EnqueueRequest{Tasks: []acs.TaskSpec{{Kind: kind, Args: raw}}, ConnectionRequest: true})
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		var task acs.Task
		testutil.Eventually(t, platformDeadline, string(kind)+" to finish", func() bool {
			txn, err := client.Transaction(ctx, res.ID)
			if err != nil || len(txn.Tasks) == 0 {
				return false
			}
			task = txn.Tasks[0]
			return !task.Open()
		})
		if task.State != acs.TaskDone {
			t.Fatalf("%s: %+v %s", kind, task, task.Result)
		}
		return task
	}
	task := do(acs.KindGetParameterValues, acs.NamesArgs{Names: []string{"Device.DeviceInfo.SerialNumber"}})
	if !strings.Contains(string(task.Result), "EMU0000003") {
		t.Fatalf("GPV result %s", task.Result)
	}
	do(acs.KindSetParameterValues, acs.SetValuesArgs{Values: []acs.SetValue{{Name: "Device.ManagementServer.PeriodicInformInterval", Value: "600", Type: "xsd:unsignedInt"}}})
	task = do(acs.KindGetParameterValues, acs.NamesArgs{Names: []string{"Device.ManagementServer.PeriodicInformInterval"}})
	if !strings.Contains(string(task.Result), "600") {
		t.Fatalf("SPV not visible: %s", task.Result)
	}
	do(acs.KindReboot, acs.CommandKeyArgs{CommandKey: "e2e"})
	testutil.Eventually(t, platformDeadline, "M Reboot inform", func() bool {
		d, err := client.Device(ctx, dev.ID)
		return err == nil && strings.Contains(d.LastEvents, "M Reboot")
	})
	task = do(acs.KindDownloadDiagnostics, acs.DiagnosticsArgs{URL: p.url("CPESUITE_SPEEDTEST_ADDR", "/download?size=500000")})
	if !strings.Contains(string(task.Result), `"diagnosticsState":"Completed"`) || !regexp.MustCompile(`"testBytesReceived":5[0-9]{5}\b`).Match(task.Result) {
		t.Fatalf("download diagnostics %s", task.Result)
	}

	post(t, emu+"/api/stop", nil)
	resp, err = http.Get(emu + "/api/status")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "Stopped" {
		t.Fatalf("status after stop %q", b)
	}
}
