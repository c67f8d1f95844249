// Package apperr is the one error vocabulary of cpesuite.
//
// Domain code returns errors that wrap one of the sentinel kinds below,
// usually through an *Error that also carries a machine code and a message
// that is safe to show to a client. HTTP adapters turn the kind into a status
// code and the public part into the service's own wire body; the internal
// cause is only ever logged.
package apperr

import (
	"errors"
	"net/http"
)

// Sentinel kinds. Each maps to one HTTP status (see Status); their texts are
// the default public messages.
var (
	ErrInvalid          = errors.New("invalid request")         // 400
	ErrUnauthorized     = errors.New("unauthorized")            // 401
	ErrForbidden        = errors.New("forbidden")               // 403
	ErrNotFound         = errors.New("not found")               // 404
	ErrMethodNotAllowed = errors.New("method not allowed")      // 405
	ErrConflict         = errors.New("conflict")                // 409
	ErrTooLarge         = errors.New("request too large")       // 413
	ErrUnsupportedMedia = errors.New("unsupported media type")  // 415
	ErrUnprocessable    = errors.New("unprocessable entity")    // 422
	ErrTooManyRequests  = errors.New("too many requests")       // 429
	ErrInternal         = errors.New("internal server error")   // 500
	ErrUpstream         = errors.New("upstream service failed") // 502
	ErrUnavailable      = errors.New("service unavailable")     // 503
)

// kind ties a sentinel to its HTTP status and its default machine code.
type kind struct {
	err    error
	status int
	code   string
}

// kinds is a slice, not a map, so that lookups by errors.Is have a fixed
// order when an error happens to wrap more than one sentinel.
var kinds = []kind{
	{ErrInvalid, http.StatusBadRequest, "INVALID"},
	{ErrUnauthorized, http.StatusUnauthorized, "UNAUTHORIZED"},
	{ErrForbidden, http.StatusForbidden, "FORBIDDEN"},
	{ErrNotFound, http.StatusNotFound, "NOT_FOUND"},
	{ErrMethodNotAllowed, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED"},
	{ErrConflict, http.StatusConflict, "CONFLICT"},
	{ErrTooLarge, http.StatusRequestEntityTooLarge, "TOO_LARGE"},
	{ErrUnsupportedMedia, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA"},
	{ErrUnprocessable, http.StatusUnprocessableEntity, "UNPROCESSABLE"},
	{ErrTooManyRequests, http.StatusTooManyRequests, "TOO_MANY_REQUESTS"},
	{ErrInternal, http.StatusInternalServerError, "INTERNAL"},
	{ErrUpstream, http.StatusBadGateway, "UPSTREAM"},
	{ErrUnavailable, http.StatusServiceUnavailable, "UNAVAILABLE"},
}

var internalKind = kinds[10]

// kindOf finds the kind of err. The outermost *Error decides, so that
// wrapping an upstream NotFound as ErrUpstream reports 502, not 404. Plain
// errors that wrap a sentinel (fmt.Errorf("x: %w", ErrNotFound)) work too.
func kindOf(err error) (kind, bool) {
	if e, ok := As(err); ok {
		err = e.Kind
		if err == nil {
			return internalKind, false
		}
	}
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return k, true
		}
	}
	return internalKind, false
}
