package fcc

import (
	"context"
	"database/sql"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
	"cpesuite/internal/testutil"
)

// dispatchRig is two service instances (two connection pools) over one
// PostgreSQL database and one grid, with n PENDING ACTIVATE rows, and a
// plain NATS subscription that sees every publish to the command queue,
// including any the queue's duplicate window would drop.
type dispatchRig struct {
	svcs  [2]*Service
	n     int
	mu    sync.Mutex
	seen  map[string]int // commandId.part -> publishes
	total int
}

func newDispatchRig(tb testing.TB, n, batch int) *dispatchRig {
	ctx := context.Background()
	db := sqltest.Open(tb, sqlstore.Postgres)
	store, err := OpenStore(ctx, db)
	if err != nil {
		tb.Fatal(err)
	}
	// The second instance has a pool of its own, as a second process would.
	db2, err := sqlstore.Open(ctx, db.Config())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db2.Close() })
	store2, err := OpenStore(ctx, db2)
	if err != nil {
		tb.Fatal(err)
	}
	cfg := testConfig()
	cfg.Runs = fastRuns()
	cfg.Runs.OutboxBatchSize = batch
	log := slog.New(slog.DiscardHandler)
	rig := &dispatchRig{svcs: [2]*Service{New(cfg, store, nil, log), New(cfg, store2, nil, log)}, n: n, seen: map[string]int{}}
	g := startGrid(tb)
	for _, s := range rig.svcs {
		if _, err := s.RunEngine(g, prometheus.NewRegistry()); err != nil {
			tb.Fatal(err)
		}
	}
	sub, err := g.Conn().Subscribe("grid.q."+fccwire.QueueCommands, func(m *nats.Msg) {
		a, err := fccwire.Decode(fccwire.KindActivate, m.Data)
		if err != nil {
			tb.Errorf("undecodable command: %v", err)
			return
		}
		act := a.(*fccwire.Activate)
		rig.mu.Lock()
		rig.seen[act.CommandID+"."+strconv.Itoa(act.Part)]++
		rig.total++
		rig.mu.Unlock()
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = sub.Unsubscribe() })

	s := rig.svcs[0]
	err = db.InTx(ctx, func(tx *sql.Tx) error {
		now := time.Now().UTC()
		var c int64
		if err := tx.QueryRowContext(ctx, s.store.q(`INSERT INTO fcc_campaigns (domain_id, name, type, state, created_at, created_by, updated_at, updated_by)
			VALUES (2, 'bench', 'SPEED', ?, ?, 'bench', ?, 'bench') RETURNING id`), StateScheduled, now, now).Scan(&c); err != nil {
			return err
		}
		for i := 1; i <= n; i++ {
			var runID int64
			if err := tx.QueryRowContext(ctx, s.store.q(`INSERT INTO fcc_runs (campaign_id, run_number, state, window_start_at, window_end_at, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`), c, i, RunPlanned, now, now.Add(time.Hour), now, now).Scan(&runID); err != nil {
				return err
			}
			id, err := s.insertOutbox(ctx, tx, runID, commandActivate, "", 1, 1, nil)
			if err != nil {
				return err
			}
			cmd := strconv.FormatInt(id, 10)
			b, err := fccwire.Encode(&fccwire.Activate{CommandID: cmd, ActivationID: runID, FccTestID: c, RunNumber: i, Type: fccwire.TypeSpeed,
				DomainID: 2, Part: 1, Parts: 1, Window: fccwire.Window{StartAt: fccwire.At(now), EndAt: fccwire.At(now.Add(time.Hour))},
				Schedule: fccwire.Schedule{TotalTestDuration: 1, SingleTestDuration: 30, Iterations: 2},
				Config: fccwire.ActivateConfig{Retry: fccwire.Retry{StopDrainGraceSec: 900}, Groups: []fccwire.Group{{ConfigID: 1,
					Speed: &fccwire.SpeedSettings{TestMode: fccwire.FileBased}, Devices: []fccwire.Device{{CpeID: int64(i), Serial: "S" + cmd, Protocol: fccwire.ProtocolTR069}}}}}})
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, s.store.q(`UPDATE fcc_outbox SET command_id = ?, payload = ? WHERE id = ?`), cmd, string(b), id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return rig
}

// run lets both dispatchers tick until no row is PENDING.
func (rig *dispatchRig) run(tb testing.TB) {
	var wg sync.WaitGroup
	for _, s := range rig.svcs {
		wg.Go(func() {
			deadline := time.Now().Add(testutil.MinDeadline)
			for time.Now().Before(deadline) {
				if _, err := s.dispatchOnce(context.Background()); err != nil {
					tb.Errorf("dispatchOnce: %v", err)
					return
				}
				var pending int
				if err := s.store.db.QueryRow(s.store.q(`SELECT COUNT(*) FROM fcc_outbox WHERE state = ?`), OutboxPending).Scan(&pending); err != nil {
					tb.Errorf("counting: %v", err)
					return
				}
				if pending == 0 {
					return
				}
			}
			tb.Errorf("rows still PENDING after %s", testutil.MinDeadline)
		})
	}
	wg.Wait()
}

// check waits for every publish to reach the subscription and holds the
// count to one per row.
func (rig *dispatchRig) check(tb testing.TB) {
	deadline := time.Now().Add(testutil.MinDeadline)
	for {
		rig.mu.Lock()
		total, rows := rig.total, len(rig.seen)
		dup := 0
		for _, v := range rig.seen {
			if v > 1 {
				dup++
			}
		}
		rig.mu.Unlock()
		if dup > 0 {
			tb.Fatalf("%d rows were published more than once (%d publishes for %d rows)", dup, total, rows)
		}
		if total == rig.n {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%d publishes seen, want %d", total, rig.n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTwoDispatchersSendEachRowOnce: two dispatchers on one PostgreSQL
// database (SKIP LOCKED claims with a lease) and one NATS server never
// publish the same row twice; every row ends SENT after one attempt and
// every run DISPATCHING.
func TestTwoDispatchersSendEachRowOnce(t *testing.T) {
	rig := newDispatchRig(t, 300, 20)
	rig.run(t)
	rig.check(t)
	s := rig.svcs[0]
	var bad int
	if err := s.store.db.QueryRow(s.store.q(`SELECT COUNT(*) FROM fcc_outbox WHERE state <> ? OR attempts <> 1`), OutboxSent).Scan(&bad); err != nil || bad != 0 {
		t.Fatalf("%d rows not SENT once (%v)", bad, err)
	}
	if err := s.store.db.QueryRow(s.store.q(`SELECT COUNT(*) FROM fcc_runs WHERE state <> ?`), RunDispatching).Scan(&bad); err != nil || bad != 0 {
		t.Fatalf("%d runs not DISPATCHING (%v)", bad, err)
	}
}

// BenchmarkOutboxDispatch measures activations (single-part ACTIVATE rows)
// dispatched per second by two dispatchers on one PostgreSQL database, and
// fails on any duplicate publish.
func BenchmarkOutboxDispatch(b *testing.B) {
	b.StopTimer()
	rig := newDispatchRig(b, max(b.N, 2), 100)
	b.StartTimer()
	start := time.Now()
	rig.run(b)
	rig.check(b)
	el := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(rig.n)/el.Seconds(), "activations/s")
}
