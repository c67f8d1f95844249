package fcc

import (
	"net/http"

	"cpesuite/internal/platform/httpx"
)

func (a *API) legacyRoutes(mux *httpx.Mux, h func(httpx.Handler) http.Handler) {}
