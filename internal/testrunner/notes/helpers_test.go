package notes

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/identity/identitytest"
	"cpesuite/internal/testutil"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef")

var (
	alice = identity.Identity{Username: "alice", Role: identity.RoleEditor}
	root  = identity.Identity{Username: "root", Role: identity.RoleAdmin}
)

const hookToken = "s3cr3t-refresh-token"

// clock advances one second per reading, so every save has its own
// updated_at and "newest first" is deterministic.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// settings is the worker's settings as the store sees them.
type settings struct {
	mu sync.Mutex
	m  map[string]string
}

func (s *settings) get(k string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[k]
}

func (s *settings) set(k, v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[k] = v
}

// hookCall is one request the knowledge service received.
type hookCall struct {
	Method, Auth, ContentType string
	Payload                   refreshPayload
	raw                       []byte
}

// hook is a knowledge service refresh endpoint.
type hook struct {
	srv *httptest.Server

	mu     sync.Mutex
	calls  []hookCall
	status int
	answer string
	// gate, when set, holds each request until a value is received.
	gate chan struct{}
}

func newHook(t *testing.T) *hook {
	h := &hook{status: http.StatusOK, answer: `{"ok":true}`}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		c := hookCall{Method: r.Method, Auth: r.Header.Get("Authorization"), ContentType: r.Header.Get("Content-Type"), raw: raw}
		if err := json.Unmarshal(raw, &c.Payload); err != nil {
			t.Errorf("webhook body is not JSON: %q", raw)
		}
		h.mu.Lock()
		h.calls = append(h.calls, c)
		gate, status, answer := h.gate, h.status, h.answer
		h.mu.Unlock()
		if gate != nil {
			<-gate
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hook) respond(status int, answer string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.status, h.answer = status, answer
}

func (h *hook) received() []hookCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookCall(nil), h.calls...)
}

// env is a store behind a real HTTP server, with a knowledge service.
type env struct {
	t        *testing.T
	dir      string
	store    *Store
	srv      *httptest.Server
	hook     *hook
	settings *settings
	logs     *testutil.SyncBuffer
}

// newEnv starts a store in a fresh directory; the webhook is configured
// with a token.
func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir() + "/notes", hook: newHook(t), logs: &testutil.SyncBuffer{}}
	e.settings = &settings{m: map[string]string{
		settingRefreshURL:   e.hook.srv.URL + "/admin/refresh",
		settingRefreshToken: hookToken,
	}}
	e.open()
	return e
}

// open (re)creates the store on e.dir and serves it.
func (e *env) open() {
	e.t.Helper()
	if e.srv != nil {
		e.srv.Close()
	}
	c := &clock{t: time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)}
	s, err := New(Config{
		Dir:     e.dir,
		Guard:   identity.Guard{Secret: testSecret},
		Setting: e.settings.get,
		Now:     c.now,
		Log:     slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	mux := httpx.NewMux()
	s.Routes(mux)
	e.store = s
	e.srv = httptest.NewServer(mux)
	e.t.Cleanup(e.srv.Close)
	// A test must not end with a webhook call in flight.
	e.t.Cleanup(s.hook.wait)
}

// do sends a request as who (nil: no identity). body is sent as is when
// it is a string, JSON-encoded otherwise.
func (e *env) do(who *identity.Identity, method, path string, body any) (*http.Response, []byte) {
	e.t.Helper()
	return identitytest.Do(e.t, e.srv.Client(), testSecret, who, method, e.srv.URL+path, body)
}

// call sends a request as alice and checks the status.
func (e *env) call(method, path string, body any, want int) []byte {
	e.t.Helper()
	resp, out := e.do(&alice, method, path, body)
	if resp.StatusCode != want {
		e.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, resp.StatusCode, want, out)
	}
	return out
}

// fail sends a request as alice expecting an error and returns its body.
func (e *env) fail(method, path string, body any, status int, code string) map[string]any {
	e.t.Helper()
	out := e.call(method, path, body, status)
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		e.t.Fatalf("error body is not JSON: %s", out)
	}
	if m["code"] != code {
		e.t.Fatalf("%s %s: code %v, want %s; body %s", method, path, m["code"], code, out)
	}
	if d, _ := m["detail"].(string); d == "" {
		e.t.Fatalf("%s %s: error body without detail: %s", method, path, out)
	}
	return m
}

func (e *env) create(body map[string]any) Note {
	e.t.Helper()
	var n Note
	decodeInto(e.t, e.call("POST", "/api/notes", body, http.StatusCreated), &n)
	return n
}

func decodeInto(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
}

// note returns a valid create body with the given title and overrides.
func note(title string, kv ...any) map[string]any {
	m := map[string]any{
		"title": title,
		"body":  "Body of " + title,
		"scope": map[string]any{"widgets": []string{"speed-gauge"}},
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// distinct returns n different short strings.
func distinct(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("v%d", i)
	}
	return out
}
