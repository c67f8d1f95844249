package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/metrics"
	"cpesuite/internal/platform/passwd"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/portainer/portainertest"
	"cpesuite/internal/testrunner/testcase"
	"cpesuite/internal/testrunner/wire"
	"cpesuite/internal/testrunner/worker"
	"cpesuite/internal/testutil"
)

var testSecret = []byte("gateway-test-secret-0123456789abcdef")

const (
	adminPW = "Adm1n-Passw0rd!"
	userPW  = "Us3r-Passw0rd!!"
)

// Cases every test worker holds: one that passes at once and one that
// waits long enough to be observed, stopped and fought over.
var testCases = map[string]string{
	"quick.yaml": `id: quick
title: Quick case
steps:
  - action: Pause for nothing
    tool: {server: builtin, name: wait, arguments: {seconds: 0}}
`,
	"slow.yaml": `id: slow
title: Slow case
steps:
  - action: Wait for the device
    tool: {server: builtin, name: wait, arguments: {seconds: 60}}
`,
}

type tworker struct {
	name string
	url  string
	w    *worker.Worker
	srv  *httptest.Server
}

type tenv struct {
	t       *testing.T
	g       *Gateway
	url     string
	workers map[string]*tworker
	pt      *portainertest.Server
	admin   string // admin token
	logs    *testutil.SyncBuffer
}

type envOpts struct {
	workers   []string
	portainer bool
	db        *sqlstore.DB
}

func newEnv(t *testing.T, o envOpts) *tenv {
	t.Helper()
	logs := &testutil.SyncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := &tenv{t: t, workers: map[string]*tworker{}, logs: logs}
	// Safety nets, not the production figures: a worker that answers must
	// not be taken for an unreachable one on a loaded machine. The
	// unreachable stands of the tests refuse connections at once.
	cfg := Config{TokenTTL: time.Hour, ProxyTimeout: testutil.MinDeadline, HealthTimeout: testutil.MinDeadline,
		WorkerImage: "cpesuite:test", EmulatorImage: "cpesuite:test", StackNetwork: "cpesuite",
		// Parallel tests share the process: the shared limiter, sized for
		// production, would refuse their logins as a flood.
		Hashing: passwd.NewLimiter(passwd.LimiterConfig{Concurrency: 1, Queue: 1024, MaxWait: 10 * time.Minute})}
	if o.portainer {
		e.pt = portainertest.New(t)
		cfg.Portainer = e.pt.Config()
	}
	db := o.db
	if db == nil {
		db = sqltest.Open(t, sqlstore.SQLite)
	}
	g, err := New(context.Background(), cfg, db, testSecret, "test", log)
	if err != nil {
		t.Fatalf("gateway.New: %v", err)
	}
	t.Cleanup(g.Close)
	e.g = g
	mux := httpx.NewMux()
	g.Routes(mux)
	// As the module's common HTTP server adds it, beside the routes.
	mux.ServeMux.Handle("GET /metrics", metrics.Handler(metrics.NewRegistry()))
	srv := httptest.NewServer(httpx.Chain(mux, g.Middleware()))
	t.Cleanup(srv.Close)
	e.url = srv.URL
	if _, err := g.Accounts().Bootstrap(context.Background(), "admin", adminPW); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	e.admin = e.login("admin", adminPW)
	for _, n := range o.workers {
		e.addWorker(n)
	}
	return e
}

// addWorker starts a real worker with the test cases and registers it.
func (e *tenv) addWorker(name string) *tworker {
	t := e.t
	dir := t.TempDir()
	cases, err := testcase.OpenStore(filepath.Join(dir, "tests"))
	if err != nil {
		t.Fatal(err)
	}
	for f, y := range testCases {
		if _, err := cases.PutRaw(f, []byte(y)); err != nil {
			t.Fatalf("case %s: %v", f, err)
		}
	}
	w, err := worker.New(worker.Config{DataDir: dir, Secret: testSecret, Version: "test",
		Env: func(string) (string, bool) { return "", false }}, cases, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	mux := httpx.NewMux()
	w.Routes(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
		defer cancel()
		w.Shutdown(ctx)
		srv.Close()
	})
	tw := &tworker{name: name, url: srv.URL, w: w, srv: srv}
	e.workers[name] = tw
	e.must(e.do(e.admin, "POST", "/api/gateway/stands", map[string]any{"name": name, "base_url": srv.URL}), 201, 200)
	return tw
}

type resp struct {
	status int
	body   []byte
	header http.Header
}

func (r resp) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
}

func (r resp) code() string {
	var e struct{ Code string }
	_ = json.Unmarshal(r.body, &e)
	return e.Code
}

// do calls the gateway; tok may be empty; hdr holds header name/value pairs.
func (e *tenv) do(tok, method, path string, body any, hdr ...string) resp {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, _ := json.Marshal(b)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, body: b, header: res.Header}
}

// must fails unless r has one of the statuses.
func (e *tenv) must(r resp, statuses ...int) resp {
	e.t.Helper()
	for _, s := range statuses {
		if r.status == s {
			return r
		}
	}
	e.t.Fatalf("status %d, want %v: %s", r.status, statuses, r.body)
	return r
}

func (e *tenv) login(user, pw string) string {
	e.t.Helper()
	var out struct{ Token string }
	e.must(e.do("", "POST", "/api/auth/login", map[string]string{"username": user, "password": pw}), 200).decode(e.t, &out)
	return out.Token
}

// user creates an account and returns a token of it.
func (e *tenv) user(name, role string) string {
	e.t.Helper()
	e.must(e.do(e.admin, "POST", "/api/users", map[string]string{"username": name, "password": userPW, "role": role}), 201)
	return e.login(name, userPW)
}

func (e *tenv) profile(name string, settings map[string]string) {
	e.t.Helper()
	e.must(e.do(e.admin, "POST", "/api/gateway/profiles", map[string]any{"name": name, "settings": settings}), 201, 200)
}

// dispatch starts case file on env as tok and returns run id and stand.
func (e *tenv) dispatch(tok, env, file string) (string, string) {
	e.t.Helper()
	var out struct {
		RunID string `json:"run_id"`
		Stand string
	}
	e.must(e.do(tok, "POST", "/api/gateway/run", map[string]any{"env": env, "test_file": file}), 200).decode(e.t, &out)
	return out.RunID, out.Stand
}

func (e *tenv) runStatus(tok, id string) string {
	e.t.Helper()
	var d wire.RunDetail
	e.must(e.do(tok, "GET", "/api/runs/"+id, nil), 200).decode(e.t, &d)
	return d.Status
}

// waitRunning waits until the run's first step is under way, so the
// worker reports itself busy.
func (e *tenv) waitRunning(tok, id string) {
	e.t.Helper()
	testutil.Eventually(e.t, testutil.MinDeadline, "run "+id+" executing", func() bool {
		var d wire.RunDetail
		r := e.do(tok, "GET", "/api/runs/"+id, nil)
		return r.status == 200 && json.Unmarshal(r.body, &d) == nil && d.Phase == wire.PhaseExecuting
	})
}

func (e *tenv) waitDone(tok, id string) wire.RunDetail {
	e.t.Helper()
	var d wire.RunDetail
	testutil.Eventually(e.t, testutil.MinDeadline, "run "+id+" done", func() bool {
		r := e.do(tok, "GET", "/api/runs/"+id, nil)
		return r.status == 200 && json.Unmarshal(r.body, &d) == nil && d.Status != wire.StatusRunning
	})
	return d
}

// direct calls a worker without the gateway, signed as id (or unsigned
// when id.Username is empty).
func direct(t *testing.T, w *tworker, secret []byte, id identity.Identity, method, path string, body any) resp {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, w.url+path, rd)
	if id.Username != "" {
		identity.SignRequest(secret, req, id, time.Now())
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, body: b, header: res.Header}
}
