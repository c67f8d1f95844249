package httpauth

import "context"

// Credentials looks up the password of a user. ok is false for an unknown
// user; err is for a store that could not answer, which the Verifier passes
// on so that the caller can answer 500 or 503 rather than 401.
//
// Digest needs the password itself (or a hash per realm and algorithm), so
// a store that keeps only salted password hashes cannot back a Verifier.
type Credentials interface {
	Lookup(ctx context.Context, username string) (password string, ok bool, err error)
}

// StaticCredentials maps usernames to passwords, for a fixed set of users
// such as the single global account of an ACS.
type StaticCredentials map[string]string

// Lookup implements Credentials.
func (s StaticCredentials) Lookup(_ context.Context, username string) (string, bool, error) {
	p, ok := s[username]
	return p, ok, nil
}

// CredentialsFunc adapts a function to Credentials, typically a lookup of
// per-device credentials in a store.
type CredentialsFunc func(ctx context.Context, username string) (password string, ok bool, err error)

// Lookup implements Credentials.
func (f CredentialsFunc) Lookup(ctx context.Context, username string) (string, bool, error) {
	return f(ctx, username)
}

var (
	_ Credentials = StaticCredentials(nil)
	_ Credentials = CredentialsFunc(nil)
)
