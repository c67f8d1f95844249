package ingest

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/fcc/results"
	"cpesuite/internal/platform/grid"
	"cpesuite/internal/platform/health"
)

// TestIngest holds the consume loop to its promises on every NATS server
// the grid supports: each message stored once and acked only after that,
// duplicates dropped by the map and by the store's key, LATE rows and a full
// buffer parked, a store outage and a restart survived without a loss.
func TestIngest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		fn   func(t *testing.T, g *grid.Grid)
	}{
		{"EveryMessageStoredOnce", testStoredOnce},
		{"RedeliveryDroppedByDedupMap", testRedeliveryDropped},
		{"KeyInStoreButNotInMap", testKeyInStoreNotInMap},
		{"MapEntryExpired", testMapEntryExpired},
		{"LateParked", testLate},
		{"FullBufferParksAndDegrades", testFullBuffer},
		{"StoreDownNothingAckedNothingLost", testStoreDown},
		{"DeadLettersDownMessagesGoBack", testDeadLettersDown},
		{"RestartRedeliversUnacked", testRestart},
		{"InvalidParked", testInvalid},
		{"GateHoldsInsertsBack", testGate},
	}
	for _, flavour := range gridFlavours {
		t.Run(flavour, func(t *testing.T) {
			t.Parallel()
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.fn(t, newGrid(t, flavour))
				})
			}
		})
	}
}

func testStoredOnce(t *testing.T, g *grid.Grid) {
	q, m := newQueueAndMap(t, g, grid.QueueOptions{}, time.Hour)
	store := newMemStore()
	in := start(t, testConfig(), Deps{Queue: q, Dedup: m, Store: store, DeadLetters: newDeadLetters(t)})
	const n = 95 // not a multiple of the batch: the last rows go by the flush interval
	keys := publishResults(t, q, 1, n)
	eventually(t, "every result stored and acked", func() bool { return store.count() == n && pending(t, q) == 0 })
	for _, k := range keys {
		if !store.has(k) {
			t.Fatalf("key %s not stored", k)
		}
		if _, ok, err := m.Get(testCtx(t), k); err != nil || !ok {
			t.Fatalf("key %s not in the dedup map (ok=%v, err=%v)", k, ok, err)
		}
	}
	if offered, dupes := store.stats(); offered != n || dupes != 0 {
		t.Fatalf("store was offered %d rows with %d duplicates, want %d and 0", offered, dupes, n)
	}
	if got := promtest.ToFloat64(in.m.stored); got != n {
		t.Fatalf("fcc_result_stored_total = %v, want %d", got, n)
	}
	if got := promtest.ToFloat64(in.m.lost); got != 0 {
		t.Fatalf("fcc_result_lost_total = %v, want 0", got)
	}
	rows, _ := store.Rows(testCtx(t), 1)
	if rows[0].Source != results.SourceACS || rows[0].Created.IsZero() {
		t.Fatalf("row source %q created %v, want ACS and a time", rows[0].Source, rows[0].Created)
	}
}

func testRedeliveryDropped(t *testing.T, g *grid.Grid) {
	q, m := newQueueAndMap(t, g, grid.QueueOptions{}, time.Hour)
	store := newMemStore()
	in := start(t, testConfig(), Deps{Queue: q, Dedup: m, Store: store, DeadLetters: newDeadLetters(t)})
	r := result(2, "ACME0001", 1)
	data := encode(t, r)
	if err := q.Publish(testCtx(t), data, r.NaturalKey()); err != nil {
		t.Fatal(err)
	}
	// Buffered 0: the ingester is done with the row, so the re-publish
	// below meets the map, not the row still in flight.
	eventually(t, "the result stored", func() bool { return store.count() == 1 && pending(t, q) == 0 && in.Buffered() == 0 })
	// A restarted executor re-publishes after the queue's duplicate window:
	// another message id, the same natural key.
	if err := q.Publish(testCtx(t), data, r.NaturalKey()+".again"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the re-publish dropped by the map", func() bool {
		return promtest.ToFloat64(in.m.dedupSkipped) == 1 && pending(t, q) == 0
	})
	if offered, _ := store.stats(); offered != 1 || store.count() != 1 {
		t.Fatalf("store offered %d rows, holds %d; want the re-publish never to reach it", offered, store.count())
	}
}

func testKeyInStoreNotInMap(t *testing.T, g *grid.Grid) {
	q, m := newQueueAndMap(t, g, grid.QueueOptions{}, time.Hour)
	store := newMemStore()
	r := result(3, "ACME0001", 1)
	// Stored earlier, its map entry long gone.
	if _, err := store.Insert(testCtx(t), []results.Row{{Result: *r, Source: results.SourceACS}}); err != nil {
		t.Fatal(err)
	}
	in := start(t, testConfig(), Deps{Queue: q, Dedup: m, Store: store, DeadLetters: newDeadLetters(t)})
	if err := q.Publish(testCtx(t), encode(t, r), r.NaturalKey()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the message acked", func() bool { return pending(t, q) == 0 })
	if _, dupes := store.stats(); dupes != 1 || store.count() != 1 {
		t.Fatalf("store holds %d rows after %d duplicate offers, want 1 row (the store's key dropped the second)", store.count(), dupes)
	}
	if got := promtest.ToFloat64(in.m.stored); got != 0 {
		t.Fatalf("fcc_result_stored_total = %v, want 0 new rows", got)
	}
	eventually(t, "the key back in the map", func() bool {
		_, ok, _ := m.Get(testCtx(t), r.NaturalKey())
		return ok
	})
}

func testMapEntryExpired(t *testing.T, g *grid.Grid) {
	q, m := newQueueAndMap(t, g, grid.QueueOptions{}, time.Hour)
	cfg := testConfig()
	cfg.DedupTTL = time.Second
	store := newMemStore()
	in := start(t, cfg, Deps{Queue: q, Dedup: m, Store: store, DeadLetters: newDeadLetters(t)})
	r := result(4, "ACME0001", 1)
	if err := q.Publish(testCtx(t), encode(t, r), r.NaturalKey()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the result stored", func() bool { return store.count() == 1 && pending(t, q) == 0 && in.Buffered() == 0 })
	eventually(t, "the map entry expired", func() bool {
		_, ok, err := m.Get(testCtx(t), r.NaturalKey())
		return err == nil && !ok
	})
	if err := q.Publish(testCtx(t), encode(t, r), r.NaturalKey()+".late-republish"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the re-publish acked", func() bool { return pending(t, q) == 0 })
	if _, dupes := store.stats(); dupes != 1 || store.count() != 1 {
		t.Fatalf("store holds %d rows, %d duplicate offers; want 1 row", store.count(), dupes)
	}
	if got := promtest.ToFloat64(in.m.dedupSkipped); got != 0 {
		t.Fatalf("fcc_result_dedup_skipped_total = %v, want 0 (the map had forgotten the key)", got)
	}
}

func testLate(t *testing.T, g *grid.Grid) {
	q, m := newQueueAndMap(t, g, grid.QueueOptions{}, time.Hour)
	store := newMemStore()
	dl := newDeadLetters(t)
	runs := runInfo{
		10: time.Now().Add(-time.Minute), // stopped, window over: late
		11: time.Now().Add(time.Hour),    // stopped, still draining: in time
	}
	in := start(t, testConfig(), Deps{Queue: q, Dedup: m, Store: store, DeadLetters: dl, Runs: runs})
	late := result(10, "ACME0001", 1)
	late.AfterStop = true
	for _, r := range []*fccwire.Result{late, result(11, "ACME0001", 1), result(12, "ACME0001", 1)} {
		if err := q.Publish(testCtx(t), encode(t, r), r.NaturalKey()); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "all acked", func() bool { return pending(t, q) == 0 && store.count() == 2 })
	if store.has(late.NaturalKey()) {
		t.Fatal("the late result was stored")
	}
	if got := promtest.ToFloat64(in.m.late); got != 1 {
		t.Fatalf("fcc_result_late_total = %v, want 1", got)
	}
	parked, err := dl.List(testCtx(t), 10)
	if err != nil || len(parked) != 1 || parked[0].Reason != ReasonLate || parked[0].NaturalKey != late.NaturalKey() || parked[0].ActivationID != 10 {
		t.Fatalf("parked = %+v, %v; want the late row as LATE", parked, err)
	}
	// Resend stores it as the ACS sent it, afterStop included.
	rep, err := in.Resend(testCtx(t), 500)
	if err != nil || rep != (ResendReport{Resent: 1, Remaining: 0}) {
		t.Fatalf("Resend = %+v, %v; want 1 resent, 0 remaining", rep, err)
	}
	rows, _ := store.Rows(testCtx(t), 10)
	if len(rows) != 1 || !rows[0].AfterStop {
		t.Fatalf("resent rows = %+v, want the late row with afterStop", rows)
	}
}

func testFullBuffer(t *testing.T, g *grid.Grid) {
	q, m := newQueueAndMap(t, g, grid.QueueOptions{}, time.Hour)
	store := newMemStore()
	store.down.Store(true)
	dl := newDeadLetters(t)
	cfg := testConfig()
	cfg.BatchSize, cfg.QueueCapacity = 5, 5
	in := start(t, cfg, Deps{Queue: q, Dedup: m, Store: store, DeadLetters: dl})
	if h := in.Health(testCtx(t)); h.Status != health.StatusUp {
		t.Fatalf("health before = %v, want UP", h.Status)
	}
	keys := publishResults(t, q, 20, 8)
	eventually(t, "5 buffered, 3 parked as BUFFER_FULL", func() bool {
		return in.Buffered() == 5 && promtest.ToFloat64(in.m.parked.WithLabelValues("BUFFER_FULL")) == 3
	})
	if !in.Degraded() {
		t.Fatal("Degraded() = false with a full buffer")
	}
	h := in.Health(testCtx(t))
	if h.Status != health.StatusDegraded || h.Details["reason"] != "BUFFER_FULL" {
		t.Fatalf("health = %+v, want DEGRADED with reason BUFFER_FULL", h)
	}
	// The parked ones are acked right after they are counted.
	eventually(t, "only the 5 buffered unacked", func() bool { return pending(t, q) == 5 })
	store.down.Store(false)
	eventually(t, "the buffer drained", func() bool { return store.count() == 5 && !in.Degraded() && pending(t, q) == 0 })
	if h := in.Health(testCtx(t)); h.Status != health.StatusUp {
		t.Fatalf("health after draining = %v, want UP", h.Status)
	}
	rep, err := in.Resend(testCtx(t), 2)
	if err != nil || rep != (ResendReport{Resent: 2, Remaining: 1}) {
		t.Fatalf("first Resend(2) = %+v, %v; want 2 resent, 1 remaining", rep, err)
	}
	rep, err = in.Resend(testCtx(t), 500)
	if err != nil || rep != (ResendReport{Resent: 1, Remaining: 0}) {
		t.Fatalf("second Resend = %+v, %v; want 1 resent, 0 remaining", rep, err)
	}
	rep, err = in.Resend(testCtx(t), 500)
	if err != nil || rep != (ResendReport{}) {
		t.Fatalf("third Resend = %+v, %v; want nothing", rep, err)
	}
	for _, k := range keys {
		if !store.has(k) {
			t.Fatalf("key %s missing after resend", k)
		}
	}
	if _, dupes := store.stats(); dupes != 0 {
		t.Fatalf("%d duplicate offers, want 0", dupes)
	}
	if _, err := in.Resend(testCtx(t), 501); err == nil {
		t.Fatal("Resend above svc.fcc.dead-letter.resend-batch-size accepted")
	}
}

func testStoreDown(t *testing.T, g *grid.Grid) {
	// A short ack wait proves the keep-alive: without it the grid would
	// redeliver the held messages many times over during the outage.
	q, m := newQueueAndMap(t, g, grid.QueueOptions{AckWait: time.Second}, time.Hour)
	store := newMemStore()
	store.down.Store(true)
	in := start(t, testConfig(), Deps{Queue: q, Dedup: m, Store: store, DeadLetters: newDeadLetters(t)})
	const n = 40
	keys := publishResults(t, q, 30, n)
	eventually(t, "all buffered and inserts failing", func() bool {
		return in.Buffered() == n && promtest.ToFloat64(in.m.insertFailures) >= 3
	})
	if got := pending(t, q); got != n {
		t.Fatalf("queue pending = %d while the store is down, want %d (nothing acked)", got, n)
	}
	store.down.Store(false)
	eventually(t, "all stored and acked", func() bool { return store.count() == n && pending(t, q) == 0 })
	for _, k := range keys {
		if !store.has(k) {
			t.Fatalf("key %s lost", k)
		}
	}
	if _, dupes := store.stats(); dupes != 0 {
		t.Fatalf("%d duplicate offers, want 0", dupes)
	}
	if got := promtest.ToFloat64(in.m.lost); got != 0 {
		t.Fatalf("fcc_result_lost_total = %v, want 0", got)
	}
}

func testDeadLettersDown(t *testing.T, g *grid.Grid) {
	q, m := newQueueAndMap(t, g, grid.QueueOptions{}, time.Hour)
	store := newMemStore()
	dl := &failingDeadLetters{DeadLetters: newDeadLetters(t)}
	dl.broken.Store(true)
	in := start(t, testConfig(), Deps{Queue: q, Dedup: m, Store: store, DeadLetters: dl,
		Runs: runInfo{40: time.Now().Add(-time.Hour)}})
	publishResults(t, q, 40, 3)
	eventually(t, "parking failing", func() bool { return promtest.ToFloat64(in.m.parkFailures) >= 2 })
	if got := pending(t, q); got != 3 {
		t.Fatalf("queue pending = %d while nothing can be parked, want 3", got)
	}
	dl.broken.Store(false)
	eventually(t, "parked and acked", func() bool {
		return promtest.ToFloat64(in.m.late) == 3 && pending(t, q) == 0
	})
	if got := promtest.ToFloat64(in.m.lost); got != 0 {
		t.Fatalf("fcc_result_lost_total = %v, want 0", got)
	}
}

func testRestart(t *testing.T, g *grid.Grid) {
	for _, tc := range []struct {
		name string
		// kill closes the first ingester's grid connection before it
		// stops, so it can neither ack nor hand anything back: the grid
		// redelivers after its ack wait, as after a crash.
		kill bool
	}{
		{"stop", false},
		{"kill", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, m := newQueueAndMap(t, g, grid.QueueOptions{AckWait: time.Second}, time.Hour)
			store := newMemStore()
			dl := newDeadLetters(t)
			cfg := testConfig()
			// The first ingester never flushes: every row is mid-batch when
			// it goes.
			cfg.BatchSize, cfg.FlushInterval = 1000, time.Hour
			var first *running
			if tc.kill {
				own := anotherConn(t, g)
				oq, err := grid.NewQueue(testCtx(t), own, q.Name(), grid.QueueOptions{AckWait: time.Second})
				if err != nil {
					t.Fatal(err)
				}
				first = start(t, cfg, Deps{Queue: oq, Dedup: m, Store: store, DeadLetters: dl})
				defer own.Close()
				const n = 50
				publishResults(t, q, 50, n)
				eventually(t, "all held by the first ingester", func() bool { return first.Buffered() == n })
				own.Close()
				first.stop(t)
			} else {
				first = start(t, cfg, Deps{Queue: q, Dedup: m, Store: store, DeadLetters: dl})
				publishResults(t, q, 50, 50)
				eventually(t, "all held by the first ingester", func() bool { return first.Buffered() == 50 })
				first.stop(t)
			}
			if store.count() != 0 {
				t.Fatalf("first ingester stored %d rows, want 0", store.count())
			}
			second := start(t, testConfig(), Deps{Queue: q, Dedup: m, Store: store, DeadLetters: dl})
			eventually(t, "all stored by the second ingester", func() bool { return store.count() == 50 && pending(t, q) == 0 })
			if _, dupes := store.stats(); dupes != 0 {
				t.Fatalf("%d duplicate offers, want 0", dupes)
			}
			if got := promtest.ToFloat64(second.m.lost) + promtest.ToFloat64(first.m.lost); got != 0 {
				t.Fatalf("fcc_result_lost_total = %v, want 0", got)
			}
		})
	}
}

func testInvalid(t *testing.T, g *grid.Grid) {
	q, m := newQueueAndMap(t, g, grid.QueueOptions{}, time.Hour)
	store := newMemStore()
	dl := newDeadLetters(t)
	in := start(t, testConfig(), Deps{Queue: q, Dedup: m, Store: store, DeadLetters: dl})
	good := result(60, "ACME0001", 1)
	bad := encode(t, result(60, "ACME0002", 1))
	bad = []byte(strings.Replace(string(bad), `"wireVersion":"1.5"`, `"wireVersion":"0.9"`, 1))
	for _, data := range [][]byte{[]byte("not json at all \xff"), bad, encode(t, good), []byte("not json at all \xff")} {
		if err := q.Publish(testCtx(t), data, ""); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "all acked", func() bool { return pending(t, q) == 0 && store.count() == 1 })
	parked, err := dl.List(testCtx(t), 10)
	if err != nil || len(parked) != 2 {
		t.Fatalf("parked = %+v, %v; want the two distinct invalid messages once each", parked, err)
	}
	for _, p := range parked {
		if p.Reason != ReasonInvalid || p.Detail == "" || len(p.Payload) == 0 {
			t.Fatalf("parked row %+v, want INVALID with a detail and the bytes", p)
		}
	}
	if got := promtest.ToFloat64(in.m.parked.WithLabelValues("INVALID")); got != 3 {
		t.Fatalf("fcc_result_parked_total{reason=INVALID} = %v, want 3 (every message counted)", got)
	}
	rep, err := in.Resend(testCtx(t), 500)
	if err != nil || rep != (ResendReport{}) {
		t.Fatalf("Resend = %+v, %v; want nothing (INVALID rows are never resent)", rep, err)
	}
}

// gate is a probe whose state the test sets.
type gate struct{ up atomic.Bool }

func (g *gate) Status() results.Status {
	if g.up.Load() {
		return results.Status{State: results.StateUp}
	}
	return results.Status{State: results.StateSchemaBehind, Reason: "1 migration pending"}
}

func testGate(t *testing.T, g *grid.Grid) {
	q, m := newQueueAndMap(t, g, grid.QueueOptions{}, time.Hour)
	store := newMemStore()
	probe := &gate{}
	in := start(t, testConfig(), Deps{Queue: q, Dedup: m, Store: store, DeadLetters: newDeadLetters(t), Gate: probe})
	publishResults(t, q, 95, 15)
	eventually(t, "all held", func() bool { return in.Buffered() == 15 })
	if offered, _ := store.stats(); offered != 0 || pending(t, q) != 15 {
		t.Fatalf("store offered %d rows while the probe says SCHEMA_BEHIND, want none; queue pending %d", offered, pending(t, q))
	}
	if got := promtest.ToFloat64(in.m.insertFailures); got != 0 {
		t.Fatalf("fcc_result_insert_failures_total = %v, want 0 (no insert was tried)", got)
	}
	probe.up.Store(true)
	eventually(t, "all stored once the store is UP", func() bool { return store.count() == 15 && pending(t, q) == 0 })
}

// TestMetricNames holds the exposition to the spec's counter names.
func TestMetricNames(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	New(testConfig(), Deps{Metrics: reg})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, mf := range mfs {
		got[mf.GetName()] = true
	}
	for _, name := range []string{
		"fcc_result_parked_total", "fcc_result_lost_total", "fcc_result_late_total",
		"fcc_result_dedup_skipped_total", "fcc_result_insert_failures_total",
	} {
		if !got[name] {
			t.Errorf("metric %s not exposed (have %v)", name, got)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(c *Config)
		want   string
	}{
		{"defaults", func(*Config) {}, ""},
		{"batch zero", func(c *Config) { c.BatchSize = 0 }, "SVC_FCC_RESULT_BATCH_SIZE"},
		{"capacity below batch", func(c *Config) { c.QueueCapacity = 50 }, "SVC_FCC_RESULT_QUEUE_CAPACITY"},
		{"no flush interval", func(c *Config) { c.FlushInterval = 0 }, "SVC_FCC_RESULT_FLUSH_INTERVAL"},
		{"sub-second dedup ttl", func(c *Config) { c.DedupTTL = time.Millisecond }, "SVC_FCC_DEDUP_TTL"},
		{"resend zero", func(c *Config) { c.ResendBatchSize = 0 }, "SVC_FCC_DEAD_LETTER_RESEND_BATCH_SIZE"},
		{"no writer", func(c *Config) { c.Writers = 0 }, "SVC_FCC_RESULT_WRITERS"},
		{"retry max below min", func(c *Config) { c.RetryMax = time.Millisecond }, "SVC_FCC_RESULT_RETRY_MAX"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.change(&c)
			err := c.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Validate() = %v, want an error naming %q", err, tc.want)
			}
		})
	}
}
