package workersvc

import _ "embed"

//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the worker's OpenAPI 3 document, served at
// GET /openapi.json (open, like GET /health: it holds no secrets and the
// gateway does not proxy it). openapi_test.go holds it to Routes.
func OpenAPI() []byte { return openAPI }
