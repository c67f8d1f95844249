package fcc

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/fcc/legacy"
	"cpesuite/internal/fcc/results"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
	"cpesuite/internal/testutil"
)

// legacyHarness wires a real importer (legacy source on SQLite, DuckDB
// store) into the service of a harness.
func legacyHarness(t *testing.T, enabled bool, state results.State) (*harness, *sqlstore.DB) {
	h := newHarness(t, sqlstore.SQLite, nil)
	ctx := context.Background()
	src := sqltest.Open(t, sqlstore.SQLite)
	if err := legacy.CreateSource(ctx, src); err != nil {
		t.Fatal(err)
	}
	duck, err := results.OpenDuckDB(filepath.Join(t.TempDir(), results.DuckDBFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := duck.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { duck.Close() })
	cfg := legacy.Config{Enabled: enabled, BatchSize: 50, WindowSettle: time.Hour, StaleAfter: time.Minute, Zone: "UTC"}
	imp, err := legacy.New(ctx, cfg, legacy.Deps{FCC: h.svc.DB(), Source: src, Store: duck, Gate: fakeGate{state}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { imp.Close() })
	h.svc.UseLegacy(imp)
	return h, src
}

func TestLegacyImportEndpoints(t *testing.T) {
	const base = "/FCC/admin/legacy-import/"
	t.Run("scope LIST is 9403 on all three", func(t *testing.T) {
		h, _ := legacyHarness(t, true, results.StateUp)
		for _, p := range []string{"start", "status", "stop"} {
			if r := h.do("POST", base+p, scopeList(1, 1), map[string]any{}).want(403); r.errorBody().Code != 9403 {
				t.Fatalf("%s: %+v", p, r.errorBody())
			}
		}
	})
	t.Run("disabled: start 400, status answers", func(t *testing.T) {
		h, _ := legacyHarness(t, false, results.StateUp)
		if r := h.do("POST", base+"start", scopeAll, map[string]any{}).want(400); r.errorBody().Code != 9400 {
			t.Fatalf("%+v", r.errorBody())
		}
		var st legacy.Status
		h.do("POST", base+"status", scopeAll, nil).want(200).decode(&st)
		if st.Enabled || len(st.Kinds) != 2 || st.Kinds[0].Kind != legacy.KindSpeed || st.Kinds[1].Kind != legacy.KindLatency {
			t.Fatalf("%+v", st)
		}
	})
	t.Run("store not UP: start 9503, dry run and status answer", func(t *testing.T) {
		h, _ := legacyHarness(t, true, results.StateUnavailable)
		if r := h.do("POST", base+"start", scopeAll, map[string]any{"kinds": []string{"SPEED"}}).want(503); r.errorBody().Code != 9503 {
			t.Fatalf("%+v", r.errorBody())
		}
		h.do("POST", base+"start", scopeAll, map[string]any{"dryRun": true}).want(200)
		h.do("POST", base+"status", scopeAll, nil).want(200)
	})
	t.Run("start runs a pass to COMPLETED; held kind is 9409 naming the run", func(t *testing.T) {
		h, src := legacyHarness(t, true, results.StateUp)
		seed := legacy.Seed{UGs: 2, Runs: 1, Serials: 3, Speed: 120, Latency: 60, FirstID: 1, From: time.Now().UTC().Add(-72 * time.Hour), Step: time.Minute, DomainID: 3}
		if err := seed.Write(context.Background(), src); err != nil {
			t.Fatal(err)
		}
		var st legacy.Status
		h.do("POST", base+"start", scopeAll, map[string]any{"kinds": []string{"SPEED", "SPEED"}, "batchSize": 10}).want(200).decode(&st)
		if st.Kinds[0].BatchSize != 10 || st.Kinds[0].TotalRowEstimate != 120 {
			t.Fatalf("%+v", st.Kinds[0])
		}
		testutil.Eventually(t, 0, "SPEED completed", func() bool {
			h.do("POST", base+"status", scopeAll, nil).want(200).decode(&st)
			return st.Kinds[0].State == legacy.StateCompleted
		})
		if st.Kinds[0].RowsWritten != 120 || st.Kinds[1].State != legacy.StateIdle {
			t.Fatalf("%+v", st)
		}
		// Held by another process with a fresh heartbeat.
		if _, err := h.svc.DB().ExecContext(context.Background(), `UPDATE fcc_legacy_import SET state = 'RUNNING', run_id = 'elsewhere-7', heartbeat_us = ? WHERE kind = 'LATENCY'`,
			time.Now().UnixMicro()); err != nil {
			t.Fatal(err)
		}
		r := h.do("POST", base+"start", scopeAll, map[string]any{}).want(409)
		if b := r.errorBody(); b.Code != 9409 || !strings.Contains(b.Message, "elsewhere-7") || !strings.Contains(b.Message, "heartbeat") {
			t.Fatalf("%+v", b)
		}
		h.do("POST", base+"stop", scopeAll, nil).want(200)
	})
}
