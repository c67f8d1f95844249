package worker

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/testrunner/testcase"
	"cpesuite/internal/testrunner/wire"
)

// errStopped is the cause of runs ended by POST /api/run/stop.
var errStopped = errors.New("stopped by the user")

// stopWait bounds how long POST /api/run/stop waits for the stopped runs
// to end, so that the gateway usually sees the worker free when stop
// answers, without hanging on an executor that ignores its context.
const stopWait = 10 * time.Second

// admitLocked refuses a new run or batch while one is in progress (one run
// at a time per worker; a batch counts from its start to its end, gaps
// between its tests included) or while shutting down; w.mu is held.
func (w *Worker) admitLocked() error {
	if w.shuttingDown {
		return apperr.New(apperr.ErrUnavailable, "SHUTTING_DOWN", "the worker is shutting down")
	}
	if w.active != nil || w.batch != nil {
		return apperr.Conflict("WORKER_BUSY", "the worker is busy with another run; it runs one at a time")
	}
	return nil
}

// startRun starts one run of the already loaded case c in the background.
func (w *Worker) startRun(owner, file, model string, ex Executor, c *testcase.Case, dryRun bool) (*run, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.admitLocked(); err != nil {
		return nil, err
	}
	r := w.newRunLocked(owner, file, model, "", dryRun)
	r.loadCase(c)
	w.active = r
	w.runsWG.Add(1)
	go func() {
		defer w.runsWG.Done()
		w.execute(r, ex, c)
	}()
	return r, nil
}

// execute runs r to its end: it loads the case unless c is given, hands
// it to the executor, then sets the verdict and retires the run.
func (w *Worker) execute(r *run, ex Executor, c *testcase.Case) {
	mode := ""
	if r.dryRun {
		mode = " (dry run)"
	}
	r.appendOutput(fmt.Sprintf("run %s: %s, model %s%s\n", r.id, r.testFile, r.model, mode))
	var execErr error
	if c == nil {
		var err error
		if c, err = w.cases.Get(r.testFile); err != nil {
			w.log.Info("run could not load its case", "run_id", r.id, "test_file", r.testFile, "error", err)
			execErr = fmt.Errorf("loading %s failed: %s", r.testFile, apperr.PublicMessage(err))
		} else {
			r.loadCase(c)
		}
	}
	if execErr == nil && len(c.Steps) == 0 {
		execErr = errors.New("the case has no steps")
	}
	if execErr == nil && r.ctx.Err() == nil {
		rc := &RunContext{Case: c, DryRun: r.dryRun, Tools: w.tools, RunID: r.id, Owner: r.owner, Model: r.model, w: w, r: r}
		execErr = w.safeExecute(r.ctx, ex, rc)
	}
	w.finish(r, execErr)
}

// safeExecute turns an executor panic into a run error instead of a
// crashed worker.
func (w *Worker) safeExecute(ctx context.Context, ex Executor, rc *RunContext) (err error) {
	defer func() {
		if p := recover(); p != nil {
			w.log.Error("executor panicked", "run_id", rc.RunID, "model", rc.Model, "panic", p, "stack", string(debug.Stack()))
			err = errors.New("the executor failed unexpectedly")
		}
	}()
	return ex.Execute(ctx, rc)
}

// finish gives r its verdict, phase done and report, wakes its watchers
// and retires it from the active slot.
func (w *Worker) finish(r *run, execErr error) {
	var stopCause error
	if r.ctx.Err() != nil {
		stopCause = context.Cause(r.ctx)
	}
	now := w.now()
	// The verdict becomes visible and the worker free in one step (w.mu is
	// held throughout), so a client that sees the run ended can start the
	// next one at once without a WORKER_BUSY.
	w.mu.Lock()
	defer w.mu.Unlock()
	r.mu.Lock()
	for i := range r.steps {
		s := &r.steps[i]
		switch s.Status {
		case wire.StepRunning:
			s.Status = wire.StepError
			if stopCause != nil {
				s.Detail = "run stopped: " + stopCause.Error()
			} else {
				s.Detail = "the executor ended without a verdict for this step"
			}
			if t := r.stepStarted[i]; !t.IsZero() {
				s.ElapsedMS = now.Sub(t).Milliseconds()
			}
		case wire.StepPending:
			s.Status = wire.StepSkipped
		}
	}
	status := verdict(r.steps, stopCause != nil || execErr != nil)
	if execErr != nil {
		r.appendOutputLocked("error: " + execErr.Error() + "\n")
	}
	if stopCause != nil {
		r.appendOutputLocked("run stopped: " + stopCause.Error() + "\n")
	}
	r.finished = now
	r.appendOutputLocked(fmt.Sprintf("run %s (%d ms)\n", status, r.elapsedLocked(now)))
	r.status = status
	r.phase = wire.PhaseDone
	r.report = &wire.Report{Status: status, Steps: slices.Clone(r.steps)}
	r.notifyLocked()
	r.mu.Unlock()
	r.cancel(nil)
	w.retireLocked(r)
	close(r.done)
}

// verdict is the run status from its steps: error when the run failed as
// a whole or any step errored, passed when every step passed, else failed.
func verdict(steps []wire.Step, runError bool) string {
	if runError || len(steps) == 0 {
		return wire.StatusError
	}
	all := true
	for _, s := range steps {
		switch s.Status {
		case wire.StepError:
			return wire.StatusError
		case wire.StepPassed:
		default:
			all = false
		}
	}
	if all {
		return wire.StatusPassed
	}
	return wire.StatusFailed
}

// stopOwner stops owner's running runs and batch (its remaining tests are
// not started) and waits up to stopWait, or until ctx ends, for them to
// end. Other accounts' runs are untouched.
func (w *Worker) stopOwner(ctx context.Context, owner string) (ids, batches []string) {
	w.mu.Lock()
	ids, batches = []string{}, []string{}
	var waits []chan struct{}
	for _, r := range w.runs {
		if r.owner == owner && r.running() {
			r.cancel(errStopped)
			ids = append(ids, r.id)
			waits = append(waits, r.done)
		}
	}
	if b := w.batch; b != nil && b.owner == owner {
		b.stopped = true
		batches = append(batches, b.id)
		waits = append(waits, b.done)
	}
	w.mu.Unlock()
	slices.Sort(ids)

	timer := time.NewTimer(stopWait)
	defer timer.Stop()
	for _, ch := range waits {
		select {
		case <-ch:
		case <-timer.C:
			return ids, batches
		case <-ctx.Done():
			return ids, batches
		}
	}
	return ids, batches
}

// health is GET /health.
func (w *Worker) health() wire.WorkerHealth {
	w.mu.Lock()
	defer w.mu.Unlock()
	h := wire.WorkerHealth{Status: "ok", Busy: w.active != nil || w.batch != nil, Batch: wire.BatchNone, Version: w.cfg.Version}
	for _, r := range w.runs {
		if r.running() {
			h.ActiveRuns++
		}
	}
	if w.latestBatch != nil {
		h.Batch = w.latestBatch.status
	}
	return h
}
