package tr069emu

import (
	"net/http"
	"regexp"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
)

// The emulator's error vocabulary; the wire body is {"error": text}.
func errf(format string, args ...any) error { return apperr.Invalid("BAD_REQUEST", format, args...) }
func notFound(format string, args ...any) error {
	return apperr.NotFound("NOT_FOUND", format, args...)
}
func conflict(format string, args ...any) error {
	return apperr.Conflict("CONFLICT", format, args...)
}

// writeError is the emulator's error body: an object with an error field
// holding text, as the spec says for every TR-069 emulator failure.
func writeError(w http.ResponseWriter, _ *http.Request, status int, err error) {
	msg := apperr.PublicMessage(err)
	if msg == "" {
		msg = http.StatusText(status)
	}
	_ = httpx.WriteJSON(w, status, map[string]string{"error": msg})
}

// serialRE is what a serial number may look like: it is used in file
// names and URL paths, so nothing else is let through.
var serialRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

func checkSerial(s string) error {
	if s == "" {
		return errf("serial is required")
	}
	if !serialRE.MatchString(s) {
		return errf("serial %q may hold 1 to 64 letters, digits, '.', '_' and '-', starting with a letter or digit", s)
	}
	return nil
}
