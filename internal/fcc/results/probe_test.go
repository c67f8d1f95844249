package results_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/fcc/results"
	"cpesuite/internal/platform/health"
	"cpesuite/internal/testutil"
)

// fakeStore is a store whose state the test sets.
type fakeStore struct {
	mu         sync.Mutex
	down       error
	behind     int
	migrateErr error
	block      bool // Check waits for its context
	checks     int
	pings      int
	migrations int
}

func (f *fakeStore) Migrate(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.migrations++
	if f.migrateErr != nil {
		return f.migrateErr
	}
	f.behind = 0
	return nil
}

func (f *fakeStore) Check(ctx context.Context) results.Status {
	f.mu.Lock()
	f.checks++
	block, down, behind := f.block, f.down, f.behind
	f.mu.Unlock()
	now := time.Now()
	switch {
	case block:
		<-ctx.Done()
		return results.Status{State: results.StateUnavailable, Reason: ctx.Err().Error(), CheckedAt: now}
	case down != nil:
		return results.Status{State: results.StateUnavailable, Reason: down.Error(), CheckedAt: now}
	case behind > 0:
		return results.Status{State: results.StateSchemaBehind, Reason: "1 migrations pending", CheckedAt: now}
	}
	return results.Status{State: results.StateUp, CheckedAt: now}
}

func (f *fakeStore) Ping(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pings++
	return f.down
}

func (f *fakeStore) Insert(context.Context, []results.Row) (int, error) { return 0, nil }
func (f *fakeStore) Rows(context.Context, int64) ([]results.Row, error) { return nil, nil }
func (f *fakeStore) Close() error                                       { return nil }

func (f *fakeStore) do(fn func(f *fakeStore)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeStore) count(p *int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return *p
}

func fastConfig() results.Config {
	return results.Config{
		Enabled: true, Engine: results.EngineDuckDB, CacheTTL: 5 * time.Millisecond, QueryTimeoutSec: 1,
		SchemaCheckInterval: time.Hour, MigrationRetryInterval: 5 * time.Millisecond, DownInterval: time.Hour,
	}
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// runProbe starts p and runs it until the test ends.
func runProbe(t *testing.T, p *results.Probe) {
	ctx, cancel := context.WithCancel(context.Background())
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func TestProbeStates(t *testing.T) {
	tests := []struct {
		name       string
		store      *fakeStore
		want       results.State
		wantHealth health.Status
		wantReason string
		wantError  string
	}{
		{"up", &fakeStore{}, results.StateUp, health.StatusUp, "", ""},
		{"behind, migrated at start", &fakeStore{behind: 1}, results.StateUp, health.StatusUp, "", ""},
		{"behind, migration fails", &fakeStore{behind: 1, migrateErr: errors.New("no space left")},
			results.StateSchemaBehind, health.StatusDegraded, "SCHEMA_BEHIND", "1 migrations pending; last migration attempt: no space left"},
		{"down", &fakeStore{down: errors.New("dial tcp 127.0.0.1:9000: connect: connection refused")},
			results.StateUnavailable, health.StatusDegraded, "UNAVAILABLE", "dial tcp 127.0.0.1:9000: connect: connection refused"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := results.NewProbe(tc.store, fastConfig(), quiet)
			if st := p.Status(); st.State != results.StateUnavailable {
				t.Errorf("before the first check: %+v, want UNAVAILABLE", st)
			}
			if err := p.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			if st := p.Status(); st.State != tc.want || st.CheckedAt.IsZero() {
				t.Fatalf("Status = %+v, want %s", st, tc.want)
			}
			h := p.Indicator().Health(context.Background())
			if h.Status != tc.wantHealth || h.Details["state"] != string(tc.want) {
				t.Errorf("Indicator = %+v, want %s with state %s", h, tc.wantHealth, tc.want)
			}
			if tc.wantReason != "" && (h.Details["reason"] != tc.wantReason || h.Details["error"] != tc.wantError) {
				t.Errorf("Indicator details = %v, want reason %s, error %q", h.Details, tc.wantReason, tc.wantError)
			}
			if h.Status.HTTPStatus() != 200 {
				t.Errorf("health status %s answers %d; the service must stay 200", h.Status, h.Status.HTTPStatus())
			}
		})
	}
}

func TestProbeRetriesMigrationUntilItWorks(t *testing.T) {
	f := &fakeStore{behind: 1, migrateErr: errors.New("table locked")}
	p := results.NewProbe(f, fastConfig(), quiet)
	var changes []results.State
	var mu sync.Mutex
	p.OnChange(func(st results.Status) {
		mu.Lock()
		defer mu.Unlock()
		changes = append(changes, st.State)
	})
	runProbe(t, p)
	testutil.Eventually(t, testutil.MinDeadline, "a second migration attempt", func() bool { return f.count(&f.migrations) >= 2 })
	if st := p.Status(); st.State != results.StateSchemaBehind {
		t.Fatalf("Status = %+v, want SCHEMA_BEHIND", st)
	}
	f.do(func(f *fakeStore) { f.migrateErr = nil })
	testutil.Eventually(t, testutil.MinDeadline, "UP after a migration worked", func() bool { return p.Status().State == results.StateUp })
	mu.Lock()
	defer mu.Unlock()
	if len(changes) != 2 || changes[0] != results.StateSchemaBehind || changes[1] != results.StateUp {
		t.Errorf("OnChange saw %v, want [SCHEMA_BEHIND UP]", changes)
	}
}

func TestProbeRecheckWhileDown(t *testing.T) {
	// DownInterval is an hour: only Recheck can bring the probe back soon.
	f := &fakeStore{down: errors.New("connection refused")}
	p := results.NewProbe(f, fastConfig(), quiet)
	runProbe(t, p)
	if st := p.Status(); st.State != results.StateUnavailable || st.Reason != "connection refused" {
		t.Fatalf("Status = %+v, want UNAVAILABLE", st)
	}
	f.do(func(f *fakeStore) { f.down = nil })
	p.Recheck()
	testutil.Eventually(t, testutil.MinDeadline, "UP after Recheck", func() bool { return p.Status().State == results.StateUp })
}

func TestProbePingsBetweenSchemaChecks(t *testing.T) {
	// SchemaCheckInterval is an hour: after the first Check, every probe
	// is a Ping, and a failed Ping is UNAVAILABLE.
	f := &fakeStore{}
	p := results.NewProbe(f, fastConfig(), quiet)
	runProbe(t, p)
	testutil.Eventually(t, testutil.MinDeadline, "three pings", func() bool { return f.count(&f.pings) >= 3 })
	if n := f.count(&f.checks); n != 1 {
		t.Errorf("%d schema checks, want 1 within the schema-check interval", n)
	}
	f.do(func(f *fakeStore) { f.down = errors.New("broken pipe") })
	testutil.Eventually(t, testutil.MinDeadline, "UNAVAILABLE after a failed ping", func() bool { return p.Status().State == results.StateUnavailable })
	// While down the version is read again at each check.
	f.do(func(f *fakeStore) { f.down, f.behind, f.migrateErr = nil, 1, errors.New("read-only") })
	p.Recheck()
	testutil.Eventually(t, testutil.MinDeadline, "SCHEMA_BEHIND seen", func() bool { return p.Status().State == results.StateSchemaBehind })
}

func TestProbeCheckBoundedByQueryTimeout(t *testing.T) {
	f := &fakeStore{block: true}
	p := results.NewProbe(f, fastConfig(), quiet)
	st := p.CheckNow(context.Background())
	if st.State != results.StateUnavailable || !strings.Contains(st.Reason, "deadline") {
		t.Errorf("Status = %+v, want UNAVAILABLE after the query time-out", st)
	}
}

func TestProbeOverDuckDB(t *testing.T) {
	s, err := results.Open(context.Background(), fastConfig(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := results.NewProbe(s, fastConfig(), quiet)
	runProbe(t, p)
	if st := p.Status(); st.State != results.StateUp {
		t.Fatalf("Status after Start = %+v, want UP (migrated)", st)
	}
	s.Close()
	p.Recheck()
	testutil.Eventually(t, testutil.MinDeadline, "UNAVAILABLE after Close", func() bool { return p.Status().State == results.StateUnavailable })
}
