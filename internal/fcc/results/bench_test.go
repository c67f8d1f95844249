package results_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"cpesuite/internal/fcc/results"
	"cpesuite/internal/fcc/results/storetest"
)

// BenchmarkInsert measures new rows per second through Insert, in the
// batch sizes of live ingestion (100), larger flushes (1000) and the
// legacy import (10,000), into a
// table that grows as the benchmark runs. Each batch is new keys of one
// activation, the common case; rows/s is the figure that matters.
func BenchmarkInsert(b *testing.B) {
	engines := []struct {
		name string
		open func(b *testing.B) results.Store
	}{
		{"duckdb", func(b *testing.B) results.Store {
			s, err := results.OpenDuckDB(filepath.Join(b.TempDir(), results.DuckDBFile))
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
		{"clickhouse", func(b *testing.B) results.Store {
			s, err := results.OpenClickHouse(clickHouseDB(b), results.ClickHouseOptions{})
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
	}
	for _, e := range engines {
		for _, c := range []struct {
			size int
			// stored repeats a key of the first batch in each later one:
			// a redelivery the ingester's dedup map missed, which sends a
			// DuckDB batch down its slow path.
			stored bool
		}{{100, false}, {1000, false}, {10000, false}, {1000, true}} {
			size, name := c.size, fmt.Sprintf("%s/batch=%d", e.name, c.size)
			if c.stored {
				name += "/one-stored"
			}
			b.Run(name, func(b *testing.B) {
				s := e.open(b)
				defer s.Close()
				ctx := context.Background()
				if err := s.Migrate(ctx); err != nil {
					b.Fatal(err)
				}
				// One batch, moved to a new activation before each Insert:
				// fresh keys without holding b.N batches in memory.
				batch := storetest.Batch(10, size, 0)
				rows := 0
				for i := 0; b.Loop(); i++ {
					for j := range batch {
						batch[j].ActivationID = int64(10 + i)
					}
					want := size
					if c.stored && i > 0 {
						batch[0].ActivationID = 10
						want--
					}
					n, err := s.Insert(ctx, batch)
					if err != nil || n != want {
						b.Fatalf("Insert = %d, %v; want %d", n, err, want)
					}
					rows += n
				}
				b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}
