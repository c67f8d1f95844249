package ingest

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/platform/grid"
)

// BenchmarkIngest measures rows per second from RESULT messages waiting in
// fccResultQueue (embedded grid, file-backed, as `cpesuite up` runs it) to
// rows stored in each engine, for the spec's batch size and for 1000. The
// messages are published before the timer starts; the timer covers fetch,
// decode against the schema, the dedup map read, the insert, the map write
// and the ack of every message. Run with a fixed count, e.g.
// -benchtime 20000x.
func BenchmarkIngest(b *testing.B) {
	for _, e := range engines {
		for _, tc := range []struct{ batch, writers int }{{100, 1}, {100, 2}, {100, 4}, {1000, 1}, {1000, 2}} {
			batch := tc.batch
			b.Run(fmt.Sprintf("%s/batch=%d/writers=%d", e.name, batch, tc.writers), func(b *testing.B) {
				up, _ := e.open(b)
				store := newSwapStore(up())
				g := newGrid(b, "embedded")
				q, m := newQueueAndMap(b, g, grid.QueueOptions{}, time.Hour)
				publishMany(b, q, b.N)
				cfg := DefaultConfig()
				cfg.BatchSize, cfg.Writers = batch, tc.writers
				// The tail of the run is a partial batch; the default 5 s
				// interval would dominate a short run.
				cfg.FlushInterval = 50 * time.Millisecond
				b.ResetTimer()
				start(b, cfg, Deps{Queue: q, Dedup: m, Store: store, DeadLetters: newDeadLetters(b)})
				for store.added.Load() < int64(b.N) {
					time.Sleep(time.Millisecond)
				}
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}

// publishMany publishes n distinct results fast: one encoded template
// whose serial is replaced, several publishers at once.
func publishMany(b *testing.B, q *grid.Queue, n int) {
	b.Helper()
	tmpl := encode(b, result(90, "SERIAL00000000", 1))
	var wg sync.WaitGroup
	const publishers = 16
	for p := range publishers {
		wg.Go(func() {
			for i := p; i < n; i += publishers {
				serial := fmt.Sprintf("SERIAL%08d", i)
				data := bytes.Replace(tmpl, []byte("SERIAL00000000"), []byte(serial), 1)
				key := fccwire.NaturalKey(90, serial, "PING", 1)
				if err := q.Publish(testCtx(b), data, key); err != nil {
					b.Errorf("Publish: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
}
