package worker

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"cpesuite/internal/testrunner/testcase"
	"cpesuite/internal/testrunner/wire"
)

// DeterministicModel is the model name of the built-in executor that runs
// each step's explicit tool call and checks its expectation; it is the
// default model.
const DeterministicModel = "deterministic"

// deterministic runs every step on its own: a step's verdict never depends
// on an earlier step's, and a failed or errored step does not end the run
// (the run's verdict collects them).
type deterministic struct{}

func (deterministic) Name() string { return DeterministicModel }

func (deterministic) Execute(ctx context.Context, rc *RunContext) error {
	rc.SetPhase(wire.PhaseExecuting)
	for i, step := range rc.Case.Steps {
		if ctx.Err() != nil {
			return nil // the engine marks the rest skipped and the run error
		}
		start := time.Now()
		rc.StepStarted(i)
		status, detail := runStep(ctx, rc, i, step)
		rc.StepDone(i, status, detail)
		line := fmt.Sprintf("step %d: %s (%d ms)", i+1, status, time.Since(start).Milliseconds())
		if detail != "" {
			line += ": " + detail
		}
		rc.Printf("%s\n", line)
	}
	return nil
}

// noToolDetail is the verdict detail of a step without a tool call.
const noToolDetail = "step has no tool call; the deterministic executor needs one"

func runStep(ctx context.Context, rc *RunContext, i int, step testcase.Step) (status, detail string) {
	tc := step.Tool
	if tc == nil {
		return wire.StepError, noToolDetail
	}
	exp, err := compileExpectation(tc.Expect)
	if err != nil {
		return wire.StepError, err.Error()
	}
	if rc.DryRun {
		if err := rc.Tools.Resolve(ctx, tc.Server, tc.Name); err != nil {
			return wire.StepError, "dry run: " + err.Error()
		}
		return wire.StepPassed, fmt.Sprintf("dry run: %s/%s resolved, not called", tc.Server, tc.Name)
	}
	result, isError, err := rc.CallTool(ctx, i, tc.Server, tc.Name, tc.Arguments)
	if ctx.Err() != nil {
		return wire.StepError, "run stopped: " + context.Cause(ctx).Error()
	}
	if err != nil {
		return wire.StepError, fmt.Sprintf("calling %s/%s failed: %v", tc.Server, tc.Name, err)
	}
	if miss := exp.check(result, isError); miss != "" {
		return wire.StepFailed, miss
	}
	return wire.StepPassed, ""
}

// expectation is a testcase.Expectation ready to check.
type expectation struct {
	wantError   bool
	contains    string
	notContains string
	equals      *string
	matches     *regexp.Regexp
}

func compileExpectation(e *testcase.Expectation) (expectation, error) {
	var x expectation
	if e == nil {
		return x, nil
	}
	if e.Error != nil {
		x.wantError = *e.Error
	}
	x.contains, x.notContains = e.Contains, e.NotContains
	if e.Equals != "" {
		eq := trimNewlines(e.Equals)
		x.equals = &eq
	}
	if e.Matches != "" {
		re, err := regexp.Compile(e.Matches)
		if err != nil {
			return x, fmt.Errorf("expect.matches is not a valid regular expression: %v", err)
		}
		x.matches = re
	}
	return x, nil
}

// check returns the first unmet expectation, "" when all hold. The error
// flag comes first: a checked text means little when the tool's verdict
// is the opposite of the expected one.
func (x expectation) check(result string, isError bool) string {
	switch {
	case isError && !x.wantError:
		return "expected the tool to succeed, it reported an error: " + excerpt(result)
	case !isError && x.wantError:
		return "expected the tool to report an error, it succeeded: " + excerpt(result)
	}
	if x.contains != "" && !strings.Contains(result, x.contains) {
		return fmt.Sprintf("expect.contains: result does not contain %q: %s", x.contains, excerpt(result))
	}
	if x.notContains != "" && strings.Contains(result, x.notContains) {
		return fmt.Sprintf("expect.not_contains: result contains %q", x.notContains)
	}
	if x.equals != nil && trimNewlines(result) != *x.equals {
		return fmt.Sprintf("expect.equals: result is not %q: %s", *x.equals, excerpt(result))
	}
	if x.matches != nil && !x.matches.MatchString(result) {
		return fmt.Sprintf("expect.matches: result does not match %q: %s", x.matches.String(), excerpt(result))
	}
	return ""
}

// trimNewlines drops trailing line ends: YAML block scalars and most tools
// end text with one, which an exact comparison should not trip over.
func trimNewlines(s string) string { return strings.TrimRight(s, "\r\n") }

// excerpt quotes the start of a result for a verdict detail.
func excerpt(s string) string {
	const n = 200
	if len(s) <= n {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q…", clip(s, n))
}
