package worker

import (
	"net/http"
	"strconv"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/identity"
)

// Routes registers the run, batch, WebSocket and settings routes, and the
// open GET /health. Unmatched paths under /api/ and /ws/ (and method
// mismatches of them) answer a JSON 404 instead of ServeMux's plain text;
// that catch-all is registered only when no other part of the worker
// registered one first.
func (w *Worker) Routes(mux *httpx.Mux) {
	mux.ServeMux.HandleFunc("GET /health", w.adapter.H(w.getHealth))

	mux.HandleFunc("POST /api/run", w.authed(w.postRun))
	mux.HandleFunc("POST /api/run/stop", w.authed(w.postStop))
	mux.HandleFunc("POST /api/run/batch", w.authed(w.postBatch))
	mux.HandleFunc("GET /api/run/batch", w.authed(w.getBatch))
	mux.HandleFunc("GET /api/run/batch/report", w.authed(w.getBatchReport))
	mux.HandleFunc("GET /api/run/batch/reports", w.authed(w.listBatchReports))
	mux.HandleFunc("GET /api/run/batch/reports/{batch_id}", w.authed(w.getArchivedReport))
	mux.HandleFunc("DELETE /api/run/batch/reports", w.authed(w.deleteBatchReports))
	mux.HandleFunc("GET /api/runs", w.authed(w.listRunsHandler))
	mux.HandleFunc("GET /api/runs/active", w.authed(w.activeRuns))
	mux.HandleFunc("GET /api/runs/{run_id}", w.authed(w.getRun))
	mux.HandleFunc("DELETE /api/runs", w.authed(w.deleteRuns))
	mux.HandleFunc("GET /ws/run/{run_id}", w.authed(w.watchRun))
	mux.HandleFunc("GET /api/settings", w.authed(w.getSettings))
	mux.HandleFunc("PUT /api/settings", w.authed(w.putSettings))
	mux.HandleFunc("DELETE /api/settings", w.authed(w.deleteSettings))
	mux.HandleFunc("GET /api/ui-config", w.authed(w.getUIConfig))

	for _, prefix := range []string{"/api/", "/ws/"} {
		if !hasCatchAll(mux, prefix) {
			mux.ServeMux.HandleFunc(prefix, w.adapter.H(noRoute))
		}
	}
}

// hasCatchAll reports whether the pattern prefix itself is registered
// already: registering it a second time would panic.
func hasCatchAll(mux *httpx.Mux, prefix string) bool {
	probe, _ := http.NewRequest(http.MethodGet, prefix+"no-such-route-probe/x", nil)
	_, pattern := mux.ServeMux.Handler(probe)
	return pattern == prefix
}

func noRoute(_ http.ResponseWriter, r *http.Request) error {
	return apperr.NotFound("NO_ROUTE", "no route for %s %s", r.Method, r.URL.Path)
}

// authed verifies the gateway-signed identity header (identity.Guard).
func (w *Worker) authed(h identity.Handler) http.HandlerFunc {
	return w.adapter.H(w.Guard().H(h))
}

// Guard is the caller check of the worker's routes, for the other parts of
// the worker (cases, notes, MCP status) that register their own routes.
func (w *Worker) Guard() identity.Guard {
	return identity.Guard{Secret: w.cfg.Secret, Now: w.cfg.Now}
}

func requireAdmin(id identity.Identity, what string) error {
	return identity.RequireRole(id, what, identity.RoleAdmin)
}

// boolQuery reads an optional boolean query parameter.
func boolQuery(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, apperr.Invalid("INVALID_QUERY", "query parameter %s must be true or false, not %q", name, v)
	}
	return b, nil
}

func (w *Worker) getHealth(rw http.ResponseWriter, _ *http.Request) error {
	return httpx.WriteJSON(rw, http.StatusOK, w.health())
}
