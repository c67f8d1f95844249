package legacy_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cpesuite/internal/fcc"
	"cpesuite/internal/fcc/legacy"
	"cpesuite/internal/fcc/results"
	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
	"cpesuite/internal/testutil"
)

type gate struct{ state atomic.Value }

func (g *gate) Status() results.Status {
	s, _ := g.state.Load().(results.State)
	return results.Status{State: s}
}

// hookStore is a real store whose Insert can be held or failed by a test.
type hookStore struct {
	results.Store
	mu      sync.Mutex
	inserts int
	hold    chan struct{} // when set, every insert after the first waits on it
	fail    error
}

func (h *hookStore) Insert(ctx context.Context, rows []results.Row) (int, error) {
	h.mu.Lock()
	h.inserts++
	n, hold, fail := h.inserts, h.hold, h.fail
	h.mu.Unlock()
	if fail != nil {
		return 0, fail
	}
	if hold != nil && n > 1 {
		select {
		case <-hold:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return h.Store.Insert(ctx, rows)
}

type env struct {
	t       testing.TB
	fccDB   *sqlstore.DB
	src     *sqlstore.DB
	store   *hookStore
	gate    *gate
	imp     *legacy.Importer
	cfg     legacy.Config
	devices legacy.DeviceLookup
}

func testConfig() legacy.Config {
	return legacy.Config{Enabled: true, BatchSize: 100, WindowSettle: time.Hour, Zone: "UTC", StaleAfter: time.Minute}
}

// envOpts varies an env: nil fields keep the defaults (a DuckDB store in
// the test's directory; every serial but LEG000003 resolves).
type envOpts struct {
	edit    func(*legacy.Config)
	store   func(t testing.TB) results.Store
	devices legacy.DeviceLookup
}

func newEnv(t testing.TB, d sqlstore.Dialect, edit func(*legacy.Config)) *env {
	t.Helper()
	return newEnvOpts(t, d, envOpts{edit: edit})
}

func openDuckDB(t testing.TB) results.Store {
	t.Helper()
	duck, err := results.OpenDuckDB(filepath.Join(t.TempDir(), results.DuckDBFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := duck.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { duck.Close() })
	return duck
}

func newEnvOpts(t testing.TB, d sqlstore.Dialect, o envOpts) *env {
	t.Helper()
	ctx := context.Background()
	fccDB := sqltest.Open(t, d)
	if _, err := fcc.OpenStore(ctx, fccDB); err != nil {
		t.Fatal(err)
	}
	src := sqltest.Open(t, d)
	if err := legacy.CreateSource(ctx, src); err != nil {
		t.Fatal(err)
	}
	if o.store == nil {
		o.store = openDuckDB
	}
	if o.devices == nil {
		o.devices = func(_ context.Context, serials []string) (map[string]int64, error) {
			out := map[string]int64{}
			for i, s := range serials {
				if s != "LEG000003" { // one serial the ACS does not know
					out[s] = int64(1000 + i)
				}
			}
			return out, nil
		}
	}
	e := &env{t: t, fccDB: fccDB, src: src, store: &hookStore{Store: o.store(t)}, gate: &gate{}, cfg: testConfig(), devices: o.devices}
	e.gate.state.Store(results.StateUp)
	if o.edit != nil {
		o.edit(&e.cfg)
	}
	e.imp = e.open()
	return e
}

func (e *env) open() *legacy.Importer {
	imp, err := legacy.New(context.Background(), e.cfg, legacy.Deps{FCC: e.fccDB, Source: e.src, Store: e.store, Gate: e.gate, Devices: e.devices})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { imp.Close() })
	return imp
}

func (e *env) seed(s legacy.Seed) {
	e.t.Helper()
	if err := s.Write(context.Background(), e.src); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) status() legacy.Status {
	e.t.Helper()
	st, err := e.imp.Status(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

func kind(st legacy.Status, k legacy.Kind) legacy.KindStatus {
	for _, ks := range st.Kinds {
		if ks.Kind == k {
			return ks
		}
	}
	return legacy.KindStatus{}
}

func (e *env) waitState(k legacy.Kind, states ...string) legacy.KindStatus {
	e.t.Helper()
	var ks legacy.KindStatus
	testutil.Eventually(e.t, testutil.MinDeadline, string(k)+" reaching "+states[0], func() bool {
		ks = kind(e.status(), k)
		for _, s := range states {
			if ks.State == s {
				return true
			}
		}
		return false
	})
	return ks
}

func (e *env) start(req legacy.StartRequest) (legacy.Status, error) {
	return e.imp.Start(context.Background(), req)
}

func (e *env) count(q string, args ...any) int64 {
	e.t.Helper()
	var n int64
	if err := e.fccDB.QueryRowContext(context.Background(), e.fccDB.Rebind(q), args...).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

func dialects(t *testing.T, fn func(t *testing.T, d sqlstore.Dialect)) {
	for _, d := range []sqlstore.Dialect{sqlstore.SQLite, sqlstore.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			if d == sqlstore.Postgres {
				testutil.RequirePostgres(t)
			}
			fn(t, d)
		})
	}
}

// old is a start date well inside the first pass's window.
func old() time.Time { return time.Now().UTC().Add(-10 * 24 * time.Hour).Truncate(time.Second) }

// TestStopResumeComplete is the done-when: a pass stopped mid-way, resumed,
// ends COMPLETED with the source's valid rows; a second pass imports only
// newer rows.
func TestStopResumeComplete(t *testing.T) {
	dialects(t, func(t *testing.T, d sqlstore.Dialect) {
		e := newEnv(t, d, nil)
		seed := legacy.Seed{UGs: 3, Runs: 2, Serials: 5, Speed: 1200, Latency: 700, FirstID: 1, From: old(), Step: time.Minute, DomainID: 7}
		e.seed(seed)
		e.store.hold = make(chan struct{})
		if _, err := e.start(legacy.StartRequest{Kinds: []string{"SPEED"}}); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, 0, "the second insert waiting", func() bool {
			e.store.mu.Lock()
			defer e.store.mu.Unlock()
			return e.store.inserts >= 2
		})
		st, err := e.imp.Stop(context.Background(), legacy.StopRequest{Kinds: []string{"SPEED"}})
		if err != nil {
			t.Fatal(err)
		}
		if ks := kind(st, legacy.KindSpeed); ks.State != legacy.StateStopping || !ks.PendingStop {
			t.Fatalf("after stop: %+v", ks)
		}
		e.store.mu.Lock()
		close(e.store.hold)
		e.store.hold = nil
		e.store.mu.Unlock()
		ks := e.waitState(legacy.KindSpeed, legacy.StateIdle)
		if ks.RowsRead != 200 || ks.CursorResultID == nil || *ks.CursorResultID != 200 || ks.PendingResultID != nil {
			t.Fatalf("stopped between two batches with the cursor committed: %+v", ks)
		}
		if _, err := e.start(legacy.StartRequest{}); err != nil {
			t.Fatal(err)
		}
		ks = e.waitState(legacy.KindSpeed, legacy.StateCompleted)
		kl := e.waitState(legacy.KindLatency, legacy.StateCompleted)
		if ks.RowsRead != 1200 || ks.RowsWritten != 1200 || ks.TotalRowEstimate != 1200 || kl.RowsRead != 700 || kl.RowsWritten != 700 {
			t.Fatalf("speed %+v\nlatency %+v", ks, kl)
		}
		if got := e.count(`SELECT COUNT(*) FROM fcc_campaigns WHERE legacy_ug_id IS NOT NULL`); got != 3 {
			t.Fatalf("%d anchors, want 3", got)
		}
		if got := e.count(`SELECT COUNT(*) FROM fcc_runs`); got != 6 {
			t.Fatalf("%d activations, want 6", got)
		}
		var stored int
		var runID int64
		if err := e.fccDB.QueryRowContext(context.Background(), `SELECT MIN(id) FROM fcc_runs`).Scan(&runID); err != nil {
			t.Fatal(err)
		}
		rows, err := e.store.Rows(context.Background(), runID)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Source != results.SourceLegacy || r.LegacyUgID == nil || r.LegacyResultID == nil || r.DomainID != 7 {
				t.Fatalf("imported row %+v", r)
			}
			stored++
		}
		if stored == 0 {
			t.Fatal("no rows stored for the first activation")
		}
		if ks.DevicesUnresolved == 0 || e.count(`SELECT COUNT(*) FROM fcc_run_devices`) == 0 {
			t.Fatalf("devices: %d unresolved, snapshot rows %d", ks.DevicesUnresolved, e.count(`SELECT COUNT(*) FROM fcc_run_devices`))
		}

		// A second pass: only newer rows (inside the new window) and none
		// that is too new (inside the last 25 hours).
		later := time.Now().UTC().Add(72 * time.Hour)
		e.imp.SetClock(func() time.Time { return later })
		newer := legacy.Seed{UGs: 3, Runs: 2, Serials: 5, Speed: 50, FirstID: 5001, From: time.Now().UTC().Add(-20 * time.Hour), Step: time.Minute, DomainID: 7}
		for i := range 50 {
			r := newer.SpeedRow(i)
			r.RunNo += 10 // runs of their own: natural keys the first pass has not stored
			if err := legacy.InsertSpeed(context.Background(), e.src, r); err != nil {
				t.Fatal(err)
			}
		}
		fresh := later.Add(-2 * time.Hour)
		sn, tp := "NEW1", "FILE_BASED"
		if err := legacy.InsertSpeed(context.Background(), e.src, legacy.SpeedRow{ResultID: 9000, UgID: 1, RunNo: 9, Serial: &sn, Direction: "DOWNLOAD", Iteration: 1, SpeedType: &tp, StartDate: &fresh}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.start(legacy.StartRequest{Kinds: []string{"SPEED"}}); err != nil {
			t.Fatal(err)
		}
		ks = e.waitState(legacy.KindSpeed, legacy.StateCompleted)
		if ks.RowsRead != 50 || ks.RowsWritten != 50 || ks.RowsLateSkipped != 0 {
			t.Fatalf("second pass: %+v", ks)
		}
		if got := e.count(`SELECT COUNT(*) FROM fcc_runs`); got != 12 {
			t.Fatalf("%d activations after the second pass, want 12", got)
		}
	})
}

// TestDryRunCountsAndClaimsNothing: remaining work is counted first; a dry
// run claims nothing and is not gated by the store.
func TestDryRunCountsAndClaimsNothing(t *testing.T) {
	dialects(t, func(t *testing.T, d sqlstore.Dialect) {
		e := newEnv(t, d, nil)
		e.seed(legacy.Seed{UGs: 2, Runs: 1, Serials: 3, Speed: 40, Latency: 30, FirstID: 1, From: old(), Step: time.Minute})
		e.gate.state.Store(results.StateUnavailable)
		st, err := e.start(legacy.StartRequest{DryRun: true, Kinds: []string{"LATENCY", "SPEED", "LATENCY"}})
		if err != nil {
			t.Fatal(err)
		}
		if ks, kl := kind(st, legacy.KindSpeed), kind(st, legacy.KindLatency); ks.TotalRowEstimate != 40 || kl.TotalRowEstimate != 30 || ks.State != legacy.StateIdle || len(st.Kinds) != 2 {
			t.Fatalf("dry run: %+v", st)
		}
		if _, err := e.start(legacy.StartRequest{}); !errors.Is(err, apperr.ErrUnavailable) {
			t.Fatalf("start with the store down: %v, want 503", err)
		}
		if ks := kind(e.status(), legacy.KindSpeed); ks.State != legacy.StateIdle || ks.RunID != nil {
			t.Fatalf("claimed: %+v", ks)
		}
	})
}

// TestRules covers the refusals and halts, one case each.
func TestRules(t *testing.T) {
	dialects(t, func(t *testing.T, d sqlstore.Dialect) {
		ctx := context.Background()
		t.Run("disabled start is 400, status answers", func(t *testing.T) {
			e := newEnv(t, d, func(c *legacy.Config) { c.Enabled = false })
			if _, err := e.start(legacy.StartRequest{}); !errors.Is(err, apperr.ErrInvalid) {
				t.Fatalf("%v", err)
			}
			if st := e.status(); st.Enabled || len(st.Kinds) != 2 {
				t.Fatalf("%+v", st)
			}
		})
		t.Run("bad kind and batch size are 400", func(t *testing.T) {
			e := newEnv(t, d, nil)
			big := legacy.MaxBatchSize + 1
			for _, req := range []legacy.StartRequest{{Kinds: []string{"PING"}}, {BatchSize: &big}} {
				if _, err := e.start(req); !errors.Is(err, apperr.ErrInvalid) {
					t.Fatalf("%+v: %v", req, err)
				}
			}
		})
		t.Run("fresh heartbeat is 409 naming the run, all or nothing; stale is taken over", func(t *testing.T) {
			e := newEnv(t, d, nil)
			e.seed(legacy.Seed{UGs: 1, Runs: 1, Serials: 1, Speed: 10, Latency: 10, FirstID: 1, From: old(), Step: time.Minute})
			now := time.Now().UnixMicro()
			if _, err := e.fccDB.ExecContext(ctx, e.fccDB.Rebind(`UPDATE fcc_legacy_import SET state = 'RUNNING', run_id = 'other-1', heartbeat_us = ? WHERE kind = 'LATENCY'`), now); err != nil {
				t.Fatal(err)
			}
			_, err := e.start(legacy.StartRequest{})
			if !errors.Is(err, apperr.ErrConflict) || !contains(apperr.PublicMessage(err), "other-1") {
				t.Fatalf("%v", err)
			}
			if ks := kind(e.status(), legacy.KindSpeed); ks.State != legacy.StateIdle {
				t.Fatalf("SPEED claimed although LATENCY was held: %+v", ks)
			}
			stale := time.Now().Add(-2 * e.cfg.StaleAfter).UnixMicro()
			if _, err := e.fccDB.ExecContext(ctx, e.fccDB.Rebind(`UPDATE fcc_legacy_import SET heartbeat_us = ? WHERE kind = 'LATENCY'`), stale); err != nil {
				t.Fatal(err)
			}
			if _, err := e.start(legacy.StartRequest{}); err != nil {
				t.Fatal(err)
			}
			if kl := e.waitState(legacy.KindLatency, legacy.StateCompleted); kl.RowsWritten != 10 {
				t.Fatalf("%+v", kl)
			}
		})
		t.Run("null serial, start date or speed type halts with rowsInvalid", func(t *testing.T) {
			for _, bad := range []string{"serial", "start", "type"} {
				e := newEnv(t, d, nil)
				e.seed(legacy.Seed{UGs: 1, Runs: 1, Serials: 2, Speed: 20, FirstID: 1, From: old(), Step: time.Minute})
				r := legacy.Seed{UGs: 1, Runs: 1, Serials: 2, From: old(), Step: time.Minute, FirstID: 1}.SpeedRow(30)
				r.ResultID = 15 + 1000
				switch bad {
				case "serial":
					r.Serial = nil
				case "start":
					r.StartDate = nil
				case "type":
					r.SpeedType = nil
				}
				if err := legacy.InsertSpeed(ctx, e.src, r); err != nil {
					t.Fatal(err)
				}
				if _, err := e.start(legacy.StartRequest{Kinds: []string{"SPEED"}}); err != nil {
					t.Fatal(err)
				}
				ks := e.waitState(legacy.KindSpeed, legacy.StateFailed)
				if ks.RowsInvalid != 1 || ks.RowsWritten != 20 || ks.LastError == nil || !contains(*ks.LastError, "1015") || !contains(*ks.LastError, "ugId) 1") {
					t.Fatalf("%s: %+v %v", bad, ks, *ks.LastError)
				}
			}
		})
		t.Run("store down leaves IDLE, resumable; pending range re-checked", func(t *testing.T) {
			e := newEnv(t, d, nil)
			e.seed(legacy.Seed{UGs: 1, Runs: 1, Serials: 2, Speed: 250, FirstID: 1, From: old(), Step: time.Minute})
			e.store.fail = errors.New("connection refused")
			if _, err := e.start(legacy.StartRequest{Kinds: []string{"SPEED"}}); err != nil {
				t.Fatal(err)
			}
			ks := e.waitState(legacy.KindSpeed, legacy.StateIdle)
			if ks.LastError == nil || !contains(*ks.LastError, "connection refused") || ks.PendingResultID == nil || *ks.PendingResultID != 100 {
				t.Fatalf("%+v", ks)
			}
			e.store.fail = nil
			if _, err := e.start(legacy.StartRequest{Kinds: []string{"SPEED"}}); err != nil {
				t.Fatal(err)
			}
			if ks := e.waitState(legacy.KindSpeed, legacy.StateCompleted); ks.RowsWritten != 250 || ks.PassCutoff != nil {
				t.Fatalf("%+v", ks)
			}
		})
		t.Run("late rows are counted, not back-filled; zone fixed per pass", func(t *testing.T) {
			e := newEnv(t, d, func(c *legacy.Config) { c.Zone = "Europe/Berlin" })
			e.seed(legacy.Seed{UGs: 1, Runs: 1, Serials: 2, Speed: 10, FirstID: 1, From: old(), Step: time.Minute})
			if _, err := e.start(legacy.StartRequest{Kinds: []string{"SPEED"}}); err != nil {
				t.Fatal(err)
			}
			ks := e.waitState(legacy.KindSpeed, legacy.StateCompleted)
			if ks.ZoneID == nil || *ks.ZoneID != "Europe/Berlin" {
				t.Fatalf("%+v", ks)
			}
			late := legacy.Seed{UGs: 1, Runs: 1, Serials: 2, FirstID: 1, From: old(), Step: time.Minute}.SpeedRow(100)
			late.ResultID = 500
			if err := legacy.InsertSpeed(ctx, e.src, late); err != nil {
				t.Fatal(err)
			}
			if _, err := e.start(legacy.StartRequest{Kinds: []string{"SPEED"}}); err != nil {
				t.Fatal(err)
			}
			ks = e.waitState(legacy.KindSpeed, legacy.StateCompleted)
			if ks.RowsLateSkipped != 1 || ks.RowsRead != 0 {
				t.Fatalf("%+v", ks)
			}
		})
	})
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub)))
}
