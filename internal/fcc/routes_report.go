package fcc

import (
	"net/http"

	"cpesuite/internal/platform/httpx"
)

func (a *API) reportRoutes(mux *httpx.Mux, h func(httpx.Handler) http.Handler) {}
