//go:build !linux

package tr143

import "syscall"

// dscpControl does nothing off Linux: the emulator runs on Linux, and the
// socket options differ elsewhere. DSCP is still validated.
func dscpControl(int) func(network, address string, c syscall.RawConn) error { return nil }
