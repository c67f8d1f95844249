package tr143

import (
	"sync"
	"time"
)

// SpeedDelayBlock is how many bytes one SpeedDelay pays for after the first
// stall. It exceeds the speedtest target's default file (10 MB) with its
// headers, so a file-based test of that file is stretched by exactly one
// delay, and any test, file or time based, moves at most one block per
// delay: a ceiling on the measured speed, not a wait beside it.
const SpeedDelayBlock = 16 << 20

// pacer throttles one run's transfer, shared by its connections as one
// slow link would be: the link stalls for delay once the first payload
// byte has been counted and again after every SpeedDelayBlock bytes. A
// stall holds every connection, and it falls between BOM and EOM, so both
// the times and, in a time-based test, the bytes show it.
type pacer struct {
	delay time.Duration
	done  <-chan struct{}
	// until ends stalls with a time-based test's window: past it nothing
	// is counted, so stalling longer would only hold the connection.
	until time.Time

	mu    sync.Mutex
	moved int64     // payload bytes counted so far, all connections
	next  int64     // moved value at which the next stall starts
	gate  time.Time // no byte is counted before this instant
}

func newPacer(delay time.Duration, done <-chan struct{}, until time.Time) *pacer {
	if delay <= 0 {
		return nil
	}
	return &pacer{delay: delay, done: done, until: until, next: 1}
}

// take returns how many of n bytes may be counted now (at least 1) and
// waits first while the link is stalled. After the caller counts them it
// calls moved.
func (p *pacer) take(n int) int {
	p.mu.Lock()
	gate := p.gate
	k := min(int64(n), max(p.next-p.moved, 1))
	p.mu.Unlock()
	p.wait(gate)
	return int(k)
}

// counted records k bytes as moved and starts a stall when they reach the
// next block boundary.
func (p *pacer) counted(k int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.moved += int64(k)
	if p.moved >= p.next {
		p.gate = time.Now().Add(p.delay)
		p.next = p.moved + SpeedDelayBlock
	}
}

// wait sleeps until gate, the window's end or the run's end, whichever is
// first.
func (p *pacer) wait(gate time.Time) {
	if !p.until.IsZero() && gate.After(p.until) {
		gate = p.until
	}
	d := time.Until(gate)
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-p.done:
	}
}
