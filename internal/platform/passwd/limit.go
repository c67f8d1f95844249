package passwd

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"
)

// ErrBusy is returned (wrapped in a *BusyError) by a Limiter that could not
// give the caller a hashing slot: its wait queue was full or the wait ran
// past the queue's deadline. It is an overload of the whole service, not
// of one client, so callers answer 503 with Retry-After.
var ErrBusy = errors.New("passwd: too many password checks in progress")

// BusyError is a refusal of a Limiter; RetryAfter is a hint for the
// Retry-After header, in whole seconds and at least one.
type BusyError struct{ RetryAfter time.Duration }

func (e *BusyError) Error() string {
	return fmt.Sprintf("%v; retry after %s", ErrBusy, e.RetryAfter)
}

func (e *BusyError) Unwrap() error { return ErrBusy }

// Limiter bounds how many argon2 computations run at once. Every
// verification holds 19 MiB and a core for tens of milliseconds, so an
// unbounded login flood multiplies both by the number of open requests
// (issue 18: 128 concurrent bogus logins took a process to 6.2 GB) and
// starves everything else in the process. A Limiter keeps at most
// Concurrency computations running and at most Queue callers waiting, each
// for at most MaxWait; everyone else is refused at once, cheaply.
//
// One Limiter must be shared by every caller in a process (Shared),
// because the memory and cores it protects are the process's.
type Limiter struct {
	slots   chan struct{}
	waiters chan struct{}
	maxWait time.Duration
}

// LimiterConfig sizes a Limiter. Zero fields take the defaults of
// NewLimiter.
type LimiterConfig struct {
	// Concurrency is the number of hashes computed at once.
	Concurrency int
	// Queue is the number of callers that may wait for a slot.
	Queue int
	// MaxWait bounds one caller's wait for a slot.
	MaxWait time.Duration
}

// Defaults of a Limiter. Half the cores (at least one) leaves the other
// half to the rest of the process (the ACS shares it under `cpesuite up`).
// Eight waiters per slot, each waiting at most two seconds, absorb the
// bursts of a room of people logging in at nine o'clock, while a flood
// finds the queue full and is refused without a hash.
const (
	DefaultQueuePerSlot = 8
	DefaultMaxWait      = 2 * time.Second
)

// NewLimiter returns a Limiter; zero fields of cfg take the defaults
// (GOMAXPROCS/2 slots, at least one; DefaultQueuePerSlot waiters per slot;
// DefaultMaxWait).
func NewLimiter(cfg LimiterConfig) *Limiter {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = max(1, runtime.GOMAXPROCS(0)/2)
	}
	if cfg.Queue <= 0 {
		cfg.Queue = cfg.Concurrency * DefaultQueuePerSlot
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = DefaultMaxWait
	}
	return &Limiter{
		slots:   make(chan struct{}, cfg.Concurrency),
		waiters: make(chan struct{}, cfg.Queue),
		maxWait: cfg.MaxWait,
	}
}

var shared = NewLimiter(LimiterConfig{})

// Shared returns the process's Limiter, the one every service should use
// unless a test hands it another.
func Shared() *Limiter { return shared }

// busy is the refusal of a full queue or an expired wait. A second is
// about what a queue of waiters takes to drain at tens of milliseconds
// each; telling clients to come back sooner would only refill it.
func (l *Limiter) busy() error {
	return &BusyError{RetryAfter: max(time.Second, l.maxWait.Round(time.Second))}
}

// acquire waits for a slot. It returns ctx's error when ctx ends first
// (the client has gone: no hash is computed for nobody), and a *BusyError
// when the queue is full or the wait exceeds MaxWait.
func (l *Limiter) acquire(ctx context.Context) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	release = func() { <-l.slots }
	select {
	case l.slots <- struct{}{}:
		return release, nil
	default:
	}
	select {
	case l.waiters <- struct{}{}:
	default:
		return nil, l.busy()
	}
	defer func() { <-l.waiters }()
	t := time.NewTimer(l.maxWait)
	defer t.Stop()
	select {
	case l.slots <- struct{}{}:
		// The client may have left while this caller waited; select picks
		// at random among ready cases, so look once more.
		if err := ctx.Err(); err != nil {
			release()
			return nil, err
		}
		return release, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, l.busy()
	}
}

// Verify is the package's Verify within the limit.
func (l *Limiter) Verify(ctx context.Context, encoded, password string) (bool, error) {
	release, err := l.acquire(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	return Verify(encoded, password)
}

// Hash is the package's Hash within the limit.
func (l *Limiter) Hash(ctx context.Context, password string) (string, error) {
	release, err := l.acquire(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	return Hash(password)
}

// Do runs fn, which must compute hashes, within the limit: tests use it
// to hold slots, and callers to count a computation that is not Verify or
// Hash.
func (l *Limiter) Do(ctx context.Context, fn func()) error {
	release, err := l.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	fn()
	return nil
}

// RetryAfter returns the wait of a *BusyError in err.
func RetryAfter(err error) (time.Duration, bool) {
	var be *BusyError
	if !errors.As(err, &be) {
		return 0, false
	}
	return be.RetryAfter, true
}

// InUse is the number of hashes being computed now.
func (l *Limiter) InUse() int { return len(l.slots) }

// Waiting is the number of callers waiting for a slot now.
func (l *Limiter) Waiting() int { return len(l.waiters) }
