package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/testutil"
)

// TestUpCutsStalledRequestsOnEveryPort holds every HTTP listener of `up` to
// the read deadlines built in one place (httpx.NewServer): a header or a body
// that trickles in without real progress is hung up on, so slow clients
// cannot pile up open connections until the process runs out of files.
func TestUpCutsStalledRequestsOnEveryPort(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED, NOT TESTED: waits out the 30 s body stall deadline (-short)")
	}
	env := map[string]string{"CPESUITE_DATA_DIR": t.TempDir(), "CPESUITE_LOG_FORMAT": "json",
		"CPESUITE_IOT_EMULATOR_BROKER_ADDR": testutil.FreeAddr(t)}
	ports := map[string]string{}
	m := newModules(nil, nil)
	for _, l := range Listeners {
		if !m.IsTarget(l.Target) {
			continue // planned, not implemented
		}
		addr := testutil.FreeAddr(t)
		env[l.Env()] = addr
		ports[l.Flag()] = addr
	}
	ctx, cancel := context.WithCancel(context.Background())
	var errb testutil.SyncBuffer
	done := make(chan int, 1)
	go func() { done <- CLI(ctx, []string{"up"}, io.Discard, &errb, envMap(env)) }()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(platformDeadline):
			t.Error("up did not stop")
		}
	}()
	testutil.Eventually(t, platformDeadline, "all modules ready", func() bool { return strings.Contains(errb.String(), `"all modules ready"`) })

	stalls := map[string]string{
		// Content-Length under net/http's 256 KiB post-handler discard, so
		// even a handler that never reads the body leaves the server reading it.
		"body":   "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\nContent-Length: 100000\r\n\r\n<",
		"header": "POST / HTTP/1.1\r\nHost: x\r\nX-Slow: ",
	}
	var wg sync.WaitGroup
	for flag, addr := range ports {
		for kind, start := range stalls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := trickleUntilClosed(addr, start, 3*time.Minute); err != nil {
					t.Errorf("%s (%s), stalled %s: %v", flag, addr, kind, err)
				}
			}()
		}
	}
	wg.Wait()
}

// trickleUntilClosed sends start, then one byte every second, and returns nil
// once the server closes the connection, or an error at the safety deadline.
func trickleUntilClosed(addr, start string, limit time.Duration) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := io.WriteString(c, start); err != nil {
		return err
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		buf := make([]byte, 1024)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
		}
	}()
	safety := time.After(limit)
	for sent := 0; ; sent++ {
		select {
		case <-closed:
			return nil
		case <-safety:
			return fmt.Errorf("still open after %d trickled bytes", sent)
		case <-time.After(time.Second):
			_, _ = c.Write([]byte{'a'})
		}
	}
}
