package tr143

import (
	"strings"
	"syscall"
)

// dscpControl marks a socket's traffic with a DSCP value (the upper six
// bits of the IPv4 TOS / IPv6 traffic class). Marking is best effort: a
// refused setsockopt must not fail the diagnostic, as a CPE whose queueing
// ignores DSCP still runs the test.
func dscpControl(dscp int) func(network, address string, c syscall.RawConn) error {
	if dscp == 0 {
		return nil
	}
	return func(network, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) {
			if strings.HasSuffix(network, "6") {
				_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IPV6, syscall.IPV6_TCLASS, dscp<<2)
				return
			}
			_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_TOS, dscp<<2)
		})
	}
}
