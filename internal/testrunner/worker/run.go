package worker

import (
	"context"
	"slices"
	"sync"
	"time"

	"cpesuite/internal/testrunner/testcase"
	"cpesuite/internal/testrunner/wire"
)

// Memory bounds of one run. A run's output and tool log are kept for as
// long as the run stays in the registry (the last 100 runs), so one chatty
// run must not hold the worker's memory.
const (
	maxOutputBytes = 1 << 20 // output text; later text is dropped with a note
	maxLogResult   = 1 << 20 // one mcpLog entry's result
	maxLogBytes    = 8 << 20 // all mcpLog results of a run together
)

// run is one execution of a case. The fields above mu never change after
// the run is registered; the rest is guarded by mu.
type run struct {
	id       string
	owner    string
	testFile string
	model    string
	batchID  string
	dryRun   bool
	seq      uint64
	started  time.Time
	ctx      context.Context // ends on stop or shutdown, with the reason as its cause
	cancel   context.CancelCauseFunc
	done     chan struct{} // closed when the run has finished and left the active slot

	mu            sync.Mutex
	testID        string
	title         string
	status        string
	phase         string
	finished      time.Time
	steps         []wire.Step
	stepStarted   []time.Time
	output        []byte
	outputClipped bool
	mcpLog        []wire.ToolCall
	logBytes      int
	report        *wire.Report
	watchers      map[chan struct{}]struct{}
}

// running reports whether the run has not finished yet.
func (r *run) running() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status == wire.StatusRunning
}

// notifyLocked wakes every watcher without ever blocking: each watcher has
// a one-slot channel, so a burst of changes collapses into one wake-up and
// the watcher reads the latest state when it gets to it.
func (r *run) notifyLocked() {
	for ch := range r.watchers {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (r *run) subscribe() chan struct{} {
	ch := make(chan struct{}, 1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.watchers == nil {
		r.watchers = map[chan struct{}]struct{}{}
	}
	r.watchers[ch] = struct{}{}
	return ch
}

func (r *run) unsubscribe(ch chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.watchers, ch)
}

// loadCase fills what the run shows of its case: id, title and one pending
// step per case step.
func (r *run) loadCase(c *testcase.Case) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.testID, r.title = c.ID, c.Title
	r.steps = make([]wire.Step, len(c.Steps))
	r.stepStarted = make([]time.Time, len(c.Steps))
	for i, s := range c.Steps {
		r.steps[i] = wire.Step{Step: i + 1, Status: wire.StepPending, Description: s.Action}
	}
	r.notifyLocked()
}

// appendOutputLocked adds text to the output up to maxOutputBytes.
func (r *run) appendOutputLocked(text string) {
	if r.outputClipped {
		return
	}
	if len(r.output)+len(text) > maxOutputBytes {
		r.output = append(r.output, clip(text, maxOutputBytes-len(r.output))...)
		r.output = append(r.output, "\n[output truncated: the run printed more than 1 MiB]\n"...)
		r.outputClipped = true
	} else {
		r.output = append(r.output, text...)
	}
	r.notifyLocked()
}

func (r *run) appendOutput(text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.status != wire.StatusRunning {
		return
	}
	r.appendOutputLocked(text)
}

// elapsedLocked is the run's duration so far, or in total once finished.
func (r *run) elapsedLocked(now time.Time) int64 {
	end := r.finished
	if end.IsZero() {
		end = now
	}
	return end.Sub(r.started).Milliseconds()
}

// detail returns the whole run detail.
func (r *run) detail(now time.Time) wire.RunDetail {
	var c cursor
	d, _ := r.full(&c, now)
	return d
}

// cursor is how much of a run's output and tool log a watcher has seen.
type cursor struct {
	output int
	log    int
}

// delta returns the run detail with only the output and tool-log entries
// past cur, advances cur, and reports whether the run has finished.
func (r *run) delta(cur *cursor, now time.Time) (wire.RunDetail, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.headerLocked(now)
	d.Delta = true
	d.Output = string(r.output[cur.output:])
	d.MCPLog = slices.Clone(r.mcpLog[cur.log:])
	if d.MCPLog == nil {
		d.MCPLog = []wire.ToolCall{}
	}
	cur.output, cur.log = len(r.output), len(r.mcpLog)
	return d, r.status != wire.StatusRunning
}

// full is detail plus the cursor at its end, for a watcher's first message.
func (r *run) full(cur *cursor, now time.Time) (wire.RunDetail, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.headerLocked(now)
	d.Output = string(r.output)
	d.MCPLog = slices.Clone(r.mcpLog)
	if d.MCPLog == nil {
		d.MCPLog = []wire.ToolCall{}
	}
	cur.output, cur.log = len(r.output), len(r.mcpLog)
	return d, r.status != wire.StatusRunning
}

// headerLocked is everything of the run detail but output and tool log.
func (r *run) headerLocked(now time.Time) wire.RunDetail {
	d := wire.RunDetail{
		RunID:     r.id,
		TestID:    r.testID,
		TestFile:  r.testFile,
		Title:     r.title,
		Status:    r.status,
		Phase:     r.phase,
		ElapsedMS: r.elapsedLocked(now),
		Model:     r.model,
		DryRun:    r.dryRun,
		Owner:     r.owner,
		BatchID:   r.batchID,
		StartedAt: r.started,
		Steps:     slices.Clone(r.steps),
	}
	if d.Steps == nil {
		d.Steps = []wire.Step{}
	}
	if r.report != nil {
		rep := *r.report
		rep.Steps = slices.Clone(rep.Steps)
		d.Report = &rep
	}
	return d
}

// summary is the run's row of GET /api/runs.
func (r *run) summary(now time.Time) wire.RunSummary {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := wire.RunSummary{
		RunID:     r.id,
		TestID:    r.testID,
		TestFile:  r.testFile,
		Title:     r.title,
		Status:    r.status,
		Phase:     r.phase,
		ElapsedMS: r.elapsedLocked(now),
		Model:     r.model,
		DryRun:    r.dryRun,
		Owner:     r.owner,
		BatchID:   r.batchID,
		StartedAt: r.started,
	}
	if !r.finished.IsZero() {
		f := r.finished
		s.FinishedAt = &f
	}
	return s
}

// batchResult is the run's entry in a batch report.
func (r *run) batchResult(now time.Time) wire.BatchResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	steps := slices.Clone(r.steps)
	if steps == nil {
		steps = []wire.Step{}
	}
	return wire.BatchResult{
		TestFile:  r.testFile,
		TestID:    r.testID,
		Title:     r.title,
		RunID:     r.id,
		Status:    r.status,
		ElapsedMS: r.elapsedLocked(now),
		Steps:     steps,
	}
}

// clip cuts s to at most n bytes without splitting a UTF-8 sequence.
func clip(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	// A continuation byte has the bit pattern 10xxxxxx.
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
