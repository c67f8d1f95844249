package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/wire"
	"cpesuite/internal/testutil"
)

// routes lists every authenticated route with a path that reaches its
// handler.
var routes = []struct{ method, path string }{
	{"POST", "/api/run?test_file=a.yaml"},
	{"POST", "/api/run/stop"},
	{"POST", "/api/run/batch"},
	{"GET", "/api/run/batch"},
	{"GET", "/api/run/batch/report"},
	{"GET", "/api/run/batch/reports"},
	{"GET", "/api/run/batch/reports/b-0123456789abcdef"},
	{"DELETE", "/api/run/batch/reports"},
	{"GET", "/api/runs"},
	{"GET", "/api/runs/active"},
	{"GET", "/api/runs/r-0123456789abcdef"},
	{"DELETE", "/api/runs"},
	{"GET", "/ws/run/r-0123456789abcdef"},
	{"GET", "/api/settings"},
	{"PUT", "/api/settings"},
	{"DELETE", "/api/settings"},
}

func TestEveryRouteNeedsAValidIdentity(t *testing.T) {
	e := newEnv(t)
	e.cases.put("a.yaml", newCase("a", echo("x", nil)))
	forgedSecret := []byte("another-secret-another-secret-xx")
	for _, rt := range routes {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			if code, _ := e.errorCode(nil, rt.method, rt.path, nil, 401); code != "UNAUTHENTICATED" {
				t.Fatalf("missing identity: code %q", code)
			}
			forged := func(req *http.Request) { identity.SignRequest(forgedSecret, req, root, time.Now()) }
			otherPath := func(req *http.Request) {
				req.Header.Set(identity.Header, identity.Sign(testSecret, root, req.Method, "/api/other", time.Now()))
			}
			expired := func(req *http.Request) { identity.SignRequest(testSecret, req, root, time.Now().Add(-time.Hour)) }
			for name, sign := range map[string]func(*http.Request){"forged": forged, "other path": otherPath, "expired": expired} {
				req, _ := http.NewRequest(rt.method, e.srv.URL+rt.path, nil)
				sign(req)
				resp, err := e.srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				var body map[string]any
				_ = json.NewDecoder(resp.Body).Decode(&body)
				resp.Body.Close()
				if resp.StatusCode != 401 || body["code"] != "UNAUTHENTICATED" {
					t.Fatalf("%s identity: %d %v", name, resp.StatusCode, body)
				}
			}
		})
	}
	if h := e.health(); h.Status != "ok" || h.Version != "test" || h.Batch != wire.BatchNone || h.Busy {
		t.Fatalf("health without identity: %+v", h)
	}
}

func TestUnmatchedRoutesAnswerJSON(t *testing.T) {
	e := newEnv(t)
	for _, rt := range []struct{ method, path string }{
		{"PATCH", "/api/runs"},
		{"GET", "/api/no-such-thing"},
		{"POST", "/ws/run/x"},
	} {
		if code, _ := e.errorCode(&alice, rt.method, rt.path, nil, 404); code != "NO_ROUTE" {
			t.Fatalf("%s %s: code %q", rt.method, rt.path, code)
		}
	}
}

func TestOwnerIsolation(t *testing.T) {
	e := newEnv(t)
	e.cases.put("a.yaml", newCase("a", echo("hello", nil)))
	aliceRun := e.runCase(alice, "a.yaml", "").RunID
	bobRun := e.runCase(bob, "a.yaml", "").RunID

	for _, who := range []identity.Identity{bob, bobAdmin, root} {
		if code, _ := e.errorCode(&who, "GET", "/api/runs/"+aliceRun, nil, 404); code != "RUN_NOT_FOUND" {
			t.Fatalf("%s/%s read alice's run: %s", who.Username, who.Role, code)
		}
		e.errorCode(&who, "GET", "/ws/run/"+aliceRun, nil, 404)
	}
	ids := func(id identity.Identity, query string) []string {
		var rows []wire.RunSummary
		e.call(id, "GET", "/api/runs"+query, nil, 200, &rows)
		var out []string
		for _, r := range rows {
			out = append(out, r.RunID)
		}
		return out
	}
	if got := ids(bobAdmin, ""); !slices.Equal(got, []string{bobRun}) {
		t.Fatalf("admin bob without all: %v", got)
	}
	if got := ids(bobAdmin, "?all=true"); !slices.Equal(got, []string{bobRun, aliceRun}) {
		t.Fatalf("admin all=true (newest first): %v, want %v", got, []string{bobRun, aliceRun})
	}
	if got := ids(alice, "?all=false"); !slices.Equal(got, []string{aliceRun}) {
		t.Fatalf("alice all=false: %v", got)
	}
	if code, _ := e.errorCode(&alice, "GET", "/api/runs?all=true", nil, 403); code != "FORBIDDEN" {
		t.Fatalf("editor all=true: %s", code)
	}
	e.errorCode(&alice, "GET", "/api/runs?all=maybe", nil, 400)

	// An editor's DELETE clears only the editor's runs.
	var cleared map[string]int
	e.call(bob, "DELETE", "/api/runs", nil, 200, &cleared)
	if cleared["cleared"] != 1 {
		t.Fatalf("bob cleared %v", cleared)
	}
	if got := ids(alice, ""); !slices.Equal(got, []string{aliceRun}) {
		t.Fatalf("bob's clear removed alice's run: %v", got)
	}
	// An admin's DELETE clears every account's finished runs.
	e.call(root, "DELETE", "/api/runs", nil, 200, &cleared)
	if cleared["cleared"] != 1 || len(ids(alice, "")) != 0 {
		t.Fatalf("admin clear: %v, alice still has %v", cleared, ids(alice, ""))
	}
}

func TestOneRunAtATime(t *testing.T) {
	e := newEnv(t)
	e.cases.put("gate.yaml", newCase("gate", gate()))
	const n = 8
	var wg sync.WaitGroup
	codes := make([]int, n)
	bodies := make([][]byte, n)
	for i := range n {
		wg.Go(func() {
			who := alice
			if i%2 == 1 {
				who = bob
			}
			path := "/api/run?test_file=gate.yaml"
			var body any
			if i%3 == 2 {
				path, body = "/api/run/batch", wire.StartBatchRequest{TestFiles: []string{"gate.yaml"}}
			}
			codes[i], bodies[i] = e.do(&who, "POST", path, body)
		})
	}
	wg.Wait()
	won := 0
	for i, c := range codes {
		switch c {
		case 200:
			won++
		case 409:
			if !strings.Contains(string(bodies[i]), `"WORKER_BUSY"`) {
				t.Fatalf("409 without WORKER_BUSY: %s", bodies[i])
			}
		default:
			t.Fatalf("start %d: %d %s", i, c, bodies[i])
		}
	}
	if won != 1 {
		t.Fatalf("%d concurrent starts won, want exactly 1 (codes %v)", won, codes)
	}
	if h := e.health(); !h.Busy {
		t.Fatalf("health while running: %+v", h)
	}
	e.tools.open(t)
	testutil.Eventually(t, waitFor, "the worker to be free", func() bool { return !e.health().Busy })
	e.startRun(alice, "gate.yaml", "")
	e.tools.open(t)
}

func TestStopStopsOnlyTheCallersRun(t *testing.T) {
	e := newEnv(t)
	e.cases.put("long.yaml", newCase("long", waitStep(600), echo("after", nil)))
	id := e.startRun(alice, "long.yaml", "")
	testutil.Eventually(t, waitFor, "the wait step to start", func() bool {
		d := e.run(alice, id)
		return d.Steps[0].Status == wire.StepRunning
	})
	var active []string
	e.call(alice, "GET", "/api/runs/active", nil, 200, &active)
	if !slices.Equal(active, []string{id}) {
		t.Fatalf("alice's active runs: %v", active)
	}
	e.call(bob, "GET", "/api/runs/active", nil, 200, &active)
	if active == nil || len(active) != 0 {
		t.Fatalf("bob's active runs: %#v, want []", active)
	}

	for _, who := range []identity.Identity{bob, bobAdmin} {
		var res wire.StopResult
		e.call(who, "POST", "/api/run/stop", nil, 200, &res)
		if res.Stopped == nil || len(res.Stopped) != 0 {
			t.Fatalf("%s/%s stopped %#v", who.Username, who.Role, res.Stopped)
		}
	}
	if d := e.run(alice, id); d.Status != wire.StatusRunning {
		t.Fatalf("bob's stop ended alice's run: %s", d.Status)
	}

	var res wire.StopResult
	e.call(alice, "POST", "/api/run/stop", nil, 200, &res)
	if !slices.Equal(res.Stopped, []string{id}) {
		t.Fatalf("alice stopped %v", res.Stopped)
	}
	d := e.finished(alice, id)
	if d.Status != wire.StatusError || d.Phase != wire.PhaseDone || d.Report == nil || d.Report.Status != wire.StatusError {
		t.Fatalf("stopped run: status %s phase %s report %+v", d.Status, d.Phase, d.Report)
	}
	if d.Steps[0].Status != wire.StepError || !strings.Contains(d.Steps[0].Detail, "stopped by the user") {
		t.Fatalf("stopped step: %+v", d.Steps[0])
	}
	if d.Steps[1].Status != wire.StepSkipped {
		t.Fatalf("step after the stop: %+v", d.Steps[1])
	}
	if !strings.Contains(d.Output, "run stopped: stopped by the user") {
		t.Fatalf("output: %q", d.Output)
	}
	if h := e.health(); h.Busy || h.ActiveRuns != 0 {
		t.Fatalf("health after stop: %+v", h)
	}
}

func TestStartRunValidation(t *testing.T) {
	e := newEnv(t)
	e.cases.put("a.yaml", newCase("a", echo("x", nil)))
	tests := []struct {
		path   string
		status int
		code   string
		detail string
	}{
		{"/api/run", 400, "INVALID_QUERY", "test_file"},
		{"/api/run?test_file=missing.yaml", 404, "TEST_NOT_FOUND", "missing.yaml"},
		{"/api/run?test_file=a.yaml&model=gpt-9", 400, "UNKNOWN_MODEL", "deterministic"},
		{"/api/run?test_file=a.yaml&dry_run=perhaps", 400, "INVALID_QUERY", "dry_run"},
	}
	for _, tc := range tests {
		code, detail := e.errorCode(&alice, "POST", tc.path, nil, tc.status)
		if code != tc.code || !strings.Contains(detail, tc.detail) {
			t.Fatalf("%s: %s %q, want %s mentioning %q", tc.path, code, detail, tc.code, tc.detail)
		}
	}
	if h := e.health(); h.Busy {
		t.Fatal("a rejected start left the worker busy")
	}
}

func TestRunDetailShape(t *testing.T) {
	e := newEnv(t)
	e.cases.put("a.yaml", newCase("a", echo("x", nil)))
	d := e.runCase(alice, "a.yaml", "")
	if d.TestID != "a" || d.Title != "Case a" || d.TestFile != "a.yaml" || d.Model != DeterministicModel ||
		d.Owner != "alice" || d.DryRun || d.StartedAt.Location() != time.UTC || d.StartedAt.IsZero() {
		t.Fatalf("detail: %+v", d)
	}
	var rows []wire.RunSummary
	e.call(alice, "GET", "/api/runs", nil, 200, &rows)
	if len(rows) != 1 || rows[0].FinishedAt == nil || rows[0].Status != wire.StatusPassed {
		t.Fatalf("summary: %+v", rows)
	}
}

func TestRegistryKeepsTheLast100Runs(t *testing.T) {
	e := newEnv(t)
	e.cases.put("a.yaml", newCase("a", echo("x", nil)))
	var ids []string
	for range maxCompleted + 5 {
		ids = append(ids, e.runCase(alice, "a.yaml", "").RunID)
	}
	var rows []wire.RunSummary
	e.call(alice, "GET", "/api/runs", nil, 200, &rows)
	if len(rows) != maxCompleted {
		t.Fatalf("%d runs listed, want %d", len(rows), maxCompleted)
	}
	if rows[0].RunID != ids[len(ids)-1] || rows[len(rows)-1].RunID != ids[5] {
		t.Fatalf("listed %s..%s, want newest %s..%s", rows[0].RunID, rows[len(rows)-1].RunID, ids[len(ids)-1], ids[5])
	}
	e.errorCode(&alice, "GET", "/api/runs/"+ids[0], nil, 404)

	// A running run beside 100 finished ones: still the last 100.
	e.cases.put("g.yaml", newCase("g", gate()))
	running := e.startRun(alice, "g.yaml", "")
	e.call(alice, "GET", "/api/runs", nil, 200, &rows)
	if len(rows) != maxCompleted || rows[0].RunID != running {
		t.Fatalf("%d runs listed, newest %s; want %d, newest %s", len(rows), rows[0].RunID, maxCompleted, running)
	}
	e.tools.open(t)
}

func TestBrokenStoredCaseIs422(t *testing.T) {
	e := newEnv(t)
	e.cases.fail = apperr.Invalid("INVALID_CASE", "steps[0].action: required (line 4)")
	code, detail := e.errorCode(&alice, "POST", "/api/run?test_file=bad.yaml", nil, 422)
	if code != "INVALID_CASE" || !strings.Contains(detail, "stored test case bad.yaml is not valid") || !strings.Contains(detail, "line 4") {
		t.Fatalf("%s %q", code, detail)
	}
	code, _ = e.errorCode(&alice, "POST", "/api/run/batch", wire.StartBatchRequest{TestFiles: []string{"bad.yaml"}}, 422)
	if code != "INVALID_CASE" {
		t.Fatal(code)
	}
}

func TestShutdownStopsRuns(t *testing.T) {
	e := newEnv(t)
	e.cases.put("long.yaml", newCase("long", waitStep(600)))
	id := e.startRun(alice, "long.yaml", "")
	testutil.Eventually(t, waitFor, "the wait step to start", func() bool {
		return e.run(alice, id).Steps[0].Status == wire.StepRunning
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	e.w.Shutdown(ctx)
	d := e.run(alice, id)
	if d.Status != wire.StatusError || !strings.Contains(d.Output, "worker shutting down") {
		t.Fatalf("after shutdown: %s %q", d.Status, d.Output)
	}
	if code, _ := e.errorCode(&alice, "POST", "/api/run?test_file=long.yaml", nil, 503); code != "SHUTTING_DOWN" {
		t.Fatalf("start after shutdown: %s", code)
	}
	e.w.Shutdown(ctx) // idempotent
}

func TestExecutorPanicIsARunError(t *testing.T) {
	e := newEnv(t)
	e.w.RegisterExecutor(panicky{})
	e.cases.put("a.yaml", newCase("a", echo("x", nil)))
	d := e.runCase(alice, "a.yaml", "&model=panicky")
	if d.Status != wire.StatusError || !strings.Contains(d.Output, "the executor failed unexpectedly") {
		t.Fatalf("%s %q", d.Status, d.Output)
	}
	if d.Steps[0].Status != wire.StepError {
		t.Fatalf("step left running by a panic: %+v", d.Steps[0])
	}
	if !strings.Contains(e.logs.String(), "executor panicked") {
		t.Fatal("panic not logged")
	}
}

type panicky struct{}

func (panicky) Name() string { return "panicky" }
func (panicky) Execute(_ context.Context, rc *RunContext) error {
	rc.StepStarted(0)
	panic(fmt.Sprintf("boom in %s", rc.RunID))
}
