package fcc

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"cpesuite/internal/fcc/fleet"
	"cpesuite/internal/platform/apperr"
)

// The identity headers the front-end gateway injects. The service has no
// authentication of its own: these headers are the whole trust model.
const (
	HeaderScope      = "X-SVC-Domain-Scope"
	HeaderDomainID   = "X-SVC-Domain-Id"
	HeaderDomainIDs  = "X-SVC-Domain-Ids"
	HeaderUserID     = "X-SVC-User-Id"
	HeaderClientType = "X-SVC-Client-Type"
)

// Identity is the caller as the headers describe it.
type Identity struct {
	All        bool    // scope ALL: no domain restriction
	DomainIDs  []int64 // visible domains (scope LIST), sorted, distinct
	DomainID   *int64  // domain of new campaigns under scope LIST
	UserID     string  // "" when the header is absent
	ClientType string
}

// Scope is the fleet resolver's view of the identity.
func (id Identity) Scope() fleet.Scope { return fleet.Scope{All: id.All, DomainIDs: id.DomainIDs} }

// Sees reports whether a row of domain d is visible.
func (id Identity) Sees(d int64) bool {
	if id.All {
		return true
	}
	_, ok := slices.BinarySearch(id.DomainIDs, d)
	return ok
}

// errIdentity is the one 403 whose code does not end in 403: the identity
// could not be established at all (see errors.go).
var errIdentity = apperr.New(apperr.ErrForbidden, codeIdentity, "identity not established")

// parseIdentity reads the headers. A missing or unparseable scope is a 403,
// never a wildcard; malformed id lists are refused the same way, because
// guessing at a caller's visibility is exactly what must not happen.
func parseIdentity(h http.Header) (Identity, error) {
	var id Identity
	switch strings.ToUpper(strings.TrimSpace(h.Get(HeaderScope))) {
	case "ALL":
		id.All = true
	case "LIST":
	case "":
		return id, errIdentityf("header %s is required (LIST or ALL)", HeaderScope)
	default:
		return id, errIdentityf("header %s must be LIST or ALL", HeaderScope)
	}
	if v := strings.TrimSpace(h.Get(HeaderDomainID)); v != "" {
		d, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return id, errIdentityf("header %s must be a domain id", HeaderDomainID)
		}
		id.DomainID = &d
	}
	if !id.All {
		for part := range strings.SplitSeq(h.Get(HeaderDomainIDs), ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			d, err := strconv.ParseInt(part, 10, 64)
			if err != nil {
				return id, errIdentityf("header %s must be a comma separated list of domain ids", HeaderDomainIDs)
			}
			id.DomainIDs = append(id.DomainIDs, d)
		}
		slices.Sort(id.DomainIDs)
		id.DomainIDs = slices.Compact(id.DomainIDs)
	}
	id.UserID = strings.TrimSpace(h.Get(HeaderUserID))
	id.ClientType = strings.TrimSpace(h.Get(HeaderClientType))
	return id, nil
}

func errIdentityf(format string, args ...any) error {
	e := *errIdentity
	e.Details = describe(format, args...)
	return &e
}

type identityKey struct{}

// identityFrom returns the identity the filter stored.
func identityFrom(ctx context.Context) Identity {
	id, _ := ctx.Value(identityKey{}).(Identity)
	return id
}

// identityFilter guards every /FCC route. The client type is carried for
// the log only.
func identityFilter(log *slog.Logger, onError func(http.ResponseWriter, *http.Request, error), next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := parseIdentity(r.Header)
		if err != nil {
			onError(w, r, err)
			return
		}
		log.Debug("request identity", "path", r.URL.Path, "scope_all", id.All, "domains", len(id.DomainIDs), "user", id.UserID, "client_type", id.ClientType)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), identityKey{}, id)))
	})
}
