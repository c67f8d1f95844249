package acs

import (
	"testing"

	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/httpx/openapitest"
)

func TestOpenAPIMatchesRoutes(t *testing.T) {
	mux := httpx.NewMux()
	(&API{}).Routes(mux)
	openapitest.Check(t, OpenAPI(), mux)
}
