// Package ingest takes RESULT messages off the grid and stores them in the
// result store with zero loss: batched inserts, acknowledgement to the grid
// only after a row is stored or parked, dedup through the map
// fccResultDedup and the store's natural key, and the dead-letter store for
// LATE rows and a full buffer.
//
// The life of one message:
//
//	fetch -> decode (INVALID: park, ack)
//	      -> in fccResultDedup? (count dedup.skipped, ack)
//	      -> arrived after stopped_at + stop-grace? (park LATE, ack)
//	      -> buffer full? (park BUFFER_FULL, ack; DEGRADED)
//	      -> buffer -> insert batch -> put keys in fccResultDedup -> ack
//
// A writer goroutine inserts and settles one batch while Run fills the
// next. While an insert fails the rows stay buffered and their deliveries
// are kept alive (InProgress) rather than handed back: a redelivery would only
// be caught by the buffer again, and holding them keeps the grid's count of
// unacknowledged messages equal to what is really outstanding. A row that
// can be neither stored nor parked is handed back (Nak) for a later
// delivery; nothing is ever acknowledged without being stored or parked,
// so fcc.result.lost stays 0.
//
// Bound: the buffer (batch being filled, batches with the writer) holds at
// most svc.fcc.result.queue-capacity rows. The grid bounds it too: its
// queue consumer hands out at most 1000 unacknowledged messages (the NATS
// server's default MaxAckPending). With the default capacity of 10,000 a
// long store outage therefore backs results up in the grid's durable queue
// once 1000 are held, and BUFFER_FULL parking happens only with a capacity
// below that.
package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/fcc/results"
	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/grid"
	"cpesuite/internal/platform/health"
	"cpesuite/internal/platform/service"
)

// ResendReport is the answer of POST /FCC/admin/result-dead-letter/resend.
type ResendReport struct {
	Resent    int `json:"resent"`
	Remaining int `json:"remaining"`
}

// RunInfo tells the ingester when a run's after-stop window closes.
type RunInfo interface {
	// AfterStopDeadline returns stopped_at + svc.fcc.stop-grace of the run.
	// ok is false while the run is not stopped (nothing of it is late).
	AfterStopDeadline(ctx context.Context, activationID int64) (deadline time.Time, ok bool, err error)
}

// Gate reports the result store's state (results.Probe).
type Gate interface {
	Status() results.Status
}

// Deps are what an Ingester works with.
type Deps struct {
	// Queue is fccResultQueue (OpenQueue).
	Queue *grid.Queue
	// Dedup is fccResultDedup (OpenDedup).
	Dedup *grid.Map
	Store results.Store
	// Gate, when set, holds inserts back while the store is not UP, so a
	// store known to be down is not hammered. Nil: always try.
	Gate        Gate
	DeadLetters DeadLetters
	// Runs, when nil, makes nothing LATE.
	Runs    RunInfo
	Metrics prometheus.Registerer
	Log     *slog.Logger
}

// OpenQueue declares the queue fccResultQueue with the options both sides
// use.
func OpenQueue(ctx context.Context, g *grid.Grid) (*grid.Queue, error) {
	return grid.NewQueue(ctx, g, fccwire.QueueResults, grid.QueueOptions{})
}

// OpenDedup declares the map fccResultDedup whose entries live ttl
// (svc.fcc.dedup.ttl).
func OpenDedup(ctx context.Context, g *grid.Grid, ttl time.Duration) (*grid.Map, error) {
	return grid.NewMap(ctx, g, fccwire.MapResultDedup, grid.MapOptions{TTL: ttl})
}

// Bounds of the grid round trips a batch makes. Acks, map reads and map
// writes are one request each; running many at once is what lets a batch
// of a thousand settle in a few round-trip times instead of a thousand.
const (
	gridConcurrency = 64
	// gridTimeout bounds one ack or map request: a grid that does not
	// answer makes the message come back later, which dedup absorbs.
	gridTimeout = 5 * time.Second
	// fetchRetry is the wait after a failed fetch (grid down).
	fetchRetry = 200 * time.Millisecond
)

// Ingester is the consume loop, the dead-letter resend and the health of
// result ingestion. It is a service.Service; Resend may be called while it
// runs.
type Ingester struct {
	cfg Config
	d   Deps
	m   *metrics
	log *slog.Logger

	// held counts buffered rows for Degraded and the health indicator;
	// the buffer itself belongs to the Run goroutine.
	held     atomic.Int64
	degraded atomic.Bool

	// Owned by Run: rows not yet handed to the writer, every row held
	// (pending and in flight) by key, and how many are in flight.
	pending  []*entry
	byKey    map[string]*entry
	inflight int
	alive    time.Time
	jobs     chan []*entry
	done     chan written

	resendMu sync.Mutex
}

// entry is one buffered row and every delivery that carried it (a
// redelivery or a re-publish that arrives while the row waits).
type entry struct {
	key     string
	row     results.Row
	arrived time.Time
	// ds is read by the writer once the entry is in flight; deliveries that
	// come meanwhile go to extra, which only Run touches.
	ds       []*grid.Delivery
	extra    []*grid.Delivery
	inflight bool
}

// New returns an Ingester. cfg must be valid (Config.Validate).
func New(cfg Config, d Deps) *Ingester {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	return &Ingester{
		cfg:   cfg,
		d:     d,
		m:     newMetrics(d.Metrics),
		log:   d.Log.With("component", "fcc-result-ingest"),
		byKey: make(map[string]*entry),
	}
}

// Start implements service.Service.
func (in *Ingester) Start(context.Context) error {
	if err := in.cfg.Validate(); err != nil {
		return err
	}
	switch {
	case in.d.Queue == nil, in.d.Dedup == nil, in.d.Store == nil, in.d.DeadLetters == nil:
		return errors.New("result ingestion: queue, dedup map, result store and dead-letter store are all required")
	}
	return nil
}

// Stop implements service.Service. Run has already handed back what it
// held.
func (in *Ingester) Stop(context.Context) error { return nil }

// Degraded reports whether the buffer is at svc.fcc.result.queue-capacity:
// new rows are being parked as BUFFER_FULL.
func (in *Ingester) Degraded() bool { return in.degraded.Load() }

// Buffered returns the rows held in memory.
func (in *Ingester) Buffered() int { return int(in.held.Load()) }

// Health is the indicator for /actuator/health: UP, or DEGRADED with
// details.reason BUFFER_FULL.
func (in *Ingester) Health(context.Context) health.Result {
	details := map[string]any{"buffered": in.Buffered(), "capacity": in.cfg.QueueCapacity}
	if in.Degraded() {
		details["reason"] = string(ReasonBufferFull)
		return health.Result{Status: health.StatusDegraded, Details: details}
	}
	return health.Result{Status: health.StatusUp, Details: details}
}

// Run implements service.Service: it consumes until ctx ends. It does not
// flush on the way out (a batch the writer has stored is still acked): rows not yet stored are handed back to the grid
// (Nak) and come again to whichever consumer runs next, which is also what
// happens, only after the queue's ack wait, when the process is killed.
func (in *Ingester) Run(ctx context.Context) error {
	// Batches are written while the next ones fill: the inserts and the
	// grid round trips of stored batches overlap with fetching and decoding,
	// and with a store whose every insert takes long (ClickHouse) several
	// inserts run at once. At most 2 * Writers batches are out of Run's
	// hands, so done never blocks a writer.
	in.jobs, in.done = make(chan []*entry, in.cfg.Writers), make(chan written, 2*in.cfg.Writers)
	var writers sync.WaitGroup
	for range in.cfg.Writers {
		writers.Go(func() { in.write(ctx) })
	}
	defer func() {
		close(in.jobs)
		writers.Wait()
		in.collect(ctx)
		in.giveBack()
	}()
	in.alive = time.Now()
	failedFetches := 0
	for ctx.Err() == nil {
		in.collect(ctx)
		now := time.Now()
		in.dispatch(now)
		if len(in.byKey) > 0 && now.Sub(in.alive) >= in.cfg.KeepAlive {
			in.keepAlive()
		}
		ds, err := in.d.Queue.Fetch(ctx, in.cfg.BatchSize, in.fetchWait(now))
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			failedFetches++
			if failedFetches == 1 || failedFetches%100 == 0 {
				in.log.Warn("fetching results from the grid failed; retrying", "err", err, "failures", failedFetches)
			}
			sleep(ctx, fetchRetry)
			continue
		}
		if failedFetches > 0 {
			in.log.Info("fetching results from the grid works again", "failures", failedFetches)
			failedFetches = 0
		}
		if len(ds) > 0 {
			in.handle(ctx, ds)
		}
	}
	return nil
}

// dispatchWait bounds a fetch while a due batch waits for the writer or a
// batch is in flight, so its completion is noticed soon.
const dispatchWait = 5 * time.Millisecond

// fetchWait is how long the next fetch may wait for a first message: until
// the next flush, retry or keep-alive is due.
func (in *Ingester) fetchWait(now time.Time) time.Duration {
	wait := in.cfg.FlushInterval
	if in.inflight > 0 || in.flushDue(now) {
		wait = dispatchWait
	}
	if len(in.pending) > 0 {
		next := minTime(in.pending[0].arrived.Add(in.cfg.FlushInterval), in.alive.Add(in.cfg.KeepAlive))
		wait = min(wait, next.Sub(now))
	}
	// A wait of 0 or less still takes what is ready; Fetch handles it.
	return wait
}

// flushDue reports whether a batch should go to the writer now.
func (in *Ingester) flushDue(now time.Time) bool {
	if len(in.pending) == 0 {
		return false
	}
	return len(in.pending) >= in.cfg.BatchSize || !now.Before(in.pending[0].arrived.Add(in.cfg.FlushInterval))
}

// dispatch hands due batches to the writer while it has room.
func (in *Ingester) dispatch(now time.Time) {
	for in.flushDue(now) {
		n := min(len(in.pending), in.cfg.BatchSize)
		batch := slices.Clone(in.pending[:n])
		select {
		case in.jobs <- batch:
		default:
			return
		}
		for _, e := range batch {
			e.inflight = true
		}
		in.inflight += n
		clear(in.pending[:n])
		in.pending = in.pending[n:]
		if len(in.pending) == 0 {
			// Let the backing array go instead of creeping along it.
			in.pending = nil
		}
	}
}

// collect takes the writer's finished batches: their keys leave the
// buffer, and deliveries that came while they were in flight are acked
// (stored) or handed back (not stored).
func (in *Ingester) collect(ctx context.Context) {
	for {
		select {
		case w := <-in.done:
			var ack, nak []*grid.Delivery
			for _, e := range w.batch {
				delete(in.byKey, e.key)
				if w.stored {
					ack = append(ack, e.extra...)
				} else {
					nak = append(nak, e.extra...)
				}
			}
			in.inflight -= len(w.batch)
			// Each came for a key that was being stored: a duplicate
			// dropped without a map read.
			in.m.dedupSkipped.Add(float64(len(ack)))
			in.ackAll(ctx, ack)
			for _, d := range nak {
				_ = d.Nak(0)
			}
			in.updateHeld()
		default:
			return
		}
	}
}

func (in *Ingester) updateHeld() {
	n := len(in.pending) + in.inflight
	in.held.Store(int64(n))
	in.m.buffered.Set(float64(n))
	if n < in.cfg.QueueCapacity {
		in.setDegraded(false)
	}
}

// decoded is what handle learns about one delivery.
type decoded struct {
	d   *grid.Delivery
	r   *fccwire.Result
	key string
	err error
	dup bool // in fccResultDedup
}

// handle sorts one fetched batch into skipped, parked and buffered rows.
func (in *Ingester) handle(ctx context.Context, ds []*grid.Delivery) {
	items := make([]decoded, len(ds))
	// Decoding is the costliest step per message (see decodeResult), so it
	// runs on every core.
	parallel(len(ds), runtime.GOMAXPROCS(0), func(i int) {
		items[i].d = ds[i]
		r, err := decodeResult(ds[i].Data)
		if err != nil {
			items[i].err = err
			return
		}
		items[i].r = r
		items[i].key = items[i].r.NaturalKey()
	})
	// Keys already buffered need no map read: the row is on its way.
	var lookups []int
	for i := range items {
		if items[i].err == nil && in.byKey[items[i].key] == nil {
			lookups = append(lookups, i)
		}
	}
	parallel(len(lookups), gridConcurrency, func(j int) {
		it := &items[lookups[j]]
		gctx, cancel := context.WithTimeout(ctx, gridTimeout)
		defer cancel()
		_, ok, err := in.d.Dedup.Get(gctx, it.key)
		if err != nil {
			// The store's natural key still holds; a miss costs one
			// idempotent insert at most.
			in.log.Debug("reading fccResultDedup failed; treating as absent", "key", it.key, "err", err)
			return
		}
		it.dup = ok
	})

	deadlines := make(map[int64]deadline)
	var park []parkItem
	var acks []*grid.Delivery
	for i := range items {
		it := &items[i]
		switch {
		case it.err != nil:
			sum := sha256.Sum256(it.d.Data)
			park = append(park, parkItem{d: it.d, p: Parked{
				NaturalKey: "invalid." + hex.EncodeToString(sum[:16]), Reason: ReasonInvalid,
				Detail: it.err.Error(), Payload: it.d.Data,
			}})
			continue
		case it.dup:
			in.m.dedupSkipped.Inc()
			acks = append(acks, it.d)
			continue
		}
		if e := in.byKey[it.key]; e != nil {
			if e.inflight {
				e.extra = append(e.extra, it.d)
			} else {
				e.ds = append(e.ds, it.d)
			}
			continue
		}
		if in.late(ctx, deadlines, it) {
			park = append(park, parkItem{d: it.d, p: Parked{
				NaturalKey: it.key, Reason: ReasonLate, ActivationID: it.r.ActivationID, Payload: it.d.Data,
			}})
			continue
		}
		if len(in.pending)+in.inflight >= in.cfg.QueueCapacity {
			in.setDegraded(true)
			park = append(park, parkItem{d: it.d, p: Parked{
				NaturalKey: it.key, Reason: ReasonBufferFull, ActivationID: it.r.ActivationID, Payload: it.d.Data,
			}})
			continue
		}
		e := &entry{key: it.key, arrived: time.Now(), ds: []*grid.Delivery{it.d}, row: results.Row{
			Result: *it.r, Source: results.SourceACS, Created: time.Now().UTC(),
		}}
		in.pending = append(in.pending, e)
		in.byKey[it.key] = e
	}
	n := len(in.pending) + in.inflight
	in.held.Store(int64(n))
	in.m.buffered.Set(float64(n))
	in.ackAll(ctx, acks)
	in.park(ctx, park)
}

type deadline struct {
	at time.Time
	ok bool
}

// late reports whether the message reached the grid after its run's
// after-stop window. The grid's timestamp, not the time the ingester got
// to it, decides: a result that waited in the queue while the ingester was
// down or behind arrived in time.
func (in *Ingester) late(ctx context.Context, cache map[int64]deadline, it *decoded) bool {
	if in.d.Runs == nil {
		return false
	}
	id := it.r.ActivationID
	dl, seen := cache[id]
	if !seen {
		at, ok, err := in.d.Runs.AfterStopDeadline(ctx, id)
		if err != nil {
			// Storing a late row loses nothing; parking an in-time one
			// would hide it until a resend. Not late, then, and not cached.
			in.log.Warn("reading the run's stop deadline failed; result taken as in time", "activationId", id, "err", err)
			return false
		}
		dl = deadline{at: at, ok: ok}
		cache[id] = dl
	}
	return dl.ok && it.d.Published.After(dl.at)
}

type parkItem struct {
	d *grid.Delivery
	p Parked
}

// park stores rows in the dead-letter store and acks them; if that store
// fails they go back to the grid for a later delivery.
func (in *Ingester) park(ctx context.Context, items []parkItem) {
	if len(items) == 0 {
		return
	}
	rows := make([]Parked, len(items))
	now := time.Now().UTC()
	for i, it := range items {
		rows[i] = it.p
		rows[i].ParkedAt = now
	}
	if err := in.d.DeadLetters.Park(ctx, rows); err != nil {
		in.m.parkFailures.Inc()
		in.log.Error("parking result rows failed; handing them back to the grid", "rows", len(rows), "err", err)
		for _, it := range items {
			// A failed Nak leaves the message to the ack wait: it comes back
			// either way.
			_ = it.d.Nak(in.cfg.RetryMin)
		}
		return
	}
	ds := make([]*grid.Delivery, len(items))
	for i, it := range items {
		ds[i] = it.d
		in.m.parked.WithLabelValues(string(it.p.Reason)).Inc()
		if it.p.Reason == ReasonLate {
			in.m.late.Inc()
		}
	}
	in.ackAll(ctx, ds)
}

// ackAll acks deliveries whose rows are stored or parked.
func (in *Ingester) ackAll(ctx context.Context, ds []*grid.Delivery) {
	var failed atomic.Int64
	parallel(len(ds), gridConcurrency, func(i int) {
		// The row is safe already, so the ack must not be abandoned because
		// the loop is stopping.
		gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gridTimeout)
		defer cancel()
		if err := ds[i].Ack(gctx); err != nil {
			failed.Add(1)
		}
	})
	if n := failed.Load(); n > 0 {
		in.m.ackFailures.Add(float64(n))
		in.log.Warn("acknowledging stored results failed; the grid will redeliver them and dedup drops them", "messages", n)
	}
}

// keepAlive restarts the ack wait of every delivery Run holds (the writer
// keeps its own alive while it retries).
func (in *Ingester) keepAlive() {
	for _, e := range in.byKey {
		ds := e.ds
		if e.inflight {
			ds = e.extra
		}
		for _, d := range ds {
			_ = d.InProgress()
		}
	}
	in.alive = time.Now()
}

// giveBack hands every delivery Run still holds back to the grid at once
// (the writer has handed back its own).
func (in *Ingester) giveBack() {
	for _, e := range in.pending {
		for _, d := range e.ds {
			_ = d.Nak(0)
		}
	}
	in.pending = nil
	in.inflight = 0
	clear(in.byKey)
	in.held.Store(0)
	in.m.buffered.Set(0)
	in.setDegraded(false)
}

func (in *Ingester) setDegraded(v bool) {
	if in.degraded.Swap(v) != v {
		if v {
			in.log.Warn("result buffer full; new rows are parked as BUFFER_FULL", "capacity", in.cfg.QueueCapacity)
		} else {
			in.log.Info("result buffer below capacity again")
		}
		in.m.degraded.Set(b2f(v))
	}
}

// Resend re-inserts up to limit parked rows (LATE and BUFFER_FULL, never
// INVALID) into the result store, oldest first, and marks them resent in
// the same pass. Rows are stored as the ACS sent them (a LATE row keeps
// its afterStop). The store's natural key makes it idempotent: a row
// stored meanwhile by a redelivery is not stored twice.
func (in *Ingester) Resend(ctx context.Context, limit int) (ResendReport, error) {
	if limit < 1 || limit > in.cfg.ResendBatchSize {
		return ResendReport{}, apperr.New(apperr.ErrInvalid, "", "limit must be from 1 to %d", in.cfg.ResendBatchSize)
	}
	in.resendMu.Lock()
	defer in.resendMu.Unlock()
	parked, err := in.d.DeadLetters.Pending(ctx, limit)
	if err != nil {
		return ResendReport{}, apperr.Wrap(apperr.ErrUnavailable, err, "", "reading the dead-letter store")
	}
	rows := make([]results.Row, 0, len(parked))
	ids := make([]int64, 0, len(parked))
	keys := make([]string, 0, len(parked))
	now := time.Now().UTC()
	for _, p := range parked {
		var r fccwire.Result
		// The bytes passed the contract when they were parked.
		if err := json.Unmarshal(p.Payload, &r); err != nil {
			in.log.Error("parked result row unreadable; left in place", "id", p.ID, "err", err)
			continue
		}
		rows = append(rows, results.Row{Result: r, Source: results.SourceACS, Created: now})
		ids = append(ids, p.ID)
		keys = append(keys, p.NaturalKey)
	}
	if len(rows) > 0 {
		if _, err := in.d.Store.Insert(ctx, rows); err != nil {
			in.m.insertFailures.Inc()
			return ResendReport{}, apperr.Wrap(apperr.ErrUnavailable, err, "", "inserting parked rows into the result store")
		}
		parallel(len(keys), gridConcurrency, func(i int) {
			gctx, cancel := context.WithTimeout(ctx, gridTimeout)
			defer cancel()
			_ = in.d.Dedup.Put(gctx, keys[i], []byte{1}, in.cfg.DedupTTL)
		})
		if err := in.d.DeadLetters.MarkResent(ctx, ids, now); err != nil {
			// The rows are stored; the next resend inserts them again, which
			// the natural key makes harmless.
			return ResendReport{}, apperr.Wrap(apperr.ErrUnavailable, err, "", "marking parked rows resent")
		}
		in.m.resent.Add(float64(len(ids)))
	}
	remaining, err := in.d.DeadLetters.CountPending(ctx)
	if err != nil {
		return ResendReport{}, apperr.Wrap(apperr.ErrUnavailable, err, "", "counting parked rows")
	}
	return ResendReport{Resent: len(ids), Remaining: remaining}, nil
}

// parallel calls fn(0..n-1) on up to workers goroutines.
func parallel(n, workers int, fn func(i int)) {
	if n <= 1 || workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func b2f(v bool) float64 {
	if v {
		return 1
	}
	return 0
}

var (
	_ service.Service  = (*Ingester)(nil)
	_ health.Indicator = (*Ingester)(nil)
)
