// Package filexfer performs the file transfers of the CWMP Download and
// Upload RPCs over HTTP(S).
//
// Transfers share one HTTP client (connection reuse across emulated CPEs
// is harmless here, unlike in TR-143 measurements). The caller's context
// bounds each transfer; the client only bounds the phases a context
// cannot see stall (connect, TLS handshake, response headers).
package filexfer

import (
	"context"

	"cpesuite/internal/cwmp"
)

// DefaultMaxBytes is Fetch's body bound when maxBytes is 0.
const DefaultMaxBytes = 1 << 30

// Result is the outcome of one transfer: Fault.FaultCode 0 is success.
type Result struct {
	Bytes int64
	Fault cwmp.FaultStruct
}

// Fetch downloads url (Download RPC), discarding the bytes after counting
// them, with Basic/Digest credentials when given. maxBytes bounds the body
// (0: 1 GiB); fileSize, when non-zero, must match. Failures map to 9010
// (transfer failed / unreachable), 9012 (auth), 9013 (unsupported
// protocol), 9015 (server unreachable), 9017 (incomplete), 9018 (size
// mismatch).
//
// In detail: a scheme other than http or https, or a redirect to one, is
// 9013; a failure to resolve or connect is 9015; 401, 403 and 407, and
// credentials the server refuses, are 9012; any other non-2xx answer, a
// body over maxBytes, more than MaxRedirects redirects and an expired
// context before the body are 9010; a body cut short (by the server or the
// context) is 9017; a complete body whose length differs from fileSize is
// 9018. Bytes is the body bytes received, also on failure.
func Fetch(ctx context.Context, url, username, password string, fileSize uint32, maxBytes int64) Result {
	return fetch(ctx, url, username, password, fileSize, maxBytes)
}

// Send uploads body (Upload RPC) with HTTP PUT, with credentials when given.
// Failures map to 9011 (upload failure), 9012 (auth), 9013, 9015.
//
// 9013, 9015 and 9012 as for Fetch; every other failure, a non-2xx answer
// included, is 9011. Bytes is len(body) on success, 0 otherwise.
func Send(ctx context.Context, url, username, password string, body []byte) Result {
	return send(ctx, url, username, password, body)
}
