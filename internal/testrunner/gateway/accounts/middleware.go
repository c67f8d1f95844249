package accounts

import (
	"context"
	"net/http"
	"strings"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/wire"
)

var errAuthRequired = apperr.New(apperr.ErrUnauthorized, "AUTH_REQUIRED",
	"authentication required: send Authorization: Bearer <token> from POST /api/auth/login")

var errAdminRequired = apperr.New(apperr.ErrForbidden, "ADMIN_REQUIRED", "admin role required")

type sessionKey struct{}

// Middleware authenticates every request for which open(r) is false (a nil
// open guards every request). Such a request must carry
// "Authorization: Bearer <token>" with a live token, else it gets a 401
// {"detail","code"} with WWW-Authenticate: Bearer. The caller's identity
// is put into the request context (identity.NewContext; read it with
// Caller).
//
// A client-sent identity header (identity.Header) is removed from every
// request, open or not: only the gateway may sign identities, and a
// handler that forwards the request as it came must not pass a forged one
// on.
func (s *Service) Middleware(open func(r *http.Request) bool) func(http.Handler) http.Handler {
	a := httpx.Adapter{Errors: wire.ErrorWriter(), Log: s.log}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Header.Del(identity.Header)
			if open != nil && open(r) {
				next.ServeHTTP(w, r)
				return
			}
			token, ok := bearerToken(r)
			if !ok {
				a.WriteError(w, r, errAuthRequired)
				return
			}
			sess, err := s.authenticate(r.Context(), token)
			if err != nil {
				a.WriteError(w, r, err)
				return
			}
			next.ServeHTTP(w, r.WithContext(withSession(r.Context(), sess)))
		})
	}
}

func withSession(ctx context.Context, sess session) context.Context {
	return context.WithValue(identity.NewContext(ctx, sess.id), sessionKey{}, sess)
}

func sessionFrom(ctx context.Context) (session, bool) {
	sess, ok := ctx.Value(sessionKey{}).(session)
	return sess, ok
}

// bearerToken returns the token of an "Authorization: Bearer <token>"
// header; the scheme is case-insensitive (RFC 9110, section 11.1).
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// Caller returns the identity Middleware put into r's context.
func Caller(r *http.Request) (identity.Identity, bool) {
	return identity.FromContext(r.Context())
}

// RequireAdmin returns nil when the caller is an admin, a 403 for another
// authenticated caller, and a 401 when the request carries no identity (a
// route mounted without Middleware fails closed).
func RequireAdmin(r *http.Request) error {
	id, ok := Caller(r)
	if !ok {
		return errAuthRequired
	}
	if !id.IsAdmin() {
		return errAdminRequired
	}
	return nil
}
