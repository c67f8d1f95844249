package health

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// Mount registers the health endpoints on mux under base (for example
// "/actuator/health"):
//
//	GET {base}              all components
//	GET {base}/{name}       a group (liveness, readiness, ...) or one component
//
// Unknown names answer 404. The status code follows Status.HTTPStatus. The
// body is served as application/json rather than Spring's
// application/vnd.spring-boot.actuator.v3+json: the JSON shape is Spring's,
// but generic clients and our OpenAPI documents expect plain JSON, and
// probes only look at the status code anyway.
func Mount(mux *http.ServeMux, base string, reg *Registry) {
	base = strings.TrimSuffix(base, "/")
	mux.HandleFunc("GET "+base, func(w http.ResponseWriter, r *http.Request) {
		c := reg.Check(r.Context())
		writeJSON(w, c.Status, c)
	})
	mux.HandleFunc("GET "+base+"/{name}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		if c, ok := reg.CheckGroup(r.Context(), name); ok {
			writeJSON(w, c.Status, c)
			return
		}
		if res, ok := reg.CheckComponent(r.Context(), name); ok {
			writeJSON(w, res.Status, res)
			return
		}
		http.NotFound(w, r)
	})
}

// Handler returns a handler serving only the health endpoints under base,
// for servers that have no ServeMux of their own.
func Handler(base string, reg *Registry) http.Handler {
	mux := http.NewServeMux()
	Mount(mux, base, reg)
	return mux
}

func writeJSON(w http.ResponseWriter, status Status, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		// Details that cannot be encoded (channels, funcs) are an indicator
		// bug; the status is still known, so answer with it alone rather
		// than with half a body.
		buf.Reset()
		_ = json.NewEncoder(&buf).Encode(Result{Status: status})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status.HTTPStatus())
	_, _ = w.Write(buf.Bytes())
}
