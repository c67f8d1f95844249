package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/testrunner/gateway"
	"cpesuite/internal/testrunner/testcase"
	"cpesuite/internal/testrunner/worker"
)

const (
	adminName = "admin"
	adminPW   = "Bench-Adm1n-Passw0rd!"

	// noopOpenPath and noopAuthPath are handlers this tool adds to the
	// gateway's mux. /metrics is one of the paths the gateway's
	// middleware lets through without a token (production mounts the
	// Prometheus handler there), so the pair differs by the token check
	// only.
	noopOpenPath = "/metrics"
	noopAuthPath = "/bench/noop"
)

// benchCase gives each worker one stored case, as a real stand has.
const benchCase = `id: quick
title: Quick case
steps:
  - action: Pause for nothing
    tool: {server: builtin, name: wait, arguments: {seconds: 0}}
`

// env is a gateway and its workers, each behind its own loopback TCP
// listener, as separate processes would be.
type env struct {
	dir     string
	secret  []byte
	db      *sqlstore.DB
	g       *gateway.Gateway
	gwURL   string
	workers []*benchWorker
	servers []*http.Server
	token   string // the admin's bearer token
	client  *http.Client
}

type benchWorker struct {
	name string
	url  string
	w    *worker.Worker
}

// newClient is a keep-alive client that never goes through a proxy from
// the environment.
func newClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
	}}
}

// serve starts h on a fresh 127.0.0.1 port and returns its base URL.
func (e *env) serve(h http.Handler) (string, error) {
	ln, err := httpx.Listen("127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := httpx.NewServer(ln.Addr().String(), h)
	e.servers = append(e.servers, srv)
	go func() {
		if err := httpx.Serve(srv, ln); err != nil {
			fmt.Fprintln(os.Stderr, "gatewayload: serving:", err)
		}
	}()
	return "http://" + ln.Addr().String(), nil
}

// newEnv starts the gateway on SQLite in a temporary folder; workers are
// added with addWorker. Logs are discarded: the figures are the request
// path's, not the log handler's.
func newEnv(ctx context.Context) (_ *env, err error) {
	dir, err := os.MkdirTemp("", "gatewayload-")
	if err != nil {
		return nil, err
	}
	e := &env{dir: dir, secret: make([]byte, 32), client: newClient(64)}
	defer func() {
		if err != nil {
			e.close()
		}
	}()
	if _, err := rand.Read(e.secret); err != nil {
		return nil, err
	}
	if e.db, err = sqlstore.OpenSQLiteFile(ctx, filepath.Join(dir, "gateway.db")); err != nil {
		return nil, err
	}
	// Loopback is a trusted proxy so that the login phases can give every
	// client (or every attempt) its own address through X-Forwarded-For:
	// the login rate limit is keyed by user and address.
	cfg := gateway.Config{
		TokenTTL: 12 * time.Hour, ProxyTimeout: 60 * time.Second, HealthTimeout: 2 * time.Second,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		LocalStand:     "local", WorkerImage: "cpesuite:bench", EmulatorImage: "cpesuite:bench", StackNetwork: "cpesuite",
	}
	log := slog.New(slog.DiscardHandler)
	if e.g, err = gateway.New(ctx, cfg, e.db, e.secret, "bench", log); err != nil {
		return nil, err
	}
	if _, err := e.g.Accounts().Bootstrap(ctx, adminName, adminPW); err != nil {
		return nil, err
	}
	mux := httpx.NewMux()
	e.g.Routes(mux)
	noop := func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }
	mux.HandleFunc("GET "+noopOpenPath, noop)
	mux.HandleFunc("GET "+noopAuthPath, noop)
	if e.gwURL, err = e.serve(httpx.Chain(mux, e.g.Middleware())); err != nil {
		return nil, err
	}
	var out struct{ Token string }
	if err := e.postJSON(e.gwURL+"/api/auth/login", "", map[string]string{"username": adminName, "password": adminPW}, http.StatusOK, &out); err != nil {
		return nil, fmt.Errorf("admin login: %w", err)
	}
	e.token = out.Token
	return e, nil
}

// addWorker starts a worker and registers it as a stand through the
// gateway's API.
func (e *env) addWorker(name string) (*benchWorker, error) {
	dir := filepath.Join(e.dir, name)
	cases, err := testcase.OpenStore(filepath.Join(dir, "tests"))
	if err != nil {
		return nil, err
	}
	if _, err := cases.PutRaw("quick.yaml", []byte(benchCase)); err != nil {
		return nil, err
	}
	w, err := worker.New(worker.Config{DataDir: dir, Secret: e.secret, Version: "bench",
		Env: func(string) (string, bool) { return "", false }}, cases, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	bw := &benchWorker{name: name, w: w}
	e.workers = append(e.workers, bw)
	mux := httpx.NewMux()
	w.Routes(mux)
	if bw.url, err = e.serve(mux); err != nil {
		return nil, err
	}
	err = e.postJSON(e.gwURL+"/api/gateway/stands", e.token, map[string]any{"name": name, "base_url": bw.url}, http.StatusCreated, nil)
	return bw, err
}

// postJSON posts body and decodes the answer into out (when not nil).
func (e *env) postJSON(url, token string, body any, want int, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("POST %s: status %d, want %d: %s", url, resp.StatusCode, want, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// dbBytes is the size of the gateway's SQLite file and its WAL.
func (e *env) dbBytes() int64 {
	var n int64
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(filepath.Join(e.dir, "gateway.db"+suffix)); err == nil {
			n += fi.Size()
		}
	}
	return n
}

func (e *env) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var errs []error
	for _, s := range e.servers {
		errs = append(errs, s.Shutdown(ctx))
	}
	for _, w := range e.workers {
		w.w.Shutdown(ctx)
	}
	if e.g != nil {
		e.g.Close()
	}
	if e.db != nil {
		errs = append(errs, e.db.Close())
	}
	errs = append(errs, os.RemoveAll(e.dir))
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(os.Stderr, "gatewayload: cleanup:", err)
	}
}
