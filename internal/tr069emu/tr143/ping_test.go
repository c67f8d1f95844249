package tr143

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
)

func wantPingKeys(dm string) []string {
	keys := []string{"DiagnosticsState", "SuccessCount", "FailureCount", "AverageResponseTime",
		"MinimumResponseTime", "MaximumResponseTime", MethodParam}
	if dm == TR181 {
		keys = append(keys, "AverageResponseTimeDetailed", "MinimumResponseTimeDetailed", "MaximumResponseTimeDetailed")
	}
	return keys
}

// icmpAvailable skips the test when the process may not open the raw
// socket of h (not root, no CAP_NET_RAW, no IPv6).
func icmpAvailable(t *testing.T, h *icmpHolder) {
	t.Helper()
	if _, err := h.acquire(); err != nil {
		t.Skipf("ICMP not available here (%v): only the TCP fallback is tested", err)
	}
	h.release()
}

func runPingTest(t *testing.T, dm string, in map[string]string, k knobs) (map[string]string, string) {
	t.Helper()
	obj := Object(dm, IPPing)
	out := run(testCtx(t), dm, IPPing, params(obj, in), Options{}, k)
	checkKeys(t, out, obj, wantPingKeys(dm))
	return out, obj
}

// checkPing checks a completed ping: its counts and the order of its
// response times.
func checkPing(t *testing.T, out map[string]string, obj, dm, method string, success, failure int64) {
	t.Helper()
	if got := out[obj+"DiagnosticsState"]; got != StateComplete {
		t.Fatalf("DiagnosticsState %q, results %v", got, out)
	}
	if got := out[obj+MethodParam]; got != method {
		t.Fatalf("%s %q, want %q", MethodParam, got, method)
	}
	if s, f := mustInt(t, out, obj+"SuccessCount"), mustInt(t, out, obj+"FailureCount"); s != success || f != failure {
		t.Fatalf("SuccessCount %d FailureCount %d, want %d and %d", s, f, success, failure)
	}
	suffixes := []string{""}
	if dm == TR181 {
		suffixes = append(suffixes, "Detailed")
	}
	for _, sfx := range suffixes {
		lo := mustInt(t, out, obj+"MinimumResponseTime"+sfx)
		avg := mustInt(t, out, obj+"AverageResponseTime"+sfx)
		hi := mustInt(t, out, obj+"MaximumResponseTime"+sfx)
		if lo > avg || avg > hi {
			t.Fatalf("response times%s: min %d avg %d max %d", sfx, lo, avg, hi)
		}
		if success == 0 && hi != 0 {
			t.Fatalf("MaximumResponseTime%s %d without a success", sfx, hi)
		}
	}
}

func TestPingICMP(t *testing.T) {
	cases := []struct {
		dm, host string
		h        *icmpHolder
	}{
		{TR098, "127.0.0.1", icmp4},
		{TR181, "127.0.0.1", icmp4},
		{TR181, "localhost", icmp4},
		{TR181, "::1", icmp6},
		{TR098, "[::1]", icmp6},
	}
	for _, c := range cases {
		t.Run(c.dm+"/"+c.host, func(t *testing.T) {
			t.Parallel()
			icmpAvailable(t, c.h)
			// An odd block size exercises the checksum's last byte; the
			// kernel drops echo requests whose checksum is wrong.
			out, obj := runPingTest(t, c.dm, map[string]string{"Host": c.host, "NumberOfRepetitions": "3", "DataBlockSize": "33", "DSCP": "8"}, knobs{})
			checkPing(t, out, obj, c.dm, methodICMP, 3, 0)
		})
	}
}

func TestPingICMPDefaults(t *testing.T) {
	icmpAvailable(t, icmp4)
	out, obj := runPingTest(t, TR181, map[string]string{"Host": "127.0.0.1"}, knobs{})
	checkPing(t, out, obj, TR181, methodICMP, defaultPingRepetitions, 0)
}

// TestPingICMPConcurrent runs many pings over the shared socket: each must
// get its own replies, no more and no fewer.
func TestPingICMPConcurrent(t *testing.T) {
	icmpAvailable(t, icmp4)
	const pings, reps = 20, 5
	var wg sync.WaitGroup
	results := make([]map[string]string, pings)
	for i := range pings {
		wg.Go(func() {
			obj := Object(TR181, IPPing)
			results[i] = Run(testCtx(t), TR181, IPPing, params(obj, map[string]string{"Host": "127.0.0.1",
				"NumberOfRepetitions": strconv.Itoa(reps), "DataBlockSize": strconv.Itoa(8 + i)}), Options{})
		})
	}
	wg.Wait()
	for _, out := range results {
		checkPing(t, out, Object(TR181, IPPing), TR181, methodICMP, reps, 0)
	}
	icmp4.mu.Lock()
	defer icmp4.mu.Unlock()
	if icmp4.sock != nil || icmp4.refs != 0 {
		t.Fatalf("ICMP socket still open after the pings: refs %d", icmp4.refs)
	}
}

func TestPingTCPFallback(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	cases := []struct {
		name, host string
	}{
		{"listening", l.Addr().String()},
		// A refusal is a round trip to the host: reachable.
		{"refused", closedPort(t)},
		// No port: 80, refused or not, reachable either way.
		{"default port", "127.0.0.1"},
	}
	for _, c := range cases {
		for _, dm := range []string{TR098, TR181} {
			t.Run(c.name+"/"+dm, func(t *testing.T) {
				t.Parallel()
				out, obj := runPingTest(t, dm, map[string]string{"Host": c.host, "NumberOfRepetitions": "3", "DSCP": "46"}, knobs{forceTCPPing: true})
				checkPing(t, out, obj, dm, methodTCP, 3, 0)
			})
		}
	}
}

func TestPingUnreachable(t *testing.T) {
	// The broadcast address cannot be pinged or connected to without
	// SO_BROADCAST: every echo fails at once, and the state is still
	// Complete.
	for _, k := range []knobs{{}, {forceTCPPing: true}} {
		t.Run(fmt.Sprintf("forceTCP=%v", k.forceTCPPing), func(t *testing.T) {
			t.Parallel()
			out, obj := runPingTest(t, TR181, map[string]string{"Host": "255.255.255.255", "NumberOfRepetitions": "2", "Timeout": "100"}, k)
			checkPing(t, out, obj, TR181, icmpMethod(k), 0, 2)
		})
	}
}

// TestPingSilentHost pings TEST-NET-2 (RFC 5737), which normally answers
// nothing, so that echoes time out. A network that answers for it (a
// firewall's RST to the TCP fallback) makes them succeed instead: only the
// totals are checked.
func TestPingSilentHost(t *testing.T) {
	for _, k := range []knobs{{}, {forceTCPPing: true}} {
		t.Run(fmt.Sprintf("forceTCP=%v", k.forceTCPPing), func(t *testing.T) {
			t.Parallel()
			out, obj := runPingTest(t, TR098, map[string]string{"Host": "198.51.100.1", "NumberOfRepetitions": "2", "Timeout": "50"}, k)
			if got := out[obj+"DiagnosticsState"]; got != StateComplete {
				t.Fatalf("DiagnosticsState %q", got)
			}
			if got := out[obj+MethodParam]; got != icmpMethod(k) {
				t.Fatalf("method %q", got)
			}
			if s, f := mustInt(t, out, obj+"SuccessCount"), mustInt(t, out, obj+"FailureCount"); s+f != 2 {
				t.Fatalf("SuccessCount %d + FailureCount %d, want 2", s, f)
			}
		})
	}
}

// icmpMethod is the method a ping is expected to use here.
func icmpMethod(k knobs) string {
	if k.forceTCPPing {
		return methodTCP
	}
	if _, err := icmp4.acquire(); err != nil {
		return methodTCP
	}
	icmp4.release()
	return methodICMP
}

func TestPingErrors(t *testing.T) {
	cases := []struct {
		name  string
		in    map[string]string
		state string
	}{
		{"unresolvable", map[string]string{"Host": "nohost.invalid"}, StateCannotResolveHostName},
		{"unresolvable with port", map[string]string{"Host": "nohost.invalid:80"}, StateCannotResolveHostName},
		{"empty host", map[string]string{}, StateCannotResolveHostName},
		{"zero repetitions", map[string]string{"Host": "127.0.0.1", "NumberOfRepetitions": "0"}, StateOther},
		{"zero timeout", map[string]string{"Host": "127.0.0.1", "Timeout": "0"}, StateOther},
		{"block too large", map[string]string{"Host": "127.0.0.1", "DataBlockSize": "65536"}, StateOther},
		{"bad DSCP", map[string]string{"Host": "127.0.0.1", "DSCP": "x"}, StateOther},
		{"IPv6 only", map[string]string{"Host": "127.0.0.1", "ProtocolVersion": "IPv6"}, StateCannotResolveHostName},
	}
	for _, c := range cases {
		for _, dm := range []string{TR098, TR181} {
			t.Run(c.name+"/"+dm, func(t *testing.T) {
				t.Parallel()
				want := c.state
				if c.name == "IPv6 only" && dm == TR098 {
					// TR-098 has no ProtocolVersion: the parameter is not read.
					want = StateComplete
				}
				out, obj := runPingTest(t, dm, c.in, knobs{forceTCPPing: true})
				if got := out[obj+"DiagnosticsState"]; got != want {
					t.Fatalf("DiagnosticsState %q, want %q", got, want)
				}
				if want == StateComplete {
					return
				}
				for _, k := range wantPingKeys(dm)[1:] {
					if v := out[obj+k]; v != "0" && v != "" {
						t.Fatalf("%s = %q after a failure", k, v)
					}
				}
			})
		}
	}
}

func TestPingCanceledMidway(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	obj := Object(TR181, IPPing)
	out := run(ctx, TR181, IPPing, params(obj, map[string]string{"Host": "127.0.0.1"}), Options{}, knobs{forceTCPPing: true})
	if got := out[obj+"DiagnosticsState"]; got != StateCanceled {
		t.Fatalf("DiagnosticsState %q", got)
	}
}

func TestChecksum(t *testing.T) {
	// RFC 1071 §3's example sums to 0xddf2; the checksum is its complement.
	if got := checksum([]byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}); got != ^uint16(0xddf2) {
		t.Fatalf("checksum %#04x", got)
	}
	// A message carrying its checksum sums to zero, odd length included.
	b := []byte{8, 0, 0, 0, 1, 2, 3, 4, 5}
	c := checksum(b)
	b[2], b[3] = byte(c>>8), byte(c)
	if got := checksum(b); got != 0 {
		t.Fatalf("checksum over a checksummed message %#04x", got)
	}
}

func TestSplitHost(t *testing.T) {
	for in, want := range map[string][2]string{
		"example.com": {"example.com", ""}, "example.com:8080": {"example.com", "8080"},
		"::1": {"::1", ""}, "[::1]": {"::1", ""}, "[::1]:80": {"::1", "80"}, "10.0.0.1:7": {"10.0.0.1", "7"},
	} {
		if h, p := splitHost(in); h != want[0] || p != want[1] {
			t.Errorf("splitHost(%q) = %q, %q", in, h, p)
		}
	}
}
