package httpx_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testutil"
)

// guarded starts a server whose handler reads the whole body, then waits
// hold (a long-poll) and answers how many bytes it read, or 499 when its
// request context ended first.
func guarded(t *testing.T, stall time.Duration, hold time.Duration) string {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			w.WriteHeader(http.StatusRequestTimeout)
			return
		}
		select {
		case <-time.After(hold):
		case <-r.Context().Done():
			w.WriteHeader(499)
			return
		}
		fmt.Fprint(w, n)
	})
	srv := httptest.NewServer(httpx.BodyDeadline(stall, 4<<10, h))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

func TestBodyDeadlineCutsTrickle(t *testing.T) {
	addr := guarded(t, time.Second, 0)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
	// One byte every 200 ms: always moving, never earning an extension.
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		buf := make([]byte, 512)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
		}
	}()
	// The short stall window above is the case: a trickle never earns an
	// extension however slow the machine, so only this safety net is long.
	deadline := time.After(testutil.MinDeadline)
	for sent := 0; ; sent++ {
		select {
		case <-closed:
			if sent >= 100000 {
				t.Fatal("the whole body went through")
			}
			return
		case <-deadline:
			t.Fatalf("connection still open after %d trickled bytes", sent)
		case <-time.After(200 * time.Millisecond):
			_, _ = c.Write([]byte{'x'})
		}
	}
}

func TestBodyDeadlineLetsWorkThrough(t *testing.T) {
	// window is the stall window under test. The uploads last longer than
	// one window, so they pass only through its extensions, and the
	// long-polls hold past it, so they pass only if it is cleared. It is
	// long against the 40 ms between chunks: a loaded machine would have to
	// stall both ends for seconds to cut a body that keeps moving.
	const window = 5 * time.Second
	tests := []struct {
		name    string
		chunked bool
		size    int
		gap     time.Duration
		hold    time.Duration
	}{
		{"steady upload over several windows", false, 192 * 8 << 10, 40 * time.Millisecond, 0},
		{"chunked steady upload", true, 192 * 8 << 10, 40 * time.Millisecond, 0},
		{"long-poll after a small body", false, 20, 0, window + time.Second},
		{"long-poll after a chunked body", true, 20, 0, window + time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr := guarded(t, window, tt.hold)
			pr, pw := io.Pipe()
			go func() {
				chunk := bytes.Repeat([]byte("y"), 8<<10)
				for left := tt.size; left > 0; left -= len(chunk) {
					if left < len(chunk) {
						chunk = chunk[:left]
					}
					if _, err := pw.Write(chunk); err != nil {
						return
					}
					time.Sleep(tt.gap)
				}
				pw.Close()
			}()
			req, _ := http.NewRequest("POST", "http://"+addr+"/", pr)
			if !tt.chunked {
				req.ContentLength = int64(tt.size)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || string(got) != fmt.Sprint(tt.size) {
				t.Fatalf("got %d %q, want 200 %d", resp.StatusCode, got, tt.size)
			}
		})
	}
}

func TestBodyDeadlineLeavesBodilessRequests(t *testing.T) {
	addr := guarded(t, 500*time.Millisecond, 2*time.Second)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	_ = c.SetReadDeadline(time.Now().Add(testutil.MinDeadline))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != "0" {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
}
