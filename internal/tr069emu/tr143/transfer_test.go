package tr143

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestObjectAndKindOf(t *testing.T) {
	cases := []struct {
		dm   string
		kind Kind
		obj  string
	}{
		{TR098, Download, "InternetGatewayDevice.DownloadDiagnostics."},
		{TR098, Upload, "InternetGatewayDevice.UploadDiagnostics."},
		{TR098, IPPing, "InternetGatewayDevice.IPPingDiagnostics."},
		{TR181, Download, "Device.IP.Diagnostics.DownloadDiagnostics."},
		{TR181, Upload, "Device.IP.Diagnostics.UploadDiagnostics."},
		{TR181, IPPing, "Device.IP.Diagnostics.IPPing."},
	}
	for _, c := range cases {
		if got := Object(c.dm, c.kind); got != c.obj {
			t.Errorf("Object(%s, %d) = %q, want %q", c.dm, c.kind, got, c.obj)
		}
		k, dm, ok := KindOf(c.obj + "DiagnosticsState")
		if !ok || k != c.kind || dm != c.dm {
			t.Errorf("KindOf(%sDiagnosticsState) = %d, %q, %v", c.obj, k, dm, ok)
		}
	}
	for _, name := range []string{"", "Device.IP.Diagnostics.IPPing.", "Device.IP.Diagnostics.IPPing.Host",
		"Device.IP.Diagnostics.TraceRoute.DiagnosticsState", "InternetGatewayDevice.DownloadDiagnostics.DiagnosticsStateX"} {
		if _, _, ok := KindOf(name); ok {
			t.Errorf("KindOf(%q) ok", name)
		}
	}
	if got := Object("TR-106", Download); got != "" {
		t.Errorf("Object(TR-106) = %q", got)
	}
	if got := Object(TR181, Kind(9)); got != "" {
		t.Errorf("Object(kind 9) = %q", got)
	}
	if out := Run(testCtx(t), "TR-106", Download, nil, Options{}); len(out) != 0 {
		t.Errorf("Run on an unknown data model = %v", out)
	}
}

// wantTransferKeys lists the results of a successful transfer.
func wantTransferKeys(dm string, kind Kind, conns int, perConn, timeBased bool) []string {
	base := []string{"DiagnosticsState", "ROMTime", "BOMTime", "EOMTime", "TCPOpenRequestTime", "TCPOpenResponseTime"}
	var figures []string
	switch {
	case kind == Download && dm == TR098:
		figures = []string{"TestBytesReceived", "TotalBytesReceived"}
	case kind == Download:
		figures = []string{"TestBytesReceived", "TotalBytesReceived", "TotalBytesSent"}
	case dm == TR098:
		figures = []string{"TotalBytesSent"}
	default:
		figures = []string{"TestBytesSent", "TotalBytesReceived", "TotalBytesSent"}
	}
	keys := append(append([]string{}, base...), figures...)
	if kind == Upload && !timeBased {
		keys = append(keys, "TestFileLength")
	}
	if dm == TR181 {
		keys = append(keys, "PerConnectionResultNumberOfEntries")
		if perConn {
			for i := 1; i <= conns; i++ {
				for _, k := range append(base[1:], figures...) {
					keys = append(keys, fmt.Sprintf("PerConnectionResult.%d.%s", i, k))
				}
			}
		}
	}
	return keys
}

// checkTransfer checks a completed transfer's figures: times within the
// run and in TR-143 order, and payloads counted in full. It returns the
// test bytes (received or sent).
func checkTransfer(t *testing.T, out map[string]string, prefix string, kind Kind, dm string, from, to time.Time, single bool) int64 {
	t.Helper()
	names := []string{"TCPOpenRequestTime", "TCPOpenResponseTime", "ROMTime", "BOMTime", "EOMTime"}
	var ts []time.Time
	for _, n := range names {
		ts = append(ts, mustTime(t, out, prefix+n, from, to))
	}
	if single {
		ordered(t, names, ts...)
	} else {
		// Aggregates take the latest TCP open times but the earliest ROM.
		ordered(t, names[:2], ts[:2]...)
		ordered(t, names[2:], ts[2:]...)
	}
	if kind == Download {
		test, total := mustInt(t, out, prefix+"TestBytesReceived"), mustInt(t, out, prefix+"TotalBytesReceived")
		if total < test {
			t.Fatalf("TotalBytesReceived %d < TestBytesReceived %d", total, test)
		}
		if dm == TR181 && mustInt(t, out, prefix+"TotalBytesSent") == 0 {
			t.Fatal("TotalBytesSent 0: the GET was not counted")
		}
		return test
	}
	sent := mustInt(t, out, prefix+"TotalBytesSent")
	if dm == TR098 {
		return sent
	}
	test := mustInt(t, out, prefix+"TestBytesSent")
	if sent < test {
		t.Fatalf("TotalBytesSent %d < TestBytesSent %d", sent, test)
	}
	if mustInt(t, out, prefix+"TotalBytesReceived") == 0 {
		t.Fatal("TotalBytesReceived 0: the answer was not counted")
	}
	return test
}

func TestTransfers(t *testing.T) {
	const (
		downloadSize = 300_000 // per connection
		uploadLength = 300_001 // split across connections
	)
	cases := []struct {
		dm      string
		kind    Kind
		conns   int
		perConn bool
	}{
		{TR098, Download, 1, false},
		{TR181, Download, 1, false},
		{TR181, Download, 1, true},
		{TR181, Download, 3, false},
		{TR181, Download, 3, true},
		{TR098, Upload, 1, false},
		{TR181, Upload, 1, true},
		{TR181, Upload, 3, false},
		{TR181, Upload, 3, true},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%d/conns=%d/perConn=%v", c.dm, c.kind, c.conns, c.perConn), func(t *testing.T) {
			t.Parallel()
			srv := startSpeedtest(t)
			obj := Object(c.dm, c.kind)
			in := map[string]string{"DownloadURL": srv.URL + "/download?size=" + strconv.Itoa(downloadSize),
				"UploadURL": srv.URL + "/upload", "TestFileLength": strconv.Itoa(uploadLength)}
			in["DSCP"] = "10"
			if c.dm == TR181 {
				in["NumberOfConnections"] = strconv.Itoa(c.conns)
				in["EnablePerConnectionResults"] = strconv.FormatBool(c.perConn)
			}
			from := time.Now()
			out := Run(testCtx(t), c.dm, c.kind, params(obj, in), Options{})
			to := time.Now()
			if got := out[obj+"DiagnosticsState"]; got != StateCompleted {
				t.Fatalf("DiagnosticsState %q, results %v", got, out)
			}
			checkKeys(t, out, obj, wantTransferKeys(c.dm, c.kind, c.conns, c.perConn, false))
			if got := srv.conns.Load(); got != int64(c.conns) {
				t.Fatalf("server saw %d TCP connections, want %d", got, c.conns)
			}
			test := checkTransfer(t, out, obj, c.kind, c.dm, from, to, c.conns == 1)
			payload := int64(downloadSize * c.conns)
			if c.kind == Upload {
				payload = uploadLength
				if got := out[obj+"TestFileLength"]; got != strconv.Itoa(uploadLength) {
					t.Fatalf("TestFileLength %q", got)
				}
			}
			if test <= payload {
				t.Fatalf("test bytes %d, want the payload %d plus HTTP headers", test, payload)
			}
			if c.dm != TR181 {
				return
			}
			entries := mustInt(t, out, obj+"PerConnectionResultNumberOfEntries")
			if !c.perConn {
				if entries != 0 {
					t.Fatalf("PerConnectionResultNumberOfEntries %d without EnablePerConnectionResults", entries)
				}
				return
			}
			if entries != int64(c.conns) {
				t.Fatalf("PerConnectionResultNumberOfEntries %d, want %d", entries, c.conns)
			}
			var sum int64
			for i := 1; i <= c.conns; i++ {
				pc := fmt.Sprintf("%sPerConnectionResult.%d.", obj, i)
				n := checkTransfer(t, out, pc, c.kind, c.dm, from, to, true)
				share := int64(downloadSize)
				if c.kind == Upload {
					share = uploadShare(uploadLength, c.conns, i-1)
				}
				if n <= share {
					t.Fatalf("connection %d: test bytes %d, want its share %d plus headers", i, n, share)
				}
				sum += n
			}
			if sum != test {
				t.Fatalf("per-connection test bytes sum to %d, aggregate %d", sum, test)
			}
		})
	}
}

func TestUploadShare(t *testing.T) {
	var sum int64
	for i := range 3 {
		sum += uploadShare(10, 3, i)
	}
	if sum != 10 || uploadShare(10, 3, 0) != 4 || uploadShare(10, 3, 2) != 3 || uploadShare(2, 3, 2) != 0 {
		t.Fatal("uploadShare does not split 10 bytes as 4+3+3")
	}
}

func TestTimeBased(t *testing.T) {
	cases := []struct {
		kind  Kind
		conns int
		size  int // download resource size
	}{
		{Download, 1, 1_000_000_000},
		{Download, 2, 1_000_000_000},
		// A small resource is requested again and again on the same
		// connection until the duration is over.
		{Download, 2, 1000},
		{Upload, 1, 0},
		{Upload, 3, 0},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d/conns=%d/size=%d", c.kind, c.conns, c.size), func(t *testing.T) {
			t.Parallel()
			// Loopback outruns the speedtest target's 1 GB upload limit
			// within a second; this upload endpoint has none.
			var received atomic.Int64
			mux := speedtestMux(t)
			srv := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/upload" {
					mux.ServeHTTP(w, r)
					return
				}
				n, _ := io.Copy(io.Discard, r.Body)
				received.Add(n)
				_, _ = w.Write([]byte(`{"bytes":` + strconv.FormatInt(n, 10) + `}`))
			}))
			obj := Object(TR181, c.kind)
			in := map[string]string{"DownloadURL": srv.URL + "/download?size=" + strconv.Itoa(c.size),
				"UploadURL": srv.URL + "/upload", "TestFileLength": "5", "TimeBasedTestDuration": "1",
				"NumberOfConnections": strconv.Itoa(c.conns), "EnablePerConnectionResults": "1"}
			from := time.Now()
			out := Run(testCtx(t), TR181, c.kind, params(obj, in), Options{})
			to := time.Now()
			if got := out[obj+"DiagnosticsState"]; got != StateCompleted {
				t.Fatalf("DiagnosticsState %q, results %v", got, out)
			}
			if to.Sub(from) < time.Second {
				t.Fatalf("a 1 s time-based test took %s", to.Sub(from))
			}
			checkKeys(t, out, obj, wantTransferKeys(TR181, c.kind, c.conns, true, true))
			test := checkTransfer(t, out, obj, c.kind, TR181, from, to, c.conns == 1)
			// A resource smaller than a second's worth is fetched again and
			// again; a large one is cut at the deadline.
			if want := int64(min(c.size, 1000) * c.conns); test <= want {
				t.Fatalf("test bytes %d, want more than %d", test, want)
			}
			if c.kind == Upload && (received.Load() == 0 || test <= received.Load()) {
				t.Fatalf("test bytes sent %d, server received a body of %d", test, received.Load())
			}
			if got := srv.conns.Load(); got != int64(c.conns) {
				t.Fatalf("server saw %d TCP connections, want %d", got, c.conns)
			}
		})
	}
}

func TestTransferErrors(t *testing.T) {
	// Stalled handlers end with the test even if the server never notices
	// that the client went away (it does not while a body is unread).
	done := make(chan struct{})
	stall := func(r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}
	srv := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			http.NotFound(w, r)
		case "/short":
			w.Header().Set("Content-Length", "1000")
			_, _ = w.Write(make([]byte, 500))
		case "/hangup":
			c, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				_ = c.Close()
			}
		case "/stall":
			stall(r)
		case "/stall-body":
			w.Header().Set("Content-Length", "1000")
			_, _ = w.Write(make([]byte, 10))
			_ = http.NewResponseController(w).Flush()
			stall(r)
		case "/fail":
			_, _ = io.Copy(io.Discard, r.Body)
			http.Error(w, "no", http.StatusInternalServerError)
		default:
			_, _ = io.Copy(io.Discard, r.Body)
			_, _ = w.Write([]byte("ok"))
		}
	}))
	t.Cleanup(func() { close(done) })
	refused := "http://" + closedPort(t) + "/"
	bad := map[string]string{TR098: StateInitConnectionFailed, TR181: StateOther}
	cases := []struct {
		name  string
		kind  Kind
		in    map[string]string
		opt   Options
		state map[string]string // by data model
	}{
		{"refused", Download, map[string]string{"DownloadURL": refused}, Options{}, nil},
		{"refused upload", Upload, map[string]string{"UploadURL": refused, "TestFileLength": "10"}, Options{}, nil},
		{"dns", Download, map[string]string{"DownloadURL": "http://nohost.invalid/x"}, Options{}, nil},
		{"dns upload", Upload, map[string]string{"UploadURL": "http://nohost.invalid/x", "TestFileLength": "10"}, Options{}, nil},
		{"ftp scheme", Download, map[string]string{"DownloadURL": "ftp://127.0.0.1/x"}, Options{}, bad},
		{"https scheme", Upload, map[string]string{"UploadURL": "https://127.0.0.1/x"}, Options{}, bad},
		{"empty URL", Download, map[string]string{}, Options{}, bad},
		{"no host", Download, map[string]string{"DownloadURL": "http:///x"}, Options{}, bad},
		{"404", Download, map[string]string{"DownloadURL": srv.URL + "/missing"}, Options{}, nil},
		{"500 upload", Upload, map[string]string{"UploadURL": srv.URL + "/fail", "TestFileLength": "1000"}, Options{}, nil},
		{"short body", Download, map[string]string{"DownloadURL": srv.URL + "/short"}, Options{}, nil},
		{"hang-up", Download, map[string]string{"DownloadURL": srv.URL + "/hangup"}, Options{}, nil},
		{"hang-up upload", Upload, map[string]string{"UploadURL": srv.URL + "/hangup", "TestFileLength": "10"}, Options{}, nil},
		{"stall", Download, map[string]string{"DownloadURL": srv.URL + "/stall"}, Options{Timeout: 200 * time.Millisecond}, nil},
		{"stall body", Download, map[string]string{"DownloadURL": srv.URL + "/stall-body"}, Options{Timeout: 200 * time.Millisecond}, nil},
		{"stall upload", Upload, map[string]string{"UploadURL": srv.URL + "/stall", "TestFileLength": "10"}, Options{Timeout: 200 * time.Millisecond}, nil},
		{"bad DSCP", Download, map[string]string{"DownloadURL": srv.URL, "DSCP": "64"}, Options{}, bad},
		{"bad length", Upload, map[string]string{"UploadURL": srv.URL, "TestFileLength": "-1"}, Options{}, bad},
	}
	want := map[string]string{
		"refused": StateInitConnectionFailed, "refused upload": StateInitConnectionFailed,
		"dns": StateCannotResolveHostName, "dns upload": StateCannotResolveHostName,
		"404": StateTransferFailed, "500 upload": StateTransferFailed, "short body": StateIncorrectSize,
		"hang-up": StateNoResponse, "hang-up upload": StateNoResponse,
		"stall": StateTimeout, "stall body": StateTimeout, "stall upload": StateTimeout,
	}
	for _, c := range cases {
		for _, dm := range []string{TR098, TR181} {
			t.Run(c.name+"/"+dm, func(t *testing.T) {
				t.Parallel()
				obj := Object(dm, c.kind)
				out := Run(testCtx(t), dm, c.kind, params(obj, c.in), c.opt)
				w := want[c.name]
				if c.state != nil {
					w = c.state[dm]
				}
				if got := out[obj+"DiagnosticsState"]; got != w {
					t.Fatalf("DiagnosticsState %q, want %q", got, w)
				}
				checkFailure(t, out, obj, dm, c.kind)
			})
		}
	}
}

// checkFailure checks that a failed run resets every result.
func checkFailure(t *testing.T, out map[string]string, obj, dm string, kind Kind) {
	t.Helper()
	keys := wantTransferKeys(dm, kind, 0, false, true)
	checkKeys(t, out, obj, keys)
	for _, k := range keys[1:] {
		v := out[obj+k]
		if v != "0" && v != unknownTime {
			t.Fatalf("%s = %q after a failure, want it reset", k, v)
		}
	}
}

func TestOneFailingConnectionFailsTheTest(t *testing.T) {
	var n atomic.Int64
	srv := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write(make([]byte, 100_000))
	}))
	obj := Object(TR181, Download)
	out := Run(testCtx(t), TR181, Download, params(obj, map[string]string{"DownloadURL": srv.URL,
		"NumberOfConnections": "3", "EnablePerConnectionResults": "true"}), Options{})
	if got := out[obj+"DiagnosticsState"]; got != StateTransferFailed {
		t.Fatalf("DiagnosticsState %q", got)
	}
	checkFailure(t, out, obj, TR181, Download)
}

func TestConnectionsCapped(t *testing.T) {
	srv := startSpeedtest(t)
	obj := Object(TR181, Download)
	out := Run(testCtx(t), TR181, Download, params(obj, map[string]string{"DownloadURL": srv.URL + "/download?size=10",
		"NumberOfConnections": "1000", "EnablePerConnectionResults": "1"}), Options{})
	if got := out[obj+"DiagnosticsState"]; got != StateCompleted {
		t.Fatalf("DiagnosticsState %q", got)
	}
	if got := out[obj+"PerConnectionResultNumberOfEntries"]; got != strconv.Itoa(MaxConnections) {
		t.Fatalf("PerConnectionResultNumberOfEntries %q, want %d", got, MaxConnections)
	}
	if got := srv.conns.Load(); got != MaxConnections {
		t.Fatalf("server saw %d connections", got)
	}
}

// speed is a transfer's measured speed in bytes per second, as an ACS
// computes it: test bytes over EOM - BOM.
func speed(t *testing.T, out map[string]string, obj string, kind Kind, dm string) float64 {
	t.Helper()
	if got := out[obj+"DiagnosticsState"]; got != StateCompleted {
		t.Fatalf("DiagnosticsState %q, results %v", got, out)
	}
	bom, err1 := time.Parse(timeLayout, out[obj+"BOMTime"])
	eom, err2 := time.Parse(timeLayout, out[obj+"EOMTime"])
	if err1 != nil || err2 != nil || !eom.After(bom) {
		t.Fatalf("BOM %q, EOM %q: want EOM after BOM", out[obj+"BOMTime"], out[obj+"EOMTime"])
	}
	name := "TestBytesReceived"
	if kind == Upload {
		name = "TestBytesSent"
		if dm == TR098 {
			name = "TotalBytesSent"
		}
	}
	return float64(mustInt(t, out, obj+name)) / eom.Sub(bom).Seconds()
}

// TestSpeedDelayThrottles holds makeSpeedDelay's throttle against the real
// speedtest target: the same test with the delay measures far slower, in
// BOM/EOM and, in a time-based window, in bytes. The delay is chosen to
// make a loopback transfer hundreds of times slower; the test asks for 2x,
// a margin no loaded machine can eat.
func TestSpeedDelayThrottles(t *testing.T) {
	const delay = 500 * time.Millisecond
	srv := startSpeedtest(t)
	// Unthrottled, loopback can outrun the target's 1 GB upload limit in a
	// one-second window; this sink has none.
	sink := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		_, _ = w.Write([]byte(`{"bytes":` + strconv.FormatInt(n, 10) + `}`))
	}))
	cases := []struct {
		name  string
		dm    string
		kind  Kind
		in    map[string]string
		timed bool
	}{
		{"TR-098/download", TR098, Download, map[string]string{"DownloadURL": srv.URL + "/download?size=2000000"}, false},
		{"TR-098/upload", TR098, Upload, map[string]string{"UploadURL": srv.URL + "/upload", "TestFileLength": "2000000"}, false},
		{"TR-181/download", TR181, Download, map[string]string{"DownloadURL": srv.URL + "/download?size=2000000"}, false},
		{"TR-181/upload", TR181, Upload, map[string]string{"UploadURL": srv.URL + "/upload", "TestFileLength": "2000000"}, false},
		{"TR-181/download/3 connections", TR181, Download, map[string]string{"DownloadURL": srv.URL + "/download?size=2000000", "NumberOfConnections": "3"}, false},
		{"TR-181/upload/3 connections", TR181, Upload, map[string]string{"UploadURL": srv.URL + "/upload", "TestFileLength": "6000000", "NumberOfConnections": "3"}, false},
		{"TR-181/download/time based", TR181, Download, map[string]string{"DownloadURL": srv.URL + "/download?size=1000000000", "TimeBasedTestDuration": "1"}, true},
		{"TR-181/upload/time based", TR181, Upload, map[string]string{"UploadURL": sink.URL + "/upload", "TimeBasedTestDuration": "1"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			obj := Object(c.dm, c.kind)
			var (
				mu    sync.Mutex
				moved [2]int64 // received, sent
			)
			onBytes := func(rx, tx int64) {
				mu.Lock()
				moved[0] += rx
				moved[1] += tx
				mu.Unlock()
			}
			base := Run(testCtx(t), c.dm, c.kind, params(obj, c.in), Options{})
			slow := Run(testCtx(t), c.dm, c.kind, params(obj, c.in), Options{SpeedDelay: delay, OnBytes: onBytes})
			fast, throttled := speed(t, base, obj, c.kind, c.dm), speed(t, slow, obj, c.kind, c.dm)
			t.Logf("%.0f B/s without the delay, %.0f B/s with it (%.0fx)", fast, throttled, fast/throttled)
			if throttled*2 > fast {
				t.Fatalf("speed with a %s delay %.0f B/s, without %.0f B/s: want at most half", delay, throttled, fast)
			}
			bytes := "TestBytesReceived"
			if c.kind == Upload {
				bytes = "TotalBytesSent"
			}
			test := mustInt(t, slow, obj+bytes)
			if c.timed && test > 3*SpeedDelayBlock {
				// One stall at the first byte, one block, a stall that the
				// window's end cuts: no more than that fits in the window.
				t.Fatalf("%d test bytes in a 1 s window with a %s delay, want at most 3 blocks", test, delay)
			}
			mu.Lock()
			defer mu.Unlock()
			if got := moved[0]; c.kind == Download && got < test {
				t.Fatalf("OnBytes heard %d bytes received, the test counted %d", got, test)
			}
			if got := moved[1]; c.kind == Upload && got < test {
				t.Fatalf("OnBytes heard %d bytes sent, the test counted %d", got, test)
			}
		})
	}
}

func TestCanceled(t *testing.T) {
	for dm, want := range map[string]string{TR098: StateNone, TR181: StateCanceled} {
		for _, kind := range []Kind{Download, Upload, IPPing} {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			obj := Object(dm, kind)
			out := Run(ctx, dm, kind, params(obj, map[string]string{"DownloadURL": "http://127.0.0.1/",
				"UploadURL": "http://127.0.0.1/", "Host": "127.0.0.1"}), Options{SpeedDelay: time.Hour})
			if got := out[obj+"DiagnosticsState"]; got != want {
				t.Fatalf("%s %d: DiagnosticsState %q, want %q", dm, kind, got, want)
			}
		}
	}
}
