package acs

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// informBatcher is a group commit for Informs: sessions hand their update
// over and wait; one writer takes everything that queued up while the
// previous batch was committing and writes it in one transaction. The
// InformResponse is only sent after the commit, so an acknowledged Inform
// is never lost, and under load the cost of a commit is shared by many.
type informBatcher struct {
	store    *Store
	in       chan *informReq
	stopped  chan struct{} // closed when Run has returned
	maxBatch int
	writers  int
	log      *slog.Logger
	// onFlush observes batch sizes and durations (metrics).
	onFlush func(n int, took time.Duration, err error)
}

type informReq struct {
	up    InformUpdate
	reply chan informReply
}

type informReply struct {
	res InformResult
	err error
}

var errBatcherStopped = errors.New("acs is stopping")

func newInformBatcher(store *Store, maxBatch, writers int, log *slog.Logger) *informBatcher {
	if maxBatch <= 0 || maxBatch > MaxInformBatch {
		maxBatch = MaxInformBatch
	}
	if writers <= 0 {
		writers = 1
	}
	return &informBatcher{store: store, in: make(chan *informReq, maxBatch*writers*4), stopped: make(chan struct{}),
		maxBatch: maxBatch, writers: writers, log: log}
}

// Apply queues u and waits for its batch to commit.
func (b *informBatcher) Apply(ctx context.Context, u InformUpdate) (InformResult, error) {
	req := &informReq{up: u, reply: make(chan informReply, 1)}
	select {
	case b.in <- req:
	case <-b.stopped:
		return InformResult{}, errBatcherStopped
	case <-ctx.Done():
		return InformResult{}, ctx.Err()
	}
	select {
	case r := <-req.reply:
		return r.res, r.err
	case <-b.stopped:
		// Run drains the queue before closing stopped; a reply may have
		// raced with it.
		select {
		case r := <-req.reply:
			return r.res, r.err
		default:
			return InformResult{}, errBatcherStopped
		}
	case <-ctx.Done():
		// The write may still commit; the CPE was not told, so it will
		// Inform again and the upsert is idempotent.
		return InformResult{}, ctx.Err()
	}
}

// Run writes batches until ctx ends, then fails what is still queued.
func (b *informBatcher) Run(ctx context.Context) error {
	done := make(chan struct{})
	for i := 0; i < b.writers; i++ {
		go func() {
			defer func() { done <- struct{}{} }()
			b.writer(ctx)
		}()
	}
	for i := 0; i < b.writers; i++ {
		<-done
	}
	close(b.stopped)
	for {
		select {
		case req := <-b.in:
			req.reply <- informReply{err: errBatcherStopped}
		default:
			return nil
		}
	}
}

func (b *informBatcher) writer(ctx context.Context) {
	var carry *informReq // a second Inform of a device already in the batch
	for {
		var first *informReq
		if carry != nil {
			first, carry = carry, nil
		} else {
			select {
			case first = <-b.in:
			case <-ctx.Done():
				return
			}
		}
		batch := []*informReq{first}
		keys := map[DeviceKey]bool{first.up.Key: true}
	collect:
		for len(batch) < b.maxBatch {
			select {
			case req := <-b.in:
				if keys[req.up.Key] {
					carry = req
					break collect
				}
				keys[req.up.Key] = true
				batch = append(batch, req)
			default:
				break collect
			}
		}
		b.flush(ctx, batch)
	}
}

func (b *informBatcher) flush(ctx context.Context, batch []*informReq) {
	ups := make([]InformUpdate, len(batch))
	for i, r := range batch {
		ups[i] = r.up
	}
	began := time.Now()
	// The commit must finish even while stopping: the sessions wait for it.
	ctx = context.WithoutCancel(ctx)
	res, err := b.store.ApplyInforms(ctx, ups)
	if b.onFlush != nil {
		b.onFlush(len(batch), time.Since(began), err)
	}
	if err == nil {
		for i, r := range batch {
			r.reply <- informReply{res: res[i]}
		}
		return
	}
	if len(batch) == 1 {
		batch[0].reply <- informReply{err: err}
		return
	}
	// One row the database refuses must not fail its neighbours: each
	// row gets a transaction of its own, and only the bad ones fail.
	b.log.Warn("inform batch failed; writing its informs one by one", "informs", len(batch), "err", err)
	for _, r := range batch {
		one, err := b.store.ApplyInforms(ctx, []InformUpdate{r.up})
		if err != nil {
			r.reply <- informReply{err: err}
			continue
		}
		r.reply <- informReply{res: one[0]}
	}
}
