package iotemu

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func getSettings(t *testing.T, e *testEmu) map[string]any {
	t.Helper()
	var m map[string]any
	e.do("GET", "/api/config", nil).must(t, 200).json(t, &m)
	return m
}

// TestConfigFields checks every field of the Configuration resource is
// served under its spec name.
func TestConfigFields(t *testing.T) {
	e := startEmu(t, testConfig(t))
	m := getSettings(t, e)
	want := []string{"protocol", "serverIp", "serverPort", "clientId", "serialNumber", "manufacturer", "modelName", "clientIp", "clientPort", "clientsCount", "concurrentClients", "delaySec", "secure", "securityMode", "pskId", "pskKey", "authKeyStorePath", "authKeyStorePass", "trustStorePath", "trustStorePass", "authCertAlias", "aliasPass", "mtp", "guiRenderingType", "paramUpdateEnabled", "loggingEnabled", "failResponse", "dbAddress", "dbPort", "dbLogin", "dbPassword", "dbCatalog", "dbCpeSerial"}
	for _, k := range want {
		if _, ok := m[k]; !ok {
			t.Errorf("GET /api/config lacks %s", k)
		}
	}
	if len(m) != len(want) {
		t.Errorf("GET /api/config has %d fields, want %d: %v", len(m), len(want), m)
	}
}

// TestConfigSecretMasking: stored secrets read as "*", unset stay empty,
// "*" keeps, "" clears, anything else replaces; secrets never reach logs.
func TestConfigSecretMasking(t *testing.T) {
	e := startEmu(t, testConfig(t))
	secrets := map[string]any{"pskKey": "00112233", "authKeyStorePass": "ks-pass", "trustStorePass": "ts-pass", "aliasPass": "al-pass", "dbPassword": "db-pass"}
	m := getSettings(t, e)
	for k := range secrets {
		if m[k] != "" {
			t.Fatalf("unset %s reads %v, want empty", k, m[k])
		}
	}
	e.do("POST", "/api/config", secrets).must(t, 200)
	m = getSettings(t, e)
	for k := range secrets {
		if m[k] != "*" {
			t.Fatalf("stored %s reads %v, want *", k, m[k])
		}
	}
	// "*" keeps.
	e.do("POST", "/api/config", map[string]any{"pskKey": "*", "dbPassword": "*"}).must(t, 200)
	if got := e.st.Settings.PSKKey; got != "00112233" {
		t.Fatalf("pskKey after posting * = %q", got)
	}
	// "" clears, other replaces.
	e.do("POST", "/api/config", map[string]any{"pskKey": "", "dbPassword": "new"}).must(t, 200)
	m = getSettings(t, e)
	if m["pskKey"] != "" || m["dbPassword"] != "*" || e.st.Settings.DBPassword != "new" {
		t.Fatalf("after clear/replace: pskKey %v dbPassword %v (stored %q)", m["pskKey"], m["dbPassword"], e.st.Settings.DBPassword)
	}
	// Persisted in the connection options file, which is private.
	st, err := os.Stat(filepath.Join(e.dir, optionsFile))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("%s mode %v, want 0600", optionsFile, st.Mode().Perm())
	}
	// A restart reads it back.
	e2 := startEmu(t, Config{DataDir: e.dir, MaxDevices: 100, RuleBudget: e.cfg.RuleBudget, StopWait: e.cfg.StopWait})
	if got := e2.st.Settings.DBPassword; got != "new" {
		t.Fatalf("after restart dbPassword %q", got)
	}
	for _, l := range e.logs.since(0).Entries {
		for _, s := range []string{"ks-pass", "ts-pass", "al-pass", "db-pass", "00112233"} {
			if strings.Contains(l.Payload+l.RawMessage+l.MessageOptions, s) {
				t.Fatalf("secret %q in log %+v", s, l)
			}
		}
	}
}

// TestConfigSecure: secure false selects plain transport whatever
// securityMode says and keeps the other fields; GET derives secure.
func TestConfigSecure(t *testing.T) {
	e := startEmu(t, testConfig(t))
	e.do("POST", "/api/config", map[string]any{"securityMode": "PSK", "pskId": "id1", "pskKey": "0102"}).must(t, 200)
	if m := getSettings(t, e); m["secure"] != true || m["securityMode"] != "PSK" {
		t.Fatalf("PSK mode: %v %v", m["secure"], m["securityMode"])
	}
	e.do("POST", "/api/config", map[string]any{"secure": false, "securityMode": "PSK"}).must(t, 200)
	m := getSettings(t, e)
	if m["secure"] != false || m["securityMode"] != "NONE" || m["pskId"] != "id1" || m["pskKey"] != "*" {
		t.Fatalf("secure false: %v", m)
	}
	// secure true without a mode picks the one the kept fields allow.
	e.do("POST", "/api/config", map[string]any{"secure": true}).must(t, 200)
	if m := getSettings(t, e); m["secure"] != true || m["securityMode"] != "PSK" {
		t.Fatalf("secure true: %v %v", m["secure"], m["securityMode"])
	}
	// Absent secure keeps the mode.
	e.do("POST", "/api/config", map[string]any{"clientsCount": 3}).must(t, 200)
	if m := getSettings(t, e); m["securityMode"] != "PSK" {
		t.Fatalf("absent secure changed mode: %v", m["securityMode"])
	}
	e.do("POST", "/api/config", map[string]any{"secure": true, "securityMode": "NONE"}).errBody(t, 400, codeBadRequest)
}

// TestConfigBadInput: malformed bodies, nulls, unknown fields and invalid
// values answer 400 BAD_REQUEST and apply nothing.
func TestConfigBadInput(t *testing.T) {
	e := startEmu(t, testConfig(t))
	before := getSettings(t, e)
	for name, body := range map[string]any{
		"malformed":       `{"serverPort":`,
		"not object":      `[1,2]`,
		"empty":           ``,
		"null value":      `{"serverPort": 5684, "clientId": null}`,
		"unknown":         `{"serverPort": 5684, "nope": 1}`,
		"wrong type":      `{"serverPort": "x"}`,
		"port range":      `{"serverPort": 70000}`,
		"count":           `{"clientsCount": 0}`,
		"too many":        `{"clientsCount": 20001}`,
		"mode":            `{"securityMode": "RPK"}`,
		"rendering":       `{"guiRenderingType": "SOME"}`,
		"psk hex":         `{"pskKey": "zz"}`,
		"client id":       `{"clientId": "a/b"}`,
		"mtp":             `{"mtp": "SMTP"}`,
		"unknown proto":   `{"protocol": "XMPP"}`,
		"unloaded proto":  `{"protocol": "USP"}`,
		"client ip":       `{"clientIp": "not-an-ip"}`,
		"port past range": `{"clientPort": 65535, "clientsCount": 2}`,
	} {
		t.Run(name, func(t *testing.T) {
			r := e.do("POST", "/api/config", body)
			code := codeBadRequest
			if strings.Contains(name, "proto") {
				code = codeProtocolNotFound
			}
			r.errBody(t, 400, code)
			if after := getSettings(t, e); !reflect.DeepEqual(before, after) {
				t.Fatalf("settings changed: %v -> %v", before, after)
			}
		})
	}
}

// TestConfigRefusedWhileRunning: POST /api/config and /api/protocol are
// refused while initialized or started; runtime settings are not.
func TestConfigRefusedWhileRunning(t *testing.T) {
	e := startEmu(t, testConfig(t))
	e.useCoAP(1)
	e.do("POST", "/api/init", nil).must(t, 204)
	e.do("POST", "/api/config", map[string]any{"clientsCount": 2}).errBody(t, 400, codeNotStopped)
	e.do("POST", "/api/protocol/MQTT", nil).errBody(t, 400, codeNotStopped)
	e.do("POST", "/api/start", nil).must(t, 204)
	e.do("POST", "/api/config", map[string]any{"clientsCount": 2}).errBody(t, 400, codeNotStopped)
	e.do("POST", "/api/protocol/LWM2M", nil).errBody(t, 400, codeNotStopped)
	var s Settings
	e.do("POST", "/api/config/runtime", map[string]any{"guiRenderingType": "OFF", "paramUpdateEnabled": false, "loggingEnabled": false, "failResponse": true}).must(t, 200).json(t, &s)
	if s.GUIRenderingType != "OFF" || s.ParamUpdateEnabled || s.LoggingEnabled || !s.FailResponse {
		t.Fatalf("runtime not applied: %+v", s)
	}
	if rt := e.runtime(); !rt.FailResponse {
		t.Fatal("devices do not see the runtime change")
	}
	e.do("POST", "/api/config/runtime", map[string]any{"clientsCount": 5}).errBody(t, 400, codeBadRequest)
	e.do("POST", "/api/config/runtime", map[string]any{"failResponse": nil}).errBody(t, 400, codeBadRequest)
	e.do("POST", "/api/stop", nil).must(t, 204)
	e.do("POST", "/api/config", map[string]any{"clientsCount": 2}).must(t, 200)
}

// TestProtocols covers /api/protocols, /available and protocol selection
// with keepOptions.
func TestProtocols(t *testing.T) {
	e := startEmu(t, testConfig(t))
	var all, avail []string
	e.do("GET", "/api/protocols", nil).must(t, 200).json(t, &all)
	e.do("GET", "/api/protocols/available", nil).must(t, 200).json(t, &avail)
	if !reflect.DeepEqual(all, []string{"LWM2M", "USP", "MQTT", "FSH_HUB", "DUSUN", "COAP"}) {
		t.Fatalf("protocols %v", all)
	}
	if !reflect.DeepEqual(avail, []string{"LWM2M", "MQTT", "COAP"}) {
		t.Fatalf("available %v", avail)
	}
	e.do("POST", "/api/protocol/XMPP", nil).errBody(t, 400, codeProtocolNotFound)
	e.do("POST", "/api/protocol/USP", nil).errBody(t, 400, codeProtocolNotFound)
	e.do("POST", "/api/protocol/MQTT?keepOptions=maybe", nil).errBody(t, 400, codeBadRequest)

	opt := func() map[string]string {
		var vs []OptionView
		e.do("GET", "/api/protocolOptions", nil).must(t, 200).json(t, &vs)
		m := map[string]string{}
		for _, v := range vs {
			m[v.Key] = v.Value
		}
		return m
	}
	e.do("POST", "/api/protocol/MQTT", nil).must(t, 204)
	e.do("POST", "/api/protocolOptions", map[string]string{"topicPrefix": "lab/a"}).must(t, 204)
	// keepOptions=true re-selecting the current protocol changes nothing.
	e.do("POST", "/api/protocol/MQTT?keepOptions=true", nil).must(t, 204)
	if opt()["topicPrefix"] != "lab/a" {
		t.Fatal("keepOptions=true on the current protocol changed its options")
	}
	// Without keepOptions every call clears the options.
	e.do("POST", "/api/protocol/MQTT", nil).must(t, 204)
	if got := opt()["topicPrefix"]; got != "cpesuite/devices" {
		t.Fatalf("options not cleared: topicPrefix %q", got)
	}
	e.do("POST", "/api/protocolOptions", map[string]string{"topicPrefix": "lab/b"}).must(t, 204)
	// Switching with keepOptions saves and restores.
	e.do("POST", "/api/protocol/LWM2M?keepOptions=true", nil).must(t, 204)
	e.do("POST", "/api/protocolOptions", map[string]string{"lifetime": "120"}).must(t, 204)
	e.do("POST", "/api/protocol/MQTT?keepOptions=true", nil).must(t, 204)
	if got := opt()["topicPrefix"]; got != "lab/b" {
		t.Fatalf("switching back with keepOptions: topicPrefix %q, want lab/b", got)
	}
	e.do("POST", "/api/protocol/LWM2M?keepOptions=true", nil).must(t, 204)
	if got := opt()["lifetime"]; got != "120" {
		t.Fatalf("LWM2M options not restored: lifetime %q", got)
	}
	// Switching without keepOptions starts from defaults.
	e.do("POST", "/api/protocol/MQTT", nil).must(t, 204)
	if got := opt()["topicPrefix"]; got != "cpesuite/devices" {
		t.Fatalf("switch without keepOptions kept %q", got)
	}
	var s Status
	e.do("GET", "/api/status", nil).must(t, 200).json(t, &s)
	if s.Protocol != "MQTT" {
		t.Fatalf("status protocol %s", s.Protocol)
	}
}

// TestProtocolOptions: secret flags, choice lists, masking, null values.
func TestProtocolOptions(t *testing.T) {
	e := startEmu(t, testConfig(t))
	e.do("POST", "/api/protocol/MQTT", nil).must(t, 204)
	get := func() map[string]OptionView {
		var vs []OptionView
		e.do("GET", "/api/protocolOptions", nil).must(t, 200).json(t, &vs)
		m := map[string]OptionView{}
		for _, v := range vs {
			m[v.Key] = v
		}
		return m
	}
	o := get()
	if !o["password"].Secret || o["password"].Value != "" {
		t.Fatalf("password option %+v", o["password"])
	}
	if len(o["qos"].Choices) == 0 || o["qos"].Secret {
		t.Fatalf("qos option %+v", o["qos"])
	}
	e.do("POST", "/api/protocolOptions", map[string]string{"password": "hunter2", "username": "*"}).must(t, 204)
	o = get()
	if o["password"].Value != "*" || o["username"].Value != "*" || e.st.Options["username"] != "*" {
		t.Fatalf("after set: password %q username %q (non-secret * is stored literally)", o["password"].Value, o["username"].Value)
	}
	e.do("POST", "/api/protocolOptions", map[string]string{"password": "*"}).must(t, 204)
	if e.st.Options["password"] != "hunter2" {
		t.Fatal("* did not keep the secret")
	}
	// Nothing applied when one value is null or unknown or off its choice list.
	for _, body := range []string{`{"username":"x","password":null}`, `{"username":"x","nope":"1"}`, `{"username":"x","qos":"7"}`, `null`, `[]`, `{"username":`} {
		e.do("POST", "/api/protocolOptions", body).errBody(t, 400, codeBadRequest)
		if e.st.Options["username"] != "*" {
			t.Fatalf("%s applied part of the map", body)
		}
	}
	e.do("POST", "/api/protocolOptions", map[string]string{"password": ""}).must(t, 204)
	if get()["password"].Value != "" {
		t.Fatal("empty did not clear the secret")
	}
	// Choice options are never masked.
	e.do("POST", "/api/protocolOptions", map[string]string{"qos": "2"}).must(t, 204)
	if get()["qos"].Value != "2" {
		t.Fatal("choice option masked or not stored")
	}
	b, _ := os.ReadFile(filepath.Join(e.dir, optionsFile))
	var p persisted
	if err := json.Unmarshal(b, &p); err != nil || p.Options["qos"] != "2" {
		t.Fatalf("options not persisted: %v %s", err, b)
	}
}

// TestTransportConfig: empty object for MQTT, a selector with every field
// for LWM2M and COAP, selectedPort included when it is 0 (COAP with an
// ephemeral clientPort, not running).
func TestTransportConfig(t *testing.T) {
	e := startEmu(t, testConfig(t))
	tests := []struct {
		protocol string
		empty    bool
		port     float64
	}{
		{"MQTT", true, 0},
		{"LWM2M", false, 1884},
		{"COAP", false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.protocol, func(t *testing.T) {
			e.do("POST", "/api/protocol/"+tc.protocol, nil).must(t, 204)
			e.do("POST", "/api/config", map[string]any{"clientPort": 0, "serverPort": 1884}).must(t, 200)
			r := e.do("GET", "/api/transportConfig", nil).must(t, 200)
			if tc.empty {
				if strings.TrimSpace(string(r.body)) != "{}" {
					t.Fatalf("%s transport %s, want {}", tc.protocol, r.body)
				}
				return
			}
			var tr map[string]any
			r.json(t, &tr)
			for _, k := range []string{"key", "options", "selected", "selectedPort", "ports"} {
				if _, ok := tr[k]; !ok {
					t.Fatalf("%s transport lacks %s: %s", tc.protocol, k, r.body)
				}
			}
			if tr["selectedPort"] != tc.port {
				t.Errorf("%s selectedPort %v, want %v", tc.protocol, tr["selectedPort"], tc.port)
			}
		})
	}
}
