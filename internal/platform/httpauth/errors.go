package httpauth

import (
	"errors"
	"fmt"
)

// Errors returned by Verifier.Verify. All three mean "answer with a 401
// challenge"; Verifier.Reject does that. Any other error from Verify comes
// from the credential store or the configuration and is a server fault.
var (
	// ErrNoCredentials means the request carried no Authorization header.
	ErrNoCredentials = errors.New("httpauth: no credentials")
	// ErrBadCredentials means the Authorization header was malformed, used an
	// unsupported scheme or parameter, or did not match the credentials.
	ErrBadCredentials = errors.New("httpauth: bad credentials")
	// ErrStale means a Digest response was correct but its nonce has expired
	// (or was forgotten); the challenge then carries stale=true so that the
	// client retries with a fresh nonce without asking its user again.
	ErrStale = errors.New("httpauth: stale nonce")
)

// Errors returned by Client.Do.
var (
	// ErrUnauthorized means the server still answered 401 after the client
	// authenticated: the username or password is wrong.
	ErrUnauthorized = errors.New("httpauth: credentials rejected")
	// ErrNoSupportedChallenge means the server answered 401 without any
	// challenge this client can answer.
	ErrNoSupportedChallenge = errors.New("httpauth: no supported challenge")
	// ErrBodyNotReplayable means the request has a body but no GetBody, so
	// it could not be sent a second time with credentials.
	ErrBodyNotReplayable = errors.New("httpauth: request body cannot be replayed (GetBody is nil)")
)

// badCredentials wraps ErrBadCredentials with a reason. The reason is a
// fixed phrase chosen by this package, never header content, so that
// neither secrets nor attacker-controlled text reach the logs.
func badCredentials(reason string) error {
	return fmt.Errorf("%w: %s", ErrBadCredentials, reason)
}

// isAuthFailure reports whether err asks for a 401 challenge.
func isAuthFailure(err error) bool {
	return errors.Is(err, ErrNoCredentials) || errors.Is(err, ErrBadCredentials) || errors.Is(err, ErrStale)
}
