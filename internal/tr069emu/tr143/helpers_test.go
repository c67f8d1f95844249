package tr143

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/logx"
	"cpesuite/internal/speedtest"
)

// testServer is an httptest server that counts the TCP connections it
// accepted.
type testServer struct {
	*httptest.Server
	conns atomic.Int64
}

func startServer(t *testing.T, h http.Handler) *testServer {
	t.Helper()
	ts := &testServer{Server: httptest.NewUnstartedServer(h)}
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			ts.conns.Add(1)
		}
	}
	ts.Start()
	t.Cleanup(ts.Close)
	return ts
}

// startSpeedtest serves our speedtest target: GET /download?size=N and
// POST /upload.
func startSpeedtest(t *testing.T) *testServer {
	t.Helper()
	return startServer(t, speedtestMux(t))
}

func speedtestMux(t *testing.T) *httpx.Mux {
	t.Helper()
	s, err := speedtest.New(speedtest.Config{DefaultBytes: 1_000_000, MaxBytes: speedtest.MaxTransferBytes},
		logx.Discard(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	mux := httpx.NewMux()
	s.Routes(mux)
	return mux
}

// closedPort returns a local port nobody listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// params returns a get function over obj's parameters.
func params(obj string, kv map[string]string) func(string) string {
	return func(name string) string { return kv[name[len(obj):]] }
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var timeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`)

// mustTime parses a TR-143 time and checks that it lies within the run.
func mustTime(t *testing.T, out map[string]string, name string, from, to time.Time) time.Time {
	t.Helper()
	v, ok := out[name]
	if !ok {
		t.Fatalf("%s missing", name)
	}
	if !timeRE.MatchString(v) {
		t.Fatalf("%s = %q, want ISO 8601 UTC with microseconds", name, v)
	}
	ts, err := time.Parse(timeLayout, v)
	if err != nil {
		t.Fatalf("%s = %q: %v", name, v, err)
	}
	if ts.Before(from.Truncate(time.Microsecond)) || ts.After(to) {
		t.Fatalf("%s = %s outside the run [%s, %s]", name, v, formatTime(from), formatTime(to))
	}
	return ts
}

func mustInt(t *testing.T, out map[string]string, name string) int64 {
	t.Helper()
	v, ok := out[name]
	if !ok {
		t.Fatalf("%s missing", name)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		t.Fatalf("%s = %q, want a whole number", name, v)
	}
	return n
}

func ordered(t *testing.T, names []string, times ...time.Time) {
	t.Helper()
	for i := 1; i < len(times); i++ {
		if times[i].Before(times[i-1]) {
			t.Fatalf("%s %s before %s %s", names[i], formatTime(times[i]), names[i-1], formatTime(times[i-1]))
		}
	}
}

// checkKeys wants exactly the names obj+want in out.
func checkKeys(t *testing.T, out map[string]string, obj string, want []string) {
	t.Helper()
	var got, exp []string
	for k := range out {
		got = append(got, k)
	}
	for _, w := range want {
		exp = append(exp, obj+w)
	}
	slices.Sort(got)
	slices.Sort(exp)
	if !slices.Equal(got, exp) {
		t.Fatalf("result names\n got %q\nwant %q", got, exp)
	}
}
