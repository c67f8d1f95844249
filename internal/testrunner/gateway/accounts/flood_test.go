package accounts

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/platform/passwd"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/testutil"
)

// holdHashing takes every slot of l until the returned function runs.
func holdHashing(t *testing.T, l *passwd.Limiter, slots int) (release func()) {
	t.Helper()
	gate := make(chan struct{})
	for range slots {
		go func() { _ = l.Do(context.Background(), func() { <-gate }) }()
	}
	testutil.Eventually(t, testutil.MinDeadline, "hashing slots taken", func() bool { return l.InUse() == slots })
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	return release
}

// TestLoginHashingBound (issue 18 item 8): with every hashing slot busy and
// the queue full, the next login is answered 503 LOGIN_BUSY with
// Retry-After at once, without a hash; it is audited; the queued login
// goes through once a slot frees.
func TestLoginHashingBound(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		lim := passwd.NewLimiter(passwd.LimiterConfig{Concurrency: 2, Queue: 1, MaxWait: time.Hour})
		h := newHarness(t, db, Config{Hashing: lim})
		release := holdHashing(t, lim, 2)

		queued := make(chan int, 1)
		go func() { queued <- h.loginAs(editorName, editorPass, "198.51.100.1:1000").Code }()
		testutil.Eventually(t, testutil.MinDeadline, "login queued", func() bool { return lim.Waiting() == 1 })

		for i := range 3 {
			w := h.loginAs("nobody", "Wrong-Pass-1234", "198.51.100.2:1000")
			body := wantError(t, w, http.StatusServiceUnavailable, "LOGIN_BUSY")
			ra, err := strconv.Atoi(w.Header().Get("Retry-After"))
			if err != nil || ra < 1 || body["retry_after"] != float64(ra) {
				t.Fatalf("refusal %d: Retry-After %q, body %s", i, w.Header().Get("Retry-After"), w.Body)
			}
		}
		if lim.InUse() != 2 || lim.Waiting() != 1 {
			t.Fatalf("refused logins touched the limiter: %d in use, %d waiting", lim.InUse(), lim.Waiting())
		}
		busy := h.activity(ActionLoginBusy)
		if len(busy) != 1 || busy[0].Username != "nobody" || busy[0].ClientAddr != "198.51.100.2" || busy[0].Success {
			t.Fatalf("busy refusals audited as %+v; want the first of the address only", busy)
		}
		// A busy refusal is not a failure of the caller: the pair is not
		// closer to its limit.
		if n := len(h.activity(ActionLoginFailed)); n != 0 {
			t.Fatalf("%d failures recorded for unchecked logins", n)
		}

		release()
		select {
		case code := <-queued:
			if code != http.StatusOK {
				t.Fatalf("queued login: %d", code)
			}
		case <-time.After(testutil.MinDeadline):
			t.Fatal("the queued login never finished")
		}
	})
}

// TestLoginAbandonedComputesNothing: a client that leaves while its login
// waits for a slot gets no hash computed and no failure counted.
func TestLoginAbandonedComputesNothing(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		lim := passwd.NewLimiter(passwd.LimiterConfig{Concurrency: 1, Queue: 4, MaxWait: time.Hour})
		h := newHarness(t, db, Config{Hashing: lim})
		release := holdHashing(t, lim, 1)
		addr := netip.MustParseAddr("198.51.100.3")

		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, _, _, err := h.svc.Login(ctx, editorName, "Wrong-Pass-1234", addr)
			errc <- err
		}()
		testutil.Eventually(t, testutil.MinDeadline, "login queued", func() bool { return lim.Waiting() == 1 })
		cancel()
		select {
		case err := <-errc:
			wantCode(t, err, http.StatusServiceUnavailable, "LOGIN_ABANDONED")
		case <-time.After(testutil.MinDeadline):
			t.Fatal("the abandoned login did not return while the slot was still taken")
		}
		if lim.InUse() != 1 || lim.Waiting() != 0 {
			t.Fatalf("after the abandon: %d in use, %d waiting", lim.InUse(), lim.Waiting())
		}
		release()
		if n := len(h.activity(ActionLoginFailed)); n != 0 {
			t.Fatalf("an abandoned login was counted as %d failures", n)
		}
		if h.svc.limiter.Size() != 0 || h.svc.addrLimiter.Size() != 0 {
			t.Fatalf("the abandoned login left limiter entries: %d pairs, %d addresses", h.svc.limiter.Size(), h.svc.addrLimiter.Size())
		}
	})
}

// TestLoginRateLimitPerAddress (issue 18 item 8): failures with a new
// username every time are limited per address too, IPv6 per /64; other
// addresses are unaffected, and the first refusal is audited.
func TestLoginRateLimitPerAddress(t *testing.T) {
	tests := []struct {
		name      string
		attacker  func(i int) string // remote of the i-th attempt
		bystander string
	}{
		{"IPv4", func(int) string { return "203.0.113.9:1000" }, "203.0.113.10:1000"},
		{"IPv6 within one /64", func(i int) string { return fmt.Sprintf("[2001:db8:1:2::%x]:1000", i+1) }, "[2001:db8:1:3::1]:1000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
				h := newHarness(t, db, Config{})
				for i := range MaxAddrFailures {
					wantError(t, h.loginAs(fmt.Sprintf("random-%d", i), "Wrong-Pass-1234", tt.attacker(i)), 401, "INVALID_CREDENTIALS")
					h.clock.Add(time.Second)
				}
				// A fresh username, and even a right password, from the
				// address: refused without a check.
				w := h.loginAs(editorName, editorPass, tt.attacker(MaxAddrFailures))
				wantError(t, w, http.StatusTooManyRequests, "LOGIN_RATE_LIMITED")
				if got := w.Header().Get("Retry-After"); got != strconv.Itoa(int((FailureWindow-MaxAddrFailures*time.Second)/time.Second)) {
					t.Fatalf("Retry-After %q", got)
				}
				wantError(t, h.loginAs("random-x", "Wrong-Pass-1234", tt.attacker(MaxAddrFailures+1)), 429, "LOGIN_RATE_LIMITED")
				if w := h.loginAs(editorName, editorPass, tt.bystander); w.Code != 200 {
					t.Fatalf("another address: %d %s", w.Code, w.Body)
				}
				limited := h.activity(ActionLoginRateLimited)
				if len(limited) != 1 || !strings.Contains(limited[0].Detail, "address") {
					t.Fatalf("per-address refusals audited as %+v; want the first one", limited)
				}
				if n := len(h.activity(ActionLoginFailed)); n != MaxAddrFailures {
					t.Fatalf("%d failures audited, want %d", n, MaxAddrFailures)
				}
				// The window slides for the address as for a pair.
				h.clock.Add(FailureWindow)
				if w := h.loginAs(editorName, editorPass, tt.attacker(0)); w.Code != 200 {
					t.Fatalf("after the window: %d %s", w.Code, w.Body)
				}
			})
		})
	}
}

// TestLoginFloodLosesNoAudit (issue 18 item 8): a burst of concurrent
// bogus logins from many addresses against a small limiter. Every answer
// is 401, 429 or 503; every 401 has its login_failed row and every address
// that got a 503 its login_busy row, none lost.
func TestLoginFloodLosesNoAudit(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		lim := passwd.NewLimiter(passwd.LimiterConfig{Concurrency: 1, Queue: 2, MaxWait: time.Hour})
		h := newHarness(t, db, Config{Hashing: lim})
		const clients, perClient = 16, 3
		var (
			mu        sync.Mutex
			codes     = map[int]int{}
			busyAddrs = map[string]bool{}
			wg        sync.WaitGroup
		)
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ip := fmt.Sprintf("198.51.100.%d", 100+c)
				for i := range perClient {
					w := h.loginAs(fmt.Sprintf("bogus-%d-%d", c, i), "Wrong-Pass-1234", ip+":1000")
					mu.Lock()
					codes[w.Code]++
					if w.Code == http.StatusServiceUnavailable {
						busyAddrs[ip] = true
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if codes[401]+codes[503] != clients*perClient {
			t.Fatalf("answers %v; want only 401 and 503", codes)
		}
		if codes[503] == 0 {
			t.Logf("no login found the limiter full this time (answers %v)", codes)
		}
		if n := len(h.activity(ActionLoginFailed)); n != codes[401] {
			t.Fatalf("%d login_failed rows for %d answers 401", n, codes[401])
		}
		if n := len(h.activity(ActionLoginBusy)); n != len(busyAddrs) {
			t.Fatalf("%d login_busy rows for %d refused addresses", n, len(busyAddrs))
		}
	})
}
