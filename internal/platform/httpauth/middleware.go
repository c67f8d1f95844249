package httpauth

import (
	"context"
	"net/http"
)

type usernameKey struct{}

// Middleware verifies every request before passing it to next with the
// authenticated username in its context (see UsernameFrom). Failures are
// answered by Reject: a 401 challenge, or ErrorHandler for store failures.
func (v *Verifier) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, err := v.Verify(r)
		if err != nil {
			v.Reject(w, r, err)
			return
		}
		r2 := r.WithContext(ContextWithUsername(r.Context(), user))
		next.ServeHTTP(w, r2)
		// Hand the matched ServeMux pattern back to outer middleware, as
		// httpx.RequestID does.
		r.Pattern = r2.Pattern
	})
}

// ContextWithUsername returns ctx carrying an authenticated username, as
// Middleware stores it; handler tests use it to fake an authenticated
// request.
func ContextWithUsername(ctx context.Context, username string) context.Context {
	return context.WithValue(ctx, usernameKey{}, username)
}

// UsernameFrom returns the username stored by Middleware; ok is false when
// the request did not pass through it.
func UsernameFrom(ctx context.Context) (username string, ok bool) {
	username, ok = ctx.Value(usernameKey{}).(string)
	return username, ok
}
