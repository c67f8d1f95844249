package ingest

import (
	"context"
	"time"

	"cpesuite/internal/fcc/results"
)

// written reports a batch back to Run.
type written struct {
	batch  []*entry
	stored bool
}

// write is the writer goroutine: it inserts each batch Run hands it,
// retrying while the store fails, then settles it. It returns when Run
// closes jobs.
func (in *Ingester) write(ctx context.Context) {
	for batch := range in.jobs {
		stored := in.store(ctx, batch)
		if stored {
			in.settle(ctx, batch)
		} else {
			// Only a stop ends the retries: give the messages back now
			// rather than after the ack wait.
			for _, e := range batch {
				for _, d := range e.ds {
					_ = d.Nak(0)
				}
			}
		}
		in.done <- written{batch: batch, stored: stored}
	}
}

// store inserts batch, retrying with back-off until it is stored (true)
// or ctx ends (false). Meanwhile it keeps the batch's deliveries alive so
// the grid does not hand them to anyone else.
func (in *Ingester) store(ctx context.Context, batch []*entry) bool {
	rows := make([]results.Row, len(batch))
	for i, e := range batch {
		rows[i] = e.row
	}
	var backoff time.Duration
	alive := time.Now()
	for ctx.Err() == nil {
		err := in.gate()
		if err == nil {
			var added int
			added, err = in.d.Store.Insert(ctx, rows)
			if err == nil {
				in.m.stored.Add(float64(added))
				in.m.batches.Inc()
				if backoff > 0 {
					in.log.Info("inserting results works again", "rows", len(rows))
				}
				return true
			}
			if ctx.Err() != nil {
				return false
			}
			in.m.insertFailures.Inc()
		}
		if backoff == 0 {
			backoff = in.cfg.RetryMin
			in.log.Warn("inserting results failed; rows stay buffered and are retried", "rows", len(rows), "err", err)
		} else {
			backoff = min(2*backoff, in.cfg.RetryMax)
			in.log.Debug("inserting results failed again", "rows", len(rows), "retryIn", backoff, "err", err)
		}
		for until := time.Now().Add(backoff); ctx.Err() == nil && time.Now().Before(until); {
			if time.Since(alive) >= in.cfg.KeepAlive {
				for _, e := range batch {
					for _, d := range e.ds {
						_ = d.InProgress()
					}
				}
				alive = time.Now()
			}
			sleep(ctx, min(time.Until(until), in.cfg.KeepAlive))
		}
	}
	return false
}

// gate holds inserts back while the probe says the store is not UP.
func (in *Ingester) gate() error {
	if in.d.Gate == nil {
		return nil
	}
	if st := in.d.Gate.Status(); st.State != results.StateUp {
		return &gateError{st}
	}
	return nil
}

type gateError struct{ st results.Status }

func (e *gateError) Error() string {
	return "result store is " + string(e.st.State) + ": " + e.st.Reason
}

// settle runs after a batch is stored: each key goes into fccResultDedup
// (so a later re-publish is dropped without an insert), then that row's
// deliveries are acked. A failed map write or ack only means the message
// may come again; the map or the store's natural key drops it then.
func (in *Ingester) settle(ctx context.Context, batch []*entry) {
	var failed int64
	failures := make([]int64, len(batch))
	parallel(len(batch), gridConcurrency, func(i int) {
		e := batch[i]
		gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gridTimeout)
		defer cancel()
		if err := in.d.Dedup.Put(gctx, e.key, []byte{1}, in.cfg.DedupTTL); err != nil {
			in.log.Debug("writing fccResultDedup failed", "key", e.key, "err", err)
		}
		for _, d := range e.ds {
			if err := d.Ack(gctx); err != nil {
				failures[i]++
			}
		}
	})
	for _, n := range failures {
		failed += n
	}
	if failed > 0 {
		in.m.ackFailures.Add(float64(failed))
		in.log.Warn("acknowledging stored results failed; the grid will redeliver them and dedup drops them", "messages", failed)
	}
}
