package accounts

import (
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/platform/sqlstore"
)

// TestLoginRateLimit drives the limit through HTTP with an injected clock.
func TestLoginRateLimit(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		h := newHarness(t, db, Config{})
		const addrA, addrB = "192.0.2.1:1000", "192.0.2.2:1000"
		t0 := h.clock.Now()

		// Five failures, one a second, the name spelled two ways: all 401.
		for i := range MaxFailures {
			name := editorName
			if i%2 == 1 {
				name = "ED"
			}
			wantError(t, h.loginAs(name, "Wrong-Pass-1234", addrA), 401, "INVALID_CREDENTIALS")
			h.clock.Add(time.Second)
		}
		// The sixth attempt is refused even with the right password.
		w := h.loginAs(editorName, editorPass, addrA)
		body := wantError(t, w, http.StatusTooManyRequests, "LOGIN_RATE_LIMITED")
		if got := w.Header().Get("Retry-After"); got != "55" || body["retry_after"] != 55.0 {
			t.Fatalf("Retry-After %q, body %s; want 55 s (oldest failure at t0, now t0+5s)", got, w.Body)
		}

		// Other pairs are unaffected.
		if w := h.loginAs(editorName, editorPass, addrB); w.Code != 200 {
			t.Fatalf("same user from another address: %d %s", w.Code, w.Body)
		}
		if w := h.loginAs(adminName, adminPass, addrA); w.Code != 200 {
			t.Fatalf("another user from the same address: %d %s", w.Code, w.Body)
		}

		// Still refused a second before the oldest failure leaves the window.
		h.clock.Add(t0.Add(FailureWindow - time.Second).Sub(h.clock.Now()))
		w = h.loginAs(editorName, editorPass, addrA)
		wantError(t, w, 429, "LOGIN_RATE_LIMITED")
		if got := w.Header().Get("Retry-After"); got != "1" {
			t.Fatalf("Retry-After %q, want 1", got)
		}

		// The window slides: at t0+60s one slot is free again.
		h.clock.Add(time.Second)
		if w := h.loginAs(editorName, editorPass, addrA); w.Code != 200 {
			t.Fatalf("after the window: %d %s", w.Code, w.Body)
		}
		// The success cleared nothing: four failures are still live, so
		// one more brings the pair back to the limit.
		wantError(t, h.loginAs(editorName, "Wrong-Pass-1234", addrA), 401, "INVALID_CREDENTIALS")
		wantError(t, h.loginAs(editorName, editorPass, addrA), 429, "LOGIN_RATE_LIMITED")

		// Three refusals, two audited: the first of each run of refusals
		// (a limited pair hammering the login cannot grow the table).
		limited := h.activity(ActionLoginRateLimited)
		if len(limited) != 2 || limited[0].Username != editorName || limited[0].ClientAddr != "192.0.2.1" || limited[0].Success {
			t.Fatalf("rate-limited attempts audited as %+v", limited)
		}
		if n := len(h.activity(ActionLoginFailed)); n != MaxFailures+1 {
			t.Fatalf("%d failed logins audited, want %d (refused attempts are not failures)", n, MaxFailures+1)
		}
	})
}

// TestLoginRateLimitBehindProxy checks that the pair's address is the
// client's when, and only when, the peer is a trusted proxy.
func TestLoginRateLimitBehindProxy(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		trusted, err := ParseTrustedProxies("10.0.0.0/8")
		if err != nil {
			t.Fatal(err)
		}
		h := newHarness(t, db, Config{TrustedProxies: trusted})
		via := func(peer, xff, pass string) int {
			return h.do(request{method: "POST", path: "/api/auth/login", remote: peer,
				header: http.Header{"X-Forwarded-For": {xff}},
				body:   map[string]string{"username": editorName, "password": pass}}).Code
		}
		for range MaxFailures {
			if c := via("10.1.1.1:5000", "198.51.100.7", "Wrong-Pass-1234"); c != 401 {
				t.Fatalf("failure through the proxy: %d", c)
			}
		}
		tests := []struct {
			name, peer, xff string
			want            int
		}{
			{"same client through another proxy", "10.9.9.9:5000", "203.0.113.1, 198.51.100.7", 429},
			{"another client through the proxy", "10.1.1.1:5000", "198.51.100.8", 200},
			{"untrusted peer claiming the client", "203.0.113.5:5000", "198.51.100.7", 200},
		}
		for _, tc := range tests {
			if got := via(tc.peer, tc.xff, editorPass); got != tc.want {
				t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
			}
		}
		if got := h.activity(ActionLoginFailed)[0].ClientAddr; got != "198.51.100.7" {
			t.Fatalf("audited client address %q, want the forwarded one", got)
		}
		logins := h.activity(ActionLogin)
		if got := logins[0].ClientAddr; got != "203.0.113.5" {
			t.Fatalf("untrusted peer audited as %q", got)
		}
	})
}

func TestLimiter(t *testing.T) {
	t0 := time.Unix(1_900_000_000, 0)
	a := limitKey{"ed", "192.0.2.1"}

	t.Run("exactly max failures, then refused until the oldest leaves", func(t *testing.T) {
		l := newLimiter(5, time.Minute, 100)
		for i := range 5 {
			now := t0.Add(time.Duration(i) * 10 * time.Second)
			if ok, _ := l.Begin(a, now); !ok {
				t.Fatalf("attempt %d refused", i+1)
			}
			l.End(a, now, true)
		}
		ok, wait := l.Begin(a, t0.Add(45*time.Second))
		if ok || wait != 15*time.Second {
			t.Fatalf("6th attempt: ok=%v wait=%s, want refused for 15s", ok, wait)
		}
		if ok, _ := l.Begin(a, t0.Add(time.Minute)); !ok {
			t.Fatal("refused after the oldest failure left the window")
		}
	})

	t.Run("successes do not count and clear nothing", func(t *testing.T) {
		l := newLimiter(2, time.Minute, 100)
		for range 10 {
			l.Begin(a, t0)
			l.End(a, t0, false)
		}
		l.Begin(a, t0)
		l.End(a, t0, true)
		l.Begin(a, t0)
		l.End(a, t0, false)
		l.Begin(a, t0)
		l.End(a, t0, true)
		if ok, _ := l.Begin(a, t0); ok {
			t.Fatal("two failures around a success did not reach the limit of 2")
		}
	})

	t.Run("concurrent attempts hold slots", func(t *testing.T) {
		l := newLimiter(5, time.Minute, 100)
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			allowed int
		)
		for range 50 {
			wg.Go(func() {
				if ok, _ := l.Begin(a, t0); ok {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if allowed != 5 {
			t.Fatalf("%d concurrent attempts allowed, want 5", allowed)
		}
		ok, wait := l.Begin(a, t0)
		if ok || wait != time.Second {
			t.Fatalf("while all slots are pending: ok=%v wait=%s, want refused for 1s", ok, wait)
		}
	})

	t.Run("memory is bounded and expired pairs pruned", func(t *testing.T) {
		l := newLimiter(5, time.Minute, 3)
		for i := range 3 {
			k := limitKey{"u", strconv.Itoa(i)}
			l.Begin(k, t0)
			l.End(k, t0, true)
		}
		if ok, _ := l.Begin(limitKey{"u", "new"}, t0.Add(time.Second)); ok {
			t.Fatal("a new pair was admitted into a full table of live pairs")
		}
		if ok, _ := l.Begin(limitKey{"u", "0"}, t0.Add(time.Second)); !ok {
			t.Fatal("a known pair under its limit was refused")
		}
		l.End(limitKey{"u", "0"}, t0.Add(time.Second), false)
		if ok, _ := l.Begin(limitKey{"u", "new"}, t0.Add(time.Minute)); !ok {
			t.Fatal("expired pairs were not pruned for a new one")
		}
		l.End(limitKey{"u", "new"}, t0.Add(time.Minute), false)
		if n := l.Size(); n != 0 {
			t.Fatalf("%d pairs kept after everything expired", n)
		}
	})
}

func TestRetryAfterRoundsUp(t *testing.T) {
	for _, tc := range []struct{ in, want time.Duration }{
		{0, time.Second}, {time.Millisecond, time.Second}, {time.Second, time.Second},
		{1500 * time.Millisecond, 2 * time.Second}, {time.Minute, time.Minute},
	} {
		if got := retrySeconds(tc.in); got != tc.want {
			t.Errorf("retrySeconds(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if _, ok := RetryAfter(fmt.Errorf("other")); ok {
		t.Fatal("RetryAfter found a wait in an unrelated error")
	}
}

func TestClientAddr(t *testing.T) {
	trusted, err := ParseTrustedProxies("10.0.0.0/8, 127.0.0.1, ::1")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		remote string
		xff    []string
		want   string
	}{
		{"untrusted peer, header ignored", "203.0.113.9:1234", []string{"198.51.100.1"}, "203.0.113.9"},
		{"trusted peer, one hop", "10.0.0.1:1234", []string{"198.51.100.1"}, "198.51.100.1"},
		{"right-most untrusted wins", "10.0.0.1:1234", []string{"6.6.6.6, 198.51.100.1, 10.0.0.2"}, "198.51.100.1"},
		{"several header lines", "127.0.0.1:1", []string{"6.6.6.6", "198.51.100.1, 10.2.2.2"}, "198.51.100.1"},
		{"malformed entries skipped", "10.0.0.1:1", []string{"198.51.100.1, garbage, "}, "198.51.100.1"},
		{"entry with port", "10.0.0.1:1", []string{"198.51.100.1:5555"}, "198.51.100.1"},
		{"bracketed IPv6 entry", "[::1]:1", []string{"[2001:db8::1]"}, "2001:db8::1"},
		{"all entries trusted", "10.0.0.1:1", []string{"10.0.0.2, 127.0.0.1"}, "10.0.0.1"},
		{"no header", "10.0.0.1:1", nil, "10.0.0.1"},
		{"IPv4-mapped peer", "[::ffff:10.0.0.1]:1", []string{"198.51.100.1"}, "198.51.100.1"},
		{"IPv6 peer", "[2001:db8::5]:80", nil, "2001:db8::5"},
		{"peer without port", "192.0.2.4", nil, "192.0.2.4"},
		{"unparsable peer", "pipe", []string{"198.51.100.1"}, "invalid IP"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := http.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.remote
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := ClientAddr(r, trusted).String(); got != tc.want {
				t.Fatalf("ClientAddr = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestParseTrustedProxies(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{"", nil, false},
		{" , ", nil, false},
		{"10.1.2.3/8, 192.0.2.1", []string{"10.0.0.0/8", "192.0.2.1/32"}, false},
		{"::1,2001:db8::/32", []string{"::1/128", "2001:db8::/32"}, false},
		{"::ffff:10.0.0.1", []string{"10.0.0.1/32"}, false},
		{"::ffff:10.0.0.0/104", []string{"10.0.0.0/8"}, false},
		{"fe80::1%eth0", []string{"fe80::1/128"}, false},
		{"10.0.0.0/33", nil, true},
		{"example.com", nil, true},
		{"10.0.0.1, nope", nil, true},
	}
	for _, tc := range tests {
		got, err := ParseTrustedProxies(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseTrustedProxies(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		var s []string
		for _, p := range got {
			s = append(s, p.String())
		}
		if fmt.Sprint(s) != fmt.Sprint(tc.want) {
			t.Errorf("ParseTrustedProxies(%q) = %v, want %v", tc.in, s, tc.want)
		}
	}
	// A parsed IPv4 prefix matches what ClientAddr returns for a mapped peer.
	p, _ := ParseTrustedProxies("::ffff:10.0.0.0/104")
	if !isTrusted(netip.MustParseAddr("10.2.3.4"), p) {
		t.Fatal("mapped prefix does not match the IPv4 client")
	}
}
