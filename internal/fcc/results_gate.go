package fcc

import (
	"context"
	"net/http"

	"cpesuite/internal/fcc/ingest"
	"cpesuite/internal/fcc/results"
	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
)

// ResultGate tells whether the result store is UP (results.Probe).
type ResultGate interface {
	Status() results.Status
}

// DeadLetterResender re-inserts parked result rows (ingest.Ingester).
type DeadLetterResender interface {
	Resend(ctx context.Context, limit int) (ingest.ResendReport, error)
}

type resultHooks struct {
	gate   ResultGate
	resend DeadLetterResender
	store  results.Store
}

// UseResults connects the service to the result store's probe and the
// dead-letter store. Without a gate the store counts as UNAVAILABLE.
func (s *Service) UseResults(g ResultGate, r DeadLetterResender) {
	s.results.gate, s.results.resend = g, r
}

// UseResultStore lets the run listing count each run's stored results.
func (s *Service) UseResultStore(store results.Store) { s.results.store = store }

// requireResultStore is the spec's 503 rule: activation and the reports
// are refused with 9503 for the whole request unless the store is UP.
func (s *Service) requireResultStore() error {
	if s.results.gate == nil {
		return apperr.New(apperr.ErrUnavailable, "", "the result store is not configured (SVC_FCC_RESULTSTORE_ENABLED=false)")
	}
	st := s.results.gate.Status()
	if st.State != results.StateUp {
		return apperr.New(apperr.ErrUnavailable, "", "the result store is %s", st.State)
	}
	return nil
}

// resendRequest is the body of POST /FCC/admin/result-dead-letter/resend;
// {} resends the default batch.
type resendRequest struct {
	Limit *int `json:"limit"`
}

func (a *API) resultRoutes(mux *httpx.Mux, h func(httpx.Handler) http.Handler) {
	mux.Handle("POST /FCC/admin/result-dead-letter/resend", h(a.resendDeadLetters))
	mux.Handle("POST /FCC/activations/list", h(rpc(a.s.listRunsRPC)))
}

func (a *API) resendDeadLetters(w http.ResponseWriter, r *http.Request) error {
	id := identityFrom(r.Context())
	if !id.All {
		return denied("resending dead letters needs scope ALL")
	}
	var req resendRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if err := a.s.requireResultStore(); err != nil {
		return err
	}
	if a.s.results.resend == nil {
		return apperr.New(apperr.ErrUnavailable, "", "result ingestion is not running")
	}
	limit := a.s.cfg.Ingest.ResendBatchSize
	if req.Limit != nil {
		if *req.Limit < 1 || *req.Limit > a.s.cfg.Ingest.ResendBatchSize {
			return invalid("limit must be from 1 to %d (svc.fcc.dead-letter.resend-batch-size)", a.s.cfg.Ingest.ResendBatchSize)
		}
		limit = *req.Limit
	}
	rep, err := a.s.results.resend.Resend(r.Context(), limit)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, rep)
}
