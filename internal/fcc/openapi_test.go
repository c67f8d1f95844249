package fcc

import (
	"log/slog"
	"testing"

	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/httpx/openapitest"
)

// TestOpenAPIMatchesRoutes holds openapi.json to the routes: every
// documented operation is routed and every /FCC route is documented.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	mux := httpx.NewMux()
	NewAPI(&Service{log: slog.New(slog.DiscardHandler)}).Routes(mux)
	openapitest.Check(t, OpenAPI(), mux)
}
