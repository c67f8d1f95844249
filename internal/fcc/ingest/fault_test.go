package ingest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	"cpesuite/internal/platform/grid"
	"cpesuite/internal/testutil"
)

// TestFaultGridRestart publishes N results while the NATS server is shut
// down and started again on the same port and store directory mid-stream,
// with the ingester consuming throughout. Every result must be stored once:
// stored = N, lost 0. Its figures (inserts the store's key absorbed, map
// hits, failed acks) are logged for BENCHMARKS.md.
func TestFaultGridRestart(t *testing.T) {
	t.Parallel()
	const n = 3000
	store := t.TempDir()
	addr := testutil.FreeAddr(t)
	srvCfg := grid.Config{StoreDir: store, Listen: addr}
	emb, err := grid.StartEmbedded(srvCfg)
	if err != nil {
		t.Fatalf("StartEmbedded: %v", err)
	}
	t.Cleanup(func() { emb.Shutdown() })
	connect := func() *grid.Grid {
		g, err := grid.Connect(testCtx(t), grid.Config{Members: []string{addr}, Name: t.Name(),
			ReconnectBase: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond}, nil)
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		t.Cleanup(g.Close)
		return g
	}
	pubGrid, inGrid := connect(), connect()
	pubQ, err := grid.NewQueue(testCtx(t), pubGrid, "fccResultQueue", grid.QueueOptions{AckWait: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	q, err := grid.NewQueue(testCtx(t), inGrid, "fccResultQueue", grid.QueueOptions{AckWait: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	m, err := OpenDedup(testCtx(t), inGrid, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	results := newMemStore()
	cfg := testConfig()
	cfg.BatchSize = 100
	in := start(t, cfg, Deps{Queue: q, Dedup: m, Store: results, DeadLetters: newDeadLetters(t)})

	var published, publishRetries atomic.Int64
	pubDone := make(chan struct{})
	go func() {
		defer close(pubDone)
		for i := range n {
			r := result(70, fmt.Sprintf("S%06d", i), 1)
			data := encode(t, r)
			// The executor's rule: retry a failed publish with the same
			// message id; the queue's duplicate window drops a publish that
			// did land before its confirmation was lost.
			for {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				err := pubQ.Publish(ctx, data, r.NaturalKey())
				cancel()
				if err == nil {
					break
				}
				publishRetries.Add(1)
				time.Sleep(20 * time.Millisecond)
			}
			published.Add(1)
		}
	}()

	eventually(t, "a third stored", func() bool { return results.count() >= n/3 })
	emb.Shutdown()
	atRestart := results.count()
	emb, err = grid.StartEmbedded(srvCfg)
	if err != nil {
		t.Fatalf("restarting the server: %v", err)
	}
	<-pubDone
	eventually(t, "every result stored and acked", func() bool {
		p, err := q.Pending(testCtx(t))
		return err == nil && p == 0 && results.count() == n
	})
	offered, dupes := results.stats()
	lost := promtest.ToFloat64(in.m.lost)
	t.Logf("N=%d stored=%d (%d before the restart) lost=%v duplicate rows stored=0; store offered %d rows, its natural key dropped %d; dedup map hits %v; failed acks %v; failed inserts %v; publish retries %d",
		n, results.count(), atRestart, lost, offered, dupes, promtest.ToFloat64(in.m.dedupSkipped),
		promtest.ToFloat64(in.m.ackFailures), promtest.ToFloat64(in.m.insertFailures), publishRetries.Load())
	if results.count() != n || lost != 0 {
		t.Fatalf("stored %d of %d, lost %v", results.count(), n, lost)
	}
}
