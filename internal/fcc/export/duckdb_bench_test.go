package export

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/fcc/results"
)

// BenchmarkExportDuckDB exports rows streamed from the embedded result
// store's cursor (results.Reports.Stream, the fixed order, both tables)
// rather than from memory. Sizes come from EXPORT_DUCKDB_ROWS (a comma
// list, default 100000); seeding goes through Store.Insert in batches of
// 10,000, outside the timer, and takes about a minute per million rows.
func BenchmarkExportDuckDB(b *testing.B) {
	sizes := []int{100_000}
	if v := os.Getenv("EXPORT_DUCKDB_ROWS"); v != "" {
		sizes = nil
		for _, s := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 1 {
				b.Fatalf("EXPORT_DUCKDB_ROWS: %q", v)
			}
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		b.Run(label(n), func(b *testing.B) {
			ctx := context.Background()
			s, err := results.OpenDuckDB(filepath.Join(b.TempDir(), results.DuckDBFile))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if err := s.Migrate(ctx); err != nil {
				b.Fatal(err)
			}
			batch := make([]results.Row, 0, 10_000)
			flush := func() error {
				_, err := s.Insert(ctx, batch)
				batch = batch[:0]
				return err
			}
			err = synthRows(n, func(r *results.Row) error {
				c := *r
				if c.Speed != nil {
					sp := *c.Speed
					c.Speed = &sp
				}
				batch = append(batch, c)
				if len(batch) == cap(batch) {
					return flush()
				}
				return nil
			})
			if err == nil && len(batch) > 0 {
				err = flush()
			}
			if err != nil {
				b.Fatalf("seeding %d rows: %v", n, err)
			}
			var rep results.Reports = s
			for _, f := range []Format{FormatCSV, FormatXLSX} {
				b.Run(string(f), func(b *testing.B) {
					var out countWriter
					stop := heapPeak()
					cpu0 := cpuTime()
					start := time.Now()
					for b.Loop() {
						out = countWriter{}
						w, _ := New(f, &out)
						if err := rep.Stream(ctx, results.Filter{}, w.Write); err != nil {
							b.Fatal(err)
						}
						if err := w.Close(); err != nil {
							b.Fatal(err)
						}
						if w.Rows() != int64(n) {
							b.Fatalf("%d rows exported, want %d", w.Rows(), n)
						}
					}
					elapsed := time.Since(start)
					b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
					b.ReportMetric(float64(n)*float64(b.N)/elapsed.Seconds(), "rows/s")
					b.ReportMetric(float64(out.n)/1e6, "out-MB")
					b.ReportMetric(float64(stop())/(1<<20), "peak-heap-MB")
					b.ReportMetric(vmHWM()/(1<<20), "peak-rss-MB")
				})
			}
		})
	}
}
