package httpx

import (
	"log/slog"
	"net/http"

	"cpesuite/internal/platform/apperr"
)

// Handler is an HTTP handler that returns its error instead of writing it,
// so that one adapter per service decides status and wire shape.
type Handler func(w http.ResponseWriter, r *http.Request) error

// ErrorWriter writes an error response in one service's wire shape. The err
// it receives from this package is always the output of apperr.Public: a
// *apperr.Error with Code, Message and (user-safe) Details set and no
// internal cause, so a writer cannot leak internals even by calling
// err.Error().
type ErrorWriter func(w http.ResponseWriter, r *http.Request, status int, err error)

// Adapter turns Handlers into http.HandlerFuncs for one service.
type Adapter struct {
	// Errors writes error bodies; nil means DefaultErrorWriter.
	Errors ErrorWriter
	// Log receives 5xx errors with their full cause; nil means slog.Default().
	Log *slog.Logger
}

// H adapts h. When h returns an error, the status comes from apperr.Status
// and the body from the ErrorWriter, unless h had already started the
// response, in which case the error is only logged.
func (a Adapter) H(h Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tw := Track(w)
		if err := h(tw, r); err != nil {
			a.WriteError(tw, r, err)
		}
	}
}

// WriteError writes err as H would. It is for code paths outside a Handler
// (authentication middleware, method checks) that must answer in the
// service's error shape.
func (a Adapter) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	log := a.Log
	if log == nil {
		log = slog.Default()
	}
	status := apperr.Status(err)
	tw := Track(w)
	if tw.Started() {
		// The status line is gone; all we can do is make the failure visible.
		log.WarnContext(r.Context(), "handler failed after the response started",
			"request_id", RequestIDFrom(r.Context()), "method", r.Method, "path", r.URL.Path,
			"status", tw.Status(), "error", err.Error())
		return
	}
	if status >= http.StatusInternalServerError {
		log.ErrorContext(r.Context(), "request failed",
			"request_id", RequestIDFrom(r.Context()), "method", r.Method, "path", r.URL.Path,
			"status", status, "error", err.Error())
	} else {
		log.DebugContext(r.Context(), "request rejected",
			"request_id", RequestIDFrom(r.Context()), "method", r.Method, "path", r.URL.Path,
			"status", status, "error", err.Error())
	}
	ew := a.Errors
	if ew == nil {
		ew = DefaultErrorWriter
	}
	ew(tw, r, status, apperr.Public(err))
}

// DefaultErrorWriter writes {"code":..., "message":...} plus "details" when
// the error carries any. It sanitizes err itself, so it is safe to call with
// a raw error.
func DefaultErrorWriter(w http.ResponseWriter, _ *http.Request, status int, err error) {
	pub := apperr.Public(err)
	if pub == nil {
		pub = apperr.Public(apperr.Internal(nil))
	}
	_ = WriteJSON(w, status, errorBody{Code: pub.Code, Message: pub.Message, Details: pub.Details})
}

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Details any    `json:"details,omitempty"`
}
