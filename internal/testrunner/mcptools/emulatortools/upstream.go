package emulatortools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"cpesuite/internal/acs/acsclient"
	"cpesuite/internal/platform/apperr"
)

// kindOf maps an upstream status to the error kind the tool reports: the
// caller's mistakes keep their meaning, anything else is the upstream's
// failure.
func kindOf(status int) error {
	switch status {
	case http.StatusBadRequest:
		return apperr.ErrInvalid
	case http.StatusNotFound:
		return apperr.ErrNotFound
	case http.StatusConflict:
		return apperr.ErrConflict
	case http.StatusUnprocessableEntity:
		return apperr.ErrUnprocessable
	case http.StatusServiceUnavailable:
		return apperr.ErrUnavailable
	}
	return apperr.ErrUpstream
}

// transportError describes a request that got no answer: cancelled by the
// caller, timed out, or the service is unreachable. what names the service
// and base where it was looked for.
func transportError(ctx context.Context, code, what, base string, err error) error {
	switch {
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		return apperr.Wrap(apperr.ErrUnavailable, err, "CANCELLED", "the call was cancelled before "+what+" answered")
	case errors.Is(err, context.DeadlineExceeded):
		return apperr.Wrap(apperr.ErrUpstream, err, "TIMEOUT", what+" at "+base+" did not answer in time")
	}
	reason := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		reason = ue.Err.Error() // without the method and URL, named already
	}
	return apperr.Wrap(apperr.ErrUnavailable, err, code, fmt.Sprintf("%s at %s is unreachable (%s)", what, base, reason))
}

// shortText trims an upstream's plain-text answer for an error message.
func shortText(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// emulatorError turns a non-2xx answer of the TR-069 emulator (its body is
// {"error": text}) into a tool error.
func emulatorError(status int, body []byte) error {
	var b struct {
		Error string `json:"error"`
	}
	msg := ""
	if json.Unmarshal(body, &b) == nil {
		msg = b.Error
	}
	if msg == "" {
		msg = shortText(body)
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	kind := kindOf(status)
	code := apperr.Code(kind)
	if kind == apperr.ErrUpstream {
		code = "EMULATOR_ERROR"
	}
	return apperr.New(kind, code, "emulator (HTTP %d): %s", status, msg)
}

// acsError turns an acsclient error into a tool error.
func (s *Server) acsError(ctx context.Context, err error) error {
	var ae *acsclient.Error
	if errors.As(err, &ae) {
		kind := kindOf(ae.Status)
		code := ae.Code
		if code == "" || kind == apperr.ErrUpstream {
			code = "ACS_ERROR"
		}
		return apperr.New(kind, code, "ACS (HTTP %d): %s", ae.Status, ae.Message)
	}
	var ue *url.Error
	if errors.As(err, &ue) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return transportError(ctx, "ACS_UNREACHABLE", "the ACS management API", s.acsBase, err)
	}
	return apperr.Wrap(apperr.ErrUpstream, err, "ACS_ERROR", "the ACS management API gave an answer that could not be read")
}
