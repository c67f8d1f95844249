package legacy_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"cpesuite/internal/fcc/legacy"
	"cpesuite/internal/platform/sqlstore"
)

// BenchmarkImportPostgresToDuckDB measures rows/s of one SPEED and one
// LATENCY pass over a PostgreSQL source seeded with
// CPESUITE_LEGACY_BENCH_ROWS rows per table (default 100000), batch 10000,
// into DuckDB.
func BenchmarkImportPostgresToDuckDB(b *testing.B) {
	n := 100000
	if v, err := strconv.Atoi(os.Getenv("CPESUITE_LEGACY_BENCH_ROWS")); err == nil && v > 0 {
		n = v
	}
	for b.Loop() {
		b.StopTimer()
		e := newEnv(b, sqlstore.Postgres, func(c *legacy.Config) { c.BatchSize = 10000 })
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
		b.ReportMetric(float64(written)/el.Seconds(), "rows/s")
	}
}
