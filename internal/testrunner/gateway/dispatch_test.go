package gateway

import (
	"sync"
	"testing"

	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/wire"
	"cpesuite/internal/testutil"
)

// TestDispatchOneRunPerEnv fires concurrent dispatches at one env: exactly
// one wins, the rest are 409 ENV_BUSY; a second env goes to the other
// worker, a third finds every worker busy (503). After stop the env is
// free again.
func TestDispatchOneRunPerEnv(t *testing.T) {
	e := newEnv(t, envOpts{workers: []string{"w1", "w2"}})
	alice := e.user("alice", "editor")
	for _, env := range []string{"enva", "envb", "envc"} {
		e.profile(env, map[string]string{"acs_url": "http://127.0.0.1:7557/acs"})
	}
	const n = 8
	results := make([]resp, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i] = e.do(alice, "POST", "/api/gateway/run", map[string]any{"env": "enva", "test_file": "slow.yaml"})
		})
	}
	wg.Wait()
	won := 0
	var first struct {
		RunID string `json:"run_id"`
		Stand string
	}
	for _, r := range results {
		switch {
		case r.status == 200:
			won++
			r.decode(t, &first)
		case r.status == 409 && r.code() == "ENV_BUSY":
		default:
			t.Errorf("concurrent dispatch: %d %s", r.status, r.body)
		}
	}
	if won != 1 {
		t.Fatalf("%d dispatches won env enva, want exactly 1", won)
	}
	_, standB := e.dispatch(alice, "envb", "slow.yaml")
	if standB == first.Stand {
		t.Fatalf("envb landed on %s, the worker already running enva", standB)
	}
	r := e.do(alice, "POST", "/api/gateway/run", map[string]any{"env": "envc", "test_file": "slow.yaml"})
	if r.status != 503 || r.code() != "ALL_WORKERS_BUSY" {
		t.Fatalf("third env with both workers busy: %d %s", r.status, r.body)
	}
	var stopped wire.StopResult
	e.must(e.do(alice, "POST", "/api/run/stop", nil), 200).decode(t, &stopped)
	if len(stopped.Stopped) != 2 {
		t.Fatalf("stop ended %v, want both runs", stopped.Stopped)
	}
	if st := e.runStatus(alice, first.RunID); st != wire.StatusError {
		t.Fatalf("stopped run status %q", st)
	}
	// The env and its worker are free again.
	e.dispatch(alice, "enva", "quick.yaml")
}

// TestDispatchDistinctEnvsNeverShareAWorker races three envs for two
// workers: two win on different stands, one gets 503.
func TestDispatchDistinctEnvsNeverShareAWorker(t *testing.T) {
	e := newEnv(t, envOpts{workers: []string{"w1", "w2"}})
	for _, env := range []string{"e1", "e2", "e3"} {
		e.profile(env, map[string]string{})
	}
	results := make([]resp, 3)
	var wg sync.WaitGroup
	for i, env := range []string{"e1", "e2", "e3"} {
		wg.Go(func() {
			results[i] = e.do(e.admin, "POST", "/api/gateway/run", map[string]any{"env": env, "test_file": "slow.yaml"})
		})
	}
	wg.Wait()
	stands := map[string]bool{}
	busy := 0
	for _, r := range results {
		switch r.status {
		case 200:
			var out struct{ Stand string }
			r.decode(t, &out)
			if stands[out.Stand] {
				t.Fatalf("two runs landed on %s", out.Stand)
			}
			stands[out.Stand] = true
		case 503:
			busy++
		default:
			t.Fatalf("dispatch: %d %s", r.status, r.body)
		}
	}
	if len(stands) != 2 || busy != 1 {
		t.Fatalf("stands %v, 503s %d; want 2 stands and one 503", stands, busy)
	}
}

// TestDispatchAppliesProfileAndPassesOptions checks the env profile lands
// on the worker (keeping the worker's own overrides), and that model and
// dry_run reach the run.
func TestDispatchAppliesProfileAndPassesOptions(t *testing.T) {
	e := newEnv(t, envOpts{workers: []string{"w1"}})
	w := e.workers["w1"]
	root := identity.Identity{Username: "root", Role: identity.RoleAdmin}
	e.must(direct(t, w, testSecret, root, "PUT", "/api/settings", map[string]string{"default_model": "deterministic"}), 200)
	e.profile("lab", map[string]string{"acs_url": "http://acs.lab:7557/acs", "emulator_url": "http://emu.lab:8555"})
	var out struct {
		RunID  string `json:"run_id"`
		Model  string `json:"model"`
		DryRun bool   `json:"dry_run"`
	}
	e.must(e.do(e.admin, "POST", "/api/gateway/run", map[string]any{"env": "lab", "test_file": "slow.yaml", "model": "deterministic", "dry_run": true}), 200).decode(t, &out)
	d := e.waitDone(e.admin, out.RunID)
	if !d.DryRun || d.Model != "deterministic" || d.Status != wire.StatusPassed {
		t.Fatalf("run detail: dry_run %v model %q status %q", d.DryRun, d.Model, d.Status)
	}
	var s struct{ Settings, Sources map[string]string }
	e.must(direct(t, w, testSecret, root, "GET", "/api/settings", nil), 200).decode(t, &s)
	for k, want := range map[string]string{"acs_url": "http://acs.lab:7557/acs", "emulator_url": "http://emu.lab:8555", "env_name": "lab", "default_model": "deterministic"} {
		if s.Settings[k] != want || s.Sources[k] != "ui" {
			t.Errorf("worker setting %s = %q (%s), want %q from the profile or the worker's override", k, s.Settings[k], s.Sources[k], want)
		}
	}
	// Errors the worker finds in the request keep their status.
	waitIdle(e)
	for _, c := range []struct {
		body any
		want int
	}{
		{map[string]any{"env": "lab", "test_file": "missing.yaml"}, 404},
		{map[string]any{"env": "lab", "test_file": "quick.yaml", "model": "gpt-9"}, 400},
		{map[string]any{"env": "nope", "test_file": "quick.yaml"}, 404},
		{map[string]any{"env": "lab"}, 400},
		{map[string]any{"test_file": "quick.yaml"}, 400},
		{map[string]any{"env": "lab", "test_file": "quick.yaml", "colour": "red"}, 400},
		{`{"env": "lab",`, 400},
	} {
		if r := e.do(e.admin, "POST", "/api/gateway/run", c.body); r.status != c.want {
			t.Errorf("dispatch %v: %d, want %d: %s", c.body, r.status, c.want, r.body)
		}
	}
	// A profile key the worker does not know fails the dispatch, and the
	// env is released.
	e.profile("odd", map[string]string{"no_such_setting": "x"})
	if r := e.do(e.admin, "POST", "/api/gateway/run", map[string]any{"env": "odd", "test_file": "quick.yaml"}); r.status != 502 || r.code() != "PROFILE_APPLY_FAILED" {
		t.Fatalf("unknown profile key: %d %s", r.status, r.body)
	}
	e.profile("odd", map[string]string{})
	e.dispatch(e.admin, "odd", "quick.yaml")
}

// TestBatchDispatch runs a batch through the gateway and reads its status,
// report and archive as the owner; another user sees none of it.
func TestBatchDispatch(t *testing.T) {
	e := newEnv(t, envOpts{workers: []string{"w1", "w2"}})
	alice, bob := e.user("alice", "editor"), e.user("bob", "editor")
	e.profile("lab", map[string]string{})
	var b struct {
		BatchID   string   `json:"batch_id"`
		TestFiles []string `json:"test_files"`
		Total     int
		Stand     string
	}
	e.must(e.do(alice, "POST", "/api/gateway/run/batch", map[string]any{"env": "lab", "test_files": []string{"quick.yaml", "quick.yaml"}, "order": "name"}), 200).decode(t, &b)
	if b.Total != 2 || b.BatchID == "" {
		t.Fatalf("batch answer %+v", b)
	}
	var st wire.BatchStatus
	waitFor(t, "batch done", func() bool {
		e.must(e.do(alice, "GET", "/api/run/batch", nil), 200).decode(t, &st)
		return st.Status == wire.BatchDone
	})
	if st.ID != b.BatchID || st.Stand != b.Stand || len(st.RunIDs) != 2 {
		t.Fatalf("batch status %+v, dispatched %+v", st, b)
	}
	e.must(e.do(bob, "GET", "/api/run/batch", nil), 200).decode(t, &st)
	if st.Status != wire.BatchNone {
		t.Fatalf("bob sees alice's batch: %+v", st)
	}
	var rows []wire.BatchReportRow
	e.must(e.do(alice, "GET", "/api/run/batch/reports", nil), 200).decode(t, &rows)
	if len(rows) != 1 || rows[0].BatchID != b.BatchID || rows[0].Summary.Passed != 2 || rows[0].Stand != b.Stand {
		t.Fatalf("alice's archived reports %+v", rows)
	}
	e.must(e.do(bob, "GET", "/api/run/batch/reports", nil), 200).decode(t, &rows)
	if len(rows) != 0 {
		t.Fatalf("bob sees reports %+v", rows)
	}
	e.must(e.do(alice, "GET", "/api/run/batch/reports/"+b.BatchID, nil), 200)
	e.must(e.do(bob, "GET", "/api/run/batch/reports/"+b.BatchID, nil), 404)
	e.must(e.do(e.admin, "GET", "/api/run/batch/reports/"+b.BatchID, nil), 404)
	e.must(e.do(alice, "GET", "/api/run/batch/report", nil), 200)
	e.must(e.do(bob, "GET", "/api/run/batch/report", nil), 404)
	var del map[string]int
	e.must(e.do(bob, "DELETE", "/api/run/batch/reports", nil), 200).decode(t, &del)
	if del["deleted"] != 0 {
		t.Fatalf("bob deleted %v", del)
	}
	e.must(e.do(alice, "DELETE", "/api/run/batch/reports", nil), 200).decode(t, &del)
	if del["deleted"] != 1 {
		t.Fatalf("alice deleted %v", del)
	}
	for _, body := range []any{
		map[string]any{"env": "lab", "test_files": []string{}},
		map[string]any{"env": "lab", "test_files": []string{"quick.yaml"}, "order": "sideways"},
	} {
		e.must(e.do(alice, "POST", "/api/gateway/run/batch", body), 400)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, testutil.MinDeadline, what, cond)
}
