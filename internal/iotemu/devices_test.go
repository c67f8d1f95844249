package iotemu

import (
	"encoding/json"
	"strings"
	"testing"

	"cpesuite/internal/testutil"
)

func (e *testEmu) entries() []DeviceEntry {
	e.t.Helper()
	var ds []DeviceEntry
	e.do("GET", "/api/devices", nil).must(e.t, 200).json(e.t, &ds)
	return ds
}

func (e *testEmu) detail(id string) DeviceDetail {
	e.t.Helper()
	var d DeviceDetail
	e.do("GET", "/api/devices/"+id, nil).must(e.t, 200).json(e.t, &d)
	return d
}

func (e *testEmu) waitRunning(id string) {
	e.t.Helper()
	testutil.Eventually(e.t, testutil.MinDeadline, id+" running", func() bool { return e.detail(id).Running })
}

// TestDevicesListAndDetail: list entries, detail parameters with type and
// writable, unknown device 404, CoAP connection always UNKNOWN.
func TestDevicesListAndDetail(t *testing.T) {
	e := startEmu(t, testConfig(t))
	e.useCoAP(3)
	e.do("POST", "/api/init", nil).must(t, 204)
	ds := e.entries()
	if len(ds) != 3 || ds[0].ClientID != "coap-1" || ds[2].SerialNumber != "SN-3" || ds[0].Protocol != "COAP" {
		t.Fatalf("devices %+v", ds)
	}
	var raw []map[string]any
	e.do("GET", "/api/devices", nil).must(t, 200).json(t, &raw)
	for _, k := range []string{"clientId", "serialNumber", "protocol", "status", "connection", "clientPort", "manufacturer", "modelName"} {
		if _, ok := raw[0][k]; !ok {
			t.Fatalf("device entry lacks %s: %v", k, raw[0])
		}
	}
	e.do("POST", "/api/start", nil).must(t, 204)
	for _, d := range ds {
		e.waitRunning(d.ClientID)
	}
	d := e.detail("coap-2")
	if d.Connection != "UNKNOWN" || len(d.Parameters) == 0 {
		t.Fatalf("detail %+v", d)
	}
	var ps []map[string]any
	e.do("GET", "/api/devices/coap-2/parameters", nil).must(t, 200).json(t, &ps)
	for _, k := range []string{"name", "value", "type", "writable"} {
		if _, ok := ps[0][k]; !ok {
			t.Fatalf("parameter lacks %s: %v", k, ps[0])
		}
	}
	e.do("GET", "/api/devices/nope", nil).errBody(t, 404, codeDeviceNotFound)
	e.do("GET", "/api/devices/nope/parameters", nil).errBody(t, 404, codeDeviceNotFound)
}

// TestParameterWrite: 204, 404 device/parameter, 409 NOT_STARTED, 400 bad
// value, 409 PARAMETER_NOT_UPDATABLE when the rule froze it.
func TestParameterWrite(t *testing.T) {
	e := startEmu(t, testConfig(t))
	e.useCoAP(1)
	e.do("POST", "/api/init", nil).must(t, 204)
	e.do("PUT", "/api/devices/coap/parameters/Temperature", map[string]string{"value": "22"}).errBody(t, 409, codeNotStarted)
	e.do("POST", "/api/start", nil).must(t, 204)
	e.do("PUT", "/api/devices/coap/parameters/Temperature", map[string]string{"value": "22.5"}).must(t, 204)
	if v := e.devices["coap"].params.Value("Temperature"); v != "22.5" {
		t.Fatalf("Temperature %q", v)
	}
	e.do("PUT", "/api/devices/nope/parameters/Temperature", map[string]string{"value": "1"}).errBody(t, 404, codeDeviceNotFound)
	e.do("PUT", "/api/devices/coap/parameters/Nope", map[string]string{"value": "1"}).errBody(t, 404, codeParameterNotFound)
	e.do("PUT", "/api/devices/coap/parameters/Temperature", map[string]string{"value": "warm"}).errBody(t, 400, codeBadRequest)
	e.do("PUT", "/api/devices/coap/parameters/Temperature", `{"value": null}`).errBody(t, 400, codeBadRequest)
	e.do("PUT", "/api/devices/coap/parameters/Temperature", `{"value":`).errBody(t, 400, codeBadRequest)
	// A rule freezes Humidity whenever Temperature changes.
	e.do("POST", "/api/rule", map[string]string{"code": `if (param.name === "Temperature") { ctx.freeze("Humidity"); }`}).must(t, 200)
	e.do("PUT", "/api/devices/coap/parameters/Temperature", map[string]string{"value": "23"}).must(t, 204)
	before := e.logs.since(0).LastSeq
	e.do("PUT", "/api/devices/coap/parameters/Humidity", map[string]string{"value": "50"}).errBody(t, 409, codeParameterNotWritable)
	if v := e.devices["coap"].params.Value("Humidity"); v == "50" {
		t.Fatal("frozen parameter changed")
	}
	for _, l := range e.logs.since(before).Entries {
		if l.Direction == "OUT" {
			t.Fatalf("something was sent for a frozen parameter: %+v", l)
		}
	}
}

// TestHeartbeat: all and one; 404 unknown; 409 not started.
func TestHeartbeat(t *testing.T) {
	e := startEmu(t, testConfig(t))
	e.useCoAP(2)
	e.do("POST", "/api/init", nil).must(t, 204)
	e.do("POST", "/api/devices/coap-1/heartbeat", nil).errBody(t, 409, codeNotStarted)
	e.do("POST", "/api/start", nil).must(t, 204)
	e.waitRunning("coap-2")
	var hb HeartbeatResult
	e.do("POST", "/api/devices/heartbeat", nil).must(t, 200).json(t, &hb)
	if hb.Count != 2 {
		t.Fatalf("heartbeat count %d", hb.Count)
	}
	e.do("POST", "/api/devices/coap-1/heartbeat", nil).must(t, 204)
	e.do("POST", "/api/devices/nope/heartbeat", nil).errBody(t, 404, codeDeviceNotFound)
}

// TestStartNewSurvivesStop: startNew needs no init, stores the template,
// and keeps running through a session stop.
func TestStartNewSurvivesStop(t *testing.T) {
	e := startEmu(t, testConfig(t))
	e.useCoAP(1)
	var d DeviceEntry
	e.do("POST", "/api/devices/startNew", map[string]any{"clientId": "solo", "pskKey": "*", "protocolOptions": map[string]string{"contentFormat": "json"}}).must(t, 201).json(t, &d)
	if d.ClientID != "solo" || !d.Running || !d.Standalone || d.SerialNumber != "solo" {
		t.Fatalf("startNew answered %+v", d)
	}
	var st []Template
	e.do("GET", "/api/storedDevices", nil).must(t, 200).json(t, &st)
	if len(st) != 1 || st[0].ClientID != "solo" || st[0].PSKKey != "" {
		t.Fatalf("stored %+v (a posted * must be dropped)", st)
	}
	e.do("POST", "/api/init", nil).must(t, 204)
	e.do("POST", "/api/start", nil).must(t, 204)
	e.waitRunning("coap")
	e.do("POST", "/api/stop", nil).must(t, 204)
	if !e.detail("solo").Running {
		t.Fatal("standalone device stopped with the session")
	}
	if e.detail("coap").Running {
		t.Fatal("session device still running after stop")
	}
	// Duplicates and bad templates.
	e.do("POST", "/api/devices/startNew", map[string]any{"clientId": "solo"}).errBody(t, 400, codeBadRequest)
	e.do("POST", "/api/devices/startNew", map[string]any{"serialNumber": "x"}).errBody(t, 400, codeBadRequest)
	e.do("POST", "/api/devices/startNew", map[string]any{"clientId": "x", "bogus": 1}).errBody(t, 400, codeBadRequest)
	e.do("POST", "/api/devices/startNew", map[string]any{"clientId": "y", "protocol": "USP"}).errBody(t, 400, codeProtocolNotFound)
	e.do("POST", "/api/devices/startNew", map[string]any{"clientId": "z", "protocolOptions": map[string]string{"nope": "1"}}).errBody(t, 400, codeBadRequest)
}

// TestStoredDevices: list masked (four template secrets and secret
// options), start, 404, delete.
func TestStoredDevices(t *testing.T) {
	e := startEmu(t, testConfig(t))
	e.do("POST", "/api/protocol/MQTT", nil).must(t, 204)
	e.do("POST", "/api/config", map[string]any{"serverPort": 1, "serverIp": "127.0.0.1"}).must(t, 200)
	tmpl := map[string]any{"clientId": "t1", "protocol": "COAP", "pskKey": "0a0b", "authKeyStorePass": "a", "trustStorePass": "b", "aliasPass": "c"}
	e.do("POST", "/api/devices/startNew", tmpl).must(t, 201)
	e.do("POST", "/api/devices/startNew", map[string]any{"clientId": "m1", "protocolOptions": map[string]string{"password": "pw", "username": "u"}}).must(t, 201)
	var raw []map[string]any
	e.do("GET", "/api/storedDevices", nil).must(t, 200).json(t, &raw)
	if len(raw) != 2 {
		t.Fatalf("stored %v", raw)
	}
	for _, k := range []string{"pskKey", "authKeyStorePass", "trustStorePass", "aliasPass"} {
		if raw[1][k] != "*" {
			t.Fatalf("template secret %s = %v, want *", k, raw[1][k])
		}
	}
	opts := raw[0]["protocolOptions"].(map[string]any)
	if opts["password"] != "*" || opts["username"] != "u" {
		t.Fatalf("template options %v", opts)
	}
	e.do("DELETE", "/api/devices/t1", nil).must(t, 204)
	var d DeviceEntry
	e.do("POST", "/api/storedDevices/t1/start", nil).must(t, 200).json(t, &d)
	if !d.Running || d.Protocol != "COAP" {
		t.Fatalf("stored start %+v", d)
	}
	if got := e.devices["t1"].cfg.PSKKey; got != "0a0b" {
		t.Fatalf("stored secret lost: %q", got)
	}
	e.do("POST", "/api/storedDevices/t1/start", nil).errBody(t, 400, codeBadRequest)
	e.do("POST", "/api/storedDevices/none/start", nil).errBody(t, 404, codeDeviceNotFound)
	e.do("DELETE", "/api/storedDevices/t1", nil).must(t, 204)
	e.do("DELETE", "/api/storedDevices/t1", nil).errBody(t, 404, codeDeviceNotFound)
}

// TestAddDevices: POST /api/devices and /batch need an initialized session;
// devices start at once in a started session; start one device.
func TestAddDevices(t *testing.T) {
	e := startEmu(t, testConfig(t))
	e.useCoAP(1)
	e.do("POST", "/api/devices", map[string]any{"clientId": "x1"}).errBody(t, 400, codeNotInitialized)
	e.do("POST", "/api/init", nil).must(t, 204)
	e.do("POST", "/api/devices", map[string]any{"clientId": "x1"}).must(t, 201)
	e.do("POST", "/api/devices", map[string]any{"clientId": "x1"}).errBody(t, 400, codeBadRequest)
	e.do("POST", "/api/devices/batch", []map[string]any{{"clientId": "b1"}, {"clientId": "b1"}}).errBody(t, 400, codeBadRequest)
	e.do("POST", "/api/devices/batch", `[]`).errBody(t, 400, codeBadRequest)
	e.do("POST", "/api/devices/batch", `{"clientId":"b1"}`).errBody(t, 400, codeBadRequest)
	if n := len(e.entries()); n != 2 {
		t.Fatalf("%d devices after refused batches", n)
	}
	e.do("POST", "/api/devices/x1/start", nil).must(t, 200)
	e.do("POST", "/api/devices/x1/start", nil).errBody(t, 409, codeAlreadyStarted)
	e.do("POST", "/api/devices/none/start", nil).errBody(t, 404, codeDeviceNotFound)
	e.do("POST", "/api/start", nil).must(t, 204)
	var out []DeviceEntry
	e.do("POST", "/api/devices/batch", []map[string]any{{"clientId": "b1"}, {"clientId": "b2", "serialNumber": "S2"}}).must(t, 201).json(t, &out)
	if len(out) != 2 || out[1].SerialNumber != "S2" {
		t.Fatalf("batch answered %+v", out)
	}
	e.waitRunning("b2")
	e.do("POST", "/api/devices/b2/stop", nil).must(t, 204)
	e.do("POST", "/api/devices/b2/stop", nil).errBody(t, 409, codeNotStarted)
}

// TestRebootBootstrapNoBody: 404 and 409 carry no body.
func TestRebootBootstrapNoBody(t *testing.T) {
	e := startEmu(t, testConfig(t))
	e.useCoAP(1)
	e.do("POST", "/api/init", nil).must(t, 204)
	for _, p := range []string{"/api/devices/nope/reboot", "/api/devices/nope/bootstrap"} {
		if r := e.do("POST", p, nil); r.status != 404 || len(r.body) != 0 {
			t.Fatalf("%s: %d %q", p, r.status, r.body)
		}
	}
	for _, p := range []string{"/api/devices/coap/reboot", "/api/devices/coap/bootstrap"} {
		if r := e.do("POST", p, nil); r.status != 409 || len(r.body) != 0 {
			t.Fatalf("%s (not started): %d %q", p, r.status, r.body)
		}
	}
	if r := e.do("POST", "/api/lwm2m/update", nil); r.status != 409 || len(r.body) != 0 {
		t.Fatalf("lwm2m/update without LwM2M devices: %d %q", r.status, r.body)
	}
	e.do("POST", "/api/lwm2m/deregister", nil).errBody(t, 409, codeNotStarted)
}

// TestLogsRing: seq numbering, since, lastSeq on an empty batch, capacity.
func TestLogsRing(t *testing.T) {
	r := newRing(5)
	for i := range 7 {
		r.add("d", protoEntry(i))
	}
	b := r.since(0)
	if b.LastSeq != 7 || len(b.Entries) != 5 || b.Entries[0].Seq != 3 || b.Entries[4].Seq != 7 {
		t.Fatalf("ring %+v", b)
	}
	if b := r.since(6); len(b.Entries) != 1 || b.Entries[0].Seq != 7 {
		t.Fatalf("since 6: %+v", b)
	}
	if b := r.since(7); len(b.Entries) != 0 || b.LastSeq != 7 {
		t.Fatalf("empty batch: %+v", b)
	}
	e := startEmu(t, testConfig(t))
	var lb LogBatch
	e.do("GET", "/api/logs", nil).must(t, 200).json(t, &lb)
	if lb.Entries == nil {
		t.Fatal("entries must be an array")
	}
	e.do("GET", "/api/logs?since=-1", nil).errBody(t, 400, codeBadRequest)
	e.do("GET", "/api/logs?since=x", nil).errBody(t, 400, codeBadRequest)
	var raw map[string]json.RawMessage
	e.do("GET", "/api/logs?since=0", nil).must(t, 200).json(t, &raw)
	if _, ok := raw["lastSeq"]; !ok {
		t.Fatalf("logs body %v", raw)
	}
}

// TestSnapshot: save 400 without devices, load 404 missing, 400 not idle,
// load re-initialises with the saved values.
func TestSnapshot(t *testing.T) {
	e := startEmu(t, testConfig(t))
	e.useCoAP(2)
	e.do("POST", "/api/snapshot/save", nil).errBody(t, 400, codeBadRequest)
	r := e.do("POST", "/api/snapshot/load", nil)
	b := r.errBody(t, 404, codeSnapshotNotFound)
	if strings.Contains(b.Message, e.dir) || !strings.Contains(b.Message, snapshotFile) {
		t.Fatalf("message must name the file by name only: %q", b.Message)
	}
	e.do("POST", "/api/init", nil).must(t, 204)
	e.do("POST", "/api/start", nil).must(t, 204)
	e.waitRunning("coap-1")
	e.do("PUT", "/api/devices/coap-1/parameters/Temperature", map[string]string{"value": "30"}).must(t, 204)
	e.do("POST", "/api/snapshot/save", nil).must(t, 204)
	e.do("POST", "/api/snapshot/load", nil).errBody(t, 400, codeBadRequest)
	e.do("POST", "/api/reset", nil).must(t, 204)
	e.do("POST", "/api/snapshot/load", nil).must(t, 204)
	var s Status
	e.do("GET", "/api/status", nil).must(t, 200).json(t, &s)
	if !s.Initialized || s.Started || s.DeviceCount != 2 {
		t.Fatalf("after load %+v", s)
	}
	if v := e.devices["coap-1"].params.Value("Temperature"); v != "30" {
		t.Fatalf("Temperature after load %q", v)
	}
}

// TestStoredMaskingAfterProtocolSwitch: a template keeps its protocol, so
// its secret options stay masked after the global protocol changes.
func TestStoredMaskingAfterProtocolSwitch(t *testing.T) {
	e := startEmu(t, testConfig(t))
	e.do("POST", "/api/protocol/MQTT", nil).must(t, 204)
	e.do("POST", "/api/config", map[string]any{"serverPort": 1}).must(t, 200)
	e.do("POST", "/api/devices/startNew", map[string]any{"clientId": "m1", "protocolOptions": map[string]string{"password": "pw"}}).must(t, 201)
	e.do("POST", "/api/protocol/LWM2M", nil).must(t, 204)
	r := e.do("GET", "/api/storedDevices", nil).must(t, 200)
	if strings.Contains(string(r.body), `"pw"`) {
		t.Fatalf("secret option in clear after a protocol switch: %s", r.body)
	}
}

// TestSnapshotWithStandaloneDevice: a snapshot holding a standalone device
// loads while that device still runs.
func TestSnapshotWithStandaloneDevice(t *testing.T) {
	e := startEmu(t, testConfig(t))
	e.useCoAP(1)
	e.do("POST", "/api/devices/startNew", map[string]any{"clientId": "solo"}).must(t, 201)
	e.do("POST", "/api/init", nil).must(t, 204)
	e.do("POST", "/api/snapshot/save", nil).must(t, 204)
	e.do("POST", "/api/stop", nil).must(t, 204)
	e.do("POST", "/api/snapshot/load", nil).must(t, 204)
	if n := len(e.entries()); n != 2 {
		t.Fatalf("%d devices after load, want 2", n)
	}
}
