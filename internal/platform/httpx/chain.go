package httpx

import "net/http"

// Middleware wraps a handler.
type Middleware = func(http.Handler) http.Handler

// Chain wraps h in mws. The first middleware is the outermost: Chain(h, a, b)
// is a(b(h)), so requests pass a, then b, then h.
func Chain(h http.Handler, mws ...Middleware) http.Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h
}
