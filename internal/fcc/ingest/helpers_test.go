package ingest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/fcc/results"
	"cpesuite/internal/platform/grid"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
	"cpesuite/internal/testutil"
)

// waitFor bounds every poll: a safety net against a hang, never a measure.
const waitFor = testutil.MinDeadline

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*waitFor)
	t.Cleanup(cancel)
	return ctx
}

// gridFlavours are the NATS servers the ingester must work with: the
// embedded one (per-message TTL in the map) and the machine's external
// server (Debian's 2.9, header TTL fallback).
var gridFlavours = []string{"embedded", "external"}

// newGrid connects to a fresh grid of the flavour.
func newGrid(t testing.TB, flavour string) *grid.Grid {
	t.Helper()
	var (
		cfg = grid.Config{Name: t.Name()}
		emb *grid.Embedded
	)
	switch flavour {
	case "embedded":
		var err error
		emb, err = grid.StartEmbedded(grid.Config{StoreDir: t.TempDir()})
		if err != nil {
			t.Fatalf("StartEmbedded: %v", err)
		}
		t.Cleanup(emb.Shutdown)
	case "external":
		u, err := url.Parse(testutil.RequireNATS(t))
		if err != nil {
			t.Fatalf("parsing NATS URL: %v", err)
		}
		cfg.Members = []string{u.Host}
	}
	dial := func(t testing.TB) *grid.Grid {
		t.Helper()
		g, err := grid.Connect(testCtx(t), cfg, emb)
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		t.Cleanup(g.Close)
		return g
	}
	g := dial(t)
	dialers.Store(g, dial)
	t.Cleanup(func() { dialers.Delete(g) })
	return g
}

// dialers remembers how each test grid was reached, so a test can open a
// second connection to the same server (one it can cut like a crash).
var dialers sync.Map

// anotherConn opens a second connection to the server behind g.
func anotherConn(t testing.TB, g *grid.Grid) *grid.Grid {
	t.Helper()
	dial, ok := dialers.Load(g)
	if !ok {
		t.Fatal("grid not made by newGrid")
	}
	return dial.(func(testing.TB) *grid.Grid)(t)
}

func uniqueName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + "_" + hex.EncodeToString(b)
}

// newQueueAndMap declares a queue and a dedup map with unique names (the
// external server is shared by parallel tests) and removes them at the end.
func newQueueAndMap(t testing.TB, g *grid.Grid, opts grid.QueueOptions, ttl time.Duration) (*grid.Queue, *grid.Map) {
	t.Helper()
	q, err := grid.NewQueue(testCtx(t), g, uniqueName("results"), opts)
	if err != nil {
		t.Fatalf("NewQueue: %v", err)
	}
	m, err := grid.NewMap(testCtx(t), g, uniqueName("dedup"), grid.MapOptions{TTL: ttl})
	if err != nil {
		t.Fatalf("NewMap: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		_ = q.Delete(ctx)
		_ = m.Destroy(ctx)
	})
	return q, m
}

// testConfig has millisecond intervals so tests run fast; nothing asserts
// how long anything takes.
func testConfig() Config {
	return Config{
		BatchSize:       10,
		FlushInterval:   20 * time.Millisecond,
		QueueCapacity:   1000,
		DedupTTL:        time.Hour,
		ResendBatchSize: 500,
		Writers:         2,
		RetryMin:        10 * time.Millisecond,
		RetryMax:        100 * time.Millisecond,
		KeepAlive:       100 * time.Millisecond,
	}
}

// result returns a valid LATENCY result of activation act.
func result(act int64, serial string, iteration int) *fccwire.Result {
	avg, lo, hi := 12.5, 9.125, 31.0
	at := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC).Add(time.Duration(iteration) * time.Minute)
	return &fccwire.Result{
		Envelope: fccwire.Envelope{WireVersion: fccwire.Version, Kind: fccwire.KindResult},
		Type:     fccwire.TestType("LATENCY"), FccTestID: 7, ActivationID: act, Iteration: iteration, DomainID: 3,
		ConfigID: 5, CpeID: 101, Serial: serial, Direction: fccwire.Direction("PING"), URL: "speedtest.example.net",
		StartedAt: fccwire.At(at), FinishedAt: fccwire.At(at.Add(10 * time.Second)), Status: fccwire.Outcome("OK"),
		Attempts: 1, Latency: &fccwire.LatencyResult{AverageMs: &avg, MinMs: &lo, MaxMs: &hi, SuccessCount: 9, FailureCount: 1},
	}
}

func encode(t testing.TB, r *fccwire.Result) []byte {
	t.Helper()
	b, err := fccwire.Encode(r)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	return b
}

// publishResults publishes n results of activation act (serials S0..Sn-1)
// with their natural keys as message ids, and returns the keys.
func publishResults(t testing.TB, q *grid.Queue, act int64, n int) []string {
	t.Helper()
	keys := make([]string, n)
	for i := range n {
		r := result(act, fmt.Sprintf("S%06d", i), 1)
		keys[i] = r.NaturalKey()
		if err := q.Publish(testCtx(t), encode(t, r), keys[i]); err != nil {
			t.Fatalf("Publish: %v", err)
		}
	}
	return keys
}

// memStore is a result store in memory with the interface's contract
// (idempotent on the natural key, all or nothing per batch) and a switch
// that makes it fail like a store that is down.
type memStore struct {
	mu      sync.Mutex
	rows    map[string]results.Row
	offered int // rows offered to Insert, duplicates included
	dupes   int // rows offered whose key was stored already
	down    atomic.Bool
}

func newMemStore() *memStore { return &memStore{rows: make(map[string]results.Row)} }

func (s *memStore) Migrate(context.Context) error { return nil }

func (s *memStore) Check(context.Context) results.Status {
	if s.down.Load() {
		return results.Status{State: results.StateUnavailable, Reason: "down", CheckedAt: time.Now()}
	}
	return results.Status{State: results.StateUp, CheckedAt: time.Now()}
}

func (s *memStore) Insert(ctx context.Context, rows []results.Row) (int, error) {
	if s.down.Load() {
		return 0, errors.New("result store down")
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range rows {
		s.offered++
		k := r.NaturalKey()
		if _, ok := s.rows[k]; ok {
			s.dupes++
			continue
		}
		s.rows[k] = r
		n++
	}
	return n, nil
}

func (s *memStore) Rows(_ context.Context, act int64) ([]results.Row, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []results.Row
	for _, r := range s.rows {
		if r.ActivationID == act {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NaturalKey() < out[j].NaturalKey() })
	return out, nil
}

func (s *memStore) Close() error { return nil }

func (s *memStore) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.rows)
}

func (s *memStore) has(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.rows[key]
	return ok
}

func (s *memStore) stats() (offered, dupes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.offered, s.dupes
}

// runInfo is a fixed table of stopped runs.
type runInfo map[int64]time.Time

func (r runInfo) AfterStopDeadline(_ context.Context, id int64) (time.Time, bool, error) {
	at, ok := r[id]
	return at, ok, nil
}

// failingDeadLetters wraps a store and fails Park while broken is set.
type failingDeadLetters struct {
	DeadLetters
	broken atomic.Bool
}

func (f *failingDeadLetters) Park(ctx context.Context, rows []Parked) error {
	if f.broken.Load() {
		return errors.New("dead-letter store down")
	}
	return f.DeadLetters.Park(ctx, rows)
}

func newDeadLetters(t testing.TB) *SQLDeadLetters {
	t.Helper()
	db := sqltest.Open(t, sqlstore.SQLite)
	dl, err := OpenDeadLetters(testCtx(t), db)
	if err != nil {
		t.Fatalf("OpenDeadLetters: %v", err)
	}
	return dl
}

// running is an ingester whose Run goroutine a test controls.
type running struct {
	*Ingester
	reg    *prometheus.Registry
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

// start runs an ingester until the test ends (or stop is called).
func start(t testing.TB, cfg Config, d Deps) *running {
	t.Helper()
	reg := prometheus.NewRegistry()
	d.Metrics = reg
	in := New(cfg, d)
	if err := in.Start(testCtx(t)); err != nil {
		t.Fatalf("Start: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{Ingester: in, reg: reg, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- in.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop cancels Run and waits for it to return; safe to call twice.
func (r *running) stop(t testing.TB) {
	t.Helper()
	r.once.Do(func() {
		r.cancel()
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(waitFor):
			t.Fatal("Run did not return after cancel")
		}
		_ = r.Stop(context.Background())
	})
}

func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, waitFor, what, cond)
}

func pending(t testing.TB, q *grid.Queue) uint64 {
	t.Helper()
	n, err := q.Pending(testCtx(t))
	if err != nil {
		t.Fatalf("Pending: %v", err)
	}
	return n
}

func promFloat(c prometheus.Collector) float64 { return promtest.ToFloat64(c) }
