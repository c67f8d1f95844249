package emulatortools

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/logx"
	"cpesuite/internal/testutil"
)

// toolArgs is the contract the worker and the e2e test depend on: every
// tool with its arguments, the required ones first.
var toolArgs = map[string]struct{ required, optional []string }{
	"start_device":    {[]string{"serial"}, []string{"tree_file", "acs_url", "connection_request", "restart"}},
	"stop_device":     {[]string{"serial"}, nil},
	"list_devices":    {nil, nil},
	"device_status":   {[]string{"serial"}, nil},
	"get_parameter":   {[]string{"serial", "name"}, nil},
	"get_parameters":  {[]string{"serial", "prefix"}, []string{"limit"}},
	"set_parameter":   {[]string{"serial", "name", "value"}, []string{"silent"}},
	"invoke_event":    {[]string{"serial", "event"}, nil},
	"read_log":        {[]string{"serial"}, []string{"lines"}},
	"acs_find_device": {[]string{"serial"}, []string{"wait_seconds", "informed_after"}},
	"acs_get_device":  {nil, []string{"serial", "device_id", "parameter_prefix"}},
	"acs_queue_task": {[]string{"kind"}, []string{"serial", "device_id", "values", "names", "path", "next_level", "object_name",
		"parameter_key", "command_key", "delay_seconds", "args", "connection_request", "wait_seconds", "label"}},
	"acs_get_task": {nil, []string{"task_id", "transaction_id"}},
}

func TestToolsList(t *testing.T) {
	srv, err := New(Config{EmulatorURL: "http://127.0.0.1:8555", ACSURL: "http://127.0.0.1:7557/acs", Log: logx.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := connectInMemory(t, srv).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		want, known := toolArgs[tool.Name]
		if !known {
			t.Errorf("unexpected tool %s", tool.Name)
			continue
		}
		if tool.Description == "" || tool.Annotations == nil {
			t.Errorf("%s: no description or annotations", tool.Name)
		}
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
			Additional *bool                      `json:"additionalProperties"`
		}
		raw, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(raw, &schema); err != nil || schema.Type != "object" {
			t.Errorf("%s: input schema %s is not an object schema", tool.Name, raw)
			continue
		}
		slices.Sort(schema.Required)
		if got, w := schema.Required, slices.Sorted(slices.Values(want.required)); !slices.Equal(got, w) {
			t.Errorf("%s: required %v, want %v", tool.Name, got, w)
		}
		all := append(slices.Clone(want.required), want.optional...)
		if len(schema.Properties) != len(all) {
			t.Errorf("%s: properties %s, want %v", tool.Name, raw, all)
		}
		for _, p := range all {
			var prop struct {
				Description string `json:"description"`
			}
			if err := json.Unmarshal(schema.Properties[p], &prop); err != nil || prop.Description == "" {
				t.Errorf("%s: argument %s missing or without a description in %s", tool.Name, p, raw)
			}
		}
	}
	slices.Sort(names)
	var want []string
	for n := range toolArgs {
		want = append(want, n)
	}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
}

func TestNewValidatesConfig(t *testing.T) {
	good := "http://127.0.0.1:8555"
	for _, tc := range []struct {
		name     string
		cfg      Config
		wantErr  string
		wantACS  string
		wantEmul string
	}{
		{"worker form", Config{EmulatorURL: good + "/", ACSURL: "http://127.0.0.1:7557/acs"}, "", "http://127.0.0.1:7557", good},
		{"acs with slash", Config{EmulatorURL: good, ACSURL: "https://acs.example:7557/acs/"}, "", "https://acs.example:7557", good},
		{"acs base", Config{EmulatorURL: good, ACSURL: "http://acs:7557"}, "", "http://acs:7557", good},
		{"path prefix kept", Config{EmulatorURL: "http://proxy/emu", ACSURL: "http://proxy/x/acs"}, "", "http://proxy/x", "http://proxy/emu"},
		{"no emulator", Config{ACSURL: "http://acs:7557"}, "EmulatorURL is required", "", ""},
		{"no acs", Config{EmulatorURL: good}, "ACSURL is required", "", ""},
		{"not http", Config{EmulatorURL: "ftp://emu", ACSURL: "http://acs"}, "not an http or https URL", "", ""},
		{"no host", Config{EmulatorURL: "http://", ACSURL: "http://acs"}, "not an http or https URL", "", ""},
		{"relative", Config{EmulatorURL: good, ACSURL: "acs:7557"}, "not an http or https URL", "", ""},
		{"credentials", Config{EmulatorURL: good, ACSURL: "http://user:secret@acs"}, "must not carry credentials", "", ""},
		{"query", Config{EmulatorURL: good + "?x=1", ACSURL: "http://acs"}, "query or fragment", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, apperr.ErrInvalid) {
					t.Fatalf("New = %v, want an invalid-config error with %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Fatalf("error %q shows the password", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.acsBase != tc.wantACS || s.emu.base != tc.wantEmul {
				t.Fatalf("bases %q and %q, want %q and %q", s.emu.base, s.acsBase, tc.wantEmul, tc.wantACS)
			}
			if s.Handler() == nil || s.MCP() == nil {
				t.Fatal("no handler or server")
			}
		})
	}
}

// TestHandlerServesStatelessMCP: the HTTP endpoint answers plain
// JSON-RPC posts without a session, so a restarted server is no surprise
// to a client.
func TestHandlerServesStatelessMCP(t *testing.T) {
	srv, err := New(Config{EmulatorURL: "http://" + testutil.FreeAddr(t), ACSURL: "http://" + testutil.FreeAddr(t), Log: logx.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	cs := connectHTTP(t, srv)
	if id := cs.ID(); id != "" {
		t.Fatalf("session id %q, want none (stateless)", id)
	}
	fails(t, cs, "list_devices", nil, "EMULATOR_UNREACHABLE:")
}

func TestEventFor(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"2 PERIODIC", "Periodic"}, {"2", "Periodic"}, {"Periodic", "Periodic"}, {"periodic", "Periodic"},
		{"4 VALUE CHANGE", "ValueChange"}, {"value_change", "ValueChange"}, {"ValueChange", "ValueChange"},
		{"0 BOOTSTRAP", "BootStrap"}, {"1 BOOT", "Boot"}, {"1", "Boot"}, {"Boot", "Boot"},
		{"6 CONNECTION REQUEST", "ConnectionRequest"}, {"7 TRANSFER COMPLETE", "TransferComplete"},
		{"8 DIAGNOSTICS COMPLETE", "Diagnostics"}, {"8", "Diagnostics"}, {"Diagnostics", "Diagnostics"},
		{"11 DU STATE CHANGE COMPLETE", "DUStateChangeComplete"}, {" 2 periodic ", "Periodic"},
		{"", ""}, {"3", ""}, {"2 BOOT", ""}, {"M Reboot", ""}, {"PERIODICAL", ""}, {"22", ""},
	} {
		ev, err := eventFor(tc.in)
		if ev.name != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("eventFor(%q) = %q, %v; want %q", tc.in, ev.name, err, tc.want)
		}
	}
}

func TestTaskKind(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SetParameterValues", "SetParameterValues"}, {"setParameterValues", "SetParameterValues"},
		{"set_parameter_values", "SetParameterValues"}, {"reboot", "Reboot"}, {"IPPing", "IPPing"},
		{"connection_request", "ConnectionRequest"}, {"connectionRequest", "ConnectionRequest"},
		{"", ""}, {"SetParameterValue", ""}, {"Explode", ""},
	} {
		got, err := taskKind(tc.in)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("taskKind(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestScalar(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
		ok   bool
	}{
		{"abc", "abc", true}, {"", "", true}, {float64(1234), "1234", true}, {1.5, "1.5", true},
		{true, "true", true}, {false, "false", true}, {float64(-7), "-7", true},
		{nil, "", false}, {map[string]any{}, "", false}, {[]any{"a"}, "", false},
	} {
		got, err := scalar("value", tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("scalar(%#v) = %q, %v", tc.in, got, err)
		}
	}
}
