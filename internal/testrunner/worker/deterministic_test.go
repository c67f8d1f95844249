package worker

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"cpesuite/internal/testrunner/testcase"
	"cpesuite/internal/testrunner/wire"
)

// apiServer is a stand-in for the ACS management API: /ok answers 200
// with a JSON body, /missing 404, /echo returns method, a header and the
// body it got. It counts the requests it served.
func apiServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/ok":
			fmt.Fprint(w, `{"device":"cpe-1","status":"online"}`+"\n")
		case "/missing":
			http.Error(w, "no such device", http.StatusNotFound)
		case "/echo":
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s %s %s", r.Method, r.Header.Get("X-Probe"), b)
		case "/redirect":
			http.Redirect(w, r, "/ok", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func httpStep(url string, expect *testcase.Expectation) testcase.Step {
	return toolStep("GET "+url, BuiltinServer, "http_request", map[string]any{"url": url}, expect)
}

func TestDeterministicVerdicts(t *testing.T) {
	e := newEnv(t)
	api, _ := apiServer(t)
	tests := []struct {
		name   string
		step   testcase.Step
		status string
		detail string // a substring of the step's detail; "" means none
	}{
		{"success without expectation", httpStep(api.URL+"/ok", nil), wire.StepPassed, ""},
		{"contains", httpStep(api.URL+"/ok", &testcase.Expectation{Contains: `"online"`}), wire.StepPassed, ""},
		{"contains unmet", httpStep(api.URL+"/ok", &testcase.Expectation{Contains: "offline"}), wire.StepFailed, `expect.contains: result does not contain "offline"`},
		{"not_contains", httpStep(api.URL+"/ok", &testcase.Expectation{NotContains: "offline"}), wire.StepPassed, ""},
		{"not_contains unmet", httpStep(api.URL+"/ok", &testcase.Expectation{NotContains: "cpe-1"}), wire.StepFailed, `expect.not_contains: result contains "cpe-1"`},
		{"equals ignores the trailing newline", httpStep(api.URL+"/ok", &testcase.Expectation{Equals: "HTTP 200\n{\"device\":\"cpe-1\",\"status\":\"online\"}\n"}), wire.StepPassed, ""},
		{"equals unmet", httpStep(api.URL+"/ok", &testcase.Expectation{Equals: "HTTP 200"}), wire.StepFailed, "expect.equals"},
		{"matches", httpStep(api.URL+"/ok", &testcase.Expectation{Matches: `^HTTP 2\d\d`}), wire.StepPassed, ""},
		{"matches unmet", httpStep(api.URL+"/ok", &testcase.Expectation{Matches: `"status":"offline"`}), wire.StepFailed, "expect.matches"},
		{"invalid regexp", httpStep(api.URL+"/ok", &testcase.Expectation{Matches: `(`}), wire.StepError, "not a valid regular expression"},
		{"first unmet expectation is named", httpStep(api.URL+"/ok", &testcase.Expectation{Contains: "online", NotContains: "device", Matches: "zzz"}), wire.StepFailed, "expect.not_contains"},
		{"status 404 is a tool error", httpStep(api.URL+"/missing", nil), wire.StepFailed, "expected the tool to succeed"},
		{"expected error", httpStep(api.URL+"/missing", &testcase.Expectation{Error: boolPtr(true), Contains: "HTTP 404"}), wire.StepPassed, ""},
		{"expected error but success", httpStep(api.URL+"/ok", &testcase.Expectation{Error: boolPtr(true)}), wire.StepFailed, "expected the tool to report an error"},
		{"redirects are not followed", httpStep(api.URL+"/redirect", &testcase.Expectation{Contains: "HTTP 302"}), wire.StepPassed, ""},
		{"method, header and body", toolStep("post", BuiltinServer, "http_request", map[string]any{
			"method": "put", "url": api.URL + "/echo", "headers": map[string]any{"X-Probe": "p1"}, "body": "payload",
		}, &testcase.Expectation{Equals: "HTTP 200\nPUT p1 payload"}), wire.StepPassed, ""},
		{"refused connection is a tool error", httpStep("http://127.0.0.1:1/x", &testcase.Expectation{Error: boolPtr(true), Contains: "request failed"}), wire.StepPassed, ""},
		{"non-http url", httpStep("file:///etc/passwd", nil), wire.StepFailed, "invalid arguments: url must be an absolute http or https URL"},
		{"unknown argument", toolStep("x", BuiltinServer, "http_request", map[string]any{"url": api.URL, "timeout": 3}, nil), wire.StepFailed, `unknown argument \"timeout\"`},
		{"timeout out of range", toolStep("x", BuiltinServer, "http_request", map[string]any{"url": api.URL, "timeout_seconds": 121}, nil), wire.StepFailed, "timeout_seconds"},
		{"wait", waitStep(0.01), wire.StepPassed, ""},
		{"wait result", toolStep("w", BuiltinServer, "wait", map[string]any{"seconds": 0}, &testcase.Expectation{Equals: "waited 0s"}), wire.StepPassed, ""},
		{"wait too long", waitStep(601), wire.StepFailed, "seconds must be between 0 and 600"},
		{"wait with a string", toolStep("w", BuiltinServer, "wait", map[string]any{"seconds": "1"}, nil), wire.StepFailed, "seconds must be a number"},
		{"no tool", testcase.Step{Action: "look at the screen"}, wire.StepError, noToolDetail},
		{"unknown builtin", toolStep("x", BuiltinServer, "teleport", nil, nil), wire.StepError, `unknown built-in tool "teleport"`},
		{"transport failure", toolStep("x", "fake", "boom", nil, nil), wire.StepError, "connection reset by peer"},
		{"tool error verdict", toolStep("x", "fake", "fail", nil, nil), wire.StepFailed, "bad thing happened"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := fmt.Sprintf("v%d.yaml", i)
			e.cases.put(file, newCase(file, tc.step))
			d := e.runCase(alice, file, "")
			s := d.Steps[0]
			if s.Status != tc.status || (tc.detail == "" && s.Detail != "") || !strings.Contains(s.Detail, tc.detail) {
				t.Fatalf("step: %s %q, want %s with %q", s.Status, s.Detail, tc.status, tc.detail)
			}
			wantRun := map[string]string{wire.StepPassed: wire.StatusPassed, wire.StepFailed: wire.StatusFailed, wire.StepError: wire.StatusError}[tc.status]
			if d.Status != wantRun || d.Report == nil || d.Report.Status != wantRun {
				t.Fatalf("run status %s, report %+v; want %s", d.Status, d.Report, wantRun)
			}
			if !regexp.MustCompile(`(?m)^step 1: ` + tc.status + ` \(\d+ ms\)`).MatchString(d.Output) {
				t.Fatalf("output lacks the step line: %q", d.Output)
			}
		})
	}
}

func TestRunVerdictCollectsSteps(t *testing.T) {
	e := newEnv(t)
	ok := echo("ok", nil)
	fail := toolStep("x", "fake", "fail", nil, nil)
	boom := toolStep("x", "fake", "boom", nil, nil)
	tests := []struct {
		name  string
		steps []testcase.Step
		want  string
		each  []string
	}{
		{"all passed", []testcase.Step{ok, ok}, wire.StatusPassed, []string{wire.StepPassed, wire.StepPassed}},
		{"one failed", []testcase.Step{fail, ok}, wire.StatusFailed, []string{wire.StepFailed, wire.StepPassed}},
		{"error wins over failed", []testcase.Step{fail, boom, ok}, wire.StatusError, []string{wire.StepFailed, wire.StepError, wire.StepPassed}},
		{"no steps", nil, wire.StatusError, nil},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := fmt.Sprintf("c%d.yaml", i)
			e.cases.put(file, newCase(file, tc.steps...))
			d := e.runCase(alice, file, "")
			if d.Status != tc.want || d.Phase != wire.PhaseDone {
				t.Fatalf("run %s/%s, want %s/done", d.Status, d.Phase, tc.want)
			}
			if len(d.Steps) != len(tc.each) {
				t.Fatalf("%d steps", len(d.Steps))
			}
			for j, s := range d.Steps {
				if s.Step != j+1 || s.Status != tc.each[j] || s.Description == "" {
					t.Fatalf("step %d: %+v, want %s", j, s, tc.each[j])
				}
			}
		})
	}
}

func TestDryRunNeverCallsTools(t *testing.T) {
	e := newEnv(t)
	api, hits := apiServer(t)
	e.cases.put("dry.yaml", newCase("dry",
		httpStep(api.URL+"/ok", &testcase.Expectation{Contains: "x"}),
		toolStep("x", "fake", "echo", map[string]any{"text": "x"}, nil),
		waitStep(600),
	))
	e.cases.put("bad.yaml", newCase("bad",
		httpStep(api.URL+"/ok", nil),
		toolStep("x", "nowhere", "tool", nil, nil),
		toolStep("x", BuiltinServer, "teleport", nil, nil),
		httpStep(api.URL+"/ok", &testcase.Expectation{Matches: "("}),
		testcase.Step{Action: "no tool"},
	))
	d := e.runCase(alice, "dry.yaml", "&dry_run=true")
	if !d.DryRun || d.Status != wire.StatusPassed {
		t.Fatalf("dry run: %+v", d)
	}
	for _, s := range d.Steps {
		if s.Status != wire.StepPassed || !strings.Contains(s.Detail, "dry run") {
			t.Fatalf("dry step: %+v", s)
		}
	}
	d = e.runCase(alice, "bad.yaml", "&dry_run=1")
	want := []string{wire.StepPassed, wire.StepError, wire.StepError, wire.StepError, wire.StepError}
	for i, s := range d.Steps {
		if s.Status != want[i] {
			t.Fatalf("dry step %d: %+v, want %s", i+1, s, want[i])
		}
	}
	if !strings.Contains(d.Steps[1].Detail, `tool server "nowhere" is not configured`) {
		t.Fatalf("unknown server detail: %q", d.Steps[1].Detail)
	}
	if d.Status != wire.StatusError || len(d.MCPLog) != 0 || hits.Load() != 0 || e.tools.calls.Load() != 0 {
		t.Fatalf("dry run called tools: status %s, log %d, http %d, fake %d", d.Status, len(d.MCPLog), hits.Load(), e.tools.calls.Load())
	}
}

func TestUnconfiguredToolServer(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Tools = nil })
	e.cases.put("a.yaml", newCase("a", echo("x", nil)))
	d := e.runCase(alice, "a.yaml", "")
	if d.Steps[0].Status != wire.StepError || !strings.Contains(d.Steps[0].Detail, `tool server "fake" is not configured`) {
		t.Fatalf("%+v", d.Steps[0])
	}
	d = e.runCase(alice, "a.yaml", "&dry_run=true")
	if d.Steps[0].Status != wire.StepError || !strings.Contains(d.Steps[0].Detail, `tool server "fake" is not configured`) {
		t.Fatalf("dry: %+v", d.Steps[0])
	}
}

func TestToolLogAndOutputCap(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxToolOutput = 10 })
	api, _ := apiServer(t)
	long := strings.Repeat("a", 10) + "TAIL"
	e.cases.put("cap.yaml", newCase("cap",
		echo(long, &testcase.Expectation{Contains: "TAIL"}),
		toolStep("x", BuiltinServer, "http_request", map[string]any{
			"url": api.URL + "/echo", "headers": map[string]any{"Authorization": "Bearer s3cret", "X-Probe": "visible"},
		}, nil),
	))
	d := e.runCase(alice, "cap.yaml", "")
	if d.Steps[0].Status != wire.StepFailed || !strings.Contains(d.Steps[0].Detail, "truncated: 10 of 14 bytes") {
		t.Fatalf("capped result reached the check whole: %+v", d.Steps[0])
	}
	if len(d.MCPLog) != 2 {
		t.Fatalf("mcpLog: %+v", d.MCPLog)
	}
	first, second := d.MCPLog[0], d.MCPLog[1]
	if first.Seq != 1 || first.Step != 1 || first.Server != "fake" || first.Tool != "echo" || first.Result != long || first.At.IsZero() {
		t.Fatalf("log entry keeps the whole result: %+v", first)
	}
	h, _ := second.Arguments["headers"].(map[string]any)
	if second.Seq != 2 || second.Step != 2 || h["Authorization"] != redactedValue || h["X-Probe"] != "visible" {
		t.Fatalf("log entry arguments: %+v", second.Arguments)
	}
	if strings.Contains(d.Output, "s3cret") || strings.Contains(fmt.Sprint(d.MCPLog), "s3cret") {
		t.Fatal("a credential reached the run detail")
	}
}
