package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/llm"
	"cpesuite/internal/testrunner/testcase"
	"cpesuite/internal/testrunner/wire"
	"cpesuite/internal/testrunner/worker"
	"cpesuite/internal/testutil"
)

// waitFor bounds every wait: a safety net against a hang sized for a busy
// 2-core machine, never a measure of speed.
const waitFor = testutil.MinDeadline

var (
	testSecret = []byte("0123456789abcdef0123456789abcdef")
	qa         = identity.Identity{Username: "qa", Role: identity.RoleEditor}
)

// testKey is the API key every double expects. Tests check that it shows
// up nowhere a user or an operator can read.
const testKey = "sk-test-4f1d9c0b7e2a"

// harness is a real worker engine with the language-model executors
// registered, a case store on disk and its HTTP routes on a test server.
type harness struct {
	t      *testing.T
	w      *worker.Worker
	srv    *httptest.Server
	store  *testcase.Store
	logs   *testutil.SyncBuffer
	sleeps *sleepLog
	runID  atomic.Value // string: the run in progress, for doubles' probes
}

type harnessOpts struct {
	env           map[string]string
	maxToolOutput int
	maxRetries    int
}

// sleepLog is the injected Config.Sleep: it records each wait and
// returns at once.
type sleepLog struct {
	mu sync.Mutex
	ds []time.Duration
}

func (s *sleepLog) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.ds = append(s.ds, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleepLog) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.ds...)
}

func newHarness(t *testing.T, o harnessOpts) *harness {
	t.Helper()
	dir := t.TempDir()
	store, err := testcase.OpenStore(filepath.Join(dir, "cases"))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, store: store, logs: &testutil.SyncBuffer{}, sleeps: &sleepLog{}}
	log := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	env := o.env
	w, err := worker.New(worker.Config{
		DataDir:       filepath.Join(dir, "data"),
		Secret:        testSecret,
		Version:       "test",
		MaxToolOutput: o.maxToolOutput,
		Env: func(k string) (string, bool) {
			v, ok := env[k]
			return v, ok
		},
	}, store, log)
	if err != nil {
		t.Fatal(err)
	}
	cfg := llm.Config{Log: log, MaxRetries: o.maxRetries, Sleep: h.sleeps.sleep}
	w.RegisterExecutor(llm.NewAnthropic(cfg))
	w.RegisterExecutor(llm.NewOpenAI(cfg))
	mux := httpx.NewMux()
	w.Routes(mux)
	h.w, h.srv = w, httptest.NewServer(mux)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		w.Shutdown(ctx)
		h.srv.Close()
	})
	return h
}

// addCase stores c and returns its file name.
func (h *harness) addCase(c *testcase.Case) string {
	h.t.Helper()
	file := testcase.FileNameFor(c)
	if err := h.store.Create(file, c); err != nil {
		h.t.Fatal(err)
	}
	return file
}

// do sends a signed request; errors are returned, not fatal, so that
// doubles can probe the run from their own goroutines.
func (h *harness) do(method, path string, out any) (int, error) {
	req, err := http.NewRequest(method, h.srv.URL+path, nil)
	if err != nil {
		return 0, err
	}
	identity.SignRequest(testSecret, req, qa, time.Now())
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		return resp.StatusCode, json.Unmarshal(b, out)
	}
	return resp.StatusCode, nil
}

func (h *harness) startRun(file, model string, dryRun bool) string {
	h.t.Helper()
	var sr wire.StartRun
	path := fmt.Sprintf("/api/run?test_file=%s&model=%s&dry_run=%t", file, model, dryRun)
	if _, err := h.do("POST", path, &sr); err != nil {
		h.t.Fatal(err)
	}
	h.runID.Store(sr.RunID)
	return sr.RunID
}

func (h *harness) detail(id string) wire.RunDetail {
	h.t.Helper()
	var d wire.RunDetail
	if _, err := h.do("GET", "/api/runs/"+id, &d); err != nil {
		h.t.Fatal(err)
	}
	return d
}

func (h *harness) finished(id string) wire.RunDetail {
	h.t.Helper()
	var d wire.RunDetail
	testutil.Eventually(h.t, waitFor, "run "+id+" to end", func() bool {
		d = h.detail(id)
		return d.Status != wire.StatusRunning
	})
	return d
}

// probe returns the detail of the run in progress, from any goroutine.
func (h *harness) probe() (wire.RunDetail, error) {
	var id string
	deadline := time.Now().Add(waitFor)
	for {
		if v, _ := h.runID.Load().(string); v != "" {
			id = v
			break
		}
		if time.Now().After(deadline) {
			return wire.RunDetail{}, fmt.Errorf("no run id")
		}
		time.Sleep(5 * time.Millisecond)
	}
	var d wire.RunDetail
	_, err := h.do("GET", "/api/runs/"+id, &d)
	return d, err
}

// apiServer is the system under test for the built-in http_request tool:
// /big answers a body much larger than the tool output cap, ending in a
// marker; /device a small JSON document.
func apiServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			fmt.Fprint(w, strings.Repeat("0123456789", 300)+"END-OF-BODY")
		case "/device":
			fmt.Fprint(w, `{"serial":"CPE-1","status":"online"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// --- provider doubles ---

// call is a tool call a double's answer makes.
type call struct {
	id, name, args string // args is a JSON object text
}

// result is a tool result as a request carries it back.
type result struct {
	id, content string
	isError     bool
}

// request is what a double read from one request, in neutral terms.
type request struct {
	header  http.Header
	path    string
	raw     map[string]any
	model   string
	system  string
	first   string     // the first user message's text
	last    string     // the last message's text when it is a user text
	tools   []string   // tool names offered
	schemas []string   // each tool's schema "type"
	results []result   // tool results at the end of the conversation
	echoes  [][]string // tool-call ids of each assistant message, in order
	texts   []string   // text of each assistant message, in order
	snap    wire.RunDetail
}

// answer is a double's response; hang keeps the request open until the
// client gives up.
type answer struct {
	status  int
	headers map[string]string
	body    string
	hang    bool
}

// kit is one provider's wire format, test side, written from the
// providers' documentation rather than from the package's own types.
type kit struct {
	name     string // executor name
	env      string // environment prefix
	path     string // request path at the double
	baseTail string // appended to the double's URL for the base_url setting
	final    func(text string) answer
	tools    func(text string, calls ...call) answer
	fail     func(status int, typ, msg string, headers map[string]string) answer
	parse    func(t *testing.T, body []byte, r *request)
	auth     func(h http.Header) string // the API key the request carries
}

var kits = []kit{anthropicKit(), openAIKit()}

func anthropicKit() kit {
	msg := func(blocks []map[string]any, stop string) answer {
		b, _ := json.Marshal(map[string]any{
			"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-test",
			"content": blocks, "stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 120, "output_tokens": 30},
		})
		return answer{status: 200, body: string(b)}
	}
	return kit{
		name: "anthropic", env: "ANTHROPIC", path: "/v1/messages",
		final: func(text string) answer {
			return msg([]map[string]any{{"type": "text", "text": text}}, "end_turn")
		},
		tools: func(text string, calls ...call) answer {
			var blocks []map[string]any
			if text != "" {
				blocks = append(blocks, map[string]any{"type": "text", "text": text})
			}
			for _, c := range calls {
				blocks = append(blocks, map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": json.RawMessage(c.args)})
			}
			return msg(blocks, "tool_use")
		},
		fail: func(status int, typ, m string, headers map[string]string) answer {
			b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": m}, "request_id": "req_01"})
			return answer{status: status, body: string(b), headers: headers}
		},
		auth: func(h http.Header) string { return h.Get("x-api-key") },
		parse: func(t *testing.T, body []byte, r *request) {
			var req struct {
				Model     string `json:"model"`
				MaxTokens int    `json:"max_tokens"`
				System    string `json:"system"`
				Messages  []struct {
					Role    string          `json:"role"`
					Content json.RawMessage `json:"content"`
				} `json:"messages"`
				Tools []struct {
					Name        string         `json:"name"`
					InputSchema map[string]any `json:"input_schema"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(body, &req); err != nil {
				t.Errorf("anthropic request is not JSON: %v", err)
				return
			}
			if req.MaxTokens <= 0 {
				t.Errorf("anthropic request without max_tokens")
			}
			if h := r.header.Get("anthropic-version"); h != "2023-06-01" {
				t.Errorf("anthropic-version header %q", h)
			}
			r.model, r.system = req.Model, req.System
			for _, tl := range req.Tools {
				r.tools = append(r.tools, tl.Name)
				r.schemas = append(r.schemas, fmt.Sprint(tl.InputSchema["type"]))
			}
			type block struct {
				Type      string `json:"type"`
				Text      string `json:"text"`
				ID        string `json:"id"`
				ToolUseID string `json:"tool_use_id"`
				Content   string `json:"content"`
				IsError   bool   `json:"is_error"`
			}
			for i, m := range req.Messages {
				if i > 0 && m.Role == req.Messages[i-1].Role {
					t.Errorf("anthropic messages %d and %d are both %s", i-1, i, m.Role)
				}
				var s string
				if json.Unmarshal(m.Content, &s) == nil {
					if m.Role == "user" && i == 0 {
						r.first = s
					}
					if m.Role == "user" && i == len(req.Messages)-1 {
						r.last = s
					}
					continue
				}
				var blocks []block
				if err := json.Unmarshal(m.Content, &blocks); err != nil {
					t.Errorf("anthropic message %d content: %v", i, err)
					continue
				}
				switch m.Role {
				case "assistant":
					var ids []string
					var text []string
					for _, b := range blocks {
						switch b.Type {
						case "tool_use":
							ids = append(ids, b.ID)
						case "text":
							text = append(text, b.Text)
						}
					}
					r.echoes = append(r.echoes, ids)
					r.texts = append(r.texts, strings.Join(text, "\n"))
				case "user":
					if i == len(req.Messages)-1 {
						for _, b := range blocks {
							if b.Type == "tool_result" {
								r.results = append(r.results, result{b.ToolUseID, b.Content, b.IsError})
							}
						}
					}
				}
			}
		},
	}
}

func openAIKit() kit {
	completion := func(message map[string]any, finish string) answer {
		b, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "gpt-test",
			"choices": []map[string]any{{"index": 0, "message": message, "finish_reason": finish}},
			"usage":   map[string]any{"prompt_tokens": 200, "completion_tokens": 40, "total_tokens": 240},
		})
		return answer{status: 200, body: string(b)}
	}
	return kit{
		name: "openai", env: "OPENAI", path: "/v1/chat/completions", baseTail: "/v1",
		final: func(text string) answer {
			return completion(map[string]any{"role": "assistant", "content": text}, "stop")
		},
		tools: func(text string, calls ...call) answer {
			var tcs []map[string]any
			for _, c := range calls {
				tcs = append(tcs, map[string]any{"id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": c.args}})
			}
			var content any
			if text != "" {
				content = text
			}
			return completion(map[string]any{"role": "assistant", "content": content, "tool_calls": tcs}, "tool_calls")
		},
		fail: func(status int, typ, m string, headers map[string]string) answer {
			b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": m, "type": typ, "param": nil, "code": nil}})
			return answer{status: status, body: string(b), headers: headers}
		},
		auth: func(h http.Header) string {
			v, _ := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
			return v
		},
		parse: func(t *testing.T, body []byte, r *request) {
			var req struct {
				Model    string `json:"model"`
				Messages []struct {
					Role       string  `json:"role"`
					Content    *string `json:"content"`
					ToolCallID string  `json:"tool_call_id"`
					ToolCalls  []struct {
						ID       string `json:"id"`
						Type     string `json:"type"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"messages"`
				Tools []struct {
					Type     string `json:"type"`
					Function struct {
						Name       string         `json:"name"`
						Parameters map[string]any `json:"parameters"`
					} `json:"function"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(body, &req); err != nil {
				t.Errorf("openai request is not JSON: %v", err)
				return
			}
			r.model = req.Model
			for _, tl := range req.Tools {
				if tl.Type != "function" {
					t.Errorf("openai tool type %q", tl.Type)
				}
				r.tools = append(r.tools, tl.Function.Name)
				r.schemas = append(r.schemas, fmt.Sprint(tl.Function.Parameters["type"]))
			}
			str := func(p *string) string {
				if p == nil {
					return ""
				}
				return *p
			}
			for i, m := range req.Messages {
				switch m.Role {
				case "system":
					r.system = str(m.Content)
				case "user":
					if r.first == "" {
						r.first = str(m.Content)
					}
					if i == len(req.Messages)-1 {
						r.last = str(m.Content)
					}
				case "assistant":
					var ids []string
					for _, tc := range m.ToolCalls {
						// Arguments go back as the model wrote them, broken ones too.
						if tc.Type != "function" || tc.ID == "" {
							t.Errorf("openai assistant echo: tool call %+v", tc)
						}
						ids = append(ids, tc.ID)
					}
					r.echoes = append(r.echoes, ids)
					r.texts = append(r.texts, str(m.Content))
					r.results = nil
				case "tool":
					c := str(m.Content)
					r.results = append(r.results, result{m.ToolCallID, c, strings.HasPrefix(c, "ERROR: ")})
				default:
					t.Errorf("openai message role %q", m.Role)
				}
			}
			if n := len(req.Messages); n > 0 && req.Messages[n-1].Role != "tool" {
				r.results = nil
			}
		},
	}
}

// double is a provider stand-in: it answers the n-th request with
// script[n] and records every request with a snapshot of the run taken
// when the request arrived.
type double struct {
	t      *testing.T
	k      kit
	h      atomic.Pointer[harness]
	srv    *httptest.Server
	script []answer

	mu   sync.Mutex
	reqs []request
}

// newDouble starts a double; its harness, for probes, is set by setup.
func newDouble(t *testing.T, k kit, script ...answer) *double {
	d := &double{t: t, k: k, script: script}
	d.srv = httptest.NewServer(http.HandlerFunc(d.serve))
	t.Cleanup(d.srv.Close)
	return d
}

func (d *double) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	rq := request{header: r.Header.Clone(), path: r.URL.Path}
	if err := json.Unmarshal(body, &rq.raw); err != nil {
		d.t.Errorf("request body is not a JSON object: %v", err)
	}
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		d.t.Errorf("request %s with Content-Type %q", r.Method, r.Header.Get("Content-Type"))
	}
	d.k.parse(d.t, body, &rq)
	if h := d.h.Load(); h != nil {
		if rq.snap, err = h.probe(); err != nil {
			d.t.Errorf("probing the run: %v", err)
		}
	}
	d.mu.Lock()
	n := len(d.reqs)
	d.reqs = append(d.reqs, rq)
	d.mu.Unlock()
	if n >= len(d.script) {
		d.t.Errorf("%s double: request %d is beyond the script of %d", d.k.name, n+1, len(d.script))
		http.Error(w, `{"error":{"message":"script exhausted"}}`, http.StatusTeapot)
		return
	}
	a := d.script[n]
	if a.hang {
		<-r.Context().Done()
		return
	}
	for k, v := range a.headers {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	io.WriteString(w, a.body)
}

func (d *double) requests() []request {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]request(nil), d.reqs...)
}

// env is the worker environment pointing kit k's settings at the double.
func (d *double) env(extra map[string]string) map[string]string {
	env := map[string]string{
		d.k.env + "_BASE_URL": d.srv.URL + d.k.baseTail,
		d.k.env + "_API_KEY":  testKey,
		d.k.env + "_MODEL":    "model-under-test",
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// setup starts a double for kit k and a worker whose settings point at it.
func setup(t *testing.T, k kit, o harnessOpts, script ...answer) (*harness, *double) {
	t.Helper()
	d := newDouble(t, k, script...)
	o.env = d.env(o.env)
	h := newHarness(t, o)
	d.h.Store(h)
	return h, d
}
