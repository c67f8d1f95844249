package results_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"cpesuite/internal/fcc/results"
)

// BenchmarkSummarise is POST /FCC/reports/generate's query over
// REPORT_BENCH_ROWS result rows (default 10,000,000, half speed, half
// latency), unfiltered and for one campaign. The parent seeds once; the
// sub-benchmarks time Summarise alone.
func BenchmarkSummarise(b *testing.B) {
	n := 10_000_000
	if v, err := strconv.Atoi(os.Getenv("REPORT_BENCH_ROWS")); err == nil && v > 0 {
		n = v
	}
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
		b.Run(e.name, func(b *testing.B) {
			s := e.open(b)
			defer s.Close()
			ctx := context.Background()
			if err := s.Migrate(ctx); err != nil {
				b.Fatal(err)
			}
			if err := results.SeedReportRows(ctx, s, n); err != nil {
				b.Fatalf("seeding %d rows: %v", n, err)
			}
			rep := s.(results.Reports)
			for _, c := range []struct {
				name string
				f    results.Filter
			}{
				{"all", results.Filter{}},
				{"campaign", results.Filter{CampaignIDs: []int64{3}}},
			} {
				b.Run(c.name+"/rows="+strconv.Itoa(n), func(b *testing.B) {
					var sum results.Summary
					for b.Loop() {
						var err error
						if sum, err = rep.Summarise(ctx, c.f); err != nil {
							b.Fatal(err)
						}
					}
					if c.name == "all" && sum.Results != int64(n) {
						b.Fatalf("summary counts %d rows, want %d", sum.Results, n)
					}
				})
			}
		})
	}
}
