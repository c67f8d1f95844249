package worker

import (
	"slices"
	"time"

	"cpesuite/internal/testrunner/wire"
)

// batch runs its tests one after another, each as a normal run with the
// batch's id. Its status follows the spec's value set this way:
//
//   - running: from the start until the last test has ended;
//   - done: every test was run to its verdict (whatever the verdicts);
//   - idle: the batch was stopped (POST /api/run/stop or shutdown) before
//     it finished every test; the tests after the stop were not started;
//   - none: GET /api/run/batch when the caller has no batch on this worker.
//
// current_index is the 0-based index of the test in progress; once the
// batch has ended it is the number of tests that were run, which is total
// for a done batch.
//
// Every field is guarded by Worker.mu.
type batch struct {
	id       string
	owner    string
	model    string
	dryRun   bool
	files    []string
	started  time.Time
	finished time.Time
	status   string
	current  int
	runIDs   []string
	results  []wire.BatchResult // of the tests that have ended
	cur      *run               // the test in progress
	stopped  bool
	done     chan struct{} // closed once the batch has ended and its report is archived
}

// startBatch starts a batch of files in the background.
func (w *Worker) startBatch(owner string, files []string, model string, ex Executor, dryRun bool) (*batch, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.admitLocked(); err != nil {
		return nil, err
	}
	b := &batch{
		id:      newID("b-"),
		owner:   owner,
		model:   model,
		dryRun:  dryRun,
		files:   slices.Clone(files),
		started: w.now(),
		status:  wire.BatchRunning,
		runIDs:  []string{},
		done:    make(chan struct{}),
	}
	w.batch = b
	w.lastBatch[owner] = b
	w.latestBatch = b
	w.runsWG.Add(1)
	go w.runBatch(b, ex)
	return b, nil
}

func (w *Worker) runBatch(b *batch, ex Executor) {
	defer w.runsWG.Done()
	defer close(b.done)
	for i, file := range b.files {
		w.mu.Lock()
		if b.stopped {
			w.mu.Unlock()
			break
		}
		r := w.newRunLocked(b.owner, file, b.model, b.id, b.dryRun)
		w.active = r
		b.cur = r
		b.current = i
		b.runIDs = append(b.runIDs, r.id)
		w.mu.Unlock()

		w.execute(r, ex, nil)

		res := r.batchResult(w.now())
		w.mu.Lock()
		b.results = append(b.results, res)
		b.cur = nil
		w.mu.Unlock()
	}

	// The report is archived before the status changes, so that a client
	// which sees the batch ended also finds its archived report.
	w.mu.Lock()
	status := wire.BatchDone
	if b.stopped {
		status = wire.BatchIdle
	}
	finished := w.now()
	rep := w.batchReportLocked(b, status, finished)
	w.mu.Unlock()
	if err := w.archive.save(rep); err != nil {
		w.log.Error("archiving a batch report failed", "batch_id", b.id, "error", err)
	}
	w.mu.Lock()
	b.status = status
	b.finished = finished
	b.current = len(b.results)
	w.batch = nil
	w.mu.Unlock()
}

// batchReportLocked is b's report, partial while it runs; w.mu is held.
func (w *Worker) batchReportLocked(b *batch, status string, finished time.Time) wire.BatchReport {
	now := w.now()
	results := slices.Clone(b.results)
	if b.cur != nil {
		results = append(results, b.cur.batchResult(now))
	}
	if results == nil {
		results = []wire.BatchResult{}
	}
	sum := wire.Summary{Total: len(b.files)}
	for _, r := range results {
		switch r.Status {
		case wire.StatusPassed:
			sum.Passed++
		case wire.StatusFailed:
			sum.Failed++
		case wire.StatusError:
			sum.Errors++
		}
	}
	end := finished
	var finishedAt *time.Time
	if end.IsZero() {
		end = now
	} else {
		finishedAt = &finished
	}
	return wire.BatchReport{
		BatchReportRow: wire.BatchReportRow{
			BatchID:        b.id,
			Status:         status,
			Model:          b.model,
			Owner:          b.owner,
			StartedAt:      b.started,
			FinishedAt:     finishedAt,
			TotalElapsedMS: end.Sub(b.started).Milliseconds(),
			Summary:        sum,
		},
		DryRun:  b.dryRun,
		Results: results,
	}
}

// batchStatus is GET /api/run/batch for owner.
func (w *Worker) batchStatus(owner string) wire.BatchStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	b, ok := w.lastBatch[owner]
	if !ok {
		return wire.BatchStatus{Status: wire.BatchNone, RunIDs: []string{}, TestFiles: []string{}}
	}
	return wire.BatchStatus{
		Status:       b.status,
		ID:           b.id,
		Total:        len(b.files),
		CurrentIndex: b.current,
		RunIDs:       slices.Clone(b.runIDs),
		TestFiles:    slices.Clone(b.files),
		Model:        b.model,
		Owner:        b.owner,
	}
}

// latestReport is GET /api/run/batch/report for owner.
func (w *Worker) latestReport(owner string) (wire.BatchReport, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b, ok := w.lastBatch[owner]
	if !ok {
		return wire.BatchReport{}, false
	}
	return w.batchReportLocked(b, b.status, b.finished), true
}
