package worker

import (
	"context"
	"strings"
	"testing"
)

func TestParseToolServers(t *testing.T) {
	cases := []struct {
		in      string
		want    []ToolServer
		wantErr string
	}{
		{in: "", want: nil},
		{in: " , ", want: nil},
		{in: DefaultToolServers, want: []ToolServer{{"emulator", "http://127.0.0.1:8558/mcp"}, {"browser", "http://127.0.0.1:8559/mcp"}}},
		{in: " emu = https://h:1/mcp ", want: []ToolServer{{"emu", "https://h:1/mcp"}}},
		{in: "emu", wantErr: "not name=url"},
		{in: "=http://h/", wantErr: "not name=url"},
		{in: "Emu=http://h/", wantErr: "lower-case"},
		{in: "builtin=http://h/", wantErr: "reserved"},
		{in: "a=http://h/,a=http://g/", wantErr: "twice"},
		{in: "a=file:///etc/passwd", wantErr: "not an http or https URL"},
		{in: "a=http://", wantErr: "not an http or https URL"},
	}
	for _, c := range cases {
		got, err := ParseToolServers(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("%q: error %v, want one containing %q", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil || len(got) != len(c.want) {
			t.Fatalf("%q: %v, %v; want %v", c.in, got, err, c.want)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("%q: %v, want %v", c.in, got, c.want)
			}
		}
	}
}

func TestToolboxListPutsBuiltinsFirstAndKeepsThemUnshadowed(t *testing.T) {
	tb := newToolbox(shadowTools{newFakeTools()})
	got, err := tb.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ti := range got {
		names = append(names, ti.Server+"/"+ti.Name)
		if len(ti.InputSchema) == 0 {
			t.Fatalf("%s/%s has no input schema", ti.Server, ti.Name)
		}
	}
	want := "builtin/http_request builtin/wait fake/boom fake/echo fake/fail fake/gate fake/noop"
	if strings.Join(names, " ") != want {
		t.Fatalf("tools %v, want %s", names, want)
	}
	// Every built-in the toolbox can call is described, and no other.
	if len(tb.infos) != len(tb.builtin) {
		t.Fatalf("%d built-in descriptions for %d built-in tools", len(tb.infos), len(tb.builtin))
	}
	for _, ti := range tb.infos {
		if _, ok := tb.builtin[ti.Name]; !ok {
			t.Fatalf("description of unknown built-in %q", ti.Name)
		}
	}
}

// shadowTools adds a tool that claims to be a built-in.
type shadowTools struct{ *fakeTools }

func (s shadowTools) List(ctx context.Context) ([]ToolInfo, error) {
	l, err := s.fakeTools.List(ctx)
	return append(l, ToolInfo{Server: BuiltinServer, Name: "wait"}), err
}

func TestExecutorSelectionByPrefix(t *testing.T) {
	e := newEnv(t)
	cases := []struct{ model, wantName, wantModel string }{
		{"", DeterministicModel, DeterministicModel},
		{"deterministic", DeterministicModel, DeterministicModel},
		{"deterministic:replay-1", DeterministicModel, "deterministic:replay-1"},
		{"nope", "", ""},
		{"nope:x", "", ""},
		{"deterministic:", "", ""},
	}
	for _, c := range cases {
		ex, model, err := e.w.executor(c.model)
		if c.wantName == "" {
			if err == nil {
				t.Fatalf("model %q selected %s", c.model, ex.Name())
			}
			continue
		}
		if err != nil || ex.Name() != c.wantName || model != c.wantModel {
			t.Fatalf("model %q: %v %q %v", c.model, ex, model, err)
		}
	}
}
