package passwd

import (
	"sync"
	"time"
)

// FailureLimiter is a sliding window over failed logins, per key (a
// username and address pair, an address, ...), in memory. A
// restart forgets it, which at worst grants MaxFailures more guesses per
// pair: argon2 already makes each guess expensive.
//
// Attempts being checked count against the limit too (Begin reserves a
// slot, End releases it), so that a burst of concurrent attempts cannot
// all start before the first failure is recorded.
type FailureLimiter[K comparable] struct {
	max     int
	window  time.Duration
	maxKeys int

	mu        sync.Mutex
	entries   map[K]*limitEntry
	lastPrune time.Time
}

type limitEntry struct {
	failures []time.Time // oldest first, at most max
	pending  int         // attempts begun and not yet ended
	// refused counts refusals since the pair was last let through; only
	// the first is audited, so hammering a limited pair cannot grow the
	// audit table.
	refused int
}

// NewFailureLimiter returns a limiter that allows max failures per key
// within window and tracks at most maxKeys keys.
func NewFailureLimiter[K comparable](max int, window time.Duration, maxKeys int) *FailureLimiter[K] {
	return &FailureLimiter[K]{max: max, window: window, maxKeys: maxKeys, entries: map[K]*limitEntry{}}
}

// Begin reserves an attempt for key at now. When the pair is over the
// limit it returns false and how long until an attempt can be made.
//
// When the table is full of live entries a new pair is refused too: the
// limit never weakens under pressure. Filling the table takes 100,000
// failed argon2 verifications within a minute, far beyond what one
// gateway can compute.
func (l *FailureLimiter[K]) Begin(key K, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entries[key]
	if e == nil {
		if len(l.entries) >= l.maxKeys || now.Sub(l.lastPrune) >= l.window {
			l.prune(now)
		}
		if len(l.entries) >= l.maxKeys {
			return false, l.window
		}
		e = &limitEntry{}
		l.entries[key] = e
	}
	e.expire(now, l.window)
	if len(e.failures)+e.pending >= l.max {
		return false, e.retryAfter(now, l.window)
	}
	e.pending++
	e.refused = 0
	return true, 0
}

// FirstRefusal reports whether a refusal of key is the first since the
// pair was last let through, and counts it.
func (l *FailureLimiter[K]) FirstRefusal(key K) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entries[key]
	if e == nil {
		return true
	}
	e.refused++
	return e.refused == 1
}

// End releases the reservation of Begin and records a failure when the
// attempt failed.
func (l *FailureLimiter[K]) End(key K, now time.Time, failed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entries[key]
	if e == nil {
		return // Cannot happen: entries with pending attempts are never pruned.
	}
	e.pending--
	e.expire(now, l.window)
	if failed {
		// At most max-1 failures are live here, since this attempt held a
		// slot, so the slice never grows past max.
		e.failures = append(e.failures, now)
	}
	if e.pending == 0 && len(e.failures) == 0 {
		delete(l.entries, key)
	}
}

// prune drops the entries that no longer limit anything. It runs at most
// once per window unless the table is full, so it costs O(1) amortised.
func (l *FailureLimiter[K]) prune(now time.Time) {
	l.lastPrune = now
	for k, e := range l.entries {
		e.expire(now, l.window)
		if e.pending == 0 && len(e.failures) == 0 {
			delete(l.entries, k)
		}
	}
}

// expire drops the failures that have left the window.
func (e *limitEntry) expire(now time.Time, window time.Duration) {
	i := 0
	for i < len(e.failures) && !now.Before(e.failures[i].Add(window)) {
		i++
	}
	if i > 0 {
		e.failures = append(e.failures[:0], e.failures[i:]...)
	}
}

// retryAfter is the time until the oldest failure leaves the window; when
// the pair is full of attempts still being checked, it is a second, after
// which their outcome is known.
func (e *limitEntry) retryAfter(now time.Time, window time.Duration) time.Duration {
	if len(e.failures) == 0 {
		return time.Second
	}
	return e.failures[0].Add(window).Sub(now)
}

// Size is the number of keys tracked.
func (l *FailureLimiter[K]) Size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// RefusalLog decides which refusals are audited: the first of each kind
// per client address and window, so that a flood of refusals cannot grow
// the audit table or queue behind its writes, while every address that
// was refused leaves a row. Its memory is bounded like the limiter's;
// when it is full, the addresses it has no room for share one key, so
// they are still audited once per window together.
type RefusalLog struct {
	window  time.Duration
	maxKeys int

	mu      sync.Mutex
	last    map[string]time.Time
	pruneAt time.Time
	// overflow is the window of the keys the table had no room for.
	overflow time.Time
}

// NewRefusalLog returns a log with one window per key and at most maxKeys
// keys.
func NewRefusalLog(window time.Duration, maxKeys int) *RefusalLog {
	return &RefusalLog{window: window, maxKeys: maxKeys, last: map[string]time.Time{}}
}

// First reports whether the refusal of key at now is the first in its
// window, and starts a window when it is.
func (r *RefusalLog) First(key string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !now.Before(r.pruneAt) || len(r.last) >= r.maxKeys {
		for k, t := range r.last {
			if !now.Before(t.Add(r.window)) {
				delete(r.last, k)
			}
		}
		r.pruneAt = now.Add(r.window)
	}
	last, seen := r.last[key]
	if !seen && len(r.last) >= r.maxKeys {
		if !r.overflow.IsZero() && now.Before(r.overflow.Add(r.window)) {
			return false
		}
		r.overflow = now
		return true
	}
	if seen && now.Before(last.Add(r.window)) {
		return false
	}
	r.last[key] = now
	return true
}
