package passwd

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"cpesuite/internal/testutil"
)

// holdSlots fills every slot of l with a computation that lasts until the
// returned function is called.
func holdSlots(t *testing.T, l *Limiter) (releaseAll func()) {
	t.Helper()
	gate := make(chan struct{})
	for range cap(l.slots) {
		go func() { _ = l.Do(context.Background(), func() { <-gate }) }()
	}
	testutil.Eventually(t, testutil.MinDeadline, "every slot taken", func() bool { return len(l.slots) == cap(l.slots) })
	var once atomic.Bool
	release := func() {
		if once.CompareAndSwap(false, true) {
			close(gate)
		}
	}
	t.Cleanup(release)
	return release
}

func TestLimiterRefusals(t *testing.T) {
	tests := []struct {
		name    string
		cfg     LimiterConfig
		waiters int // callers parked in the queue before the probe
		cancel  bool
		want    error
	}{
		// The bound: with every slot and queue place taken, the next
		// caller is refused at once, without waiting or hashing.
		{"queue full", LimiterConfig{Concurrency: 2, Queue: 1, MaxWait: time.Hour}, 1, false, ErrBusy},
		// A waiter whose deadline passes is refused, not left hanging.
		// The short MaxWait is the case: the slots stay held, so it runs
		// out however slow the machine is.
		{"wait past the deadline", LimiterConfig{Concurrency: 1, Queue: 4, MaxWait: 20 * time.Millisecond}, 0, false, ErrBusy},
		// The client has gone while waiting: nothing is computed for it.
		{"client left while waiting", LimiterConfig{Concurrency: 1, Queue: 4, MaxWait: time.Hour}, 0, true, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLimiter(tt.cfg)
			holdSlots(t, l)
			for range tt.waiters {
				go func() { _ = l.Do(context.Background(), func() {}) }()
			}
			testutil.Eventually(t, testutil.MinDeadline, "waiters queued", func() bool { return len(l.waiters) == tt.waiters })

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var ran atomic.Bool
			errc := make(chan error, 1)
			go func() { errc <- l.Do(ctx, func() { ran.Store(true) }) }()
			if tt.cancel {
				testutil.Eventually(t, testutil.MinDeadline, "probe queued", func() bool { return len(l.waiters) == tt.waiters+1 })
				cancel()
			}
			var err error
			select {
			case err = <-errc:
			case <-time.After(testutil.MinDeadline):
				t.Fatal("the limited call did not return")
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Do = %v, want %v", err, tt.want)
			}
			if ran.Load() {
				t.Fatal("the refused computation ran")
			}
			if errors.Is(tt.want, ErrBusy) {
				d, ok := RetryAfter(err)
				if !ok || d < time.Second || d%time.Second != 0 {
					t.Fatalf("RetryAfter(%v) = %v, %v; want whole seconds, at least one", err, d, ok)
				}
			}
			testutil.Eventually(t, testutil.MinDeadline, "queue drained of the probe", func() bool { return len(l.waiters) == tt.waiters })
		})
	}
}

// TestLimiterRunsWaitersInTurn: a waiter gets the slot once it frees, and
// a context that has already ended computes nothing.
func TestLimiterRunsWaitersInTurn(t *testing.T) {
	l := NewLimiter(LimiterConfig{Concurrency: 1, Queue: 1, MaxWait: time.Hour})
	release := holdSlots(t, l)
	h := mustHashInternal(t, "pw-1")
	done := make(chan error, 1)
	go func() {
		ok, err := l.Verify(context.Background(), h, "pw-1")
		if err == nil && !ok {
			err = errors.New("the right password did not verify")
		}
		done <- err
	}()
	testutil.Eventually(t, testutil.MinDeadline, "waiter queued", func() bool { return len(l.waiters) == 1 })
	release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testutil.MinDeadline):
		t.Fatal("the waiter never got the freed slot")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Hash(ctx, "x"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Hash with an ended context = %v, want context.Canceled", err)
	}
	if n := len(l.slots); n != 0 {
		t.Fatalf("%d slots still taken after every call returned", n)
	}
}

func TestNewLimiterDefaults(t *testing.T) {
	l := NewLimiter(LimiterConfig{})
	if cap(l.slots) < 1 || cap(l.waiters) != cap(l.slots)*DefaultQueuePerSlot || l.maxWait != DefaultMaxWait {
		t.Fatalf("defaults: %d slots, %d waiters, wait %s", cap(l.slots), cap(l.waiters), l.maxWait)
	}
	if a, b := Shared(), Shared(); a != b || a == nil {
		t.Fatal("Shared must return the one limiter of the process")
	}
}

func mustHashInternal(t *testing.T, pw string) string {
	t.Helper()
	h, err := Hash(pw)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
