package llm_test

import (
	"strings"
	"testing"

	"cpesuite/internal/testrunner/wire"
)

// TestProviderQuirks covers answers that are valid for one provider (or
// for OpenAI-compatible servers other than OpenAI) but not the common
// shape the kits write.
func TestProviderQuirks(t *testing.T) {
	api := apiServer(t)
	const verdict = `{"steps":[{"step":1,"status":"passed"},{"step":2,"status":"passed"}]}`
	completion := func(message, finish string) answer {
		return answer{status: 200, body: `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":` + message + `,"finish_reason":` + finish + `}]}`}
	}
	tests := []struct {
		name   string
		kit    kit
		script []answer
		check  func(t *testing.T, got outcome)
	}{
		{
			name: "openai: arguments as an object, no call id, no finish_reason",
			kit:  openAIKit(),
			script: []answer{
				completion(`{"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"name":"builtin__wait","arguments":{"seconds":0}}}]}`, `null`),
				completion(`{"role":"assistant","content":[{"type":"text","text":"`+strings.ReplaceAll(verdict, `"`, `\"`)+`"}]}`, `"stop"`),
			},
			check: func(t *testing.T, got outcome) {
				requireStatuses(t, got.d, wire.StatusPassed, wire.StepPassed, wire.StepPassed)
				r := got.reqs[1]
				if len(r.echoes) != 1 || len(r.echoes[0]) != 1 || r.echoes[0][0] == "" || len(r.results) != 1 || r.results[0].id != r.echoes[0][0] || r.results[0].content != "waited 0s" {
					t.Fatalf("echoes %v results %+v", r.echoes, r.results)
				}
			},
		},
		{
			name: "openai: arguments that are not JSON are an error result",
			kit:  openAIKit(),
			script: []answer{
				completion(`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"builtin__wait","arguments":"{\"seconds\":"}}]}`, `"tool_calls"`),
				completion(`{"role":"assistant","content":"`+strings.ReplaceAll(verdict, `"`, `\"`)+`"}`, `"stop"`),
			},
			check: func(t *testing.T, got outcome) {
				r := got.reqs[1].results
				if len(r) != 1 || !r[0].isError || !strings.Contains(r[0].content, "the arguments are not a JSON object") {
					t.Fatalf("results %+v", r)
				}
				if len(got.d.MCPLog) != 0 {
					t.Fatalf("a call with broken arguments reached the tool: %+v", got.d.MCPLog)
				}
			},
		},
		{
			name:   "openai: an error body with status 200",
			kit:    openAIKit(),
			script: []answer{{status: 200, body: `{"error":{"message":"model not loaded","type":"server_error","code":"model_not_found"}}`}},
			check: func(t *testing.T, got outcome) {
				requireOutput(t, got.d, "error: openai answered an error: server_error/model_not_found: model not loaded")
			},
		},
		{
			name:   "openai: a non-JSON error page",
			kit:    openAIKit(),
			script: []answer{{status: 404, body: "<html>404 page not found</html>"}},
			check: func(t *testing.T, got outcome) {
				requireOutput(t, got.d, "error: openai answered HTTP 404: <html>404 page not found</html>")
			},
		},
		{
			name:   "anthropic: a 200 that is not a message",
			kit:    anthropicKit(),
			script: []answer{{status: 200, body: `{"completion":"hi"}`}},
			check: func(t *testing.T, got outcome) {
				requireOutput(t, got.d, `error: anthropic: the answer is not a Messages API message: {"completion":"hi"}`)
			},
		},
		{
			name: "anthropic: a verdict cut at max_tokens is asked for again",
			kit:  anthropicKit(),
			script: []answer{
				{status: 200, body: `{"type":"message","role":"assistant","content":[{"type":"text","text":"{\"steps\":[{\"step\":1,"}],"stop_reason":"max_tokens","usage":{"input_tokens":1,"output_tokens":8192}}`},
				anthropicKit().final(verdict),
			},
			check: func(t *testing.T, got outcome) {
				requireStatuses(t, got.d, wire.StatusPassed, wire.StepPassed, wire.StepPassed)
				if !strings.Contains(got.reqs[1].last, "cut at the token limit (max_tokens)") {
					t.Fatalf("repair message %q", got.reqs[1].last)
				}
				requireOutput(t, got.d, "turn 1: final answer (max_tokens), tokens in 1 out 8192")
			},
		},
		{
			name: "anthropic: an empty end_turn still allows the repair turn",
			kit:  anthropicKit(),
			script: []answer{
				{status: 200, body: `{"type":"message","role":"assistant","content":[],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":0}}`},
				anthropicKit().final(verdict),
			},
			check: func(t *testing.T, got outcome) {
				requireStatuses(t, got.d, wire.StatusPassed, wire.StepPassed, wire.StepPassed)
				if len(got.reqs[1].texts) != 1 || got.reqs[1].texts[0] == "" {
					t.Fatalf("the empty turn went back empty: %q", got.reqs[1].texts)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, d := setup(t, tc.kit, harnessOpts{}, tc.script...)
			id := h.startRun(h.addCase(twoSteps(api.URL)), tc.kit.name, false)
			got := outcome{d: h.finished(id)}
			got.reqs, got.logs = d.requests(), h.logs.String()
			requireNoKey(t, got)
			tc.check(t, got)
		})
	}
}
