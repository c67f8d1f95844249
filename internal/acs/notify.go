package acs

import "sync"

// notifier wakes API callers waiting for a transaction when one of its
// tasks finishes.
type notifier struct {
	mu      sync.Mutex
	waiters map[int64]map[chan struct{}]struct{}
}

func newNotifier() *notifier { return &notifier{waiters: map[int64]map[chan struct{}]struct{}{}} }

// subscribe returns a channel that receives after each finished task of
// txn. Subscribe before reading the state, so no finish is missed.
func (n *notifier) subscribe(txn int64) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	n.mu.Lock()
	if n.waiters[txn] == nil {
		n.waiters[txn] = map[chan struct{}]struct{}{}
	}
	n.waiters[txn][ch] = struct{}{}
	n.mu.Unlock()
	return ch, func() {
		n.mu.Lock()
		delete(n.waiters[txn], ch)
		if len(n.waiters[txn]) == 0 {
			delete(n.waiters, txn)
		}
		n.mu.Unlock()
	}
}

func (n *notifier) notify(txn int64) {
	n.mu.Lock()
	for ch := range n.waiters[txn] {
		select {
		case ch <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
	n.mu.Unlock()
}
