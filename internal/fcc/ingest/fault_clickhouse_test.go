package ingest

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	"cpesuite/internal/fcc/results"
	"cpesuite/internal/platform/grid"
	"cpesuite/internal/testutil"
)

// outageProxy forwards TCP to a server and can go dark: while it is down
// it closes every open connection and refuses new ones, which is what the
// service sees of a ClickHouse server that was stopped.
type outageProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]struct{}
}

func startProxy(t *testing.T, target string) *outageProxy {
	t.Helper()
	ln, err := net.Listen("tcp", testutil.FreeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	p := &outageProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() { ln.Close(); p.setDown(true) })
	go p.serve()
	return p
}

func (p *outageProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c], p.conns[up] = struct{}{}, struct{}{}
		p.mu.Unlock()
		go func() { _, _ = io.Copy(up, c); up.Close(); c.Close() }()
		go func() { _, _ = io.Copy(c, up); up.Close(); c.Close() }()
	}
}

func (p *outageProxy) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
}

// TestFaultClickHouseOutage is the issue's fault test "ClickHouse stopped
// for 30 s and started again": results keep arriving on the grid while the
// result store is unreachable for 30 s; nothing is acknowledged, lost or
// stored twice, and everything is stored once it is back. The figures are
// logged for BENCHMARKS.md.
func TestFaultClickHouseOutage(t *testing.T) {
	t.Parallel()
	const n = 2000
	dsn := clickHouseDB(t)
	direct := strings.TrimPrefix(dsn, "clickhouse://")
	addr, db, _ := strings.Cut(direct, "/")
	proxy := startProxy(t, addr)
	store, err := results.OpenClickHouse("clickhouse://"+proxy.ln.Addr().String()+"/"+db, results.ClickHouseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := store.Migrate(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	g := newGrid(t, "embedded")
	q, m := newQueueAndMap(t, g, grid.QueueOptions{AckWait: 5 * time.Second}, time.Hour)
	cfg := testConfig()
	// The default buffer holds every result of the outage; a smaller one
	// would park the excess as BUFFER_FULL (tested on its own).
	cfg.BatchSize, cfg.Writers, cfg.QueueCapacity = 100, 1, 10000
	in := start(t, cfg, Deps{Queue: q, Dedup: m, Store: store, DeadLetters: newDeadLetters(t)})

	publishResults(t, q, 81, n/4)
	eventually(t, "the first results stored", func() bool { return promtest.ToFloat64(in.m.stored) > 0 })
	proxy.setDown(true)
	downAt := time.Now()
	// The rest arrive while the store is down: they must stay
	// unacknowledged on the grid or in the buffer, never dropped.
	for i := n / 4; i < n; i += 250 {
		for j := i; j < i+250 && j < n; j++ {
			r := result(81, fmt.Sprintf("S%06d", j), 1)
			if err := q.Publish(testCtx(t), encode(t, r), r.NaturalKey()); err != nil {
				t.Fatal(err)
			}
		}
	}
	storedDuringOutage := promtest.ToFloat64(in.m.stored)
	time.Sleep(30*time.Second - time.Since(downAt))
	failures := promtest.ToFloat64(in.m.insertFailures)
	proxy.setDown(false)

	admin, err := clickhouse.Open(&clickhouse.Options{Addr: []string{addr}, Auth: clickhouse.Auth{Database: db}, ReadTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	// Counted on the server directly: an insert whose answer the outage cut
	// off may have landed, and its retry then finds the keys stored.
	var raw, distinct uint64
	count := func() {
		row := admin.QueryRow(context.Background(), "SELECT count(), uniqExact(serial) FROM results_latency WHERE activation_id = 81")
		if err := row.Scan(&raw, &distinct); err != nil {
			t.Logf("counting: %v", err)
		}
	}
	var lastLog time.Time
	eventually(t, "every result stored and acknowledged after the outage", func() bool {
		p, err := q.Pending(testCtx(t))
		count()
		ok := err == nil && p == 0 && distinct == n && in.Buffered() == 0
		if !ok && time.Since(lastLog) > 5*time.Second {
			lastLog = time.Now()
			t.Logf("waiting: pending %d (%v), stored keys %d, buffered %d, failed inserts %v, stored %v, dedup skipped %v, lost %v, parked %v", p, err, distinct, in.Buffered(), promtest.ToFloat64(in.m.insertFailures), promtest.ToFloat64(in.m.stored), promtest.ToFloat64(in.m.dedupSkipped), promtest.ToFloat64(in.m.lost), promtest.ToFloat64(in.m.parked.WithLabelValues(string(ReasonBufferFull))))
		}
		return ok
	})
	count()
	lost := promtest.ToFloat64(in.m.lost)
	t.Logf("ClickHouse outage of 30 s: sent %d, stored rows %d (distinct keys %d, so %d duplicated), lost %v; stored before the outage %v, failed inserts during it %v, parked %v",
		n, raw, distinct, raw-distinct, lost, storedDuringOutage, failures, promtest.ToFloat64(in.m.parked.WithLabelValues(string(ReasonBufferFull))))
	if raw != n || distinct != n || lost != 0 || failures == 0 {
		t.Fatalf("stored %d rows of %d distinct keys, want %d each; lost %v; failed inserts %v (the outage must have been seen)", raw, distinct, n, lost, failures)
	}
}
