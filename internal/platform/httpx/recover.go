package httpx

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"

	"cpesuite/internal/platform/apperr"
)

// Recover is middleware that turns a panic into a 500 written by ew (nil
// means DefaultErrorWriter) with the generic internal error as body, and logs
// the panic value, stack and request id. http.ErrAbortHandler is re-panicked
// because net/http uses it to abort a response silently. A panic after the
// response started is re-panicked as http.ErrAbortHandler, so net/http cuts
// the connection instead of letting a truncated body look complete.
func Recover(log *slog.Logger, ew ErrorWriter) func(http.Handler) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	if ew == nil {
		ew = DefaultErrorWriter
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			tw := Track(w)
			defer func() {
				v := recover()
				if v == nil {
					return
				}
				if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					panic(v)
				}
				log.ErrorContext(r.Context(), "panic while serving request",
					"request_id", RequestIDFrom(r.Context()), "method", r.Method, "path", r.URL.Path,
					"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if tw.Started() {
					panic(http.ErrAbortHandler)
				}
				ew(tw, r, http.StatusInternalServerError, apperr.Public(apperr.Internal(nil)))
			}()
			next.ServeHTTP(tw, r)
		})
	}
}
