package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"

	"cpesuite/internal/testrunner/identity"
)

// adminIdentity is what the gateway signs for the bootstrap admin, so the
// worker does the same work for a direct request as for a proxied one.
var adminIdentity = identity.Identity{Username: adminName, Role: identity.RoleAdmin}

func (e *env) bearer(r *http.Request) { r.Header.Set("Authorization", "Bearer "+e.token) }

// direct is a probe straight at worker w, signed as the admin; it has its
// own client so that its connections are not the gateway client's.
func (e *env) direct(w *benchWorker, path string, c *http.Client) probe {
	return probe{name: "direct", client: c, url: w.url + path, want: http.StatusOK,
		prepare: func(r *http.Request) { identity.SignRequest(e.secret, r, adminIdentity, time.Now()) }}
}

func (e *env) viaGateway(name, path string, want int) probe {
	return probe{name: name, client: e.client, url: e.gwURL + path, want: want, prepare: e.bearer}
}

// bareProxy serves a plain httputil.ReverseProxy to w that signs the
// admin's identity and does nothing else: the cost of the extra hop alone,
// without the gateway's token check and stand lookup.
func (e *env) bareProxy(w *benchWorker) (string, error) {
	target, err := url.Parse(w.url)
	if err != nil {
		return "", err
	}
	rp := &httputil.ReverseProxy{
		Transport: newClient(64).Transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.SetXForwarded()
			identity.SignRequest(e.secret, pr.Out, adminIdentity, time.Now())
		},
	}
	return e.serve(rp)
}

// proxyPhase compares direct and proxied latency of a routed and a
// fanned-out endpoint with one stand, then of the fanned-out one with two.
// A bare reverse proxy to the first worker runs alongside as a control.
func proxyPhase(e *env, o options) ([]comparison, error) {
	w1, err := e.addWorker("w1")
	if err != nil {
		return nil, err
	}
	bare, err := e.bareProxy(w1)
	if err != nil {
		return nil, err
	}
	dc, bc := newClient(4), newClient(4)
	var out []comparison
	measure := func(name, path string) error {
		fmt.Println(name + ":")
		c, err := compare(name, []probe{
			e.direct(w1, path, dc),
			{name: "bare ReverseProxy", client: bc, url: bare + path, want: http.StatusOK, prepare: func(*http.Request) {}},
			e.viaGateway("gateway", path, http.StatusOK),
		}, o.n, o.warm, o.rounds)
		if err != nil {
			return err
		}
		c.print()
		out = append(out, c)
		return nil
	}
	if err := measure("routed GET /api/settings, 1 stand", "/api/settings"); err != nil {
		return nil, err
	}
	if err := measure("fan-out GET /api/runs/active, 1 stand", "/api/runs/active"); err != nil {
		return nil, err
	}
	if _, err := e.addWorker("w2"); err != nil {
		return nil, err
	}
	if err := measure("fan-out GET /api/runs/active, 2 stands", "/api/runs/active"); err != nil {
		return nil, err
	}
	return out, nil
}

// authPhase compares, on the gateway's server, a no-op handler without
// and with the token check, GET /api/auth/me (token check plus an account
// read) and GET /api/gateway/stands (token check plus the stand list read
// that every proxied request makes; two stands after the proxy phase).
func authPhase(_ context.Context, e *env, o options) (comparison, error) {
	name := "token authentication on the gateway's server"
	fmt.Println(name + ":")
	open := e.viaGateway("no-op, open", noopOpenPath, http.StatusNoContent)
	open.prepare = func(*http.Request) {}
	c, err := compare(name, []probe{
		open,
		e.viaGateway("no-op, token", noopAuthPath, http.StatusNoContent),
		e.viaGateway("GET /api/auth/me", "/api/auth/me", http.StatusOK),
		e.viaGateway("GET /api/gateway/stands", "/api/gateway/stands", http.StatusOK),
	}, o.n, o.warm, o.rounds)
	if err != nil {
		return c, err
	}
	c.print()
	return c, nil
}

// inProcess times identity.Sign and the token check without HTTP, in
// microseconds (medians of n).
func inProcess(ctx context.Context, e *env, n int) (sign, auth float64, err error) {
	ds := make([]time.Duration, n)
	now := time.Now()
	for i := range ds {
		t0 := time.Now()
		_ = identity.Sign(e.secret, adminIdentity, http.MethodGet, "/api/settings", now)
		ds[i] = time.Since(t0)
	}
	sign = round1(percentile(ds, 50))
	for i := range ds {
		t0 := time.Now()
		if _, err := e.g.Accounts().Authenticate(ctx, e.token); err != nil {
			return 0, 0, err
		}
		ds[i] = time.Since(t0)
	}
	auth = round1(percentile(ds, 50))
	fmt.Printf("in-process, p50 of %d: identity.Sign %.1f µs, Accounts().Authenticate (SQLite) %.1f µs\n", n, sign, auth)
	return sign, auth, nil
}
