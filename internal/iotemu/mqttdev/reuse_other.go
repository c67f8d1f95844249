//go:build !unix

package mqttdev

import "syscall"

// reuseAddr does nothing where SO_REUSEADDR means something else (on
// Windows it lets another socket steal a bound port).
func reuseAddr(string, string, syscall.RawConn) error { return nil }
