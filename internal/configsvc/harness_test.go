package configsvc

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"cpesuite/internal/configsvc/mailer/smtptest"
	"cpesuite/internal/platform/config"
	"cpesuite/internal/platform/grid"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/passwd"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
	"cpesuite/internal/testutil"
)

const (
	bootstrapPassword = "Bootstrap-Passw0rd!"
	adminPassword     = "Str0ng-Root-Key!x"
	userPassword      = "User-Chosen-Passw0rd!"
	smtpUser          = "mailer"
	smtpPass          = "smtp-Secret-Pass"
)

// testConfig parses the service's variables from env, as the process does.
func testConfig(t testing.TB, env map[string]string) Config {
	t.Helper()
	var c Config
	s := config.NewSet("test", func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	c.RegisterFlags(s)
	if _, err := s.Parse(nil); err != nil {
		t.Fatalf("parsing config: %v", err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("validating config: %v", err)
	}
	return c
}

type harnessOpts struct {
	db         *sqlstore.DB // nil: SQLite in the data dir
	env        map[string]string
	mail       bool // online through an in-process SMTP server
	mailDown   bool // online configuration, server unreachable
	adminEmail string
	tcpGrid    bool // reach the grid over TCP (outage tests)
	hashing    *passwd.Limiter
}

type harness struct {
	t    testing.TB
	s    *Service
	srv  *httptest.Server
	smtp *smtptest.Server
	reg  *prometheus.Registry
	logs *testutil.SyncBuffer

	gridMu  sync.Mutex
	emb     *grid.Embedded
	gridDir string
	addr    string
}

func newHarness(t testing.TB, o harnessOpts) *harness {
	t.Helper()
	env := map[string]string{
		"CFG_BOOTSTRAP_ADMIN_PASSWORD": bootstrapPassword,
		"CFG_BOOTSTRAP_ADMIN_EMAIL":    o.adminEmail,
		"JWT_SECRET":                   "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldC0xMjM0NQ==",
		"CORS_ALLOWED_ORIGINS":         "https://portal.example.com,http://localhost:9002",
	}
	for k, v := range o.env {
		env[k] = v
	}
	cfg := testConfig(t, env)
	cfg.DataDir = t.TempDir()
	h := &harness{t: t, reg: prometheus.NewRegistry(), logs: &testutil.SyncBuffer{}}
	switch {
	case o.mail:
		h.smtp = smtptest.Start(t, smtptest.Options{Username: smtpUser, Password: smtpPass, TLS: true})
		cfg.Mail.Host, cfg.Mail.Port, cfg.Mail.Username, cfg.Mail.Password = "127.0.0.1", h.smtp.Port(), smtpUser, smtpPass
		cfg.Mail.TLS = &tls.Config{RootCAs: h.smtp.RootCAs(), ServerName: "127.0.0.1"}
	case o.mailDown:
		cfg.Mail.Host, cfg.Mail.Username, cfg.Mail.Password = "127.0.0.1", smtpUser, smtpPass
		_, port, _ := strings.Cut(testutil.FreeAddr(t), ":")
		cfg.Mail.Port, _ = strconv.Atoi(port)
	}
	log := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))

	h.gridDir = t.TempDir()
	var g *grid.Grid
	var err error
	if o.tcpGrid {
		h.addr = testutil.FreeAddr(t)
		h.startGrid()
		// A stopped grid refuses connections at once, so a safety net for
		// the connection costs the outage tests nothing.
		g, err = grid.Connect(t.Context(), grid.Config{Members: []string{h.addr}, ConnectTimeout: testutil.MinDeadline, ReconnectBase: gridBackoffInitial, ReconnectMax: gridBackoffMax}, nil)
	} else {
		h.startGrid()
		g, err = grid.Connect(t.Context(), grid.Config{}, h.emb)
	}
	if err != nil {
		t.Fatalf("connecting to grid: %v", err)
	}
	t.Cleanup(g.Close)

	if o.hashing == nil {
		// Parallel tests share the process: the shared limiter, sized for
		// production, would refuse their logins as a flood.
		o.hashing = testHashing()
	}
	ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
	defer cancel()
	s, err := Open(ctx, cfg, Deps{Grid: g, Metrics: h.reg, DB: o.db, Hashing: o.hashing}, log)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	h.s = s
	mux := httpx.NewMux()
	s.Mount(mux, h.reg)
	h.srv = httptest.NewServer(httpx.Chain(mux, httpx.RequestID, CORS(cfg.CORSOrigins, ErrorWriter())))
	t.Cleanup(h.srv.Close)
	return h
}

// startGrid starts (or restarts) the embedded grid server.
func (h *harness) startGrid() {
	h.gridMu.Lock()
	defer h.gridMu.Unlock()
	emb, err := grid.StartEmbedded(grid.Config{StoreDir: h.gridDir, Listen: h.addr})
	if err != nil {
		h.t.Fatalf("starting grid: %v", err)
	}
	h.emb = emb
	h.t.Cleanup(emb.Shutdown)
}

func (h *harness) stopGrid() {
	h.gridMu.Lock()
	defer h.gridMu.Unlock()
	h.emb.Shutdown()
}

// response is a decoded answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// code is the machine code of an error body.
func (r response) code(t testing.TB) string {
	t.Helper()
	c, _ := r.json(t)["code"].(string)
	return c
}

func (h *harness) do(method, path, token string, body any, hdr ...string) response {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, h.srv.URL+Base+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := h.srv.Client().Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// want fails unless r has the status (and, for errors, the code).
func (h *harness) want(r response, status int, code string) response {
	h.t.Helper()
	if r.status != status {
		h.t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if code != "" {
		if got := r.code(h.t); got != code {
			h.t.Fatalf("code %q, want %q: %s", got, code, r.body)
		}
	}
	return r
}

// adminToken rotates the bootstrap password (once) and returns an access
// token of the administrator.
func (h *harness) adminToken() string {
	h.t.Helper()
	u, err := h.s.st.userByName(context.Background(), "admin")
	if err != nil {
		h.t.Fatal(err)
	}
	if u.MustChangePassword {
		r := h.want(h.do("POST", "/auth/first-login", "", FirstLoginInput{Username: "admin", CurrentPassword: bootstrapPassword, NewPassword: adminPassword}), 200, "")
		return r.json(h.t)["accessToken"].(string)
	}
	return h.login("admin", adminPassword)["accessToken"].(string)
}

func (h *harness) login(user, pass string) map[string]any {
	h.t.Helper()
	return h.want(h.do("POST", "/auth/login", "", loginBody{Username: user, Password: pass}), 200, "").json(h.t)
}

// createUser creates an account and, when the password came back, rotates
// it to userPassword. It returns the id and the creation result.
func (h *harness) createUser(admin string, in UserInput) (int64, map[string]any) {
	h.t.Helper()
	res := h.want(h.do("POST", "/api/admin/users", admin, in), 201, "").json(h.t)
	return int64(res["id"].(float64)), res
}

func (h *harness) rotate(user, temp string) string {
	h.t.Helper()
	r := h.want(h.do("POST", "/auth/first-login", "", FirstLoginInput{Username: user, CurrentPassword: temp, NewPassword: userPassword}), 200, "")
	return r.json(h.t)["accessToken"].(string)
}

// forEachDB runs fn against SQLite, PostgreSQL and MariaDB.
func forEachDB(t *testing.T, fn func(t *testing.T, db *sqlstore.DB)) {
	sqltest.ForEachDialect(t, fn)
}

// testHashing is a hashing limiter that queues every test login of one
// harness, however slow the race detector makes argon2.
func testHashing() *passwd.Limiter {
	return passwd.NewLimiter(passwd.LimiterConfig{Concurrency: 1, Queue: 1024, MaxWait: 10 * time.Minute})
}
