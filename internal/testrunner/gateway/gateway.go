// Package gateway is the test runner's public entry point (target
// gateway, port 8088): it authenticates callers, manages accounts, env
// profiles and worker stands, dispatches runs onto free workers and
// proxies every worker endpoint per caller, forwarding the caller's
// identity in a header signed with the secret it shares with the workers.
//
// Owner isolation is enforced by the workers, which trust only the signed
// identity; the gateway fans the run endpoints out over every stand so a
// caller reaches their run wherever it landed.
package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/testrunner/gateway/accounts"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/portainer"
	"cpesuite/internal/testrunner/wire"
)

// Gateway is one gateway process.
type Gateway struct {
	cfg       Config
	log       *slog.Logger
	secret    []byte
	acc       *accounts.Service
	fleet     *fleet
	wc        *workerClient
	disp      *dispatcher
	pt        *portainer.Client // nil when Portainer is not configured
	transport *http.Transport
	rp        *httputil.ReverseProxy
	adapter   httpx.Adapter
	now       func() time.Time
	version   string
}

// New opens the gateway's stores on db and registers the local stand.
func New(ctx context.Context, cfg Config, db *sqlstore.DB, secret []byte, version string, log *slog.Logger) (*Gateway, error) {
	if len(secret) < identity.MinSecretLen {
		return nil, errors.New("gateway: the shared worker secret is missing or too short")
	}
	acc, err := accounts.Open(ctx, db, accounts.Config{TokenTTL: cfg.TokenTTL, TrustedProxies: cfg.TrustedProxies, Hashing: cfg.Hashing}, log.With("component", "accounts"))
	if err != nil {
		return nil, err
	}
	f, err := openFleet(ctx, db)
	if err != nil {
		return nil, err
	}
	// Keep-alive connections to workers are what make the proxy cheap.
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		TLSClientConfig:     &tls.Config{MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:   false,
	}
	g := &Gateway{
		cfg: cfg, log: log, secret: secret, acc: acc, fleet: f, transport: tr,
		adapter: httpx.Adapter{Errors: wire.ErrorWriter(), Log: log},
		now:     time.Now, version: version,
	}
	g.wc = &workerClient{secret: secret, hc: &http.Client{Transport: tr}, now: g.now, timeout: cfg.HealthTimeout}
	g.disp = newDispatcher(g.wc, f)
	g.disp.slow = cfg.ProxyTimeout
	g.rp = g.newReverseProxy()
	if cfg.Portainer.Configured() {
		if g.pt, err = portainer.New(cfg.Portainer); err != nil {
			return nil, err
		}
	}
	if cfg.LocalWorker != "" {
		st := Stand{Name: cfg.LocalStand, BaseURL: cfg.LocalWorker, Display: "local worker", Enabled: true}
		if old, err := f.stand(ctx, cfg.LocalStand); err == nil {
			// Keep what an admin changed (display, noVNC, enabled).
			old.BaseURL = cfg.LocalWorker
			st = old
		}
		if _, _, err := f.upsertStand(ctx, st, g.now().UTC()); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// Accounts exposes the account service (bootstrap, benchmarks).
func (g *Gateway) Accounts() *accounts.Service { return g.acc }

// Close releases idle worker connections.
func (g *Gateway) Close() { g.transport.CloseIdleConnections() }

// isOpen lists the endpoints that need no token (spec, Authentication A 1),
// and no others.
func isOpen(r *http.Request) bool {
	p := r.URL.Path
	return p == "/" || p == "/health" ||
		p == "/api/auth/login" || p == "/api/auth/logout" ||
		strings.HasPrefix(p, "/novnc/")
}

// Middleware authenticates every request that is not open. Browsers
// cannot set Authorization on a WebSocket, so /ws/ also takes the token
// as the access_token query parameter (RFC 6750, 2.3); it is moved into
// the header and never forwarded.
//
// GET /metrics, which the module's common server mounts beside the routes,
// is for admins: under `cpesuite up` it holds the whole process's metrics
// (every target's request counts, device and queue figures), operational
// detail of the same kind as the audit log (issue 18 item 10).
func (g *Gateway) Middleware() func(http.Handler) http.Handler {
	auth := g.acc.Middleware(isOpen)
	return func(next http.Handler) http.Handler {
		h := auth(adminMetrics(next, g.adapter))
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/ws/") && r.URL.Query().Has("access_token") {
				q := r.URL.Query()
				if r.Header.Get("Authorization") == "" {
					r.Header.Set("Authorization", "Bearer "+q.Get("access_token"))
				}
				q.Del("access_token")
				r.URL.RawQuery = q.Encode()
			}
			h.ServeHTTP(w, r)
		})
	}
}

// adminMetrics refuses /metrics to callers that are not admins; it runs
// after the token check, which has refused anonymous callers already.
func adminMetrics(next http.Handler, a httpx.Adapter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			if err := accounts.RequireAdmin(r); err != nil {
				a.WriteError(w, r, err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// Routes mounts every gateway endpoint and the worker proxy.
func (g *Gateway) Routes(mux *httpx.Mux) {
	h := g.adapter.H
	g.acc.Routes(mux, g.adapter)

	mux.Handle("GET /{$}", h(g.index))
	mux.Handle("GET /health", h(g.health))
	mux.Handle("GET /openapi.json", h(serveOpenAPI))

	mux.Handle("GET /api/gateway/profiles", h(g.listProfiles))
	mux.Handle("POST /api/gateway/profiles", h(admin(g.putProfile)))
	mux.Handle("GET /api/gateway/profiles/{name}", h(admin(g.getProfile)))
	mux.Handle("DELETE /api/gateway/profiles/{name}", h(admin(g.deleteProfile)))
	mux.Handle("GET /api/gateway/stands", h(admin(g.listStands)))
	mux.Handle("POST /api/gateway/stands", h(admin(g.putStand)))
	mux.Handle("PATCH /api/gateway/stands/{name}", h(admin(g.patchStand)))
	mux.Handle("DELETE /api/gateway/stands/{name}", h(admin(g.deleteStand)))
	mux.Handle("POST /api/gateway/workers", h(admin(g.provisionWorker)))
	mux.Handle("POST /api/gateway/run", h(g.dispatchRun))
	mux.Handle("POST /api/gateway/run/batch", h(g.dispatchBatch))
	mux.Handle("GET /api/live/stand", h(g.liveStand))

	// Worker endpoints that find the caller's run on any worker.
	mux.Handle("GET /api/runs", h(g.runs))
	mux.Handle("GET /api/runs/active", h(g.activeRuns))
	mux.Handle("GET /api/runs/{run_id}", h(g.runDetail))
	mux.Handle("DELETE /api/runs", h(g.sumCounts("/api/runs", "cleared")))
	mux.Handle("POST /api/run/stop", h(g.stop))
	mux.Handle("GET /api/run/batch", h(g.batchStatus))
	mux.Handle("GET /api/run/batch/report", h(g.latestReport))
	mux.Handle("GET /api/run/batch/reports", h(g.reportRows))
	mux.Handle("GET /api/run/batch/reports/{batch_id}", h(g.batchReport))
	mux.Handle("DELETE /api/run/batch/reports", h(g.sumCounts("/api/run/batch/reports", "deleted")))
	mux.Handle("GET /ws/run/{run_id}", h(g.watch))
	// Every other worker endpoint lives on one stand.
	mux.Handle("/api/", h(g.routed))
	mux.Handle("/ws/", h(g.routed))

	mux.Handle("/novnc/{stand}/{path...}", h(g.novnc))
}

// admin wraps handlers of admin-only endpoints.
func admin(next httpx.Handler) httpx.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := accounts.RequireAdmin(r); err != nil {
			return err
		}
		return next(w, r)
	}
}

// mustCaller returns the authenticated caller; the middleware guarantees
// one on every non-open route.
func mustCaller(r *http.Request) identity.Identity {
	id, _ := accounts.Caller(r)
	return id
}

// audit records an action of the caller in the central activity log.
func (g *Gateway) audit(r *http.Request, action, target, detail string, ok bool) {
	addr := "unknown"
	if a := accounts.ClientAddr(r, g.cfg.TrustedProxies); a.IsValid() {
		addr = a.String()
	}
	g.acc.Record(r.Context(), accounts.Entry{Username: mustCaller(r).Username, Action: action, Target: target,
		Detail: detail, Success: ok, ClientAddr: addr})
}

var errNotConfigured = apperr.New(apperr.ErrUnavailable, "PROVISIONING_NOT_CONFIGURED",
	"container management (Portainer) is not configured: set PORTAINER_URL and credentials")
