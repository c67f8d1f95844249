package testutil

import (
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"
)

// FreeAddr returns a loopback TCP address nobody listens on, for servers a
// test starts on a port of its own.
func FreeAddr(t testing.TB) string {
	t.Helper()
	for range 200 {
		port := freePortLow + rand.IntN(freePortHigh-freePortLow)
		if _, taken := handedOut.LoadOrStore(port, true); taken {
			continue
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		ln.Close()
		return addr
	}
	t.Fatal("no free port found between 20000 and 32000")
	return ""
}

// FreeAddr's ports lie below the kernel's ephemeral range (32768 and up
// on Linux): a port the kernel hands out as :0 is also the one it hands to
// the next outgoing connection of any process, so under a parallel test
// run it was often taken again before the test could bind it. Ports here
// are only ever taken by another test's FreeAddr, which picks at random,
// and never twice in one process.
const (
	freePortLow  = 20000
	freePortHigh = 32000
)

var handedOut sync.Map

// MinDeadline is the shortest time Eventually waits before it gives up. A
// deadline in a test is a safety net against a hang, never a measure of
// speed: a 2-core machine busy with other work can stall a goroutine for
// seconds, and a test that fails then is a flaky test. Speed is measured in
// benchmarks.
const MinDeadline = 60 * time.Second

// Deadline returns within, raised to MinDeadline: the time a test may wait
// for a condition before it calls the wait a hang.
func Deadline(within time.Duration) time.Duration {
	return max(within, MinDeadline)
}

// Eventually polls cond until it holds, failing the test when it still does
// not hold after within, raised to at least MinDeadline (60 s) whatever the
// caller passes: tests wait for conditions, never for fixed times, and the
// deadline only catches a hang. A caller that needs longer (a test that starts
// a whole platform) passes more.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	within = Deadline(within)
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
