package llm

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"cpesuite/internal/testrunner/worker"
)

var providerName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestToolSetNames(t *testing.T) {
	long := strings.Repeat("x", 80)
	infos := []worker.ToolInfo{
		{Server: "builtin", Name: "wait", InputSchema: json.RawMessage(`{"type":"object","properties":{"seconds":{"type":"number"}}}`)},
		{Server: "emulator", Name: "get.parameter/values", Description: "Read parameters."},
		{Server: "emulator", Name: "get_parameter_values"}, // clashes with the cleaned name above
		{Server: "browser", Name: long + "a"},
		{Server: "browser", Name: long + "b"},              // same first 64 bytes
		{Server: "emulator", Name: "get.parameter/values"}, // listed twice
	}
	ts := newToolSet(infos)
	wantNames := []string{
		"builtin__wait",
		"emulator__get_parameter_values",
		"emulator__get_parameter_values_2",
		("browser__" + long)[:64],
		("browser__" + long)[:62] + "_2",
	}
	if len(ts.defs) != len(wantNames) {
		t.Fatalf("%d tools, want %d: %+v", len(ts.defs), len(wantNames), ts.defs)
	}
	for i, d := range ts.defs {
		if d.name != wantNames[i] || !providerName.MatchString(d.name) {
			t.Errorf("tool %d named %q, want %q", i, d.name, wantNames[i])
		}
		ref, ok := ts.lookup(d.name)
		if !ok || ref.server != infos[i].Server || ref.tool != infos[i].Name {
			t.Errorf("%s maps back to %+v", d.name, ref)
		}
		if ts.nameOf(infos[i].Server, infos[i].Name) != d.name {
			t.Errorf("nameOf(%s, %s) = %q", infos[i].Server, infos[i].Name, ts.nameOf(infos[i].Server, infos[i].Name))
		}
	}
	if ts.defs[1].description != "Read parameters." || !strings.Contains(ts.defs[2].description, `"get_parameter_values" of tool server "emulator"`) {
		t.Errorf("descriptions %q / %q", ts.defs[1].description, ts.defs[2].description)
	}
	if _, ok := ts.lookup("nope__x"); ok {
		t.Error("an unknown name resolved")
	}
}

func TestObjectSchema(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{``, `{"type":"object","properties":{}}`},
		{`not json`, `{"type":"object","properties":{}}`},
		{`null`, `{"type":"object","properties":{}}`},
		{`{"type":"string"}`, `{"type":"object","properties":{}}`},
		{`{"properties":{"a":{"type":"string"}}}`, `{"properties":{"a":{"type":"string"}},"type":"object"}`},
		{`{"type":"object"}`, `{"properties":{},"type":"object"}`},
		{`{"type":"object","properties":{"a":{}},"required":["a"]}`, `{"properties":{"a":{}},"required":["a"],"type":"object"}`},
	}
	for _, tc := range tests {
		if got := string(objectSchema(json.RawMessage(tc.in))); got != tc.want {
			t.Errorf("objectSchema(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
