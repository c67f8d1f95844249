package gateway

import (
	_ "embed"
	"net/http"
	"strconv"
)

//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the gateway's OpenAPI 3 document, served at
// GET /openapi.json. openapi_test.go holds it to Routes.
func OpenAPI() []byte { return openAPI }

// serveOpenAPI answers GET /openapi.json. Like every endpoint that is not
// open it is behind the bearer token: it lists no secrets, but the spec
// leaves only /, /health, login, logout and /novnc/* open.
func serveOpenAPI(w http.ResponseWriter, _ *http.Request) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(openAPI)))
	_, err := w.Write(openAPI)
	return err
}
