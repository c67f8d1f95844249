package fcc

import (
	"net/http"

	"cpesuite/internal/platform/httpx"
)

// runEngine is the activation machinery: scheduler, outbox dispatcher,
// ack and state consumers, watchdog.
type runEngine struct{}

func (a *API) runRoutes(mux *httpx.Mux, h func(httpx.Handler) http.Handler) {}
