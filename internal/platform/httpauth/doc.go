// Package httpauth implements HTTP Basic (RFC 7617) and Digest (RFC 7616)
// authentication on both sides of a connection.
//
// The server side is a Verifier: it issues challenges, checks Authorization
// headers against a Credentials store and can wrap a handler as middleware.
// Digest nonces are stateless (a timestamp and random bytes signed with an
// HMAC key), so any number of Verifiers sharing a Key accept each other's
// nonces; only nonce-count replay tracking is per Verifier.
//
//	v := &httpauth.Verifier{
//		Realm:  "cpesuite",
//		Digest: true,
//		Creds:  httpauth.StaticCredentials{"cpe": "secret"},
//	}
//	mux.Handle("POST /acs", v.Middleware(acsHandler))
//
// The client side is a Client: it sends a request, answers a 401 with the
// strongest challenge it supports (Digest SHA-512-256, SHA-256, then MD5, then
// Basic) and retries.
//
//	c := &httpauth.Client{Username: "acs", Password: "secret"}
//	resp, err := c.Do(req) // errors.Is(err, httpauth.ErrUnauthorized) on bad credentials
//
// Both sides share the header parsers ParseChallenges and
// ParseDigestAuthorization, which accept untrusted input.
package httpauth
