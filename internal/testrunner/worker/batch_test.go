package worker

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/wire"
	"cpesuite/internal/testutil"
)

func (e *env) startBatch(id identity.Identity, req wire.StartBatchRequest) wire.StartBatch {
	e.t.Helper()
	var sb wire.StartBatch
	e.call(id, "POST", "/api/run/batch", req, 200, &sb)
	return sb
}

func TestBatchRunsTestsInOrderAndArchives(t *testing.T) {
	e := newEnv(t)
	e.cases.put("1.yaml", newCase("one", gate()))
	e.cases.put("2.yaml", newCase("two", toolStep("x", "fake", "fail", nil, nil)))
	e.cases.put("3.yaml", newCase("three", echo("x", nil), toolStep("x", "fake", "boom", nil, nil)))
	files := []string{"1.yaml", "2.yaml", "3.yaml"}

	if bs := e.batchStatus(alice); bs.Status != wire.BatchNone || bs.RunIDs == nil || bs.TestFiles == nil || bs.ID != "" {
		t.Fatalf("no batch yet: %+v", bs)
	}
	e.errorCode(&alice, "GET", "/api/run/batch/report", nil, 404)

	sb := e.startBatch(alice, wire.StartBatchRequest{TestFiles: files})
	if !batchIDPattern.MatchString(sb.BatchID) || sb.Total != 3 || !slices.Equal(sb.TestFiles, files) {
		t.Fatalf("start: %+v", sb)
	}
	// While the first test waits at its gate, the batch is running.
	testutil.Eventually(t, waitFor, "the first test to run", func() bool { return len(e.batchStatus(alice).RunIDs) == 1 })
	bs := e.batchStatus(alice)
	if bs.Status != wire.BatchRunning || bs.ID != sb.BatchID || bs.CurrentIndex != 0 || bs.Total != 3 || bs.Model != DeterministicModel || bs.Owner != "alice" {
		t.Fatalf("running: %+v", bs)
	}
	if h := e.health(); !h.Busy || h.Batch != wire.BatchRunning || h.ActiveRuns != 1 {
		t.Fatalf("health during the batch: %+v", h)
	}
	var partial wire.BatchReport
	e.call(alice, "GET", "/api/run/batch/report", nil, 200, &partial)
	if partial.Status != wire.BatchRunning || len(partial.Results) != 1 || partial.Results[0].Status != wire.StatusRunning || partial.Summary.Total != 3 {
		t.Fatalf("partial report: %+v", partial)
	}
	if code, _ := e.errorCode(&bob, "POST", "/api/run?test_file=2.yaml", nil, 409); code != "WORKER_BUSY" {
		t.Fatalf("run during a batch: %s", code)
	}
	if bs := e.batchStatus(bob); bs.Status != wire.BatchNone {
		t.Fatalf("bob sees alice's batch: %+v", bs)
	}
	e.tools.open(t)

	testutil.Eventually(t, waitFor, "the batch to end", func() bool { return e.batchStatus(alice).Status != wire.BatchRunning })
	bs = e.batchStatus(alice)
	if bs.Status != wire.BatchDone || bs.CurrentIndex != 3 || len(bs.RunIDs) != 3 {
		t.Fatalf("done: %+v", bs)
	}
	for i, id := range bs.RunIDs {
		d := e.run(alice, id)
		if d.BatchID != sb.BatchID || d.TestFile != files[i] {
			t.Fatalf("run %d: batch %q file %q", i, d.BatchID, d.TestFile)
		}
	}

	var rep wire.BatchReport
	e.call(alice, "GET", "/api/run/batch/report", nil, 200, &rep)
	wantStatuses := []string{wire.StatusPassed, wire.StatusFailed, wire.StatusError}
	if rep.BatchID != sb.BatchID || rep.Status != wire.BatchDone || rep.Owner != "alice" || rep.FinishedAt.IsZero() ||
		rep.Summary != (wire.Summary{Total: 3, Passed: 1, Failed: 1, Errors: 1}) || len(rep.Results) != 3 {
		t.Fatalf("report: %+v", rep)
	}
	for i, r := range rep.Results {
		if r.Status != wantStatuses[i] || r.RunID != bs.RunIDs[i] || r.TestFile != files[i] || len(r.Steps) == 0 {
			t.Fatalf("result %d: %+v", i, r)
		}
	}
	if rep.Results[2].TestID != "three" || rep.Results[2].Steps[1].Status != wire.StepError {
		t.Fatalf("result 3: %+v", rep.Results[2])
	}

	// The archive: a 0600 file, listed and readable by its owner only.
	path := filepath.Join(e.dir, "batch-reports", sb.BatchID+".json")
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("archived report: %v %v", st, err)
	}
	var rows []wire.BatchReportRow
	e.call(alice, "GET", "/api/run/batch/reports", nil, 200, &rows)
	if len(rows) != 1 || rows[0].BatchID != sb.BatchID || rows[0].Summary.Passed != 1 || rows[0].TotalElapsedMS < 0 {
		t.Fatalf("rows: %+v", rows)
	}
	e.call(bob, "GET", "/api/run/batch/reports", nil, 200, &rows)
	if len(rows) != 0 {
		t.Fatalf("bob lists alice's reports: %+v", rows)
	}
	e.errorCode(&bob, "GET", "/api/run/batch/reports/"+sb.BatchID, nil, 404)
	e.errorCode(&bobAdmin, "GET", "/api/run/batch/reports/"+sb.BatchID, nil, 404)
	e.errorCode(&alice, "GET", "/api/run/batch/reports/b-ffffffffffffffff", nil, 404)
	for _, bad := range []string{"b-XYZ", "..%2Fsettings", "b-0123456789abcdef.json", "r-0123456789abcdef"} {
		if code, _ := e.errorCode(&alice, "GET", "/api/run/batch/reports/"+bad, nil, 400); code != "INVALID_BATCH_ID" {
			t.Fatalf("%s: %s", bad, code)
		}
	}

	// A second batch is listed first.
	e.cases.put("4.yaml", newCase("four", echo("x", nil)))
	sb2 := e.startBatch(alice, wire.StartBatchRequest{TestFiles: []string{"4.yaml"}, DryRun: true})
	testutil.Eventually(t, waitFor, "the second batch to end", func() bool { return e.batchStatus(alice).Status == wire.BatchDone })

	// A new worker on the same folder serves the archive.
	e.start(Config{DataDir: e.dir, Secret: testSecret, Tools: e.tools})
	e.call(alice, "GET", "/api/run/batch/reports", nil, 200, &rows)
	if len(rows) != 2 || rows[0].BatchID != sb2.BatchID || rows[1].BatchID != sb.BatchID {
		t.Fatalf("after restart: %+v", rows)
	}
	var again wire.BatchReport
	e.call(alice, "GET", "/api/run/batch/reports/"+sb.BatchID, nil, 200, &again)
	if again.Summary != rep.Summary || len(again.Results) != 3 || again.Results[1].RunID != rep.Results[1].RunID || again.DryRun {
		t.Fatalf("archived report after restart: %+v", again)
	}
	e.call(alice, "GET", "/api/run/batch/reports/"+sb2.BatchID, nil, 200, &again)
	if !again.DryRun || again.Status != wire.BatchDone {
		t.Fatalf("dry batch: %+v", again)
	}

	var del map[string]int
	e.call(bob, "DELETE", "/api/run/batch/reports", nil, 200, &del)
	if del["deleted"] != 0 {
		t.Fatalf("bob deleted %v", del)
	}
	e.call(alice, "DELETE", "/api/run/batch/reports", nil, 200, &del)
	if del["deleted"] != 2 {
		t.Fatalf("alice deleted %v", del)
	}
	e.call(alice, "GET", "/api/run/batch/reports", nil, 200, &rows)
	if len(rows) != 0 {
		t.Fatalf("after delete: %+v", rows)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("report file survived the delete: %v", err)
	}
}

func TestBatchStopLeavesItIdle(t *testing.T) {
	e := newEnv(t)
	e.cases.put("long.yaml", newCase("long", waitStep(600)))
	e.cases.put("quick.yaml", newCase("quick", echo("x", nil)))
	sb := e.startBatch(alice, wire.StartBatchRequest{TestFiles: []string{"quick.yaml", "long.yaml", "quick.yaml"}})
	testutil.Eventually(t, waitFor, "the long test to run", func() bool {
		bs := e.batchStatus(alice)
		return len(bs.RunIDs) == 2 && e.run(alice, bs.RunIDs[1]).Steps[0].Status == wire.StepRunning
	})
	var res wire.StopResult
	e.call(bob, "POST", "/api/run/stop", nil, 200, &res)
	if bs := e.batchStatus(alice); bs.Status != wire.BatchRunning || len(res.Stopped) != 0 {
		t.Fatalf("bob's stop touched alice's batch: %+v %v", bs, res)
	}
	e.call(alice, "POST", "/api/run/stop", nil, 200, &res)
	bs := e.batchStatus(alice)
	if !slices.Equal(res.Stopped, bs.RunIDs[1:2]) {
		t.Fatalf("stopped %v, want %v", res.Stopped, bs.RunIDs[1:2])
	}
	testutil.Eventually(t, waitFor, "the batch to end", func() bool { return e.batchStatus(alice).Status != wire.BatchRunning })
	bs = e.batchStatus(alice)
	if bs.Status != wire.BatchIdle || len(bs.RunIDs) != 2 || bs.CurrentIndex != 2 {
		t.Fatalf("stopped batch: %+v", bs)
	}
	var rep wire.BatchReport
	e.call(alice, "GET", "/api/run/batch/reports/"+sb.BatchID, nil, 200, &rep)
	if rep.Status != wire.BatchIdle || len(rep.Results) != 2 || rep.Results[1].Status != wire.StatusError ||
		rep.Summary != (wire.Summary{Total: 3, Passed: 1, Errors: 1}) {
		t.Fatalf("stopped batch report: %+v", rep)
	}
	if h := e.health(); h.Busy || h.Batch != wire.BatchIdle {
		t.Fatalf("health after the stop: %+v", h)
	}
}

func TestBatchCaseDeletedBeforeItsTurn(t *testing.T) {
	e := newEnv(t)
	e.cases.put("1.yaml", newCase("one", gate()))
	e.cases.put("2.yaml", newCase("two", echo("x", nil)))
	e.startBatch(alice, wire.StartBatchRequest{TestFiles: []string{"1.yaml", "2.yaml"}})
	testutil.Eventually(t, waitFor, "the first test to run", func() bool { return len(e.batchStatus(alice).RunIDs) == 1 })
	e.cases.mu.Lock()
	delete(e.cases.m, "2.yaml")
	e.cases.mu.Unlock()
	e.tools.open(t)
	testutil.Eventually(t, waitFor, "the batch to end", func() bool { return e.batchStatus(alice).Status == wire.BatchDone })
	d := e.run(alice, e.batchStatus(alice).RunIDs[1])
	if d.Status != wire.StatusError || !strings.Contains(d.Output, `loading 2.yaml failed`) {
		t.Fatalf("vanished case: %s %q", d.Status, d.Output)
	}
}

func TestBatchValidation(t *testing.T) {
	e := newEnv(t)
	e.cases.put("a.yaml", newCase("a", echo("x", nil)))
	many := make([]string, maxBatchFiles+1)
	for i := range many {
		many[i] = "a.yaml"
	}
	tests := []struct {
		name   string
		body   any
		status int
		code   string
		detail string
	}{
		{"no files", wire.StartBatchRequest{}, 400, "INVALID_BATCH", "test_files"},
		{"too many", wire.StartBatchRequest{TestFiles: many}, 400, "INVALID_BATCH", "at most 500"},
		{"empty name", wire.StartBatchRequest{TestFiles: []string{"a.yaml", ""}}, 400, "INVALID_BATCH", "test_files[1]"},
		{"unknown file", wire.StartBatchRequest{TestFiles: []string{"a.yaml", "gone.yaml"}}, 404, "TEST_NOT_FOUND", "gone.yaml"},
		{"unknown model", wire.StartBatchRequest{TestFiles: []string{"a.yaml"}, Model: "nope"}, 400, "UNKNOWN_MODEL", "deterministic"},
		{"not json", "{", 400, "INVALID", "malformed JSON"},
		{"wrong type", `{"test_files":"a.yaml"}`, 400, "INVALID", "test_files"},
		{"unknown field", `{"test_files":["a.yaml"],"modle":"x"}`, 400, "INVALID", "modle"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, detail := e.errorCode(&alice, "POST", "/api/run/batch", tc.body, tc.status)
			if code != tc.code || !strings.Contains(detail, tc.detail) {
				t.Fatalf("%s %q, want %s mentioning %q", code, detail, tc.code, tc.detail)
			}
		})
	}
	if bs := e.batchStatus(alice); bs.Status != wire.BatchNone {
		t.Fatalf("a rejected batch was recorded: %+v", bs)
	}
	// A case list of the maximum size is accepted. Its tests wait at a
	// gate, so the stop always finds the batch running.
	e.cases.put("g.yaml", newCase("g", gate()))
	gated := make([]string, maxBatchFiles)
	for i := range gated {
		gated[i] = "g.yaml"
	}
	sb := e.startBatch(alice, wire.StartBatchRequest{TestFiles: gated})
	if sb.Total != maxBatchFiles {
		t.Fatalf("total %d", sb.Total)
	}
	var res wire.StopResult
	e.call(alice, "POST", "/api/run/stop", nil, 200, &res)
	if len(res.Batches) != 1 || res.Batches[0] != sb.BatchID {
		t.Fatalf("stop answered %+v, want batch %s", res, sb.BatchID)
	}
	testutil.Eventually(t, waitFor, "the batch to stop", func() bool { return e.batchStatus(alice).Status == wire.BatchIdle })
}
