package httpx

import (
	"context"
	"crypto/rand"
	"net/http"
)

// RequestIDHeader carries the request id in both directions.
const RequestIDHeader = "X-Request-Id"

// maxRequestIDLen bounds incoming ids: long enough for UUIDs and trace ids,
// short enough that a client cannot bloat every log line.
const maxRequestIDLen = 128

type requestIDKey struct{}

// RequestID is middleware that gives every request an id: the incoming
// X-Request-Id when it is sane (1 to 128 characters of letters, digits and
// "-_.:"), otherwise a fresh random one, so that a client cannot inject
// arbitrary text into our logs. The id is set on the response and stored in
// the request context (see RequestIDFrom).
func RequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !saneRequestID(id) {
			id = rand.Text()
		}
		w.Header().Set(RequestIDHeader, id)
		r2 := r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
		next.ServeHTTP(w, r2)
		// ServeMux records the matched pattern on the request it was given,
		// which is our copy; hand it back so outer middleware (metrics,
		// access log) can label by route.
		r.Pattern = r2.Pattern
	})
}

// RequestIDFrom returns the request id stored by RequestID, or "".
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

func saneRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '_', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}
