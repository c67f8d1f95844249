package speedtest

import (
	_ "embed"
	"net/http"

	"cpesuite/internal/platform/httpx"
)

//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns the target's OpenAPI document.
func OpenAPI() []byte { return openAPIDoc }

// Routes registers the endpoints and the API documentation on mux.
func (s *Server) Routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /download", s.adapter.H(s.download))
	mux.HandleFunc("POST /upload", s.adapter.H(s.upload))
	httpx.ServeOpenAPI(mux, "/openapi.json", "/docs/", "cpesuite speedtest", openAPIDoc)
}
