package worker

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"cpesuite/internal/testrunner/testcase"
	"cpesuite/internal/testrunner/wire"
)

// Executor runs the steps of a case. The engine loads the case (phase
// loading) before Execute and sets phase done and the run's verdict after
// it; Execute reports progress through the RunContext and returns when
// ctx ends (stop or shutdown) or the steps are done. An error return makes
// the run's status error.
type Executor interface {
	Name() string
	Execute(ctx context.Context, rc *RunContext) error
}

// RunContext is what an executor sees of its run. Step indexes i are
// indexes into Case.Steps (0-based); the run detail numbers steps from 1.
// Every report wakes the run's WebSocket watchers. Reports made after the
// run has finished are ignored.
type RunContext struct {
	Case   *testcase.Case
	DryRun bool
	// Tools reaches the built-in tools (server "builtin") and the worker's
	// configured tool servers. Prefer CallTool, which also logs the call.
	Tools Tools
	RunID string
	Owner string
	Model string

	w *Worker
	r *run
}

// Setting returns the effective value of a worker setting.
func (rc *RunContext) Setting(key string) string { return rc.w.Setting(key) }

// SetPhase sets the run's phase; values outside the spec's phase set are
// ignored (and logged), so a buggy executor cannot put an unknown value on
// the wire.
func (rc *RunContext) SetPhase(p string) {
	switch p {
	case wire.PhaseLoading, wire.PhasePages, wire.PhaseExecuting, wire.PhaseParsing, wire.PhaseDone:
	default:
		rc.w.log.Warn("executor set an unknown phase", "run_id", rc.RunID, "phase", p)
		return
	}
	r := rc.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.status != wire.StatusRunning {
		return
	}
	r.phase = p
	r.notifyLocked()
}

// StepStarted marks step i running.
func (rc *RunContext) StepStarted(i int) {
	r := rc.r
	now := rc.w.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.status != wire.StatusRunning || i < 0 || i >= len(r.steps) {
		return
	}
	r.steps[i].Status = wire.StepRunning
	r.steps[i].Detail = ""
	r.stepStarted[i] = now
	r.notifyLocked()
}

// StepDone records the verdict of step i: passed, failed, error or
// skipped, with detail saying why it did not pass. Its elapsed time counts
// from StepStarted. Any other status is recorded as error, naming it.
func (rc *RunContext) StepDone(i int, status, detail string) {
	switch status {
	case wire.StepPassed, wire.StepFailed, wire.StepError, wire.StepSkipped:
	default:
		detail = fmt.Sprintf("executor reported unknown step status %q", status)
		status = wire.StepError
	}
	r := rc.r
	now := rc.w.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.status != wire.StatusRunning || i < 0 || i >= len(r.steps) {
		return
	}
	r.steps[i].Status = status
	r.steps[i].Detail = detail
	if t := r.stepStarted[i]; !t.IsZero() {
		r.steps[i].ElapsedMS = now.Sub(t).Milliseconds()
	}
	r.notifyLocked()
}

// Printf appends formatted text to the run's output.
func (rc *RunContext) Printf(format string, args ...any) {
	rc.r.appendOutput(fmt.Sprintf(format, args...))
}

// CallTool calls server/tool for step i (-1 for a call outside any step)
// and appends the call to the run's mcpLog with its elapsed time and up to
// 1 MiB of its result. It returns the result cut to Config.MaxToolOutput
// bytes, with a note saying so when it was cut.
func (rc *RunContext) CallTool(ctx context.Context, step int, server, tool string, args map[string]any) (result string, isError bool, err error) {
	start := rc.w.now()
	result, isError, err = rc.Tools.Call(ctx, server, tool, args)
	elapsed := rc.w.now().Sub(start)

	entry := wire.ToolCall{
		Server:    server,
		Tool:      tool,
		Arguments: redactArgs(args),
		Result:    capText(result, maxLogResult),
		At:        start,
		ElapsedMS: elapsed.Milliseconds(),
	}
	if step >= 0 {
		entry.Step = step + 1
	}
	switch {
	case err != nil:
		entry.Error = err.Error()
	case isError:
		entry.Error = "the tool reported an error"
	}
	rc.r.appendLog(entry)
	return capText(result, rc.w.cfg.MaxToolOutput), isError, err
}

// ListTools returns the tools an executor may call: the built-in ones and
// those of every reachable tool server.
func (rc *RunContext) ListTools(ctx context.Context) ([]ToolInfo, error) {
	return rc.w.tools.List(ctx)
}

// appendLog adds a tool-log entry, numbering it and keeping the run's
// total of logged results under maxLogBytes.
func (r *run) appendLog(e wire.ToolCall) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.status != wire.StatusRunning {
		return
	}
	if r.logBytes+len(e.Result) > maxLogBytes {
		e.Result = fmt.Sprintf("[result of %d bytes not kept: the run's tool log holds at most %d MiB]", len(e.Result), maxLogBytes>>20)
	} else {
		r.logBytes += len(e.Result)
	}
	e.Seq = len(r.mcpLog) + 1
	r.mcpLog = append(r.mcpLog, e)
	r.notifyLocked()
}

// capText cuts s to at most n bytes of its own text plus a note.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return clip(s, n) + fmt.Sprintf("\n[truncated: %d of %d bytes shown]", n, len(s))
}

// redactedValue replaces the values of credential-like arguments in the
// tool log: the log is shown to the run's owner and archived, and a
// case's Authorization header is no business of either.
const redactedValue = "********"

// redactArgs returns a deep copy of args with credential-like values
// replaced. The copy also keeps the log independent of maps the executor
// may reuse.
func redactArgs(args map[string]any) map[string]any {
	if args == nil {
		return nil
	}
	out := make(map[string]any, len(args))
	for k, v := range args {
		if sensitiveKey(k) {
			out[k] = redactedValue
			continue
		}
		out[k] = redactValue(v)
	}
	return out
}

func redactValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return redactArgs(t)
	case map[string]string:
		m := make(map[string]any, len(t))
		for k, s := range t {
			m[k] = s
		}
		return redactArgs(m)
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, s := range t {
			m[fmt.Sprint(k)] = s
		}
		return redactArgs(m)
	case []any:
		c := make([]any, len(t))
		for i, e := range t {
			c[i] = redactValue(e)
		}
		return c
	}
	return v
}

// sensitiveWords mark an argument name as a credential, compared in lower
// case without '-' and '_' (X-Api-Key, api_key, apiKey).
var sensitiveWords = []string{"authorization", "cookie", "password", "passwd", "secret", "token", "apikey"}

func sensitiveKey(k string) bool {
	norm := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' {
			return -1
		}
		return unicode.ToLower(r)
	}, k)
	for _, s := range sensitiveWords {
		if strings.Contains(norm, s) {
			return true
		}
	}
	return false
}
