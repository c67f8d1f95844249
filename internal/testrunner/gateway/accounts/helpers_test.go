package accounts

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/passwd"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/wire"
	"cpesuite/internal/testutil"
)

// Credentials used throughout; all pass the password policy.
const (
	adminName  = "root"
	adminPass  = "Adm1n-Secret-Pass!"
	editorName = "ed"
	editorPass = "Ed1tor-Secret-Pass!"
)

// system acts for tests that call the service directly.
var system = identity.Identity{Username: "tester", Role: identity.RoleAdmin}

// dialects are the ones this package supports.
var dialects = []sqlstore.Dialect{sqlstore.SQLite, sqlstore.Postgres}

// forEachDialect runs fn on a fresh database of each supported dialect,
// in parallel with the other tests that use it: each has databases of its
// own, and most of their time is spent waiting for commits.
// sqltest.ForEachDialect also runs MySQL, which this package does not
// support, so the loop is ours while the databases are sqltest's.
func forEachDialect(t *testing.T, fn func(t *testing.T, db *sqlstore.DB)) {
	t.Helper()
	t.Parallel()
	for _, d := range dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			fn(t, sqltest.Open(t, d))
		})
	}
}

// fakeClock is a settable clock safe for concurrent use.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// harness is a service with its HTTP stack, an admin and an editor, each
// logged in once.
type harness struct {
	t           *testing.T
	db          *sqlstore.DB
	svc         *Service
	clock       *fakeClock
	logs        *testutil.SyncBuffer
	handler     http.Handler
	adminToken  string
	editorToken string
}

func openTest(t *testing.T, db *sqlstore.DB, cfg Config) (*Service, *fakeClock, *testutil.SyncBuffer) {
	t.Helper()
	clock := newClock()
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	if cfg.Hashing == nil {
		// Parallel tests share the process: the shared limiter, sized for
		// production, would refuse their logins as a flood.
		cfg.Hashing = passwd.NewLimiter(passwd.LimiterConfig{Concurrency: 1, Queue: 1024, MaxWait: 10 * time.Minute})
	}
	logs := &testutil.SyncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	svc, err := Open(context.Background(), db, cfg, log)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return svc, clock, logs
}

func isOpen(r *http.Request) bool {
	return r.URL.Path == "/api/auth/login" || r.URL.Path == "/api/auth/logout"
}

func newHarness(t *testing.T, db *sqlstore.DB, cfg Config) *harness {
	t.Helper()
	svc, clock, logs := openTest(t, db, cfg)
	mux := httpx.NewMux()
	svc.Routes(mux, httpx.Adapter{Errors: wire.ErrorWriter(), Log: svc.log})
	h := &harness{t: t, db: db, svc: svc, clock: clock, logs: logs, handler: svc.Middleware(isOpen)(mux)}
	ctx := context.Background()
	if created, err := svc.Bootstrap(ctx, adminName, adminPass); err != nil || !created {
		t.Fatalf("Bootstrap = %v, %v", created, err)
	}
	if _, err := svc.CreateUser(ctx, system, editorName, editorPass, identity.RoleEditor, "stand-1"); err != nil {
		t.Fatalf("CreateUser editor: %v", err)
	}
	h.adminToken = h.login(adminName, adminPass)
	h.editorToken = h.login(editorName, editorPass)
	return h
}

// request describes one HTTP call.
type request struct {
	method, path string
	token        string
	body         any // marshalled unless a string
	remote       string
	header       http.Header
}

func (h *harness) do(rq request) *httptest.ResponseRecorder {
	h.t.Helper()
	var body *bytes.Reader
	switch b := rq.body.(type) {
	case nil:
		body = bytes.NewReader(nil)
	case string:
		body = bytes.NewReader([]byte(b))
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		body = bytes.NewReader(raw)
	}
	r := httptest.NewRequest(rq.method, rq.path, body)
	if rq.body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	if rq.token != "" {
		r.Header.Set("Authorization", "Bearer "+rq.token)
	}
	if rq.remote != "" {
		r.RemoteAddr = rq.remote
	}
	for k, vs := range rq.header {
		for _, v := range vs {
			r.Header.Add(k, v)
		}
	}
	w := httptest.NewRecorder()
	h.handler.ServeHTTP(w, r)
	return w
}

func (h *harness) loginAs(username, password, remote string) *httptest.ResponseRecorder {
	h.t.Helper()
	return h.do(request{method: "POST", path: "/api/auth/login", remote: remote,
		body: map[string]string{"username": username, "password": password}})
}

// login logs in and returns the token, failing the test otherwise.
func (h *harness) login(username, password string) string {
	h.t.Helper()
	w := h.loginAs(username, password, "")
	if w.Code != http.StatusOK {
		h.t.Fatalf("login %s: %d %s", username, w.Code, w.Body)
	}
	var resp loginResponse
	decode(h.t, w, &resp)
	return resp.Token
}

func decode(t *testing.T, w *httptest.ResponseRecorder, v any) {
	t.Helper()
	if err := json.Unmarshal(w.Body.Bytes(), v); err != nil {
		t.Fatalf("decoding %q: %v", w.Body, err)
	}
}

// wantError checks an error answer's status, code and body shape.
func wantError(t *testing.T, w *httptest.ResponseRecorder, status int, code string) map[string]any {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d; body %s", w.Code, status, w.Body)
	}
	var body map[string]any
	decode(t, w, &body)
	if body["code"] != code {
		t.Fatalf("code %v, want %s; body %s", body["code"], code, w.Body)
	}
	if d, _ := body["detail"].(string); d == "" {
		t.Fatalf("no detail in %s", w.Body)
	}
	if status == http.StatusUnauthorized && !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("401 without WWW-Authenticate: Bearer: %v", w.Header())
	}
	return body
}

// wantCode checks that err carries the given status and code.
func wantCode(t *testing.T, err error, status int, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %d %s", status, code)
	}
	if got := apperr.Status(err); got != status {
		t.Fatalf("status %d (%v), want %d", got, err, status)
	}
	if got := apperr.Code(err); got != code {
		t.Fatalf("code %s (%v), want %s", got, err, code)
	}
}

// activity returns the audit entries of action, newest first.
func (h *harness) activity(action string) []Entry {
	h.t.Helper()
	es, err := h.svc.Activity(context.Background(), Filter{Action: action, Limit: MaxActivityLimit})
	if err != nil {
		h.t.Fatal(err)
	}
	return es
}

func (h *harness) tokenCount() int {
	h.t.Helper()
	var n int
	if err := h.db.QueryRow("SELECT COUNT(*) FROM gw_tokens").Scan(&n); err != nil {
		h.t.Fatal(err)
	}
	return n
}
