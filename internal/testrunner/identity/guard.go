package identity

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
)

// Handler is a worker route that needs the verified caller.
type Handler func(w http.ResponseWriter, r *http.Request, id Identity) error

// Guard is the one way every worker route checks its caller: it verifies
// the gateway-signed header and hands the identity to the route. Without a
// valid header the answer is 401 UNAUTHENTICATED, whatever the route.
type Guard struct {
	Secret []byte
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// H wraps h as an httpx.Handler; the identity is also in the request's
// context (FromContext).
func (g Guard) H(h Handler) httpx.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		now := time.Now
		if g.Now != nil {
			now = g.Now
		}
		id, err := VerifyRequest(g.Secret, r, now())
		if err != nil {
			return apperr.Wrap(apperr.ErrUnauthorized, err, "UNAUTHENTICATED", "missing or invalid caller identity")
		}
		return h(w, r.WithContext(NewContext(r.Context(), id)), id)
	}
}

// RequireRole answers 403 FORBIDDEN unless id has one of roles; what names
// the action in the message ("creating a project").
func RequireRole(id Identity, what string, roles ...string) error {
	if slices.Contains(roles, id.Role) {
		return nil
	}
	return apperr.New(apperr.ErrForbidden, "FORBIDDEN", "%s needs the %s role", what, strings.Join(roles, " or "))
}
