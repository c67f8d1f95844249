package apperr

import (
	"errors"
	"fmt"
)

// Error is an application error: a kind for the status, a machine code and a
// user-safe message for the client, and an internal cause for the logs.
type Error struct {
	// Kind is one of the sentinels of this package (ErrNotFound, ...).
	Kind error
	// Code is a machine-readable code such as "EMULATOR_NOT_STOPPED".
	// Empty means the default code of Kind.
	Code string
	// Message is shown to clients, so it must never contain internals.
	// Empty means the text of Kind.
	Message string
	// Details is optional structured, user-safe data for the wire body.
	Details any
	// Err is the internal cause. It is logged, never shown.
	Err error
}

// Error returns the message followed by the internal cause; it is meant for
// logs. Use PublicMessage for anything a client sees.
func (e *Error) Error() string {
	msg := e.Message
	if msg == "" && e.Kind != nil {
		msg = e.Kind.Error()
	}
	if e.Err == nil {
		return msg
	}
	if msg == "" {
		return e.Err.Error()
	}
	return msg + ": " + e.Err.Error()
}

// Unwrap returns the kind and the cause, so that errors.Is matches both the
// sentinel and anything in the cause chain.
func (e *Error) Unwrap() []error {
	errs := make([]error, 0, 2)
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// WithDetails returns a copy of e carrying details. Copying keeps shared
// error values (package-level vars) from being mutated by one request.
func (e *Error) WithDetails(details any) *Error {
	c := *e
	c.Details = details
	return &c
}

// New returns an error of the given kind with a formatted, user-safe message.
// The constructors forward to fmt.Sprintf so that go vet checks their format
// strings; write a literal percent sign as "%%".
func New(kind error, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an error of the given kind whose internal cause is cause.
// msg is what the client sees; cause is only logged.
func Wrap(kind, cause error, code, msg string) *Error {
	return &Error{Kind: kind, Code: code, Message: msg, Err: cause}
}

// Invalid returns an ErrInvalid (400) error.
func Invalid(code, format string, args ...any) *Error {
	return &Error{Kind: ErrInvalid, Code: code, Message: fmt.Sprintf(format, args...)}
}

// NotFound returns an ErrNotFound (404) error.
func NotFound(code, format string, args ...any) *Error {
	return &Error{Kind: ErrNotFound, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Conflict returns an ErrConflict (409) error.
func Conflict(code, format string, args ...any) *Error {
	return &Error{Kind: ErrConflict, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Internal returns an ErrInternal (500) error with the generic public message
// and cause as the logged reason. cause may be nil.
func Internal(cause error) *Error {
	return &Error{Kind: ErrInternal, Err: cause}
}

// As returns the outermost *Error in err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
