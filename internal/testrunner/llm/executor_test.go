package llm_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/testrunner/testcase"
	"cpesuite/internal/testrunner/wire"
	"cpesuite/internal/testutil"
)

// outcome is what a scenario checks: the finished run, the provider
// requests (each with the run as it stood when the request arrived), the
// retry waits and the worker's log.
type outcome struct {
	d      wire.RunDetail
	reqs   []request
	sleeps []time.Duration
	logs   string
}

// twoSteps reads a large document with an explicit http_request, then
// waits; the model does the second step its own way.
func twoSteps(api string) *testcase.Case {
	return &testcase.Case{
		ID: "LLM-1", Title: "Diagnostics document is complete",
		Description: "The diagnostics endpoint serves the whole document.",
		Steps: []testcase.Step{
			{
				Action: "Read the diagnostics document", Expected: "the body ends with END-OF-BODY",
				Tool: &testcase.ToolCall{Server: "builtin", Name: "http_request", Arguments: map[string]any{"url": api + "/big"},
					Expect: &testcase.Expectation{Contains: "END-OF-BODY"}},
			},
			{Action: "Wait for the device to settle", Expected: "the wait completes"},
		},
	}
}

func fencedVerdict(v string) string { return "All steps done.\n```json\n" + v + "\n```\nThanks." }

const passBoth = `{"steps":[{"step":1,"status":"passed","detail":"body complete"},{"step":2,"status":"passed","detail":"waited"}],"summary":"all good"}`

func stepStatuses(d wire.RunDetail) []string {
	var out []string
	for _, s := range d.Steps {
		out = append(out, s.Status)
	}
	return out
}

func requireStatuses(t *testing.T, d wire.RunDetail, run string, steps ...string) {
	t.Helper()
	if d.Status != run || !slices.Equal(stepStatuses(d), steps) {
		t.Fatalf("run %s steps %v, want %s %v\noutput:\n%s", d.Status, stepStatuses(d), run, steps, d.Output)
	}
}

func requireOutput(t *testing.T, d wire.RunDetail, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(d.Output, p) {
			t.Fatalf("output lacks %q:\n%s", p, d.Output)
		}
	}
}

func requireRequests(t *testing.T, got outcome, n int) {
	t.Helper()
	if len(got.reqs) != n {
		t.Fatalf("%d provider requests, want %d\noutput:\n%s", len(got.reqs), n, got.d.Output)
	}
}

func TestExecutors(t *testing.T) {
	api := apiServer(t)
	tests := []struct {
		name       string
		env        map[string]string
		maxRetries int
		model      string // appended to the executor name
		dryRun     bool
		kase       func(api string) *testcase.Case // nil: twoSteps
		script     func(k kit, api string) []answer
		check      func(t *testing.T, k kit, got outcome)
	}{
		{
			name: "tool loop of three rounds ends in a parsed verdict",
			script: func(k kit, api string) []answer {
				return []answer{
					k.tools("STEP 1\nFetching the document.", call{"call_1", "builtin__http_request", fmt.Sprintf(`{"url":%q}`, api+"/big")}),
					k.tools("**STEP 2**", call{"call_2", "builtin__wait", `{"seconds":0}`}, call{"call_3", "builtin__wait", `{"seconds":"soon"}`}),
					k.final(fencedVerdict(`{"steps":[{"step":1,"status":"passed","detail":"body ends with END-OF-BODY"},{"step":2,"status":"failed","detail":"expected a settled device, the wait was refused once"}],"summary":"one failure"}`)),
				}
			},
			check: func(t *testing.T, k kit, got outcome) {
				requireRequests(t, got, 3)
				requireStatuses(t, got.d, wire.StatusFailed, wire.StepPassed, wire.StepFailed)
				if got.d.Steps[0].Detail != "body ends with END-OF-BODY" || !strings.Contains(got.d.Steps[1].Detail, "wait was refused") {
					t.Fatalf("step details %+v", got.d.Steps)
				}
				r0 := got.reqs[0]
				if r0.path != k.path || k.auth(r0.header) != testKey || r0.model != "model-under-test" {
					t.Fatalf("first request: path %s, key ok %t, model %q", r0.path, k.auth(r0.header) == testKey, r0.model)
				}
				if !slices.Contains(r0.tools, "builtin__http_request") || !slices.Contains(r0.tools, "builtin__wait") {
					t.Fatalf("tools %v", r0.tools)
				}
				for i, s := range r0.schemas {
					if s != "object" {
						t.Fatalf("tool %s schema type %q", r0.tools[i], s)
					}
				}
				if !strings.Contains(r0.system, `"STEP n"`) || !strings.Contains(r0.system, `"status":"passed"`) {
					t.Fatalf("system prompt lacks the contract:\n%s", r0.system)
				}
				for _, want := range []string{"Diagnostics document is complete", "STEP 2", "Explicit tool call: builtin__http_request", api.URL + "/big", `the result contains "END-OF-BODY"`} {
					if !strings.Contains(r0.first, want) {
						t.Fatalf("case prompt lacks %q:\n%s", want, r0.first)
					}
				}
				if len(r0.results) != 0 || len(r0.echoes) != 0 {
					t.Fatalf("first request carries results %v echoes %v", r0.results, r0.echoes)
				}
				if s := r0.snap; s.Phase != wire.PhaseExecuting || !slices.Equal(stepStatuses(s), []string{wire.StepRunning, wire.StepPending}) {
					t.Fatalf("at request 1: phase %s steps %v", s.Phase, stepStatuses(s))
				}

				r1 := got.reqs[1]
				if !slices.EqualFunc(r1.echoes, [][]string{{"call_1"}}, slices.Equal) || !strings.Contains(r1.texts[0], "STEP 1") {
					t.Fatalf("request 2 echoes %v texts %q", r1.echoes, r1.texts)
				}
				if len(r1.results) != 1 || r1.results[0].id != "call_1" || r1.results[0].isError {
					t.Fatalf("request 2 results %+v", r1.results)
				}
				res := r1.results[0].content
				if !strings.HasPrefix(res, "HTTP 200") || !strings.Contains(res, "[truncated: 256 of") || strings.Contains(res, "END-OF-BODY") {
					t.Fatalf("the model got the tool output uncapped or wrong: %q", res)
				}
				if s := r1.snap; !slices.Equal(stepStatuses(s), []string{wire.StepRunning, wire.StepPending}) {
					t.Fatalf("at request 2: steps %v", stepStatuses(s))
				}

				r2 := got.reqs[2]
				if !slices.EqualFunc(r2.echoes, [][]string{{"call_1"}, {"call_2", "call_3"}}, slices.Equal) {
					t.Fatalf("request 3 echoes %v", r2.echoes)
				}
				if len(r2.results) != 2 || r2.results[0] != (result{"call_2", "waited 0s", false}) ||
					r2.results[1].id != "call_3" || !r2.results[1].isError || !strings.Contains(r2.results[1].content, "seconds must be a number") {
					t.Fatalf("request 3 results %+v", r2.results)
				}
				if s := r2.snap; !slices.Equal(stepStatuses(s), []string{wire.StepRunning, wire.StepRunning}) {
					t.Fatalf("at request 3: steps %v", stepStatuses(s))
				}

				log := got.d.MCPLog
				if len(log) != 3 || log[0].Step != 1 || log[0].Tool != "http_request" || log[1].Step != 2 || log[2].Step != 2 || log[2].Error == "" {
					t.Fatalf("mcpLog %+v", log)
				}
				if !strings.HasSuffix(log[0].Result, "END-OF-BODY") {
					t.Fatalf("the tool log lost the whole result: %q", excerptEnd(log[0].Result))
				}
				requireOutput(t, got.d, "turn 1: 1 tool call, tokens in", "turn 2: 2 tool calls", "turn 3: final answer",
					"step 1: builtin/http_request: ok", "step 2: failed: expected a settled device", "summary: one failure")
			},
		},
		{
			name: "prose verdict: unknown statuses, omitted and surplus steps",
			script: func(k kit, _ string) []answer {
				return []answer{k.final(`I checked it. {"steps":[{"step":"1","status":"Skipped","detail":"no time"},{"step":3,"status":"passed"}],"summary":"partial"} That is all.`)}
			},
			check: func(t *testing.T, k kit, got outcome) {
				requireRequests(t, got, 1)
				requireStatuses(t, got.d, wire.StatusError, wire.StepError, wire.StepError)
				if !strings.Contains(got.d.Steps[0].Detail, `the model reported status "Skipped", not passed, failed or error: no time`) ||
					got.d.Steps[1].Detail != "no verdict from the model" {
					t.Fatalf("details %+v", got.d.Steps)
				}
				requireOutput(t, got.d, "verdict: step 3 ignored; the case has 2 steps", "summary: partial")
			},
		},
		{
			name: "an answer without a verdict is asked for again once",
			script: func(k kit, _ string) []answer {
				return []answer{
					k.final("I believe everything worked."),
					k.final("```json\n" + passBoth + "\n```"),
				}
			},
			check: func(t *testing.T, k kit, got outcome) {
				requireRequests(t, got, 2)
				requireStatuses(t, got.d, wire.StatusPassed, wire.StepPassed, wire.StepPassed)
				r1 := got.reqs[1]
				if !strings.Contains(r1.last, "no verdict I could read") || !strings.Contains(r1.last, "from 1 to 2") {
					t.Fatalf("repair message %q", r1.last)
				}
				if r1.snap.Phase != wire.PhaseParsing {
					t.Fatalf("phase during the repair %q", r1.snap.Phase)
				}
				if len(r1.texts) != 1 || r1.texts[0] != "I believe everything worked." {
					t.Fatalf("the first answer was not echoed: %q", r1.texts)
				}
			},
		},
		{
			name: "two answers without a verdict are a run error",
			script: func(k kit, _ string) []answer {
				return []answer{k.final("Looks fine to me."), k.final(`{"result":"ok"}`)}
			},
			check: func(t *testing.T, k kit, got outcome) {
				requireRequests(t, got, 2)
				requireStatuses(t, got.d, wire.StatusError, wire.StepError, wire.StepSkipped)
				requireOutput(t, got.d, `error: the model's final answer is not a JSON verdict (no JSON object with a "steps" list found): "{\"result\":\"ok\"}"`)
			},
		},
		{
			name: "an unknown tool is an error result for the model",
			script: func(k kit, _ string) []answer {
				return []answer{
					k.tools("STEP 1", call{"call_x", "emulator__reboot", `{}`}),
					k.final(fencedVerdict(`{"steps":[{"step":1,"status":"error","detail":"no reboot tool"},{"step":2,"status":"passed"}]}`)),
				}
			},
			check: func(t *testing.T, k kit, got outcome) {
				requireRequests(t, got, 2)
				requireStatuses(t, got.d, wire.StatusError, wire.StepError, wire.StepPassed)
				r := got.reqs[1].results
				if len(r) != 1 || r[0].id != "call_x" || !r[0].isError || !strings.Contains(r[0].content, `unknown tool "emulator__reboot"`) || !strings.Contains(r[0].content, "builtin__wait") {
					t.Fatalf("results %+v", r)
				}
				if len(got.d.MCPLog) != 0 {
					t.Fatalf("mcpLog %+v", got.d.MCPLog)
				}
			},
		},
		{
			name: "HTTP 400 is a run error with the provider's message",
			script: func(k kit, _ string) []answer {
				return []answer{k.fail(400, "invalid_request_error", "max_tokens: field required", nil)}
			},
			check: func(t *testing.T, k kit, got outcome) {
				requireRequests(t, got, 1)
				requireStatuses(t, got.d, wire.StatusError, wire.StepError, wire.StepSkipped)
				requireOutput(t, got.d, "error: "+k.name+" answered HTTP 400 invalid_request_error: max_tokens: field required")
				if len(got.sleeps) != 0 {
					t.Fatalf("a 400 was retried: %v", got.sleeps)
				}
			},
		},
		{
			name: "HTTP 401 invalid key never shows the key",
			script: func(k kit, _ string) []answer {
				return []answer{k.fail(401, "authentication_error", "invalid x-api-key "+testKey, nil)}
			},
			check: func(t *testing.T, k kit, got outcome) {
				requireRequests(t, got, 1)
				requireStatuses(t, got.d, wire.StatusError, wire.StepError, wire.StepSkipped)
				requireOutput(t, got.d, k.name+" answered HTTP 401 authentication_error: invalid x-api-key [api key]")
			},
		},
		{
			name: "429 then success waits what retry-after asks",
			script: func(k kit, _ string) []answer {
				return []answer{
					k.fail(429, "rate_limit_error", "slow down", map[string]string{"retry-after": "7"}),
					k.final(fencedVerdict(passBoth)),
				}
			},
			check: func(t *testing.T, k kit, got outcome) {
				requireRequests(t, got, 2)
				requireStatuses(t, got.d, wire.StatusPassed, wire.StepPassed, wire.StepPassed)
				if !slices.Equal(got.sleeps, []time.Duration{7 * time.Second}) {
					t.Fatalf("waits %v", got.sleeps)
				}
				requireOutput(t, got.d, k.name+" answered HTTP 429 rate_limit_error: slow down; retry 1 of 2 in 7s")
			},
		},
		{
			name: "overload retried with a capped retry-after, then given up",
			script: func(k kit, _ string) []answer {
				if k.name == "anthropic" {
					a := k.fail(529, "overloaded_error", "Overloaded", map[string]string{"retry-after": "120"})
					return []answer{a, a, a}
				}
				a := k.fail(503, "server_error", "The server is overloaded", map[string]string{"retry-after-ms": "1500"})
				return []answer{a, a, a}
			},
			check: func(t *testing.T, k kit, got outcome) {
				requireRequests(t, got, 3)
				requireStatuses(t, got.d, wire.StatusError, wire.StepError, wire.StepSkipped)
				want := []time.Duration{30 * time.Second, 30 * time.Second}
				if k.name == "openai" {
					want = []time.Duration{1500 * time.Millisecond, 1500 * time.Millisecond}
				}
				if !slices.Equal(got.sleeps, want) {
					t.Fatalf("waits %v, want %v", got.sleeps, want)
				}
				requireOutput(t, got.d, "(gave up after 3 attempts)")
			},
		},
		{
			name: "500 without retry-after backs off, then gives up",
			script: func(k kit, _ string) []answer {
				a := k.fail(500, "api_error", "Internal server error", nil)
				return []answer{a, a, a}
			},
			check: func(t *testing.T, k kit, got outcome) {
				requireRequests(t, got, 3)
				if !slices.Equal(got.sleeps, []time.Duration{time.Second, 2 * time.Second}) {
					t.Fatalf("waits %v", got.sleeps)
				}
				requireOutput(t, got.d, "error: "+k.name+" answered HTTP 500 api_error: Internal server error (gave up after 3 attempts)")
			},
		},
		{
			name:       "MaxRetries below zero means one attempt",
			maxRetries: -1,
			script: func(k kit, _ string) []answer {
				return []answer{k.fail(500, "api_error", "Internal server error", nil)}
			},
			check: func(t *testing.T, k kit, got outcome) {
				requireRequests(t, got, 1)
				requireOutput(t, got.d, "error: "+k.name+" answered HTTP 500 api_error: Internal server error\n")
			},
		},
		{
			name: "a provider that does not answer runs into llm_timeout_seconds",
			env:  map[string]string{"LLM_TIMEOUT_SECONDS": "1"},
			script: func(k kit, _ string) []answer {
				return []answer{{hang: true}}
			},
			check: func(t *testing.T, k kit, got outcome) {
				requireRequests(t, got, 1)
				requireStatuses(t, got.d, wire.StatusError, wire.StepError, wire.StepSkipped)
				requireOutput(t, got.d, "error: "+k.name+": no answer within 1s (setting llm_timeout_seconds)")
			},
		},
		{
			name: "llm_max_turns ends a model that never answers",
			env:  map[string]string{"LLM_MAX_TURNS": "2"},
			script: func(k kit, _ string) []answer {
				return []answer{
					k.tools("STEP 1", call{"w1", "builtin__wait", `{"seconds":0}`}),
					k.tools("", call{"w2", "builtin__wait", `{"seconds":0}`}),
				}
			},
			check: func(t *testing.T, k kit, got outcome) {
				requireRequests(t, got, 2)
				requireStatuses(t, got.d, wire.StatusError, wire.StepError, wire.StepSkipped)
				requireOutput(t, got.d, "error: the model gave no verdict within 2 turns (setting llm_max_turns)")
				if len(got.d.MCPLog) != 2 {
					t.Fatalf("mcpLog %+v", got.d.MCPLog)
				}
			},
		},
		{
			name:   "model variant overrides the model setting",
			model:  ":special-model-2",
			script: func(k kit, _ string) []answer { return []answer{k.final(fencedVerdict(passBoth))} },
			check: func(t *testing.T, k kit, got outcome) {
				requireRequests(t, got, 1)
				if got.reqs[0].model != "special-model-2" || got.d.Model != k.name+":special-model-2" {
					t.Fatalf("model %q, run model %q", got.reqs[0].model, got.d.Model)
				}
			},
		},
		{
			name: "a case with a base_url loads its page first",
			kase: func(api string) *testcase.Case {
				c := twoSteps(api)
				c.BaseURL = "http://portal.test/login"
				return c
			},
			script: func(k kit, _ string) []answer {
				return []answer{
					k.tools("Opening the page.", call{"p1", "builtin__wait", `{"seconds":0}`}),
					k.tools("STEP 2", call{"p2", "builtin__wait", `{"seconds":0}`}),
					k.final(fencedVerdict(passBoth)),
				}
			},
			check: func(t *testing.T, k kit, got outcome) {
				requireRequests(t, got, 3)
				requireStatuses(t, got.d, wire.StatusPassed, wire.StepPassed, wire.StepPassed)
				if !strings.Contains(got.reqs[0].system, "http://portal.test/login") {
					t.Fatalf("system prompt does not name the page:\n%s", got.reqs[0].system)
				}
				if s := got.reqs[0].snap; s.Phase != wire.PhasePages || !slices.Equal(stepStatuses(s), []string{wire.StepPending, wire.StepPending}) {
					t.Fatalf("at request 1: phase %s steps %v", s.Phase, stepStatuses(s))
				}
				if s := got.reqs[1].snap; s.Phase != wire.PhaseExecuting || !slices.Equal(stepStatuses(s), []string{wire.StepRunning, wire.StepPending}) {
					t.Fatalf("at request 2: phase %s steps %v", s.Phase, stepStatuses(s))
				}
				if log := got.d.MCPLog; len(log) != 2 || log[0].Step != 0 || log[1].Step != 2 {
					t.Fatalf("mcpLog steps %+v", log)
				}
			},
		},
		{
			name:   "no API key is a run error naming the setting",
			env:    map[string]string{"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""},
			script: func(kit, string) []answer { return nil },
			check: func(t *testing.T, k kit, got outcome) {
				requireRequests(t, got, 0)
				requireStatuses(t, got.d, wire.StatusError, wire.StepSkipped, wire.StepSkipped)
				requireOutput(t, got.d, "error: no API key: set "+k.name+"_api_key in the worker settings or "+k.env+"_API_KEY in the environment")
			},
		},
		{
			// The worker ignores an environment value that fails the
			// setting's check (with a warning) and uses the default.
			name:   "a bad timeout in the environment falls back to the default",
			env:    map[string]string{"LLM_TIMEOUT_SECONDS": "soon"},
			script: func(k kit, _ string) []answer { return []answer{k.final("```json\n" + passBoth + "\n```")} },
			check: func(t *testing.T, k kit, got outcome) {
				requireRequests(t, got, 1)
				requireStatuses(t, got.d, wire.StatusPassed, wire.StepPassed, wire.StepPassed)
				requireOutput(t, got.d, "at most 40 turns of at most 2m0s each")
			},
		},
		{
			name:   "dry run checks settings and explicit tools without the model",
			dryRun: true,
			kase: func(api string) *testcase.Case {
				c := twoSteps(api)
				c.Steps = append(c.Steps, testcase.Step{Action: "Reboot", Tool: &testcase.ToolCall{Server: "emulator", Name: "reboot"}})
				return c
			},
			script: func(kit, string) []answer { return nil },
			check: func(t *testing.T, k kit, got outcome) {
				requireRequests(t, got, 0)
				requireStatuses(t, got.d, wire.StatusError, wire.StepPassed, wire.StepPassed, wire.StepError)
				if got.d.Steps[0].Detail != "dry run: builtin/http_request resolved, not called" ||
					!strings.Contains(got.d.Steps[1].Detail, "the model chooses its tools") ||
					got.d.Steps[2].Detail != `dry run: tool server "emulator" is not configured` {
					t.Fatalf("details %+v", got.d.Steps)
				}
				requireOutput(t, got.d, "dry run: "+k.name+" model model-under-test at http://127.0.0.1:", "the model is not called")
			},
		},
		{
			name:   "dry run without a key is a run error",
			dryRun: true,
			env:    map[string]string{"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""},
			script: func(kit, string) []answer { return nil },
			check: func(t *testing.T, k kit, got outcome) {
				requireStatuses(t, got.d, wire.StatusError, wire.StepSkipped, wire.StepSkipped)
				requireOutput(t, got.d, "error: no API key")
			},
		},
	}
	for _, k := range kits {
		for _, tc := range tests {
			t.Run(k.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				h, d := setup(t, k, harnessOpts{env: tc.env, maxToolOutput: 256, maxRetries: tc.maxRetries}, tc.script(k, api.URL)...)
				mk := tc.kase
				if mk == nil {
					mk = twoSteps
				}
				file := h.addCase(mk(api.URL))
				id := h.startRun(file, k.name+tc.model, tc.dryRun)
				got := outcome{d: h.finished(id)}
				got.reqs, got.sleeps, got.logs = d.requests(), h.sleeps.waits(), h.logs.String()
				requireNoKey(t, got)
				tc.check(t, k, got)
			})
		}
	}
}

// requireNoKey checks that the API key reached neither the run (output,
// steps, tool log) nor the worker's log.
func requireNoKey(t *testing.T, got outcome) {
	t.Helper()
	b, err := json.Marshal(got.d)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), testKey) || strings.Contains(got.logs, testKey) {
		t.Fatalf("the API key leaked:\nrun: %s\nlog: %s", b, got.logs)
	}
}

func excerptEnd(s string) string {
	if len(s) > 80 {
		return "…" + s[len(s)-80:]
	}
	return s
}

// TestStopEndsAPendingRequest stops a run whose provider never answers:
// the run must end at once, not after llm_timeout_seconds.
func TestStopEndsAPendingRequest(t *testing.T) {
	api := apiServer(t)
	for _, k := range kits {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			h, d := setup(t, k, harnessOpts{env: map[string]string{"LLM_TIMEOUT_SECONDS": "600"}}, answer{hang: true})
			id := h.startRun(h.addCase(twoSteps(api.URL)), k.name, false)
			testutil.Eventually(t, waitFor, "the provider request", func() bool { return len(d.requests()) == 1 })
			if _, err := h.do("POST", "/api/run/stop", nil); err != nil {
				t.Fatal(err)
			}
			got := h.finished(id)
			requireStatuses(t, got, wire.StatusError, wire.StepError, wire.StepSkipped)
			requireOutput(t, got, "run stopped: stopped by the user")
			if strings.Contains(got.Output, "error: ") {
				t.Fatalf("a stop was reported as an executor error:\n%s", got.Output)
			}
		})
	}
}
