package httpx

import (
	"log/slog"
	"net/http"
	"time"
)

// AccessLog is middleware that logs one line per request at Info level:
// method, path, route pattern, status, body bytes, duration, request id and
// remote address. It logs the path only, never the query string, because
// query strings carry tokens and passwords often enough. The remote address
// is the TCP peer; forwarding headers are not trusted here.
func AccessLog(log *slog.Logger) func(http.Handler) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			tw := Track(w)
			next.ServeHTTP(tw, r)
			status := tw.Status()
			if status == 0 {
				// net/http sends 200 for a handler that wrote nothing.
				status = http.StatusOK
			}
			log.LogAttrs(r.Context(), slog.LevelInfo, "http request",
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.String("route", r.Pattern),
				slog.Int("status", status),
				slog.Int64("bytes", tw.Written()),
				slog.Duration("duration", time.Since(start)),
				slog.String("request_id", requestIDOf(r, tw)),
				slog.String("remote_addr", r.RemoteAddr),
			)
		})
	}
}

// requestIDOf finds the id whether AccessLog runs inside RequestID (context)
// or outside it (only the response header is visible from there).
func requestIDOf(r *http.Request, w http.ResponseWriter) string {
	if id := RequestIDFrom(r.Context()); id != "" {
		return id
	}
	return w.Header().Get(RequestIDHeader)
}
