package testutil

import (
	"net"
	"testing"
	"time"
)

// FreeAddr returns a loopback TCP address nobody listens on, for servers a
// test starts on a port of its own.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Eventually polls cond until it holds, failing the test after within:
// tests wait for conditions, never for fixed times.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
