package wire

import (
	"net/http"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
)

// ErrorWriter writes test-runner errors (gateway and worker alike) as
// {"detail": message, "code": CODE}. Details that are a map[string]any are
// merged at the top level, which gives the note conflict its spec body
// {"detail", "current_version", "expected_version"}.
func ErrorWriter() httpx.ErrorWriter {
	return func(w http.ResponseWriter, _ *http.Request, status int, err error) {
		pub := apperr.Public(err)
		body := map[string]any{"detail": pub.Message, "code": pub.Code}
		if m, ok := pub.Details.(map[string]any); ok {
			for k, v := range m {
				if k != "detail" && k != "code" {
					body[k] = v
				}
			}
		} else if pub.Details != nil {
			body["details"] = pub.Details
		}
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="cpesuite-testrunner"`)
		}
		_ = httpx.WriteJSON(w, status, body)
	}
}
