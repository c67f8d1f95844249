package ingest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"cpesuite/internal/fcc/results"
	"cpesuite/internal/platform/grid"
	"cpesuite/internal/testutil"
)

// engine opens the real result stores: up returns a migrated store, down
// one that fails every insert (a closed DuckDB, a ClickHouse on a port
// nobody listens on). up may be called after down, as when the store comes
// back.
type engine struct {
	name string
	open func(t testing.TB) (up func() results.Store, down results.Store)
}

var engines = []engine{
	{"duckdb", func(t testing.TB) (func() results.Store, results.Store) {
		path := filepath.Join(t.TempDir(), "results.duckdb")
		closed := openDuckDB(t, path)
		closed.Close()
		return func() results.Store { return openDuckDB(t, path) }, closed
	}},
	{"clickhouse", func(t testing.TB) (func() results.Store, results.Store) {
		dsn := clickHouseDB(t)
		down, err := results.OpenClickHouse("clickhouse://"+testutil.FreeAddr(t)+"/default", results.ClickHouseOptions{DialTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { down.Close() })
		return func() results.Store {
			s, err := results.OpenClickHouse(dsn, results.ClickHouseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			if err := s.Migrate(testCtx(t)); err != nil {
				t.Fatalf("Migrate: %v", err)
			}
			return s
		}, down
	}},
}

func openDuckDB(t testing.TB, path string) *results.DuckDB {
	t.Helper()
	s, err := results.OpenDuckDB(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(testCtx(t)); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s
}

// clickHouseDB creates a database of the test's own on the local server
// and returns its DSN; the database is dropped at cleanup.
func clickHouseDB(t testing.TB) string {
	t.Helper()
	addr := testutil.RequireClickHouse(t)
	admin, err := clickhouse.Open(&clickhouse.Options{Addr: []string{addr}, ReadTimeout: time.Minute, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	db := "cpesuite_ingest_" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := admin.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		t.Fatalf("creating database %s: %v", db, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		if err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+db); err != nil {
			t.Errorf("dropping database %s: %v", db, err)
		}
	})
	return "clickhouse://" + addr + "/" + db
}

// swapStore lets a test replace a store that is down by one that is up
// under a running ingester, and counts the rows the engine called new.
type swapStore struct {
	cur   atomic.Pointer[results.Store]
	added atomic.Int64
}

func newSwapStore(s results.Store) *swapStore {
	w := &swapStore{}
	w.set(s)
	return w
}

func (w *swapStore) set(s results.Store)                      { w.cur.Store(&s) }
func (w *swapStore) get() results.Store                       { return *w.cur.Load() }
func (w *swapStore) Migrate(ctx context.Context) error        { return w.get().Migrate(ctx) }
func (w *swapStore) Check(ctx context.Context) results.Status { return w.get().Check(ctx) }
func (w *swapStore) Rows(ctx context.Context, id int64) ([]results.Row, error) {
	return w.get().Rows(ctx, id)
}
func (w *swapStore) Close() error { return nil }
func (w *swapStore) Insert(ctx context.Context, rows []results.Row) (int, error) {
	n, err := w.get().Insert(ctx, rows)
	w.added.Add(int64(n))
	return n, err
}

// TestIngestEngines runs the promises that involve the store against the
// real engines: every message stored once, a re-publish and a key the map
// forgot stay one row, a store that is down keeps everything unacked and
// gets every row when it is back, parked rows resent once.
func TestIngestEngines(t *testing.T) {
	t.Parallel()
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			up, down := e.open(t)
			g := newGrid(t, "embedded")
			q, m := newQueueAndMap(t, g, grid.QueueOptions{AckWait: 2 * time.Second}, time.Hour)
			store := newSwapStore(down)
			dl := newDeadLetters(t)
			cfg := testConfig()
			cfg.BatchSize, cfg.QueueCapacity = 50, 100
			in := start(t, cfg, Deps{Queue: q, Dedup: m, Store: store, DeadLetters: dl})

			// Down: 120 results, 100 held unacked, 20 parked as BUFFER_FULL.
			const n = 120
			keys := publishResults(t, q, 80, n)
			eventually(t, "buffer full and inserts failing", func() bool {
				return in.Buffered() == 100 && in.Degraded() &&
					promFloat(in.m.insertFailures) >= 2 && promFloat(in.m.parked.WithLabelValues("BUFFER_FULL")) == 20
			})
			// The parked ones are acked right after they are counted.
			eventually(t, "exactly the 100 buffered unacked", func() bool { return pending(t, q) == 100 })
			// Back.
			back := up()
			store.set(back)
			eventually(t, "the buffer stored", func() bool {
				return store.added.Load() == 100 && pending(t, q) == 0 && !in.Degraded() && in.Buffered() == 0
			})
			rep, err := in.Resend(testCtx(t), 500)
			if err != nil || rep != (ResendReport{Resent: 20}) {
				t.Fatalf("Resend = %+v, %v; want 20 resent", rep, err)
			}
			if rep, err := in.Resend(testCtx(t), 500); err != nil || rep != (ResendReport{}) {
				t.Fatalf("second Resend = %+v, %v; want nothing", rep, err)
			}
			// A re-publish after the duplicate window, and a key the map
			// forgot: still one row each.
			// A held message the grid redelivered under load also counts as
			// skipped; count from here.
			skipped := promFloat(in.m.dedupSkipped)
			again := result(80, "S000000", 1)
			if err := q.Publish(testCtx(t), encode(t, again), again.NaturalKey()+".again"); err != nil {
				t.Fatal(err)
			}
			forgot := result(80, "S000001", 1)
			if err := m.Delete(testCtx(t), forgot.NaturalKey()); err != nil {
				t.Fatal(err)
			}
			if err := q.Publish(testCtx(t), encode(t, forgot), forgot.NaturalKey()+".again"); err != nil {
				t.Fatal(err)
			}
			eventually(t, "both re-publishes settled", func() bool { return pending(t, q) == 0 && promFloat(in.m.dedupSkipped) == skipped+1 })
			rows, err := back.Rows(testCtx(t), 80)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != n || store.added.Load() != n {
				t.Fatalf("engine holds %d rows (%d reported new), want %d", len(rows), store.added.Load(), n)
			}
			seen := map[string]bool{}
			for _, r := range rows {
				seen[r.NaturalKey()] = true
			}
			for _, k := range keys {
				if !seen[k] {
					t.Fatalf("key %s missing", k)
				}
			}
			if got := promFloat(in.m.lost); got != 0 {
				t.Fatalf("fcc_result_lost_total = %v, want 0", got)
			}
		})
	}
}
