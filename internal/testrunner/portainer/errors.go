package portainer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"

	"cpesuite/internal/platform/apperr"
)

// maxBody caps every response body we read from Portainer.
const maxBody = 1 << 20

// maxErrorBody caps what we keep of an error body for the logs.
const maxErrorBody = 4 << 10

var errTooLarge = fmt.Errorf("response body larger than %d bytes", maxBody)

// StatusError is the logged cause of a non-2xx answer: the status and what
// Portainer said. It matches apperr.ErrNotFound for 404 and
// apperr.ErrConflict for 409 through errors.Is.
type StatusError struct {
	Status  int
	Message string // Portainer's "message"
	Details string // Portainer's "details"
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("Portainer answered HTTP %d", e.Status)
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Details != "" && e.Details != e.Message {
		s += " (" + e.Details + ")"
	}
	return s
}

// Unwrap lets callers tell a missing or conflicting object from a broken
// Portainer without parsing messages.
func (e *StatusError) Unwrap() error {
	switch e.Status {
	case 404:
		return apperr.ErrNotFound
	case 409:
		return apperr.ErrConflict
	}
	return nil
}

// statusError turns a non-2xx answer into an ErrUpstream error. The body is
// Portainer's {"message","details"} or the Docker proxy's {"message"}; any
// other body is kept as text. Secrets are scrubbed from what is kept.
func (c *Client) statusError(op string, status int, body []byte) error {
	cause := &StatusError{Status: status}
	var pe struct {
		Message string `json:"message"`
		Details string `json:"details"`
	}
	if json.Unmarshal(body, &pe) == nil && (pe.Message != "" || pe.Details != "") {
		cause.Message, cause.Details = c.redact(pe.Message), c.redact(pe.Details)
	} else {
		cause.Message = c.redact(strings.TrimSpace(string(body)))
	}
	return apperr.Wrap(apperr.ErrUpstream, cause, "", fmt.Sprintf("Portainer: %s: HTTP %d", op, status))
}

// transportError turns a failure to talk to Portainer (refused, timed out,
// cut off, oversized or unreadable body) into an ErrUpstream error.
func (c *Client) transportError(op string, err error) error {
	what := "unreachable"
	var ne net.Error
	switch {
	case errors.Is(err, errTooLarge):
		what = "response too large"
	case errors.Is(err, context.Canceled):
		what = "canceled"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		what = "timed out"
	}
	return apperr.Wrap(apperr.ErrUpstream, redacted{err, c.redact(err.Error())}, "", fmt.Sprintf("Portainer: %s: %s", op, what))
}

// decodeError reports a 2xx body that is not the JSON we expect.
func (c *Client) decodeError(op string, err error) error {
	return apperr.Wrap(apperr.ErrUpstream, redacted{err, c.redact(err.Error())}, "", fmt.Sprintf("Portainer: %s: unreadable response", op))
}

// redacted keeps the chain of err for errors.Is while printing scrubbed text.
type redacted struct {
	err  error
	text string
}

func (r redacted) Error() string { return r.text }
func (r redacted) Unwrap() error { return r.err }

// minSecretLen is the shortest secret scrubbed from texts; shorter strings
// would mangle every message they happen to occur in.
const minSecretLen = 4

// redact removes the password, the API key and the JWTs we hold from s.
// Portainer has no reason to echo them, but a proxy in front of it might.
func (c *Client) redact(s string) string {
	c.mu.Lock()
	secrets := []string{c.cfg.Password, c.cfg.APIKey, c.jwt, c.staleJWT}
	c.mu.Unlock()
	for _, sec := range secrets {
		if len(sec) >= minSecretLen {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return s
}
