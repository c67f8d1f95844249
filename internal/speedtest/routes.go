package speedtest

import (
	_ "embed"

	"cpesuite/internal/platform/httpx"
)

//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns the target's OpenAPI document.
func OpenAPI() []byte { return openAPIDoc }

// Routes registers the endpoints and the API documentation on mux.
func (s *Server) Routes(mux *httpx.Mux) {
	mux.HandleFunc("GET /download", s.adapter.H(s.download))
	mux.HandleFunc("POST /upload", s.adapter.H(s.upload))
	httpx.ServeOpenAPI(mux.ServeMux, "/openapi.json", "/docs/", "cpesuite speedtest", openAPIDoc)
}
