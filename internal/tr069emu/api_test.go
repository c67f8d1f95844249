package tr069emu

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/platform/httpx/openapitest"
	"cpesuite/internal/testutil"
	"cpesuite/internal/tr069emu/tree"
)

func TestOpenAPIMatchesRoutes(t *testing.T) {
	e := startEmu(t, testConfig(t, "http://127.0.0.1:1/"))
	openapitest.Check(t, OpenAPI(), e.mux)
	e.must(200, e.do("GET", "/v3/api-docs", nil))
	e.must(200, e.do("GET", "/swagger-ui.html", nil))
	e.must(404, e.do("GET", "/actuator/health", nil))
}

// An unreachable ACS: devices start and keep retrying, which is all the
// API tests need.
const deadACS = "http://127.0.0.1:1/"

// TestBadInput covers the error statuses and the {"error": text} body of
// every endpoint family.
func TestBadInput(t *testing.T) {
	e := startEmu(t, testConfig(t, deadACS))
	startSingle(t, e, "KNOWN1", "tr181-base.xml")
	cases := []struct {
		name, method, path string
		body               any
		status             int
		want               string // in the error text
	}{
		{"malformed JSON", "POST", "/apiV2/start", `{"serial":`, 400, "malformed JSON"},
		{"start without serial", "POST", "/apiV2/start", map[string]any{}, 400, "serial is required"},
		{"serial with a slash", "POST", "/apiV2/start", map[string]any{"serial": "../x"}, 400, "serial"},
		{"bad acsUrl", "POST", "/apiV2/start", map[string]any{"serial": "X1", "acsUrl": "ftp://h/"}, 400, "acsUrl"},
		{"missing tree", "POST", "/apiV2/start", map[string]any{"serial": "X1", "parameterFile": "none.xml"}, 404, "none.xml"},
		{"bad saveConfig", "POST", "/apiV2/start?saveConfig=maybe", map[string]any{"serial": "X1"}, 400, "saveConfig"},
		{"bad updatable", "POST", "/apiV2/start", map[string]any{"serial": "X1", "updatableParameters": []map[string]any{{"name": "a", "type": "FLOAT"}}}, 400, "updatableParameters[0]"},
		{"stop unknown", "POST", "/apiV2/stop", map[string]string{"serial": "NOPE"}, 404, "NOPE"},
		{"reboot unknown", "POST", "/apiV2/reboot", map[string]string{"serial": "NOPE"}, 404, "NOPE"},
		{"factoryReset unknown", "POST", "/apiV2/factoryReset", map[string]string{"serial": "NOPE"}, 404, "NOPE"},
		{"clone unknown", "POST", "/apiV2/cloneDevice", map[string]string{"sourceSerial": "NOPE", "newSerial": "N2"}, 404, "NOPE"},
		{"clone onto itself", "POST", "/apiV2/cloneDevice", map[string]string{"sourceSerial": "KNOWN1", "newSerial": "KNOWN1"}, 400, "differ"},
		{"deviceId unknown", "GET", "/apiV2/deviceId?serial=NOPE", nil, 404, "NOPE"},
		{"deviceId no serial", "GET", "/apiV2/deviceId", nil, 400, "serial"},
		{"sessionStatus unknown", "GET", "/apiV2/sessionStatus?serial=NOPE", nil, 404, "NOPE"},
		{"storedDevice unknown", "GET", "/apiV2/storedDevice?serial=NOPE", nil, 404, "NOPE"},
		{"deleteStored unknown", "POST", "/apiV2/deleteStoredDevice", map[string]string{"serial": "NOPE"}, 404, "NOPE"},
		{"startStored unknown", "POST", "/apiV2/startStored", map[string]string{"serial": "NOPE"}, 404, "NOPE"},
		{"startProtocol bad", "POST", "/apiV2/startProtocol", map[string]string{"protocol": "TR-999"}, 400, "TR-098 or TR-181"},
		{"parameters unknown", "GET", "/apiV2/parameters?serial=NOPE", nil, 404, "NOPE"},
		{"byPrefix no prefix", "GET", "/apiV2/parametersByPrefix?serial=KNOWN1", nil, 400, "prefix"},
		{"names unknown path", "GET", "/apiV2/parameterNames?serial=KNOWN1&path=Device.Nope.", nil, 404, "Device.Nope."},
		{"names bad nextLevel", "GET", "/apiV2/parameterNames?serial=KNOWN1&nextLevel=2", nil, 400, "nextLevel"},
		{"value unknown", "GET", "/apiV2/parameterValue?serial=KNOWN1&parameterName=Device.Nope", nil, 404, "Device.Nope"},
		{"fullInfo unknown", "GET", "/apiV2/parameterFullInfo?serial=KNOWN1&parameterName=Device.Nope", nil, 404, "Device.Nope"},
		{"exists no pattern", "GET", "/apiV2/parameterExists?serial=KNOWN1", nil, 400, "pattern"},
		{"search bad limit", "GET", "/apiV2/searchParameters?serial=KNOWN1&limit=-1", nil, 400, "limit"},
		{"change unknown param", "POST", "/apiV2/changeParameter", map[string]string{"serial": "KNOWN1", "parameterName": "Device.Nope", "parameterValue": "1"}, 404, "Device.Nope"},
		{"change bad value", "POST", "/apiV2/setParameterValue", map[string]string{"serial": "KNOWN1", "parameterName": "Device.ManagementServer.PeriodicInformInterval", "parameterValue": "soon"}, 400, "PeriodicInformInterval"},
		{"change no value", "POST", "/apiV2/changeParameter", map[string]string{"serial": "KNOWN1", "parameterName": "Device.DeviceInfo.ModelName"}, 400, "parameterValue"},
		{"changeParameters empty", "POST", "/apiV2/changeParameters", map[string]any{"serial": "KNOWN1"}, 400, "parameters"},
		{"notification 3", "POST", "/apiV2/changeNotification", map[string]any{"serial": "KNOWN1", "parameterName": "Device.DeviceInfo.ModelName", "notification": 3}, 400, "notification"},
		{"addObject not a table", "POST", "/apiV2/addObject", map[string]string{"serial": "KNOWN1", "parentPath": "Device.Nope."}, 404, "Device.Nope."},
		{"addParameter no template", "POST", "/apiV2/addParameter", map[string]string{"serial": "KNOWN1", "name": "Device.Nope.X", "value": "1"}, 400, "Device.Nope.X"},
		{"deleteObject unknown", "POST", "/apiV2/deleteObject", map[string]string{"serial": "KNOWN1", "objectName": "Device.Hosts.Host.99."}, 404, "Host.99"},
		{"invoke unknown event", "POST", "/apiV2/invoke", map[string]string{"serial": "KNOWN1", "eventName": "boot"}, 400, "case sensitive"},
		{"invoke unknown serial", "POST", "/apiV2/invoke", map[string]string{"serial": "NOPE", "eventName": "Boot"}, 404, "NOPE"},
		{"changePeriodic negative", "POST", "/apiV2/changePeriodic", map[string]any{"serial": "KNOWN1", "value": -5}, 400, "value"},
		{"getLog unknown", "GET", "/apiV2/getLog?serial=NOPE", nil, 404, "NOPE"},
		{"logContent bad lines", "GET", "/apiV2/getLogContent?serial=KNOWN1&lines=x", nil, 400, "lines"},
		{"logContent bad position", "GET", "/apiV2/getLogContent?serial=KNOWN1&fromPosition=-1", nil, 400, "fromPosition"},
		{"logStatistics unknown", "GET", "/apiV2/logStatistics?serial=NOPE", nil, 404, "NOPE"},
		{"clearLog unknown", "POST", "/apiV2/clearLog", map[string]string{"serial": "NOPE"}, 404, "NOPE"},
		{"updatable unknown serial", "GET", "/apiV2/updatableParameters?serial=NOPE", nil, 404, "NOPE"},
		{"updatable bad entry", "POST", "/apiV2/updatableParameters", map[string]any{"serial": "KNOWN1", "parameters": []map[string]any{{"name": "x", "min": 5, "max": 1}}}, 400, "min"},
		{"properties bad protocol", "POST", "/api/properties", map[string]any{"protocol": "gopher"}, 400, "protocol"},
		{"properties bad date", "POST", "/api/properties", map[string]any{"startDateTime": "2026-01-01"}, 400, "DD-MM-YYYY"},
		{"properties negative delay", "POST", "/api/properties", map[string]any{"taskDelayGetParameterValues": -1}, 400, "taskDelayGetParameterValues"},
		{"properties bad transfer delays", "POST", "/api/properties", map[string]any{"transferEmulationDelay": "1,x"}, 400, "transferEmulationDelay"},
		{"properties too many devices", "POST", "/api/properties", map[string]any{"groups": 1000, "concurrent": 1000}, 400, "limit"},
		{"properties malformed", "POST", "/api/properties", `[`, 400, "malformed JSON"},
		{"periodic missing", "POST", "/api/periodic", map[string]any{}, 400, "periodic"},
		{"periodic negative", "POST", "/api/periodic", map[string]any{"periodic": -1}, 400, "negative"},
		{"invokeSerial unknown", "POST", "/api/invokeSerial", map[string]string{"serial": "NOPE"}, 404, "NOPE"},
		{"speed delay unknown", "POST", "/api/makeSpeedDelay", map[string]string{"serial": "NOPE"}, 404, "NOPE"},
		{"reset delay no serial", "POST", "/api/resetDelay", map[string]string{}, 400, "serial"},
		{"resetWifi unknown", "POST", "/api/resetWifi", map[string]string{"serial": "NOPE"}, 404, "NOPE"},
		{"paramsXml traversal", "POST", "/api/paramsXml", map[string]string{"paramsXml": "../emulator.properties"}, 400, "path"},
		{"paramsXml not xml", "POST", "/api/paramsXml", map[string]string{"paramsXml": "tree.txt"}, 400, ".xml"},
		{"paramsXml missing", "POST", "/api/paramsXml", map[string]string{"paramsXml": "missing.xml"}, 404, "missing.xml"},
		{"delete active tree", "POST", "/api/deleteParamsXml", map[string]string{"paramsXml": "tr181-base.xml"}, 409, "active"},
		{"delete traversal", "POST", "/api/deleteParamsXml", map[string]string{"paramsXml": `..\x.xml`}, 400, "path"},
		{"delete missing", "POST", "/api/deleteParamsXml", map[string]string{"paramsXml": "missing.xml"}, 404, "missing.xml"},
		{"global updatable bad", "POST", "/api/updatableParameters", []map[string]any{{"name": "x", "stepType": "SIDEWAYS"}}, 400, "stepType"},
		{"global updatable malformed", "POST", "/api/updatableParameters", `{"x":1}`, 400, "JSON array"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.method, tc.path, tc.body)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if got := r.errorText(t); !strings.Contains(got, tc.want) {
				t.Fatalf("error %q does not mention %q", got, tc.want)
			}
		})
	}
}

func TestStartConflictAndStoredLifecycle(t *testing.T) {
	e := startEmu(t, testConfig(t, deadACS))
	var res StartResult
	e.must(200, e.do("POST", "/apiV2/start", map[string]any{"serial": "LIFE1"})).json(t, &res)
	if !res.Success || res.Serial != "LIFE1" || res.Message == "" {
		t.Fatalf("start %+v", res)
	}
	r := e.must(409, e.do("POST", "/apiV2/start", map[string]any{"serial": "LIFE1"}))
	var c map[string]any
	r.json(t, &c)
	if c["success"] != false || c["serial"] != "LIFE1" || !strings.Contains(c["error"].(string), "already running") {
		t.Fatalf("409 body %s", r.body)
	}
	var run map[string]any
	e.must(200, e.do("GET", "/apiV2/isEmulatorRunning?serial=LIFE1", nil)).json(t, &run)
	if run["running"] != true {
		t.Fatalf("isEmulatorRunning %v", run)
	}
	var stored InitDeviceDto
	e.must(200, e.do("GET", "/apiV2/storedDevice?serial=LIFE1", nil)).json(t, &stored)
	if stored.ACSURL != deadACS || stored.ParameterFile != "tr181-base.xml" || !stored.Running {
		t.Fatalf("stored %+v", stored)
	}
	var stats Statistics
	e.must(200, e.do("GET", "/apiV2/statistics", nil)).json(t, &stats)
	if stats.ActiveEmulators != 1 || stats.StoredConfigurations != 1 {
		t.Fatalf("statistics %+v", stats)
	}
	var active []ActiveEmulator
	e.must(200, e.do("GET", "/apiV2/activeEmulators", nil)).json(t, &active)
	if len(active) != 1 || active[0].Serial != "LIFE1" || active[0].Manufacturer == "" || active[0].OUI == "" || !active[0].IsRunning {
		t.Fatalf("activeEmulators %+v", active)
	}
	var ss map[string]any
	e.must(200, e.do("GET", "/apiV2/sessionStatus?serial=LIFE1", nil)).json(t, &ss)
	if _, ok := ss["inSession"].(bool); !ok {
		t.Fatalf("sessionStatus %v", ss)
	}
	var id map[string]string
	e.must(200, e.do("GET", "/apiV2/deviceId?serial=LIFE1", nil)).json(t, &id)
	for _, k := range []string{"Manufacturer", "OUI", "ProductClass", "SerialNumber"} {
		if id[k] == "" {
			t.Fatalf("deviceId lacks %s: %v", k, id)
		}
	}
	e.must(204, e.do("POST", "/apiV2/stop", map[string]string{"serial": "LIFE1"}))
	e.must(200, e.do("GET", "/apiV2/isEmulatorRunning?serial=LIFE1", nil)).json(t, &run)
	if run["running"] != false {
		t.Fatalf("after stop %v", run)
	}
	// start without saveConfig does not store.
	e.must(200, e.do("POST", "/apiV2/start?saveConfig=false", map[string]any{"serial": "NOSAVE"}))
	e.must(404, e.do("GET", "/apiV2/storedDevice?serial=NOSAVE", nil))
	// saveDevice, startStored, 409 when running, delete.
	e.must(204, e.do("POST", "/apiV2/saveDevice", map[string]any{"serial": "SAVED1", "parameterFile": "tr098-base.xml"}))
	var list []InitDeviceDto
	e.must(200, e.do("GET", "/apiV2/storedDevices", nil)).json(t, &list)
	if len(list) != 2 {
		t.Fatalf("storedDevices %+v", list)
	}
	e.must(200, e.do("POST", "/apiV2/startStored", map[string]string{"serial": "SAVED1"}))
	e.must(409, e.do("POST", "/apiV2/startStored", map[string]string{"serial": "SAVED1"}))
	var pv map[string]string
	e.must(200, e.do("GET", "/apiV2/parameterValue?serial=SAVED1&parameterName=InternetGatewayDevice.DeviceInfo.SerialNumber", nil)).json(t, &pv)
	if pv["value"] != "SAVED1" || pv["type"] != "xsd:string" {
		t.Fatalf("serial in tree %v", pv)
	}
	// startProtocol generates a serial and picks the base tree.
	var sp StartResult
	e.must(200, e.do("POST", "/apiV2/startProtocol", map[string]string{"protocol": "TR-098"})).json(t, &sp)
	if !sp.Success || sp.Serial == "" || sp.Protocol != "TR-098" || sp.ParameterFile != "tr098-base.xml" {
		t.Fatalf("startProtocol %+v", sp)
	}
	e.must(409, e.do("POST", "/apiV2/startProtocol", map[string]string{"protocol": "TR-181", "serial": sp.Serial}))
	// cloneDevice copies values and starts the clone.
	e.must(204, e.do("POST", "/apiV2/changeParameter", map[string]string{"serial": "SAVED1", "parameterName": "InternetGatewayDevice.DeviceInfo.ProvisioningCode", "parameterValue": "PC-7"}))
	var clone InitDeviceDto
	e.must(200, e.do("POST", "/apiV2/cloneDevice", map[string]string{"sourceSerial": "SAVED1", "newSerial": "CLONE1"})).json(t, &clone)
	if clone.Serial != "CLONE1" || !clone.Running || clone.ParameterFile != "tr098-base.xml" {
		t.Fatalf("clone %+v", clone)
	}
	e.must(200, e.do("GET", "/apiV2/parameterValue?serial=CLONE1&parameterName=InternetGatewayDevice.DeviceInfo.ProvisioningCode", nil)).json(t, &pv)
	if pv["value"] != "PC-7" {
		t.Fatalf("clone values %v", pv)
	}
	e.must(200, e.do("GET", "/apiV2/parameterValue?serial=CLONE1&parameterName=InternetGatewayDevice.DeviceInfo.SerialNumber", nil)).json(t, &pv)
	if pv["value"] != "CLONE1" {
		t.Fatalf("clone serial %v", pv)
	}
	e.must(409, e.do("POST", "/apiV2/cloneDevice", map[string]string{"sourceSerial": "SAVED1", "newSerial": "CLONE1"}))
	// factoryReset restores the stored file's values.
	e.must(204, e.do("POST", "/apiV2/factoryReset", map[string]string{"serial": "SAVED1"}))
	e.must(200, e.do("GET", "/apiV2/parameterValue?serial=SAVED1&parameterName=InternetGatewayDevice.DeviceInfo.ProvisioningCode", nil)).json(t, &pv)
	if pv["value"] == "PC-7" {
		t.Fatalf("factory reset kept the edit: %v", pv)
	}
	e.must(204, e.do("POST", "/apiV2/reboot", map[string]string{"serial": "SAVED1"}))
	e.must(204, e.do("POST", "/apiV2/deleteStoredDevice", map[string]string{"serial": "LIFE1"}))
	e.must(404, e.do("GET", "/apiV2/storedDevice?serial=LIFE1", nil))
	var cfg map[string]string
	e.must(200, e.do("GET", "/apiV2/config", nil)).json(t, &cfg)
	if cfg["defaultAcsUrl"] != deadACS {
		t.Fatalf("config %v", cfg)
	}
}

func TestParameterEndpoints(t *testing.T) {
	e := startEmu(t, testConfig(t, deadACS))
	startSingle(t, e, "P1", "tr181-base.xml")
	var all []ParameterInfo
	e.must(200, e.do("GET", "/apiV2/parameters?serial=P1", nil)).json(t, &all)
	if len(all) < 100 {
		t.Fatalf("only %d parameters", len(all))
	}
	var byPrefix []ParameterInfo
	e.must(200, e.do("GET", "/apiV2/parametersByPrefix?serial=P1&prefix=Device.DeviceInfo.", nil)).json(t, &byPrefix)
	for _, p := range byPrefix {
		if !strings.HasPrefix(p.Name, "Device.DeviceInfo.") {
			t.Fatalf("prefix leak %s", p.Name)
		}
	}
	var names []NameInfo
	e.must(200, e.do("GET", "/apiV2/parameterNames?serial=P1&path=Device.&nextLevel=true", nil)).json(t, &names)
	for _, n := range names {
		rest := strings.TrimSuffix(strings.TrimPrefix(n.Name, "Device."), ".")
		if strings.Contains(rest, ".") {
			t.Fatalf("nextLevel gave a deeper name %s", n.Name)
		}
		if n.IsObject != strings.HasSuffix(n.Name, ".") {
			t.Fatalf("isObject wrong for %s", n.Name)
		}
	}
	var fi ParameterInfo
	e.must(200, e.do("GET", "/apiV2/parameterFullInfo?serial=P1&parameterName=Device.ManagementServer.PeriodicInformInterval", nil)).json(t, &fi)
	if fi.Type != "xsd:unsignedInt" || !fi.Writable {
		t.Fatalf("full info %+v", fi)
	}
	var ex struct {
		Exists   bool     `json:"exists"`
		Count    int      `json:"count"`
		Matching []string `json:"matchingParameters"`
	}
	e.must(200, e.do("GET", "/apiV2/parameterExists?serial=P1&pattern="+url.QueryEscape("Device.Hosts.Host.{i}.IPAddress"), nil)).json(t, &ex)
	if !ex.Exists || ex.Count != 2 || len(ex.Matching) != 2 {
		t.Fatalf("exists {i}: %+v", ex)
	}
	e.must(200, e.do("GET", "/apiV2/parameterExists?serial=P1&pattern="+url.QueryEscape("Device.Hosts.Host.*.NoSuch"), nil)).json(t, &ex)
	if ex.Exists || ex.Count != 0 || ex.Matching == nil {
		t.Fatalf("exists none: %+v", ex)
	}
	var found []ParameterInfo
	e.must(200, e.do("GET", "/apiV2/searchParameters?serial=P1&nameContains=diagnosticsstate", nil)).json(t, &found)
	if len(found) < 3 {
		t.Fatalf("search found %d", len(found))
	}
	e.must(200, e.do("GET", "/apiV2/searchParameters?serial=P1", nil)).json(t, &found)
	if len(found) != DefaultSearchLimit {
		t.Fatalf("default limit: %d", len(found))
	}
	e.must(200, e.do("GET", "/apiV2/searchParameters?serial=P1&limit=3", nil)).json(t, &found)
	if len(found) != 3 {
		t.Fatalf("limit 3: %d", len(found))
	}

	// changeParameter keeps the type and fires nothing; setParameterValue on
	// an active-notification parameter answers 200, on a quiet one 204.
	name := "Device.Time.NTPServer1"
	e.must(204, e.do("POST", "/apiV2/changeParameter", map[string]string{"serial": "P1", "parameterName": name, "parameterValue": "A"}))
	e.must(204, e.do("POST", "/apiV2/setParameterValue", map[string]string{"serial": "P1", "parameterName": name, "parameterValue": "B"}))
	e.must(204, e.do("POST", "/apiV2/changeNotification", map[string]any{"serial": "P1", "parameterName": name, "notification": 2}))
	e.must(200, e.do("GET", "/apiV2/parameterFullInfo?serial=P1&parameterName="+name, nil)).json(t, &fi)
	if fi.Notification != 2 || fi.Value != "B" || fi.Type != "xsd:string" {
		t.Fatalf("after edits %+v", fi)
	}
	if fi.Name != name {
		t.Fatalf("after edits %+v", fi)
	}
	var vc map[string]any
	e.must(200, e.do("POST", "/apiV2/setParameterValue", map[string]string{"serial": "P1", "parameterName": name, "parameterValue": "C"})).json(t, &vc)
	if vc["valueChange"] != true {
		t.Fatalf("value change body %v", vc)
	}
	e.must(204, e.do("POST", "/apiV2/changeParameters", map[string]any{"serial": "P1", "parameters": map[string]string{"Device.DeviceInfo.Description": "x"}}))
	e.must(200, e.do("POST", "/apiV2/changeParameters", map[string]any{"serial": "P1", "parameters": map[string]string{name: "D", "Device.DeviceInfo.Description": "y"}}))
	// Atomic: one bad value changes nothing.
	e.must(400, e.do("POST", "/apiV2/changeParameters", map[string]any{"serial": "P1", "parameters": map[string]string{name: "E", "Device.ManagementServer.PeriodicInformInterval": "x"}}))
	e.must(200, e.do("GET", "/apiV2/parameterFullInfo?serial=P1&parameterName="+name, nil)).json(t, &fi)
	if fi.Value != "D" {
		t.Fatalf("not atomic: %+v", fi)
	}

	// addObject, addParameter, deleteObject.
	var added map[string]any
	e.must(200, e.do("POST", "/apiV2/addObject", map[string]string{"serial": "P1", "parentPath": "Device.Hosts.Host."})).json(t, &added)
	if added["instanceNumber"] != float64(3) || added["objectPath"] != "Device.Hosts.Host.3." {
		t.Fatalf("addObject %v", added)
	}
	e.must(204, e.do("POST", "/apiV2/deleteObject", map[string]string{"serial": "P1", "objectName": "Device.Hosts.Host.3."}))
	e.must(404, e.do("GET", "/apiV2/parameterValue?serial=P1&parameterName=Device.Hosts.Host.3.IPAddress", nil))
	e.must(200, e.do("POST", "/apiV2/addObject", map[string]string{"serial": "P1", "parentPath": "Device.Hosts.Host"}))

	// invoke: every documented name is accepted.
	for name := range map[string]bool{"BootStrap": true, "Boot": true, "Periodic": true, "ValueChange": true, "ConnectionRequest": true, "TransferComplete": true, "Diagnostics": true, "DUStateChangeComplete": true} {
		if r := e.do("POST", "/apiV2/invoke", map[string]string{"serial": "P1", "eventName": name}); r.status != 204 && r.status != 409 {
			t.Fatalf("invoke %s: %d %s", name, r.status, r.body)
		}
	}
	e.must(204, e.do("POST", "/apiV2/changePeriodic", map[string]any{"serial": "P1", "value": 0}))
	e.must(200, e.do("GET", "/apiV2/parameterValue?serial=P1&parameterName=Device.ManagementServer.PeriodicInformEnable", nil)).json(t, &vc)
	if vc["value"] != "false" {
		t.Fatalf("periodic disabled: %v", vc)
	}

	// Per-device auto-update list.
	upd := []map[string]any{{"name": "Device.DeviceInfo.X_CPESUITE_Load", "type": "INT", "stepType": "INCREMENT", "min": 0, "max": 10, "step": 1}}
	e.must(204, e.do("POST", "/apiV2/updatableParameters", map[string]any{"serial": "P1", "parameters": upd}))
	var got []map[string]any
	e.must(200, e.do("GET", "/apiV2/updatableParameters?serial=P1", nil)).json(t, &got)
	if len(got) != 1 || got[0]["stepType"] != "INCREMENT" {
		t.Fatalf("updatable %v", got)
	}
}

func TestDeviceLogs(t *testing.T) {
	e := startEmu(t, testConfig(t, deadACS))
	startSingle(t, e, "LOG1", "tr181-base.xml")
	var st LogStatistics
	testutil.Eventually(t, 10*time.Second, "log lines", func() bool {
		r := e.do("GET", "/apiV2/logStatistics?serial=LOG1", nil)
		if r.status != 200 {
			return false
		}
		r.json(t, &st)
		return st.TotalLines >= 2 && st.WarnCount >= 1 // started + a failed session against the dead ACS
	})
	if st.FileSizeBytes == 0 || st.InfoCount == 0 {
		t.Fatalf("stats %+v", st)
	}
	r := e.must(200, e.do("GET", "/apiV2/getLog?serial=LOG1", nil))
	if r.header.Get("Content-Type") != "application/octet-stream" || !bytes.Contains(r.body, []byte("started")) {
		t.Fatalf("getLog %s %q", r.header.Get("Content-Type"), r.body)
	}
	r = e.must(200, e.do("GET", "/apiV2/getLogContent?serial=LOG1&lines=1&fromPosition=0", nil))
	pos, err := strconv.Atoi(r.header.Get("X-File-Position"))
	if err != nil || pos != len(r.body) || bytes.Count(r.body, []byte("\n")) != 1 {
		t.Fatalf("first line: pos %q body %q", r.header.Get("X-File-Position"), r.body)
	}
	r2 := e.must(200, e.do("GET", "/apiV2/getLogContent?serial=LOG1&lines=1&fromPosition="+strconv.Itoa(pos), nil))
	if bytes.Equal(r.body, r2.body) || len(r2.body) == 0 {
		t.Fatalf("second read repeated or empty: %q", r2.body)
	}
	tail := e.must(200, e.do("GET", "/apiV2/getLogContent?serial=LOG1&lines=1", nil))
	if bytes.Count(tail.body, []byte("\n")) != 1 {
		t.Fatalf("tail %q", tail.body)
	}
	e.must(204, e.do("POST", "/apiV2/clearLog", map[string]string{"serial": "LOG1"}))
	e.must(200, e.do("GET", "/apiV2/logStatistics?serial=LOG1", nil)).json(t, &st)
	if st.FileSizeBytes > 2000 { // only lines written since the clear
		t.Fatalf("after clear %+v", st)
	}
}

func TestTreeFiles(t *testing.T) {
	e := startEmu(t, testConfig(t, deadACS))
	var list []string
	e.must(200, e.do("GET", "/api/paramsXmlList", nil)).json(t, &list)
	if strings.Join(list, ",") != "tr098-base.xml,tr181-base.xml" {
		t.Fatalf("list %v", list)
	}
	base := tree.BaseFiles()["tr181-base.xml"]
	var fr FileResult
	e.must(200, e.upload("/api/uploadParamsXml", "lab.xml", base)).json(t, &fr)
	if !fr.Success || fr.Filename != "lab.xml" {
		t.Fatalf("upload %+v", fr)
	}
	var up map[string]string
	e.must(200, e.upload("/apiV2/uploadParamTree", "lab2.xml", base)).json(t, &up)
	if up["filename"] != "lab2.xml" {
		t.Fatalf("uploadParamTree %v", up)
	}
	e.must(200, e.do("GET", "/apiV2/paramsXmlList", nil)).json(t, &list)
	if len(list) != 4 {
		t.Fatalf("after uploads %v", list)
	}
	e.must(204, e.do("POST", "/api/paramsXml", map[string]string{"paramsXml": "lab.xml"}))
	var px map[string]string
	e.must(200, e.do("GET", "/api/paramsXml", nil)).json(t, &px)
	if px["paramsXml"] != "lab.xml" {
		t.Fatalf("active %v", px)
	}
	e.must(409, e.do("POST", "/api/deleteParamsXml", map[string]string{"paramsXml": "lab.xml"}))
	e.must(200, e.do("POST", "/api/deleteParamsXml", map[string]string{"paramsXml": "lab2.xml"})).json(t, &fr)
	if !fr.Success || fr.Filename != "lab2.xml" {
		t.Fatalf("delete %+v", fr)
	}

	bad := []struct {
		name, file string
		content    []byte
		want       string
	}{
		{"traversal", "../evil.xml", base, "path"},
		{"backslash", `..\evil.xml`, base, "path"},
		{"slash", "sub/evil.xml", base, "path"},
		{"dot alias", ".xml", base, "'.'"},
		{"not xml", "tree.txt", base, ".xml"},
		{"invalid xml", "broken.xml", []byte("<ParameterTree><Parameter"), "not a valid parameter tree"},
		{"dtd", "dtd.xml", []byte(`<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><ParameterTree name="x" dataModel="TR-181"/>`), "not a valid parameter tree"},
		{"too large", "big.xml", bytes.Repeat([]byte("x"), 2<<20), "larger than"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			r := e.upload("/api/uploadParamsXml", tc.file, tc.content)
			if r.status != 400 || !strings.Contains(r.errorText(t), tc.want) {
				t.Fatalf("%d %s", r.status, r.body)
			}
			r = e.upload("/apiV2/uploadParamTree", tc.file, tc.content)
			if r.status != 400 {
				t.Fatalf("uploadParamTree: %d %s", r.status, r.body)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(e.cfg.DataDir, "evil.xml")); err == nil {
		t.Fatal("a traversal upload escaped the tree folder")
	}
	r := e.do("POST", "/api/uploadParamsXml", "not multipart")
	if r.status != 400 {
		t.Fatalf("non-multipart upload: %d", r.status)
	}
}

func TestPropertiesPersistAndDefaults(t *testing.T) {
	cfg := testConfig(t, deadACS)
	e := startEmu(t, cfg)
	p := e.Properties()
	p.Groups, p.Concurrent, p.TaskDelayReboot, p.StartDateTime, p.TransferEmulationDelay = 3, 7, 4, "01-02-2030 10:11:12", "1,2,3"
	e.must(204, e.do("POST", "/api/properties", p))
	var got Properties
	e.must(200, e.do("GET", "/api/properties", nil)).json(t, &got)
	if got.Groups != 3 || got.Concurrent != 7 || got.TaskDelayReboot != 4 || got.TaskDelayGetParameterValues != 0 {
		t.Fatalf("properties %+v", got)
	}
	e.must(204, e.do("POST", "/api/periodic", map[string]int{"periodic": 42}))
	var per map[string]int
	e.must(200, e.do("GET", "/api/periodic", nil)).json(t, &per)
	if per["periodic"] != 42 {
		t.Fatalf("periodic %v", per)
	}
	e.Shutdown()

	// A second emulator on the same folder reads them back.
	e2, err := New(cfg, e.log, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p2 := e2.Properties(); p2.Groups != 3 || p2.TaskDelayReboot != 4 || p2.periodicSeconds != 42 {
		t.Fatalf("reloaded %+v", p2)
	}

	// A file from before the taskDelay keys gets the default 11 s.
	old := "protocol=http\nhost=acs.example\nport=7547\nurl=/\ngroups=1\nconcurrent=1\nparamsXml=tr181-base.xml\n"
	if err := os.WriteFile(filepath.Join(cfg.DataDir, "emulator.properties"), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	e3, err := New(cfg, e.log, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p3 := e3.Properties(); p3.TaskDelayGetRPCMethods != DefaultTaskDelay || p3.Host != "acs.example" {
		t.Fatalf("old file %+v", p3)
	}
}

func TestGlobalUpdatableAndLoadControls(t *testing.T) {
	e := startEmu(t, testConfig(t, deadACS))
	list := []map[string]any{{"name": "Device.WiFi.Radio.1.Channel", "stepType": "RANDOM", "min": 1, "max": 11}, {"name": "Device.DeviceInfo.ProvisioningCode", "type": "STRING", "array": []string{"a", "b"}}}
	e.must(204, e.do("POST", "/api/updatableParameters", list))
	var got []map[string]any
	e.must(200, e.do("GET", "/api/updatableParameters", nil)).json(t, &got)
	if len(got) != 2 || got[0]["type"] != "INT" || got[0]["stepType"] != "RANDOM" || got[1]["stepType"] != "DEFAULT" {
		t.Fatalf("global list %v", got)
	}
	startSingle(t, e, "W1", "tr181-base.xml")
	e.must(204, e.do("POST", "/api/makeSpeedDelay", map[string]string{"serial": "W1"}))
	d, _ := e.device("W1")
	if !d.SpeedDelay() {
		t.Fatal("speed delay not set")
	}
	e.must(204, e.do("POST", "/api/resetDelay", map[string]string{"serial": "W1"}))
	if d.SpeedDelay() {
		t.Fatal("speed delay not cleared")
	}
	e.must(204, e.do("POST", "/api/resetWifi", map[string]string{"serial": "W1"}))
	e.must(200, e.do("GET", "/api/status", nil))
	var counts DeviceCounts
	e.must(200, e.do("GET", "/api/deviceCounts", nil)).json(t, &counts)
	if counts.Total != 0 {
		t.Fatalf("single devices counted: %+v", counts)
	}
}
