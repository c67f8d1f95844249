package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/identity/identitytest"
	"cpesuite/internal/testrunner/testcase"
	"cpesuite/internal/testrunner/wire"
	"cpesuite/internal/testutil"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef")

var (
	alice    = identity.Identity{Username: "alice", Role: identity.RoleEditor}
	bob      = identity.Identity{Username: "bob", Role: identity.RoleEditor}
	bobAdmin = identity.Identity{Username: "bob", Role: identity.RoleAdmin}
	root     = identity.Identity{Username: "root", Role: identity.RoleAdmin}
)

// waitFor bounds every wait: a safety net against a hang sized for a busy
// 2-core machine, never a measure of speed.
const waitFor = testutil.MinDeadline

// mapCases is an in-memory Cases.
type mapCases struct {
	mu sync.Mutex
	m  map[string]*testcase.Case
	// fail, when set, is what every Get answers (a broken stored file).
	fail error
}

func (c *mapCases) Get(file string) (*testcase.Case, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail != nil {
		return nil, c.fail
	}
	tc, ok := c.m[file]
	if !ok {
		return nil, apperr.NotFound("", "test %s not found", file)
	}
	return tc, nil
}

func (c *mapCases) put(file string, tc *testcase.Case) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]*testcase.Case{}
	}
	c.m[file] = tc
}

// fakeTools is a tool server "fake": echo returns args.text, gate blocks
// until the test opens it once (or the run ends), fail reports a tool
// error, boom a transport error.
type fakeTools struct {
	calls atomic.Int64
	gate  chan struct{}
}

func newFakeTools() *fakeTools { return &fakeTools{gate: make(chan struct{})} }

func (f *fakeTools) Resolve(_ context.Context, server, tool string) error {
	if server != "fake" {
		return fmt.Errorf("tool server %q is not configured", server)
	}
	switch tool {
	case "echo", "gate", "fail", "boom", "noop":
		return nil
	}
	return fmt.Errorf("fake has no tool %q", tool)
}

func (f *fakeTools) List(context.Context) ([]ToolInfo, error) {
	var out []ToolInfo
	for _, n := range []string{"boom", "echo", "fail", "gate", "noop"} {
		out = append(out, ToolInfo{Server: "fake", Name: n, InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	return out, nil
}

func (f *fakeTools) Call(ctx context.Context, server, tool string, args map[string]any) (string, bool, error) {
	f.calls.Add(1)
	if err := f.Resolve(ctx, server, tool); err != nil {
		return "", false, err
	}
	switch tool {
	case "echo":
		s, _ := args["text"].(string)
		return s, false, nil
	case "gate":
		select {
		case <-f.gate:
			return "opened", false, nil
		case <-ctx.Done():
			return "", false, context.Cause(ctx)
		}
	case "fail":
		return "bad thing happened", true, nil
	case "boom":
		return "", false, errors.New("connection reset by peer")
	}
	return "", false, nil
}

// open lets one gate call through, waiting until a run takes it.
func (f *fakeTools) open(t *testing.T) {
	t.Helper()
	select {
	case f.gate <- struct{}{}:
	case <-time.After(waitFor):
		t.Fatal("no run took the gate")
	}
}

type env struct {
	t     *testing.T
	w     *Worker
	srv   *httptest.Server
	cases *mapCases
	tools *fakeTools
	dir   string
	logs  *testutil.SyncBuffer
}

func newEnv(t *testing.T, tweak ...func(*Config)) *env {
	t.Helper()
	e := &env{t: t, cases: &mapCases{}, tools: newFakeTools(), dir: t.TempDir(), logs: &testutil.SyncBuffer{}}
	cfg := Config{DataDir: e.dir, Secret: testSecret, Version: "test", Tools: e.tools, Env: func(string) (string, bool) { return "", false }}
	for _, f := range tweak {
		f(&cfg)
	}
	e.start(cfg)
	return e
}

// start builds a worker and server on cfg (again after a restart).
func (e *env) start(cfg Config) {
	t := e.t
	t.Helper()
	w, err := New(cfg, e.cases, slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	mux := httpx.NewMux()
	w.Routes(mux)
	srv := httptest.NewServer(mux)
	e.w, e.srv = w, srv
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		w.Shutdown(ctx)
		srv.Close()
	})
}

// do sends a request signed for id (unsigned when id is nil).
func (e *env) do(id *identity.Identity, method, path string, body any) (int, []byte) {
	e.t.Helper()
	resp, out := identitytest.Do(e.t, e.srv.Client(), testSecret, id, method, e.srv.URL+path, body)
	return resp.StatusCode, out
}

// call sends a request, requires status want and decodes the body into out.
func (e *env) call(id identity.Identity, method, path string, body any, want int, out any) {
	e.t.Helper()
	code, b := e.do(&id, method, path, body)
	if code != want {
		e.t.Fatalf("%s %s as %s: status %d, want %d; body %s", method, path, id.Username, code, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			e.t.Fatalf("%s %s: body %s: %v", method, path, b, err)
		}
	}
}

// errorCode sends a request expecting an error status and returns the
// body's code and detail.
func (e *env) errorCode(id *identity.Identity, method, path string, body any, want int) (code, detail string) {
	e.t.Helper()
	status, b := e.do(id, method, path, body)
	if status != want {
		e.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, status, want, b)
	}
	var eb struct {
		Detail string `json:"detail"`
		Code   string `json:"code"`
	}
	if err := json.Unmarshal(b, &eb); err != nil || eb.Detail == "" || eb.Code == "" {
		e.t.Fatalf("%s %s: error body %s is not {detail, code}: %v", method, path, b, err)
	}
	return eb.Code, eb.Detail
}

func (e *env) startRun(id identity.Identity, file string, query string) string {
	e.t.Helper()
	var sr wire.StartRun
	e.call(id, "POST", "/api/run?test_file="+file+query, nil, 200, &sr)
	if !strings.HasPrefix(sr.RunID, "r-") {
		e.t.Fatalf("run id %q", sr.RunID)
	}
	return sr.RunID
}

func (e *env) run(id identity.Identity, runID string) wire.RunDetail {
	e.t.Helper()
	var d wire.RunDetail
	e.call(id, "GET", "/api/runs/"+runID, nil, 200, &d)
	return d
}

// finished waits for the run to end and returns its detail.
func (e *env) finished(id identity.Identity, runID string) wire.RunDetail {
	e.t.Helper()
	var d wire.RunDetail
	testutil.Eventually(e.t, waitFor, "run "+runID+" to end", func() bool {
		d = e.run(id, runID)
		return d.Status != wire.StatusRunning
	})
	return d
}

// runCase runs a case to its end.
func (e *env) runCase(id identity.Identity, file, query string) wire.RunDetail {
	e.t.Helper()
	return e.finished(id, e.startRun(id, file, query))
}

func (e *env) batchStatus(id identity.Identity) wire.BatchStatus {
	e.t.Helper()
	var bs wire.BatchStatus
	e.call(id, "GET", "/api/run/batch", nil, 200, &bs)
	return bs
}

func (e *env) health() wire.WorkerHealth {
	e.t.Helper()
	var h wire.WorkerHealth
	code, b := e.do(nil, "GET", "/health", nil)
	if code != 200 || json.Unmarshal(b, &h) != nil {
		e.t.Fatalf("health: %d %s", code, b)
	}
	return h
}

// step builders

func toolStep(action, server, name string, args map[string]any, expect *testcase.Expectation) testcase.Step {
	return testcase.Step{Action: action, Tool: &testcase.ToolCall{Server: server, Name: name, Arguments: args, Expect: expect}}
}

func echo(text string, expect *testcase.Expectation) testcase.Step {
	return toolStep("echo "+text, "fake", "echo", map[string]any{"text": text}, expect)
}

func gate() testcase.Step { return toolStep("gate", "fake", "gate", nil, nil) }

func waitStep(secs float64) testcase.Step {
	return toolStep("wait", BuiltinServer, "wait", map[string]any{"seconds": secs}, nil)
}

func newCase(id string, steps ...testcase.Step) *testcase.Case {
	return &testcase.Case{ID: id, Title: "Case " + id, Steps: steps}
}

func boolPtr(b bool) *bool { return &b }
