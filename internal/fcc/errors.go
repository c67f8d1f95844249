package fcc

import (
	"errors"
	"fmt"
	"net/http"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
)

// codeIdentity is the code of the 403 raised when the identity headers are
// missing or unparseable. The spec leaves its value open and says only that
// it differs from 9403 (the one code whose last three digits do not equal
// the status); 9401 reads as "not identified", which is what it means.
const codeIdentity = "9401"

// ErrorBody is the service's error wire shape.
type ErrorBody struct {
	Code        int    `json:"code"`
	Message     string `json:"message"`
	Description string `json:"description"`
}

// description is an error's Details value when it carries the longer text
// of the body's description field.
type description string

func describe(format string, args ...any) description {
	return description(fmt.Sprintf(format, args...))
}

// Error constructors in the service's vocabulary.
func invalid(format string, args ...any) error  { return apperr.Invalid("", format, args...) }
func notFound(format string, args ...any) error { return apperr.NotFound("", format, args...) }
func conflict(format string, args ...any) error { return apperr.Conflict("", format, args...) }
func denied(format string, args ...any) error {
	return apperr.New(apperr.ErrForbidden, "", format, args...)
}

// tooLarge is the 413 whose description names the configured maximum.
func tooLarge(limit int64) error {
	e := apperr.New(apperr.ErrTooLarge, "", "upload larger than the multipart limit")
	if limit > 0 {
		e.Details = describe("the maximum upload size is %d bytes (FCC_SERIAL_FILE_MAX_SIZE)", limit)
	} else {
		e.Details = description("the upload exceeds the configured maximum size")
	}
	return e
}

// errorCode is the FT-range code of a status: 9 followed by the status,
// except the identity 403 which carries its own code.
func errorCode(status int, err error) int {
	if e, ok := apperr.As(err); ok && e.Code == codeIdentity {
		return 9401
	}
	return 9000 + status
}

// writeError renders every failure of /FCC as {code, message, description}.
// 5xx messages are generic: the adapter has already logged the cause.
func writeError(w http.ResponseWriter, _ *http.Request, status int, err error) {
	body := ErrorBody{Code: errorCode(status, err), Message: apperr.PublicMessage(err)}
	if status >= 500 || body.Message == "" {
		body.Message = http.StatusText(status)
	}
	var e *apperr.Error
	if errors.As(err, &e) {
		if d, ok := e.Details.(description); ok {
			body.Description = string(d)
		}
	}
	if body.Description == "" {
		body.Description = http.StatusText(status)
	}
	if status >= 500 {
		body.Description = "the service could not complete the request; the request id names it in the service log"
	}
	_ = httpx.WriteJSON(w, status, body)
}

// ErrorWriter is the adapter's error writer, for the module's middleware.
func ErrorWriter() httpx.ErrorWriter { return writeError }
