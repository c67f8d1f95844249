package llm

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"cpesuite/internal/testrunner/wire"
	"cpesuite/internal/testrunner/worker"
)

// NewAnthropic returns the executor "anthropic": the Anthropic Messages
// API with tool use.
func NewAnthropic(cfg Config) worker.Executor {
	return &executor{cfg: cfg.withDefaults(), p: anthropicProvider{}}
}

// NewOpenAI returns the executor "openai": any OpenAI-compatible
// chat-completions endpoint with tool calls.
func NewOpenAI(cfg Config) worker.Executor {
	return &executor{cfg: cfg.withDefaults(), p: openAIProvider{}}
}

type executor struct {
	cfg Config
	p   provider
}

func (e *executor) Name() string { return e.p.name() }

// Execute runs the case with the model, or checks the configuration when
// the run is a dry run. A stop ends it with a nil error: the engine
// records the stop.
func (e *executor) Execute(ctx context.Context, rc *worker.RunContext) error {
	ps, err := loadSettings(e.p, rc, rc.Model)
	if err != nil {
		return err
	}
	tools, err := rc.ListTools(ctx)
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		// The list still holds the tools that could be reached.
		rc.Printf("warning: not every tool server could be listed: %v\n", err)
	}
	ts := newToolSet(tools)
	if rc.DryRun {
		return e.dryRun(ctx, rc, ps, ts)
	}
	rc.Printf("%s: model %s, %d tools, at most %d turns of at most %s each\n", e.p.name(), ps.model, len(ts.defs), ps.maxTurns, ps.timeout)
	c := &caller{cfg: e.cfg, p: e.p, apiKey: ps.apiKey, timeout: ps.timeout, printf: rc.Printf, runID: rc.RunID}
	s := &session{
		rc:      rc,
		ps:      ps,
		tools:   ts,
		conv:    e.p.start(c, ps, buildSystemPrompt(rc.Case), buildCasePrompt(rc.Case, ts), ts.defs),
		started: make([]bool, len(rc.Case.Steps)),
		cur:     -1,
	}
	err = s.run(ctx)
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		e.cfg.Log.Info("language-model run failed", "run_id", rc.RunID, "provider", e.p.name(), "model", ps.model, "error", err)
	}
	return err
}

// dryRun checks what a real run needs without calling the model: the
// settings (checked by the caller), the tool list, and every explicit
// tool call of the case.
func (e *executor) dryRun(ctx context.Context, rc *worker.RunContext, ps providerSettings, ts *toolSet) error {
	rc.SetPhase(wire.PhaseExecuting)
	rc.Printf("dry run: %s model %s at %s, API key set, %d tools; the model is not called\n", e.p.name(), ps.model, ps.endpoint, len(ts.defs))
	for i, st := range rc.Case.Steps {
		if ctx.Err() != nil {
			return nil
		}
		rc.StepStarted(i)
		if st.Tool == nil {
			rc.StepDone(i, wire.StepPassed, "dry run: no explicit tool call; the model chooses its tools")
			continue
		}
		if err := rc.Tools.Resolve(ctx, st.Tool.Server, st.Tool.Name); err != nil {
			rc.StepDone(i, wire.StepError, "dry run: "+err.Error())
			continue
		}
		rc.StepDone(i, wire.StepPassed, fmt.Sprintf("dry run: %s/%s resolved, not called", st.Tool.Server, st.Tool.Name))
	}
	return nil
}

// session is one run's tool loop.
type session struct {
	rc    *worker.RunContext
	ps    providerSettings
	tools *toolSet
	conv  conversation

	// cur is the step the model works on (index), -1 before the first.
	cur     int
	started []bool
	inPages bool
}

// stepMarker is the model's "STEP n" line (markdown decoration allowed).
var stepMarker = regexp.MustCompile(`(?m)^[\s#>*_]*STEP\s+(\d+)\b`)

func (s *session) run(ctx context.Context) error {
	steps := len(s.rc.Case.Steps)
	if s.rc.Case.BaseURL != "" {
		s.inPages = true
		s.rc.SetPhase(wire.PhasePages)
	} else {
		s.rc.SetPhase(wire.PhaseExecuting)
		s.begin(0)
	}
	repaired := false
	for turn := 1; ; turn++ {
		if turn > s.ps.maxTurns {
			return fmt.Errorf("the model gave no verdict within %d turns (setting llm_max_turns)", s.ps.maxTurns)
		}
		if s.inPages && turn > 1 {
			// The page-loading turn is over; a model that wrote no
			// marker is on step 1 now.
			s.begin(0)
		}
		rep, err := s.conv.next(ctx)
		if err != nil {
			return err
		}
		s.printTurn(turn, rep)
		if len(rep.calls) > 0 {
			s.followMarker(rep.text)
			results := make([]toolResult, 0, len(rep.calls))
			for _, c := range rep.calls {
				results = append(results, s.call(ctx, c))
				if ctx.Err() != nil {
					return context.Cause(ctx)
				}
			}
			s.conv.addToolResults(results)
			continue
		}

		s.rc.SetPhase(wire.PhaseParsing)
		v, perr := parseVerdict(rep.text)
		if perr == nil {
			s.apply(v)
			return nil
		}
		why := perr.Error()
		switch rep.stop {
		case stopTruncated:
			why += "; the answer was cut at the token limit (" + rep.rawStop + ")"
		case stopOther:
			why += "; the model ended with " + strconv.Quote(rep.rawStop)
		}
		if !repaired && turn < s.ps.maxTurns {
			repaired = true
			s.rc.Printf("the final answer has no readable verdict (%s); asking once more\n", why)
			s.conv.addUser(fmt.Sprintf(repairPrompt, why, steps))
			continue
		}
		return fmt.Errorf("the model's final answer is not a JSON verdict (%s): %q", why, excerpt(strings.TrimSpace(rep.text), 300))
	}
}

// begin makes step i the current one, marking it started the first time.
func (s *session) begin(i int) {
	if i < 0 || i >= len(s.started) {
		return
	}
	if s.inPages {
		s.inPages = false
		s.rc.SetPhase(wire.PhaseExecuting)
	}
	s.cur = i
	if !s.started[i] {
		s.started[i] = true
		s.rc.StepStarted(i)
	}
}

// followMarker moves to the step of the turn's last "STEP n" line.
// Markers count only in turns with tool calls: a final answer may well
// mention steps while it reports on them.
func (s *session) followMarker(text string) {
	m := stepMarker.FindAllStringSubmatch(text, -1)
	if len(m) == 0 {
		return
	}
	n, err := strconv.Atoi(m[len(m)-1][1])
	if err != nil || n < 1 || n > len(s.started) {
		s.rc.Printf("the model named step %s; the case has %d steps\n", m[len(m)-1][1], len(s.started))
		return
	}
	s.begin(n - 1)
}

// call runs one tool call of the model. Whatever goes wrong short of the
// run's end is the tool result the model gets, marked as an error.
func (s *session) call(ctx context.Context, c toolCall) toolResult {
	res := toolResult{id: c.id}
	ref, ok := s.tools.lookup(c.name)
	if !ok {
		s.rc.Printf("  model called unknown tool %q\n", c.name)
		res.content = fmt.Sprintf("unknown tool %q; the tools are: %s", c.name, strings.Join(s.tools.names(), ", "))
		res.isError = true
		return res
	}
	if c.argErr != "" {
		s.rc.Printf("  %s/%s not called: %s\n", ref.server, ref.tool, c.argErr)
		res.content, res.isError = c.argErr, true
		return res
	}
	out, isErr, err := s.rc.CallTool(ctx, s.cur, ref.server, ref.tool, c.args)
	switch {
	case ctx.Err() != nil:
		return res
	case err != nil:
		out, isErr = "the tool call failed: "+err.Error(), true
	case out == "":
		out = "(the tool returned no output)"
	}
	res.content, res.isError = out, isErr
	verdict := "ok"
	if isErr {
		verdict = "error"
	}
	s.rc.Printf("  %s%s/%s: %s, %d bytes to the model\n", s.stepLabel(), ref.server, ref.tool, verdict, len(out))
	return res
}

func (s *session) stepLabel() string {
	if s.cur < 0 {
		return ""
	}
	return fmt.Sprintf("step %d: ", s.cur+1)
}

func (s *session) printTurn(turn int, rep reply) {
	line := fmt.Sprintf("turn %d: ", turn)
	switch n := len(rep.calls); n {
	case 0:
		line += "final answer"
	case 1:
		line += "1 tool call"
	default:
		line += fmt.Sprintf("%d tool calls", n)
	}
	if rep.stop == stopTruncated || rep.stop == stopOther {
		line += " (" + rep.rawStop + ")"
	}
	if rep.usage.in > 0 || rep.usage.out > 0 {
		line += fmt.Sprintf(", tokens in %d out %d", rep.usage.in, rep.usage.out)
	}
	s.rc.Printf("%s\n", line)
	if t := strings.TrimSpace(rep.text); t != "" && len(rep.calls) > 0 {
		s.rc.Printf("  model: %s\n", strings.ReplaceAll(excerpt(t, 500), "\n", "\n  model: "))
	}
}

// apply records the verdict of every step; a step the verdict omits is an
// error.
func (s *session) apply(v verdict) {
	for _, n := range v.notes {
		s.rc.Printf("verdict: %s\n", n)
	}
	steps := len(s.rc.Case.Steps)
	for n := range v.steps {
		if n > steps {
			s.rc.Printf("verdict: step %d ignored; the case has %d steps\n", n, steps)
		}
	}
	for i := 0; i < steps; i++ {
		sv, ok := v.steps[i+1]
		if !ok {
			sv = stepVerdict{status: wire.StepError, detail: errNoStepVerdict.Error()}
		}
		s.rc.StepDone(i, sv.status, sv.detail)
		line := fmt.Sprintf("step %d: %s", i+1, sv.status)
		if sv.detail != "" {
			line += ": " + sv.detail
		}
		s.rc.Printf("%s\n", line)
	}
	if v.summary != "" {
		s.rc.Printf("summary: %s\n", v.summary)
	}
}

// errNoStepVerdict is the detail of a step the verdict leaves out.
var errNoStepVerdict = errors.New("no verdict from the model")
