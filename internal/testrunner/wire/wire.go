// Package wire holds the JSON shapes a test-runner worker serves and the
// gateway reads: the gateway starts runs and batches on workers, merges
// run lists and finds a caller's run across workers, so both sides must
// agree on these types. Field names are the spec's (platform services specification,
// part A).
package wire

import "time"

// Run status values (spec: passed, failed, error, running).
const (
	StatusRunning = "running"
	StatusPassed  = "passed"
	StatusFailed  = "failed"
	StatusError   = "error"
)

// Run phase values (spec: loading, pages, executing, parsing, done).
const (
	PhaseLoading   = "loading"
	PhasePages     = "pages"
	PhaseExecuting = "executing"
	PhaseParsing   = "parsing"
	PhaseDone      = "done"
)

// Batch status values (spec: running, idle, done, none).
const (
	BatchRunning = "running"
	BatchIdle    = "idle"
	BatchDone    = "done"
	BatchNone    = "none"
)

// Step status values. The spec names the run statuses; a step is also
// pending before it starts and skipped when an earlier step ended the run.
const (
	StepPending = "pending"
	StepRunning = "running"
	StepPassed  = "passed"
	StepFailed  = "failed"
	StepError   = "error"
	StepSkipped = "skipped"
)

// StartRun is the answer of POST /api/run.
type StartRun struct {
	RunID string `json:"run_id"`
}

// StartBatchRequest is the body of POST /api/run/batch.
type StartBatchRequest struct {
	TestFiles []string `json:"test_files"`
	Model     string   `json:"model,omitempty"`
	DryRun    bool     `json:"dry_run,omitempty"`
}

// StartBatch is the answer of POST /api/run/batch.
type StartBatch struct {
	BatchID   string   `json:"batch_id"`
	TestFiles []string `json:"test_files"`
	Total     int      `json:"total"`
}

// Step is one step of a run as the run detail shows it.
type Step struct {
	Step        int    `json:"step"`
	Status      string `json:"status"`
	Description string `json:"description"`
	// Detail says why a step failed or errored; empty otherwise.
	Detail    string `json:"detail,omitempty"`
	ElapsedMS int64  `json:"elapsed_ms"`
}

// Report is the verdict part of a run detail.
type Report struct {
	Status string `json:"status"`
	Steps  []Step `json:"steps"`
}

// ToolCall is one entry of a run's mcpLog: a call to a tool server (or a
// built-in tool) with its whole result.
type ToolCall struct {
	Seq       int            `json:"seq"`
	Step      int            `json:"step"`
	Server    string         `json:"server"`
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Result    string         `json:"result,omitempty"`
	Error     string         `json:"error,omitempty"`
	At        time.Time      `json:"at"`
	ElapsedMS int64          `json:"elapsed_ms"`
}

// RunDetail is GET /api/runs/{run_id} and each WebSocket message.
type RunDetail struct {
	RunID     string     `json:"run_id"`
	TestID    string     `json:"test_id"`
	TestFile  string     `json:"test_file"`
	Title     string     `json:"title"`
	Status    string     `json:"status"`
	Phase     string     `json:"phase"`
	ElapsedMS int64      `json:"elapsed_ms"`
	Model     string     `json:"model"`
	DryRun    bool       `json:"dry_run"`
	Owner     string     `json:"owner"`
	BatchID   string     `json:"batch_id,omitempty"`
	StartedAt time.Time  `json:"started_at"`
	Steps     []Step     `json:"steps"`
	Report    *Report    `json:"report"`
	Output    string     `json:"output"`
	MCPLog    []ToolCall `json:"mcpLog"`
	// Delta marks a WebSocket message after the first: its Output holds
	// only the text appended since the previous message and its MCPLog
	// only the new entries; steps, status and phase are always whole.
	Delta bool `json:"delta,omitempty"`
}

// WorkerHealth is GET /health of a worker: open, and without run ids or
// owners, so the gateway can see reachability and whether the worker is
// free without acting as anyone.
type WorkerHealth struct {
	Status     string `json:"status"`
	Busy       bool   `json:"busy"`
	ActiveRuns int    `json:"active_runs"`
	Batch      string `json:"batch"`
	Version    string `json:"version"`
}

// RunSummary is one row of GET /api/runs.
type RunSummary struct {
	RunID      string     `json:"run_id"`
	TestID     string     `json:"test_id"`
	TestFile   string     `json:"test_file"`
	Title      string     `json:"title"`
	Status     string     `json:"status"`
	Phase      string     `json:"phase"`
	ElapsedMS  int64      `json:"elapsed_ms"`
	Model      string     `json:"model"`
	DryRun     bool       `json:"dry_run"`
	Owner      string     `json:"owner"`
	BatchID    string     `json:"batch_id,omitempty"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	// Stand names the worker the run is on. Workers leave it empty; the
	// gateway fills it when it merges the lists of several workers.
	Stand string `json:"stand,omitempty"`
}

// BatchStatus is GET /api/run/batch. A worker answers status none when it
// has no batch of the caller's.
type BatchStatus struct {
	Status       string   `json:"status"`
	ID           string   `json:"id"`
	Total        int      `json:"total"`
	CurrentIndex int      `json:"current_index"`
	RunIDs       []string `json:"run_ids"`
	TestFiles    []string `json:"test_files"`
	Model        string   `json:"model"`
	Owner        string   `json:"owner,omitempty"`
	Stand        string   `json:"stand,omitempty"`
}

// Summary counts the verdicts of a batch.
type Summary struct {
	Total  int `json:"total"`
	Passed int `json:"passed"`
	Failed int `json:"failed"`
	Errors int `json:"errors"`
}

// BatchReportRow is one row of GET /api/run/batch/reports.
type BatchReportRow struct {
	BatchID   string    `json:"batch_id"`
	Status    string    `json:"status"`
	Model     string    `json:"model"`
	Owner     string    `json:"owner"`
	StartedAt time.Time `json:"started_at"`
	// FinishedAt is null while the batch runs.
	FinishedAt     *time.Time `json:"finished_at"`
	TotalElapsedMS int64      `json:"total_elapsed_ms"`
	Summary        Summary    `json:"summary"`
	Stand          string     `json:"stand,omitempty"`
}

// BatchResult is one test of a full batch report.
type BatchResult struct {
	TestFile  string `json:"test_file"`
	TestID    string `json:"test_id"`
	Title     string `json:"title"`
	RunID     string `json:"run_id"`
	Status    string `json:"status"`
	ElapsedMS int64  `json:"elapsed_ms"`
	Steps     []Step `json:"steps"`
}

// BatchReport is GET /api/run/batch/report and
// GET /api/run/batch/reports/{batch_id}.
type BatchReport struct {
	BatchReportRow
	DryRun  bool          `json:"dry_run"`
	Results []BatchResult `json:"results"`
}

// StopResult is the answer of POST /api/run/stop.
type StopResult struct {
	Stopped []string `json:"stopped"`
	// Batches names the batches the stop ended (a batch stopped between
	// two of its tests stops no run).
	Batches []string `json:"batches"`
}

// Error is the body of every test-runner error (gateway and worker): the
// spec shows no error body, so this follows the common FastAPI shape
// {"detail": "..."} that the spec's note-conflict body extends, plus a
// machine-readable code.
type Error struct {
	Detail string `json:"detail"`
	Code   string `json:"code"`
}
