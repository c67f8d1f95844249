package legacy_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"cpesuite/internal/fcc/legacy"
	"cpesuite/internal/fcc/results"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/testutil"
)

// BenchmarkImportPostgresToDuckDB measures rows/s of one SPEED and one
// LATENCY pass, run at once as a start without kinds runs them, over a
// PostgreSQL source seeded with CPESUITE_LEGACY_BENCH_ROWS rows per table
// (default 100000; the source holds twice that), batch 10000, into DuckDB.
func BenchmarkImportPostgresToDuckDB(b *testing.B) {
	benchImport(b, openDuckDB)
}

// BenchmarkImportPostgresToClickHouse is the same into a fresh database
// on the local ClickHouse server.
func BenchmarkImportPostgresToClickHouse(b *testing.B) {
	benchImport(b, openClickHouse)
}

func benchImport(b *testing.B, store func(testing.TB) results.Store) {
	n := 100000
	if v, err := strconv.Atoi(os.Getenv("CPESUITE_LEGACY_BENCH_ROWS")); err == nil && v > 0 {
		n = v
	}
	for b.Loop() {
		b.StopTimer()
		e := newEnvOpts(b, sqlstore.Postgres, envOpts{edit: func(c *legacy.Config) { c.BatchSize = 10000 }, store: store})
		seed := legacy.Seed{UGs: 50, Runs: 4, Serials: 1000, Speed: n, Latency: n, FirstID: 1, From: time.Now().UTC().Add(-400 * 24 * time.Hour), Step: time.Second}
		if err := seed.WriteBulkPostgres(context.Background(), e.src); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		if _, err := e.imp.Start(context.Background(), legacy.StartRequest{}); err != nil {
			b.Fatal(err)
		}
		e.imp.Wait()
		el := time.Since(start)
		st, _ := e.imp.Status(context.Background())
		var written int64
		for _, k := range st.Kinds {
			written += k.RowsWritten
			if k.State != legacy.StateCompleted {
				b.Fatalf("%+v", k)
			}
		}
		if written != int64(2*n) {
			b.Fatalf("%d rows written, want %d", written, 2*n)
		}
		b.ReportMetric(float64(written)/el.Seconds(), "rows/s")
		b.ReportMetric(el.Seconds(), "s/pass")
	}
}

// openClickHouse opens a store on a database of its own on the local
// server, dropped when the benchmark ends.
func openClickHouse(t testing.TB) results.Store {
	t.Helper()
	addr := testutil.RequireClickHouse(t)
	admin, err := clickhouse.Open(&clickhouse.Options{Addr: []string{addr}, ReadTimeout: time.Minute, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	rnd := make([]byte, 6)
	_, _ = rand.Read(rnd)
	db := "cpesuite_legacy_" + hex.EncodeToString(rnd)
	ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
	defer cancel()
	if err := admin.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		t.Fatalf("creating database %s: %v", db, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
		defer cancel()
		if err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+db); err != nil {
			t.Errorf("dropping database %s: %v", db, err)
		}
	})
	s, err := results.OpenClickHouse("clickhouse://"+addr+"/"+db, results.ClickHouseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}
