package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/testcase"
	"cpesuite/internal/testrunner/wire"
	"cpesuite/internal/testrunner/worker"
	"cpesuite/internal/testutil"
)

type oneCase map[string]*testcase.Case

func (m oneCase) Get(file string) (*testcase.Case, error) {
	if tc, ok := m[file]; ok {
		return tc, nil
	}
	return nil, apperr.NotFound("", "test %s not found", file)
}

func toolStep(name string, args map[string]any, expect *testcase.Expectation) testcase.Step {
	return testcase.Step{Action: "call " + name, Tool: &testcase.ToolCall{Server: "emulator", Name: name, Arguments: args, Expect: expect}}
}

// The worker's deterministic executor runs a case's tool steps through
// the client against a real MCP server, reached through the mcp_servers
// setting, and the client's routes sit beside the worker's.
func TestWorkerRunsCasesThroughClient(t *testing.T) {
	emu := newToolServer(t, "emu")
	yes := true
	cases := oneCase{
		"ok.yaml": {ID: "ok", Title: "tool steps", Steps: []testcase.Step{
			toolStep("echo", map[string]any{"text": "hello"}, &testcase.Expectation{Equals: "emu: hello"}),
			toolStep("fail", nil, &testcase.Expectation{Error: &yes, Contains: "bad thing"}),
			toolStep("shot", nil, &testcase.Expectation{Contains: "[image/png, 5120 bytes]"}),
			toolStep("info", nil, &testcase.Expectation{Matches: `"count":\s*3`}),
		}},
		"typo.yaml": {ID: "typo", Title: "unknown tool", Steps: []testcase.Step{toolStep("ecko", nil, nil)}},
	}
	logs := &testutil.SyncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	var w *worker.Worker
	c := New(Config{Setting: func(k string) string { return w.Setting(k) }, Log: log})
	env := func(k string) (string, bool) {
		if k == "MCP_SERVERS" {
			return "emulator=" + emu.url(), true
		}
		return "", false
	}
	w, err := worker.New(worker.Config{DataDir: t.TempDir(), Secret: testSecret, Tools: c, Env: env}, cases, log)
	if err != nil {
		t.Fatal(err)
	}
	mux := httpx.NewMux()
	c.Routes(mux, w.Guard())
	w.Routes(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		w.Shutdown(ctx)
		_ = c.Close()
		srv.Close()
	})
	alice := identity.Identity{Username: "alice", Role: identity.RoleEditor}
	do := func(method, path string, out any) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		identity.SignRequest(testSecret, req, alice, time.Now())
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		if err := json.NewDecoder(bytes.NewReader(b)).Decode(out); err != nil {
			t.Fatalf("%s %s: %s: %v", method, path, b, err)
		}
	}
	run := func(query string) wire.RunDetail {
		t.Helper()
		var sr wire.StartRun
		do("POST", "/api/run?"+query, &sr)
		var d wire.RunDetail
		testutil.Eventually(t, waitFor, "run "+sr.RunID+" to end", func() bool {
			do("GET", "/api/runs/"+sr.RunID, &d)
			return d.Status != wire.StatusRunning
		})
		return d
	}

	d := run("test_file=ok.yaml")
	if d.Status != wire.StatusPassed {
		t.Fatalf("run %s: %+v\noutput:\n%s", d.Status, d.Steps, d.Output)
	}
	if len(d.MCPLog) != 4 {
		t.Fatalf("mcpLog has %d entries, want 4: %+v", len(d.MCPLog), d.MCPLog)
	}
	if e := d.MCPLog[0]; e.Server != "emulator" || e.Tool != "echo" || e.Result != "emu: hello" || e.Error != "" {
		t.Errorf("first log entry %+v", e)
	}
	if e := d.MCPLog[1]; e.Error != "the tool reported an error" || e.Result != "bad thing happened" {
		t.Errorf("tool-error log entry %+v", e)
	}

	d = run("test_file=ok.yaml&dry_run=true")
	if d.Status != wire.StatusPassed || len(d.MCPLog) != 0 {
		t.Fatalf("dry run %s, %d calls: %+v", d.Status, len(d.MCPLog), d.Steps)
	}

	for _, q := range []string{"test_file=typo.yaml", "test_file=typo.yaml&dry_run=true"} {
		d = run(q)
		if d.Status != wire.StatusError || d.Steps[0].Status != wire.StepError ||
			!strings.Contains(d.Steps[0].Detail, `no tool "ecko" (its tools: echo, fail, info, shot, slow)`) {
			t.Fatalf("%s: %s %+v", q, d.Status, d.Steps)
		}
	}

	var st Status
	do("GET", "/api/mcp-status", &st)
	if !st.Connected || st.MCPs["emulator"].Tools != 5 {
		t.Fatalf("status %+v", st)
	}
	tools, err := c.List(ctxFor(t))
	if err != nil || len(tools) != 5 {
		t.Fatalf("List = %d tools, %v", len(tools), err)
	}
	if emu.initialized.Load() != 1 {
		t.Fatalf("the runs opened %d sessions, want one shared", emu.initialized.Load())
	}
}
