package httpx

import (
	"net/http"
	"slices"
)

// Mux is an http.ServeMux that remembers the patterns of a service's API
// routes, so a test can hold them against the OpenAPI document
// (openapitest.Check). Infrastructure routes mounted on the embedded
// ServeMux directly (health, metrics, docs) are not recorded.
type Mux struct {
	*http.ServeMux
	patterns []string
}

// NewMux returns an empty Mux.
func NewMux() *Mux { return &Mux{ServeMux: http.NewServeMux()} }

// Handle registers and records an API route.
func (m *Mux) Handle(pattern string, h http.Handler) {
	m.ServeMux.Handle(pattern, h)
	m.patterns = append(m.patterns, pattern)
}

// HandleFunc registers and records an API route.
func (m *Mux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(h))
}

// Patterns returns the recorded API patterns in registration order.
func (m *Mux) Patterns() []string { return slices.Clone(m.patterns) }
