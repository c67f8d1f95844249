package fcc

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"cpesuite/internal/fcc/ingest"
	"cpesuite/internal/fcc/results"
	"cpesuite/internal/fcc/results/storetest"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/testutil"
)

// countingResender is the dead-letter side of the resend endpoint; the
// ingester's own Resend is tested in package ingest.
type countingResender struct {
	limits []int
	err    error
}

func (c *countingResender) Resend(_ context.Context, limit int) (ingest.ResendReport, error) {
	c.limits = append(c.limits, limit)
	return ingest.ResendReport{Resent: min(limit, 3), Remaining: 0}, c.err
}

// TestResendEndpoint holds POST /FCC/admin/result-dead-letter/resend to its
// rules: scope ALL (9403), the 9503 gate, {} meaning the default batch,
// a limit from 1 to svc.fcc.dead-letter.resend-batch-size.
func TestResendEndpoint(t *testing.T) {
	h := newHarness(t, sqlstore.SQLite, func(c *Config) { c.Ingest.ResendBatchSize = 500 })
	rs := &countingResender{}
	const path = "/FCC/admin/result-dead-letter/resend"

	h.svc.UseResults(fakeGate{results.StateSchemaBehind}, rs)
	if r := h.do("POST", path, scopeAll, map[string]any{}).want(503); r.errorBody().Code != 9503 {
		t.Fatalf("store behind: %+v", r.errorBody())
	}
	h.svc.UseResults(fakeGate{results.StateUp}, rs)
	if r := h.do("POST", path, scopeList(1, 1), map[string]any{}).want(403); r.errorBody().Code != 9403 {
		t.Fatalf("scope LIST: %+v", r.errorBody())
	}
	for _, body := range []any{map[string]any{"limit": 0}, map[string]any{"limit": 501}, map[string]any{"limit": "ten"}, "{not json"} {
		if r := h.do("POST", path, scopeAll, body).want(400); r.errorBody().Code != 9400 {
			t.Fatalf("%v: %+v", body, r.errorBody())
		}
	}
	var rep ingest.ResendReport
	h.do("POST", path, scopeAll, map[string]any{}).want(200).decode(&rep)
	h.do("POST", path, scopeAll, map[string]any{"limit": 2}).want(200)
	if len(rs.limits) != 2 || rs.limits[0] != 500 || rs.limits[1] != 2 || rep.Resent != 3 {
		t.Fatalf("limits %v, report %+v", rs.limits, rep)
	}
	rs.err = errors.New("dead-letter table unreadable")
	if r := h.do("POST", path, scopeAll, map[string]any{}).want(500); r.errorBody().Code != 9500 {
		t.Fatalf("failing resend: %+v", r.errorBody())
	}
	h.svc.UseResults(fakeGate{results.StateUp}, nil)
	h.do("POST", path, scopeAll, map[string]any{}).want(503)
}

// TestActivationsList: the runs of a campaign with their device states and
// the result rows stored for each, null while the store is not UP; 404
// outside the caller's scope.
func TestActivationsList(t *testing.T) {
	h, _ := runHarness(t, sqlstore.SQLite, nil)
	id := h.immediateCampaign(nil)
	h.do("POST", "/FCC/activate", scopeAll, map[string]int64{"id": id}).want(200)

	var list RunList
	testutil.Eventually(t, testutil.MinDeadline, "the scheduler to create run 1", func() bool {
		list = RunList{}
		h.do("POST", "/FCC/activations/list", scopeAll, map[string]int64{"id": id}).want(200).decode(&list)
		return len(list.Items) == 1
	})
	r := list.Items[0]
	if list.CampaignID != id || list.State != StateScheduled || r.RunNumber != 1 || r.FleetSize < 1 || r.Results != nil {
		t.Fatalf("list %+v", list)
	}
	h.do("POST", "/FCC/activations/list", scopeList(3, 3), map[string]int64{"id": id}).want(404)
	h.do("POST", "/FCC/activations/list", scopeAll, map[string]int64{"id": 999999}).want(404)
	h.do("POST", "/FCC/activations/list", scopeAll, map[string]any{}).want(400)

	store, err := results.OpenDuckDB(filepath.Join(t.TempDir(), "r.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	if err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Insert(ctx, storetest.Batch(r.ID, 7, 1)); err != nil {
		t.Fatal(err)
	}
	h.svc.UseResultStore(store)
	list = RunList{}
	h.do("POST", "/FCC/activations/list", scopeAll, map[string]int64{"id": id}).want(200).decode(&list)
	if got := list.Items[0].Results; got == nil || *got != 7 {
		t.Fatalf("results of run %d: %v", r.ID, got)
	}
}
