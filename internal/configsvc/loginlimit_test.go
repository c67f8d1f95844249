package configsvc

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/platform/passwd"
	"cpesuite/internal/testutil"
)

// wantRetryAfter checks a refused login: the service's error body (status,
// code, message, details.retryAfter) and a Retry-After header that agrees.
func wantRetryAfter(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	body := r.json(t)
	if body["code"] != code || body["status"] != float64(status) || body["message"] == "" || body["path"] != Base+"/auth/login" {
		t.Fatalf("error body %s, want the service's shape with code %s", r.body, code)
	}
	details, _ := body["details"].(map[string]any)
	n, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || n < 1 || details["retryAfter"] != float64(n) {
		t.Fatalf("Retry-After %q, details %v", r.header.Get("Retry-After"), details)
	}
}

func (h *harness) auditCount(action, outcome string) int {
	h.t.Helper()
	events, _, err := h.s.st.listAudit(context.Background(), AuditFilter{Action: action}, 0, 10_000)
	if err != nil {
		h.t.Fatal(err)
	}
	n := 0
	for _, e := range events {
		if e.Outcome == outcome {
			n++
		}
	}
	return n
}

// TestLoginRateLimits (issue 18 item 8): /auth/login had no limit at all.
// Failures are limited per username and address and per address across
// usernames, answered 429 with Retry-After in this service's error body,
// and only the first refusal of a run is audited.
func TestLoginRateLimits(t *testing.T) {
	tests := []struct {
		name     string
		failures int
		username func(i int) string
	}{
		{"per username and address", loginMaxFailures, func(int) string { return "Admin" }},
		{"per address across usernames", loginMaxAddrFailures, func(i int) string { return fmt.Sprintf("random-%d", i) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, harnessOpts{})
			h.adminToken()
			for i := range tt.failures {
				h.want(h.do("POST", "/auth/login", "", loginBody{Username: tt.username(i), Password: "Wrong-Pass-1234"}), 401, "BAD_CREDENTIALS")
			}
			before := h.auditCount("LOGIN", "FAILURE")
			for range 3 {
				// The right password too: the attempt is not checked.
				wantRetryAfter(t, h.do("POST", "/auth/login", "", loginBody{Username: "admin", Password: adminPassword}), 429, "LOGIN_RATE_LIMITED")
			}
			if got := h.auditCount("LOGIN", "FAILURE") - before; got != 1 {
				t.Fatalf("%d audit events for 3 refusals, want the first only", got)
			}
		})
	}
}

// TestLoginHashingBound (issue 18 item 8): the configuration service's
// logins share the bounded hashing limiter: with every slot and queue
// place taken a login is answered 503 LOGIN_BUSY with Retry-After, and
// the queued one completes once a slot frees.
func TestLoginHashingBound(t *testing.T) {
	t.Parallel()
	lim := passwd.NewLimiter(passwd.LimiterConfig{Concurrency: 1, Queue: 1, MaxWait: time.Hour})
	h := newHarness(t, harnessOpts{hashing: lim})
	h.adminToken()

	gate := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	go func() { _ = lim.Do(context.Background(), func() { <-gate }) }()
	testutil.Eventually(t, testutil.MinDeadline, "slot taken", func() bool { return lim.InUse() == 1 })

	queued := make(chan int, 1)
	go func() {
		queued <- h.do("POST", "/auth/login", "", loginBody{Username: "admin", Password: adminPassword}).status
	}()
	testutil.Eventually(t, testutil.MinDeadline, "login queued", func() bool { return lim.Waiting() == 1 })

	before := h.auditCount("LOGIN", "FAILURE")
	for range 3 {
		wantRetryAfter(t, h.do("POST", "/auth/login", "", loginBody{Username: "nobody", Password: "Wrong-Pass-1234"}), 503, "LOGIN_BUSY")
	}
	if got := h.auditCount("LOGIN", "FAILURE") - before; got != 1 {
		t.Fatalf("%d audit events for 3 busy refusals, want the first only", got)
	}
	release()
	select {
	case code := <-queued:
		if code != 200 {
			t.Fatalf("queued login: %d", code)
		}
	case <-time.After(testutil.MinDeadline):
		t.Fatal("the queued login never finished")
	}
}
