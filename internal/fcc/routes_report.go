package fcc

import (
	"net/http"

	"cpesuite/internal/platform/httpx"
)

func (a *API) reportRoutes(mux *httpx.Mux, h func(httpx.Handler) http.Handler) {
	mux.Handle("POST /FCC/reports/list", h(a.gated(rpc(a.s.ReportList))))
	mux.Handle("POST /FCC/reports/results", h(a.gated(rpc(a.s.ReportResults))))
	mux.Handle("POST /FCC/reports/generate", h(a.gated(rpc(a.s.ReportGenerate))))
}

// gated answers the spec's 503 (9503) before the body is read, as
// activation does: a client learns the store is down before anything else.
func (a *API) gated(next httpx.Handler) httpx.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		if _, err := a.s.reports(); err != nil {
			return err
		}
		return next(w, r)
	}
}
