// Package filexfer performs the file transfers of the CWMP Download and
// Upload RPCs over HTTP(S).
//
// SKELETON: the exported signatures are the contract the emulator engine is
// written against. Bodies are filled in by the implementation.
package filexfer

import (
	"context"

	"cpesuite/internal/cwmp"
)

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
func Fetch(ctx context.Context, url, username, password string, fileSize uint32, maxBytes int64) Result {
	panic("unimplemented")
}

// Send uploads body (Upload RPC) with HTTP PUT, with credentials when given.
// Failures map to 9011 (upload failure), 9012 (auth), 9013, 9015.
func Send(ctx context.Context, url, username, password string, body []byte) Result {
	panic("unimplemented")
}
