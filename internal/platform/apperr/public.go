package apperr

import "net/http"

// Status returns the HTTP status for err: the status of its kind, 500 for
// errors of no known kind, and 200 for nil.
func Status(err error) int {
	if err == nil {
		return http.StatusOK
	}
	k, _ := kindOf(err)
	return k.status
}

// Public returns the part of err that may be shown to a client, as a new
// *Error with Kind, Code, Message and Details filled in and no cause. Errors
// of no known kind become a generic internal error, so raw causes (SQL text,
// file paths, DSNs) never reach a response body. Public(nil) is nil.
func Public(err error) *Error {
	if err == nil {
		return nil
	}
	k, known := kindOf(err)
	pub := &Error{Kind: k.err, Code: k.code, Message: k.err.Error()}
	if !known {
		return pub
	}
	if e, ok := As(err); ok {
		if e.Code != "" {
			pub.Code = e.Code
		}
		if e.Message != "" {
			pub.Message = e.Message
		}
		pub.Details = e.Details
	}
	return pub
}

// PublicMessage returns the user-safe message of err; "internal server
// error" for errors of no known kind.
func PublicMessage(err error) string {
	if err == nil {
		return ""
	}
	return Public(err).Message
}

// Code returns the machine code of err: the *Error's Code, else the default
// code of its kind, else "INTERNAL".
func Code(err error) string {
	if err == nil {
		return ""
	}
	return Public(err).Code
}
