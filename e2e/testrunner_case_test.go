package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"cpesuite/internal/testutil"
)

// caseStep is one step of the end-to-end case: the emulator tool server's
// tool, its arguments and the text its result must contain.
type caseStep struct {
	action, tool string
	args         map[string]any
	contains     string
}

// provisioningCase starts a CPE on the TR-069 emulator, waits for its
// Inform in the ACS, sets a parameter through an ACS task and checks the
// value on the CPE, all through the emulator MCP tool server.
func provisioningCase(acsURL string) []caseStep {
	const serial, pc = "E2E-CASE-1", "Device.DeviceInfo.ProvisioningCode"
	return []caseStep{
		{"Start the CPE on the emulator", "start_device", map[string]any{"serial": serial, "tree_file": "tr181-base.xml", "acs_url": acsURL, "restart": true}, "startedAt"},
		{"Wait for the CPE's Inform in the ACS", "acs_find_device", map[string]any{"serial": serial, "wait_seconds": 60}, `"found":true`},
		{"Set the provisioning code through the ACS", "acs_queue_task", map[string]any{"serial": serial, "kind": "setParameterValues",
			"values": []map[string]any{{"name": pc, "value": "E2E-42"}}, "wait_seconds": 60}, `"finished":true`},
		{"The CPE holds the new provisioning code", "get_parameter", map[string]any{"serial": serial, "name": pc}, `"value":"E2E-42"`},
		{"Stop the CPE", "stop_device", map[string]any{"serial": serial}, ""},
	}
}

func caseYAML(steps []caseStep) string {
	var b strings.Builder
	b.WriteString("id: e2e-provisioning-code\ntitle: A provisioning code set through the ACS reaches the CPE\nsection: e2e\nsteps:\n")
	for _, s := range steps {
		args, _ := json.Marshal(s.args) // JSON is YAML
		fmt.Fprintf(&b, "  - action: %s\n    expected: result contains %q\n    tool:\n      server: emulator\n      name: %s\n      arguments: %s\n", s.action, s.contains, s.tool, args)
		if s.contains != "" {
			fmt.Fprintf(&b, "      expect: {contains: %q}\n", s.contains)
		}
	}
	return b.String()
}

// TestCaseThroughToolServer is the worker's done-when: a real case runs
// through the gateway on the local worker, whose deterministic executor
// drives the TR-069 emulator and the ACS through the emulator MCP tool
// server; the step statuses arrive over the WebSocket in order; a batch of
// the case is archived; and the OpenAI-compatible executor, against a
// scripted provider that decides from the tool results it is sent, gives
// the same verdicts.
func TestCaseThroughToolServer(t *testing.T) {
	const pw = "E2e-Adm1n-Passw0rd"
	p := up(t, "acs,tr069-emulator,mcp-emulator,worker,gateway", map[string]string{"CPESUITE_GATEWAY_ADMIN_PASSWORD": pw})
	gw := func(path string) string { return p.url("CPESUITE_GATEWAY_ADDR", path) }
	testutil.Eventually(t, platformDeadline, "the gateway", func() bool {
		resp, err := http.Get(gw("/health"))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	noTaskDelays(t, p.url("CPESUITE_TR069_EMULATOR_ADDR", ""))

	var tok string
	call := func(method, path string, body any, want int, out any) {
		t.Helper()
		var rd io.Reader
		ct := "application/json"
		switch b := body.(type) {
		case nil:
		case multipartBody:
			rd, ct = b.body, b.contentType
		default:
			data, _ := json.Marshal(b)
			rd = bytes.NewReader(data)
		}
		req, _ := http.NewRequest(method, gw(path), rd)
		req.Header.Set("Content-Type", ct)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, data, want)
		}
		if out != nil {
			if err := json.Unmarshal(data, out); err != nil {
				t.Fatalf("%s %s: %v in %s", method, path, err, data)
			}
		}
	}
	var login struct{ Token string }
	call("POST", "/api/auth/login", map[string]string{"username": "admin", "password": pw}, 200, &login)
	tok = login.Token

	steps := provisioningCase(p.url("CPESUITE_ACS_ADDR", "/"))
	call("POST", "/api/tests/upload-yaml", yamlUpload(t, "provisioning.yaml", caseYAML(steps)), 201, nil)

	llm := newScriptedOpenAI(t, steps)
	call("POST", "/api/gateway/profiles", map[string]any{"name": "lab", "settings": map[string]string{
		"openai_base_url": llm.URL, "openai_api_key": "sk-e2e-not-a-real-key"}}, 201, nil)

	// One run, watched over the WebSocket from its start.
	var run struct {
		RunID string `json:"run_id"`
	}
	call("POST", "/api/gateway/run", map[string]any{"env": "lab", "test_file": "provisioning.yaml"}, 200, &run)
	seen := watchSteps(t, gw("/ws/run/"+run.RunID)+"?access_token="+tok)
	want := []string{"passed", "passed", "passed", "passed", "passed"}
	if got := seen[len(seen)-1]; strings.Join(got, ",") != strings.Join(want, ",") {
		var detail json.RawMessage
		call("GET", "/api/runs/"+run.RunID, nil, 200, &detail)
		t.Fatalf("deterministic run ended with steps %v: %s", got, detail)
	}
	assertStepOrder(t, seen)
	t.Logf("%d WebSocket messages: %v", len(seen), seen)
	var detail struct {
		Status string
		MCPLog []struct{ Server, Tool string } `json:"mcpLog"`
	}
	call("GET", "/api/runs/"+run.RunID, nil, 200, &detail)
	if detail.Status != "passed" || len(detail.MCPLog) != len(steps) || detail.MCPLog[2].Tool != "acs_queue_task" || detail.MCPLog[2].Server != "emulator" {
		t.Fatalf("run detail: %+v", detail)
	}

	// The same case as a batch: its report is archived on the worker.
	var batch struct {
		BatchID string `json:"batch_id"`
	}
	call("POST", "/api/gateway/run/batch", map[string]any{"env": "lab", "test_files": []string{"provisioning.yaml"}}, 200, &batch)
	var status struct{ Status string }
	testutil.Eventually(t, platformDeadline, "the batch to finish", func() bool {
		call("GET", "/api/run/batch", nil, 200, &status)
		return status.Status == "done"
	})
	var report struct {
		BatchID string `json:"batch_id"`
		Summary struct{ Total, Passed, Failed, Errors int }
	}
	call("GET", "/api/run/batch/reports/"+batch.BatchID, nil, 200, &report)
	if report.BatchID != batch.BatchID || report.Summary.Total != 1 || report.Summary.Passed != 1 {
		t.Fatalf("archived report %+v", report)
	}

	// The OpenAI-compatible executor reaches the same verdicts.
	call("POST", "/api/gateway/run", map[string]any{"env": "lab", "test_file": "provisioning.yaml", "model": "openai"}, 200, &run)
	var llmRun struct {
		Status string
		Steps  []struct{ Status, Detail string }
		MCPLog []struct{ Tool string } `json:"mcpLog"`
	}
	testutil.Eventually(t, platformDeadline, "the openai run's verdict", func() bool {
		call("GET", "/api/runs/"+run.RunID, nil, 200, &llmRun)
		return llmRun.Status != "running"
	})
	var got []string
	for _, s := range llmRun.Steps {
		got = append(got, s.Status)
	}
	if llmRun.Status != "passed" || strings.Join(got, ",") != strings.Join(want, ",") || len(llmRun.MCPLog) != len(steps) {
		t.Fatalf("openai run: %+v", llmRun)
	}
	if n := llm.requests(); n != len(steps)+1 {
		t.Fatalf("the provider got %d requests, want one per step and one for the verdict", n)
	}
}

// noTaskDelays turns off the emulator's per-task delays (11 s by default).
func noTaskDelays(t *testing.T, emu string) {
	t.Helper()
	var props map[string]any
	resp, err := http.Get(emu + "/api/properties")
	if err != nil {
		t.Fatal(err)
	}
	_ = json.NewDecoder(resp.Body).Decode(&props)
	resp.Body.Close()
	for k := range props {
		if strings.HasPrefix(k, "taskDelay") {
			props[k] = 0
		}
	}
	post(t, emu+"/api/properties", props)
}

// multipartBody is a form upload ready to send.
type multipartBody struct {
	body        *bytes.Buffer
	contentType string
}

func yamlUpload(t *testing.T, name, text string) multipartBody {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = fw.Write([]byte(text))
	_ = mw.Close()
	return multipartBody{&buf, mw.FormDataContentType()}
}

// watchSteps reads the run's WebSocket until the run ends and returns the
// step statuses of every message.
func watchSteps(t *testing.T, url string) [][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), platformDeadline)
	defer cancel()
	c, _, err := websocket.Dial(ctx, strings.Replace(url, "http://", "ws://", 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(8 << 20)
	var seen [][]string
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			if len(seen) == 0 {
				t.Fatal(err)
			}
			return seen
		}
		var m struct {
			Status string
			Steps  []struct{ Status string }
		}
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("WebSocket message %s: %v", data, err)
		}
		var st []string
		for _, s := range m.Steps {
			st = append(st, s.Status)
		}
		seen = append(seen, st)
		if m.Status != "running" {
			return seen
		}
	}
}

// assertStepOrder checks that steps ran one after another: in every
// message the finished steps come first, then at most one running step,
// then pending ones, and no step goes back.
func assertStepOrder(t *testing.T, seen [][]string) {
	t.Helper()
	rank := map[string]int{"pending": 0, "running": 1, "passed": 2, "failed": 2, "error": 2, "skipped": 2}
	prev := make([]int, len(seen[0]))
	for i, st := range seen {
		last := 3
		for j, s := range st {
			r, ok := rank[s]
			if !ok {
				t.Fatalf("message %d: unknown step status %q", i, s)
			}
			if r > last || (r == 1 && last == 1) {
				t.Fatalf("message %d: steps out of order: %v", i, st)
			}
			if r < prev[j] {
				t.Fatalf("message %d: step %d went back to %s: %v", i, j+1, s, seen)
			}
			last, prev[j] = r, r
		}
	}
}

// scriptedOpenAI is an OpenAI-compatible chat-completions endpoint that
// works through a case as a model would: one tool call per step (after a
// "STEP n" line), then a verdict computed from the tool results it was
// sent, in the verdict format the llm executors ask for.
type scriptedOpenAI struct {
	*httptest.Server
	mu sync.Mutex
	n  int
}

func (s *scriptedOpenAI) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func newScriptedOpenAI(t *testing.T, steps []caseStep) *scriptedOpenAI {
	s := &scriptedOpenAI{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.n++
		s.mu.Unlock()
		if r.URL.Path != "/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-e2e-not-a-real-key" {
			http.Error(w, `{"error":{"message":"bad path or key","type":"invalid_request_error"}}`, http.StatusUnauthorized)
			return
		}
		var req struct {
			Messages []struct {
				Role    string
				Content any
			}
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
			return
		}
		var results []string
		for _, m := range req.Messages {
			if m.Role == "tool" {
				text, _ := m.Content.(string)
				results = append(results, text)
			}
		}
		msg := map[string]any{"role": "assistant"}
		finish := "stop"
		if k := len(results); k < len(steps) {
			args, _ := json.Marshal(steps[k].args)
			msg["content"] = fmt.Sprintf("STEP %d", k+1)
			msg["tool_calls"] = []map[string]any{{"id": fmt.Sprintf("call_%d", k), "type": "function",
				"function": map[string]any{"name": "emulator__" + steps[k].tool, "arguments": string(args)}}}
			finish = "tool_calls"
		} else {
			var verdicts []map[string]any
			for i, res := range results {
				status := "passed"
				if strings.HasPrefix(res, "ERROR: ") || !strings.Contains(res, steps[i].contains) {
					status = "failed"
				}
				verdicts = append(verdicts, map[string]any{"step": i + 1, "status": status, "detail": "checked the tool result"})
			}
			v, _ := json.Marshal(map[string]any{"steps": verdicts, "summary": "done"})
			msg["content"] = "All steps checked.\n```json\n" + string(v) + "\n```"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-e2e", "object": "chat.completion", "created": time.Now().Unix(), "model": "gpt-4o",
			"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   map[string]int{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
		})
	}))
	t.Cleanup(s.Close)
	return s
}
