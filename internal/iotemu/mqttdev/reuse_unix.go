//go:build unix

package mqttdev

import "syscall"

// reuseAddr sets SO_REUSEADDR before bind. A device with a fixed
// clientPort that closes its connection first leaves that local port in
// TIME_WAIT for about a minute; without the option the next connect of a
// restarted device fails with "address already in use".
func reuseAddr(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	})
	if err != nil {
		return err
	}
	return serr
}
