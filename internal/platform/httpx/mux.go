package httpx

import (
	"net/http"
	"slices"
	"strings"

	"cpesuite/internal/platform/apperr"
)

// Mux is an http.ServeMux that remembers the patterns of a service's API
// routes, so a test can hold them against the OpenAPI document
// (openapitest.Check). Infrastructure routes mounted on the embedded
// ServeMux directly (health, metrics, docs) are not recorded.
type Mux struct {
	*http.ServeMux
	patterns []string
	misses   ErrorWriter
}

// RouteErrors makes requests that match no route (404) or no method of a
// route (405, with its Allow header) answer in the service's own error body
// through ew, instead of the ServeMux's plain text that no client of a JSON
// API can parse.
func (m *Mux) RouteErrors(ew ErrorWriter) { m.misses = ew }

// ServeHTTP routes r, writing misses through the RouteErrors writer if set.
func (m *Mux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if m.misses == nil {
		m.ServeMux.ServeHTTP(w, r)
		return
	}
	h, pattern := m.ServeMux.Handler(r)
	if pattern != "" {
		// ServeHTTP, not h: it also fills r.PathValue.
		m.ServeMux.ServeHTTP(w, r)
		return
	}
	// The mux's own miss handler knows 404 from 405 and the allowed methods.
	probe := &statusProbe{header: http.Header{}}
	h.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		if allow := probe.header.Get("Allow"); allow != "" {
			w.Header().Set("Allow", allow)
		}
		m.misses(w, r, http.StatusMethodNotAllowed, apperr.New(apperr.ErrMethodNotAllowed, "", "method %s is not allowed on %s", r.Method, shortPath(r)))
		return
	}
	m.misses(w, r, http.StatusNotFound, apperr.New(apperr.ErrNotFound, "", "no such resource: %s %s", r.Method, shortPath(r)))
}

// shortPath bounds the client's path before it is echoed back.
func shortPath(r *http.Request) string {
	p := r.URL.Path
	if len(p) > 128 {
		p = strings.ToValidUTF8(p[:128], "") + "..."
	}
	return p
}

// statusProbe records what a miss handler would answer, writing nothing.
type statusProbe struct {
	header http.Header
	status int
}

func (p *statusProbe) Header() http.Header { return p.header }
func (p *statusProbe) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	return len(b), nil
}
func (p *statusProbe) WriteHeader(status int) {
	if p.status == 0 {
		p.status = status
	}
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
