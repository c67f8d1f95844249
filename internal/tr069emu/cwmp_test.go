package tr069emu

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/acs"
	"cpesuite/internal/acs/acsclient"
	"cpesuite/internal/acs/acstest"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/logx"
	"cpesuite/internal/platform/metrics"
	"cpesuite/internal/speedtest"
	"cpesuite/internal/testutil"
)

// acsDevice waits until the ACS knows serial and returns it.
func acsDevice(t *testing.T, a *acstest.ACS, serial string) acs.Device {
	t.Helper()
	var dev acs.Device
	testutil.Eventually(t, 10*time.Second, "device "+serial+" in the ACS", func() bool {
		page, err := a.Client.Devices(context.Background(), acsclient.DeviceQuery{Serial: serial})
		if err != nil || len(page.Items) == 0 {
			return false
		}
		dev = page.Items[0]
		return true
	})
	return dev
}

// run enqueues tasks with a connection request and waits for the result.
func run(t *testing.T, a *acstest.ACS, dev int64, kind acs.TaskKind, args any) acs.Task {
	t.Helper()
	raw, _ := json.Marshal(args)
	resp, finished, err := a.Client.Enqueue(context.Background(), dev, acs.EnqueueRequest{
		Tasks: []acs.TaskSpec{{Kind: kind, Args: raw}}, ConnectionRequest: true, WaitSeconds: 20})
	if err != nil {
		t.Fatalf("enqueue %s: %v", kind, err)
	}
	if !finished {
		t.Fatalf("%s did not finish in time: %+v (connection request %+v)", kind, resp, resp.ConnectionRequest)
	}
	txn, err := a.Client.Transaction(context.Background(), resp.ID)
	if err != nil {
		t.Fatal(err)
	}
	return txn.Tasks[0]
}

func startSingle(t *testing.T, e *testEmu, serial, file string) {
	t.Helper()
	e.must(200, e.do("POST", "/apiV2/start", map[string]any{"serial": serial, "parameterFile": file, "enableHttpConnectionRequest": true}))
}

func TestDeviceAnswersACSTasks(t *testing.T) {
	for _, tc := range []struct{ file, root string }{{"tr181-base.xml", "Device."}, {"tr098-base.xml", "InternetGatewayDevice."}} {
		t.Run(tc.file, func(t *testing.T) {
			e, a := startWithACS(t)
			startSingle(t, e, "TASK1", tc.file)
			dev := acsDevice(t, a, "TASK1")
			if !strings.HasSuffix(dev.ConnReqURL, "/cr/TASK1") {
				t.Fatalf("ConnectionRequestURL %q", dev.ConnReqURL)
			}

			// GetParameterValues through a connection request.
			task := run(t, a, dev.ID, acs.KindGetParameterValues, acs.NamesArgs{Names: []string{tc.root + "DeviceInfo.SerialNumber", tc.root + "DeviceInfo.UpTime"}})
			if task.State != acs.TaskDone || !strings.Contains(string(task.Result), "TASK1") {
				t.Fatalf("GPV: %+v %s", task, task.Result)
			}
			// SetParameterValues, then read back through the API.
			name := tc.root + "ManagementServer.PeriodicInformInterval"
			task = run(t, a, dev.ID, acs.KindSetParameterValues, acs.SetValuesArgs{Values: []acs.SetValue{{Name: name, Value: "1234", Type: "xsd:unsignedInt"}}, ParameterKey: "k1"})
			if task.State != acs.TaskDone {
				t.Fatalf("SPV: %+v", task)
			}
			var pv map[string]string
			e.must(200, e.do("GET", "/apiV2/parameterValue?serial=TASK1&parameterName="+url.QueryEscape(name), nil)).json(t, &pv)
			if pv["value"] != "1234" {
				t.Fatalf("after SPV %v", pv)
			}
			// Faults: unknown name 9005, read-only 9008, bad value 9007.
			for _, bad := range []struct {
				v    acs.SetValue
				code string
			}{
				{acs.SetValue{Name: tc.root + "NoSuch.Param", Value: "1"}, "9005"},
				{acs.SetValue{Name: tc.root + "DeviceInfo.Manufacturer", Value: "x"}, "9008"},
				{acs.SetValue{Name: name, Value: "minus", Type: "xsd:unsignedInt"}, "9007"},
			} {
				task = run(t, a, dev.ID, acs.KindSetParameterValues, acs.SetValuesArgs{Values: []acs.SetValue{bad.v}})
				if task.State != acs.TaskFault || task.Fault == nil || !strings.Contains(string(mustJSON(t, task.Fault)), bad.code) {
					t.Fatalf("SPV %s: want fault %s, got %+v %s", bad.v.Name, bad.code, task, mustJSON(t, task.Fault))
				}
			}
			task = run(t, a, dev.ID, acs.KindGetParameterValues, acs.NamesArgs{Names: []string{tc.root + "Nope."}})
			if task.State != acs.TaskFault {
				t.Fatalf("GPV of an unknown path: %+v", task)
			}
			// GetParameterNames honours NextLevel.
			task = run(t, a, dev.ID, acs.KindGetParameterNames, acs.NamesPathArgs{Path: tc.root + "DeviceInfo.", NextLevel: true})
			if task.State != acs.TaskDone || !strings.Contains(string(task.Result), "DeviceInfo.Manufacturer") {
				t.Fatalf("GPN: %+v %s", task, task.Result)
			}
			// AddObject returns an instance number; DeleteObject removes it.
			hosts := tc.root + "Hosts.Host."
			if tc.root == "InternetGatewayDevice." {
				hosts = tc.root + "LANDevice.1.Hosts.Host."
			}
			task = run(t, a, dev.ID, acs.KindAddObject, acs.ObjectArgs{ObjectName: hosts})
			if task.State != acs.TaskDone || !strings.Contains(string(task.Result), "3") {
				t.Fatalf("AddObject: %+v %s", task, task.Result)
			}
			task = run(t, a, dev.ID, acs.KindDeleteObject, acs.ObjectArgs{ObjectName: hosts + "3."})
			if task.State != acs.TaskDone {
				t.Fatalf("DeleteObject: %+v", task)
			}
			// Reboot: the device comes back with 1 BOOT and M Reboot.
			task = run(t, a, dev.ID, acs.KindReboot, acs.CommandKeyArgs{CommandKey: "rb1"})
			if task.State != acs.TaskDone {
				t.Fatalf("Reboot: %+v", task)
			}
			testutil.Eventually(t, 10*time.Second, "1 BOOT after the reboot", func() bool {
				d, err := a.Client.Device(context.Background(), dev.ID)
				return err == nil && strings.Contains(d.LastEvents, "M Reboot")
			})
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// speedtestServer is the real speedtest target on an httptest server.
func speedtestServer(t *testing.T) string {
	t.Helper()
	st, err := speedtest.New(speedtest.Config{DefaultBytes: 1 << 20, MaxBytes: 1 << 30}, logx.Discard(), metrics.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	mux := httpx.NewMux()
	st.Routes(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestDiagnosticsAgainstSpeedtest(t *testing.T) {
	st := speedtestServer(t)
	for _, file := range []string{"tr181-base.xml", "tr098-base.xml"} {
		t.Run(file, func(t *testing.T) {
			e, a := startWithACS(t)
			serial := "DIAG" + strings.ToUpper(file[:5])
			startSingle(t, e, serial, file)
			dev := acsDevice(t, a, serial)
			for _, tc := range []struct {
				kind  acs.TaskKind
				args  acs.DiagnosticsArgs
				state string
			}{
				{acs.KindDownloadDiagnostics, acs.DiagnosticsArgs{URL: st + "/download?size=200000"}, "Completed"},
				{acs.KindUploadDiagnostics, acs.DiagnosticsArgs{URL: st + "/upload", TestFileLength: 100000}, "Completed"},
				{acs.KindIPPing, acs.DiagnosticsArgs{Host: "127.0.0.1", NumberOfRepetitions: 2}, "Complete"},
			} {
				raw, _ := json.Marshal(tc.args)
				resp, _, err := a.Client.Enqueue(context.Background(), dev.ID, acs.EnqueueRequest{
					Tasks: []acs.TaskSpec{{Kind: tc.kind, Args: raw}}, ConnectionRequest: true})
				if err != nil {
					t.Fatal(err)
				}
				var task acs.Task
				testutil.Eventually(t, 30*time.Second, string(tc.kind)+" result", func() bool {
					txn, err := a.Client.Transaction(context.Background(), resp.ID)
					if err != nil || len(txn.Tasks) == 0 {
						return false
					}
					task = txn.Tasks[0]
					return !task.Open()
				})
				if task.State != acs.TaskDone || !strings.Contains(string(task.Result), `"diagnosticsState":"`+tc.state+`"`) {
					t.Fatalf("%s: %+v %s", tc.kind, task, task.Result)
				}
				if tc.kind == acs.KindDownloadDiagnostics && !regexp.MustCompile(`"testBytesReceived":2[0-9]{5}\b`).Match(task.Result) {
					t.Fatalf("download bytes: %s", task.Result)
				}
			}
		})
	}
}

func TestBatchRegistersDevicesAndStops(t *testing.T) {
	e, a := startWithACS(t)
	u, _ := url.Parse(a.CWMPURL)
	port, _ := strconv.Atoi(u.Port())
	p := e.Properties()
	p.Host, p.Port, p.URL, p.Groups, p.Concurrent, p.RegistrationGroup, p.Delay = u.Hostname(), port, "/", 2, 3, 2, 1
	e.must(204, e.do("POST", "/api/properties", p))
	e.must(204, e.do("POST", "/api/periodic", map[string]int{"periodic": 1}))
	e.must(204, e.do("POST", "/api/start", nil))
	if r := e.do("GET", "/api/status", nil); string(r.body) != "Running" {
		t.Fatalf("status %q", r.body)
	}
	e.must(409, e.do("POST", "/api/start", nil))
	testutil.Eventually(t, 15*time.Second, "6 devices in the ACS", func() bool {
		page, err := a.Client.Devices(context.Background(), acsclient.DeviceQuery{SerialPrefix: "EMU"})
		return err == nil && page.Total == 6
	})
	var counts DeviceCounts
	e.must(200, e.do("GET", "/api/deviceCounts", nil)).json(t, &counts)
	if counts.Total != 6 {
		t.Fatalf("counts %+v", counts)
	}
	// Periodic informs arrive (interval 1 s).
	dev := acsDevice(t, a, "EMU0000001")
	testutil.Eventually(t, 10*time.Second, "a periodic Inform", func() bool {
		d, err := a.Client.Device(context.Background(), dev.ID)
		return err == nil && strings.Contains(d.LastEvents, "2 PERIODIC")
	})
	// invokeSerial starts a 6 CONNECTION REQUEST session.
	// With 1 s periodic informs the device may be in a session: that is a
	// 409, and the next try gets through.
	testutil.Eventually(t, 10*time.Second, "invokeSerial accepted", func() bool {
		r := e.do("POST", "/api/invokeSerial", map[string]string{"serial": "EMU0000002"})
		if r.status == 409 && strings.Contains(r.errorText(t), "in a CWMP session") {
			return false
		}
		e.must(204, r)
		return true
	})
	dev2 := acsDevice(t, a, "EMU0000002")
	testutil.Eventually(t, 10*time.Second, "6 CONNECTION REQUEST", func() bool {
		d, err := a.Client.Device(context.Background(), dev2.ID)
		return err == nil && strings.Contains(d.LastEvents, "6 CONNECTION REQUEST")
	})
	e.must(204, e.do("POST", "/api/stop", map[string]bool{"clearCaches": true}))
	if r := e.do("GET", "/api/status", nil); string(r.body) != "Stopped" {
		t.Fatalf("status %q", r.body)
	}
	e.must(200, e.do("GET", "/api/deviceCounts", nil)).json(t, &counts)
	if counts.Total != 0 {
		t.Fatalf("after stop %+v", counts)
	}
	e.must(204, e.do("POST", "/api/stop", nil)) // stopping twice is fine
}

// TestHTTPSACS: devices trust an https ACS through the CA file, or with the
// insecure flag, and refuse it with neither.
func TestHTTPSACS(t *testing.T) {
	a := acstest.Start(t, nil)
	tlsSrv := httptest.NewTLSServer(a.ACS)
	t.Cleanup(tlsSrv.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw})
	if err := os.WriteFile(caFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		ca       string
		insecure bool
		ok       bool
	}{{"ca file", caFile, false, true}, {"insecure", "", true, true}, {"untrusted", "", false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, tlsSrv.URL+"/")
			cfg.CAFile, cfg.Insecure = tc.ca, tc.insecure
			e := startEmu(t, cfg)
			serial := "TLS" + strings.ToUpper(strings.ReplaceAll(tc.name, " ", ""))
			startSingle(t, e, serial, "tr181-base.xml")
			if tc.ok {
				acsDevice(t, a, serial)
				return
			}
			d, _ := e.device(serial)
			testutil.Eventually(t, 10*time.Second, "a failed TLS session", func() bool { return e.env.Failures.Load() > 0 && !d.InSession() })
			page, err := a.Client.Devices(context.Background(), acsclient.DeviceQuery{Serial: serial})
			if err != nil || page.Total != 0 {
				t.Fatalf("untrusted ACS got the device: %v %+v", err, page)
			}
		})
	}
	if _, err := New(Config{DataDir: t.TempDir(), CAFile: filepath.Join(t.TempDir(), "missing.pem")}, logx.Discard(), nil); err == nil {
		t.Fatal("a missing CA file was accepted")
	}
}
