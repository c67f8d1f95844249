package fcc

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/fcc/results"
	"cpesuite/internal/fcc/results/storetest"
	"cpesuite/internal/platform/sqlstore"
)

// reportFixture is a harness with a real DuckDB result store: campaign a
// (domain 2) with runs a1 and a2, campaign b (domain 3) with run b1, and
// result rows in each.
type reportFixture struct {
	*harness
	a, b, a1, a2, b1 int64
	store            *results.DuckDB
}

func newReportFixture(t *testing.T) *reportFixture {
	h := newHarness(t, sqlstore.SQLite, nil)
	store, err := results.OpenDuckDB(filepath.Join(t.TempDir(), results.DuckDBFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	ctx := context.Background()
	if err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	h.svc.UseResultStore(store)
	h.svc.results.gate = fakeGate{results.StateUp}
	f := &reportFixture{harness: h, store: store}
	ca := speedCampaign("north", serialConfig("A1", "A2"))
	ca.DomainID = ptr(int64(2))
	f.a = h.save(scopeAll, ca)
	cb := speedCampaign("south", TestConfig{Manufacturer: "Acme", Model: "HG 8546", SourceType: "SERIAL_LIST", Serials: []string{"B1"}, Settings: []Setting{speedSetting()}})
	cb.DomainID = ptr(int64(3))
	f.b = h.save(scopeAll, cb)
	t0 := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	f.a1 = f.insertRun(f.a, 1, t0, 5)
	f.a2 = f.insertRun(f.a, 2, t0.Add(24*time.Hour), 2)
	f.b1 = f.insertRun(f.b, 1, t0.Add(time.Hour), 1)

	row := func(run, campaign, domain int64, serial string, it int, st fccwire.Outcome, kbps float64) results.Row {
		r := storetest.SpeedRow(run, serial, fccwire.Download, it)
		r.FccTestID, r.DomainID, r.Status = campaign, domain, st
		if kbps == 0 {
			r.Speed = nil
		} else {
			r.Speed.Kbps = kbps
		}
		return r
	}
	lat := func(run, campaign, domain int64, serial string, it int, avg *float64) results.Row {
		r := storetest.LatencyRow(run, serial, it)
		r.FccTestID, r.DomainID = campaign, domain
		if avg == nil {
			r.Status, r.Latency = fccwire.OutcomeError, nil
		} else {
			r.Latency.AverageMs = avg
		}
		return r
	}
	seed := []results.Row{
		row(f.a1, f.a, 2, "A1", 1, fccwire.OutcomeOK, 100000),
		row(f.a1, f.a, 2, "A2", 1, fccwire.OutcomeBelowTier, 50000),
		row(f.a1, f.a, 2, "A1", 2, fccwire.OutcomeWANBusy, 0),
		row(f.a2, f.a, 2, "A1", 1, fccwire.OutcomeError, 0),
		lat(f.a2, f.a, 2, "A1", 1, ptr(12.0)),
		lat(f.a2, f.a, 2, "A2", 1, ptr(18.0)),
		lat(f.a2, f.a, 2, "A1", 2, nil),
		row(f.b1, f.b, 3, "B1", 1, fccwire.OutcomeOK, 30000),
	}
	if n, err := store.Insert(ctx, seed); err != nil || n != len(seed) {
		t.Fatalf("Insert = %d, %v", n, err)
	}
	return f
}

// insertRun writes a finished run row with a snapshot of one
// configuration, as the scheduler would have.
func (f *reportFixture) insertRun(campaign int64, n int, start time.Time, fleet int64) int64 {
	f.t.Helper()
	snap, err := json.Marshal(RunSnapshot{Type: TypeSpeed, Groups: []SnapshotGroup{{ConfigID: 7, Manufacturer: "Acme", Model: "HG 8245", FleetSize: int(fleet),
		Setting: Setting{Type: TypeSpeed, SpeedTierDownload: ptr(int64(100000)), WanDownloadThreshold: ptr(int64(2000))}}}})
	if err != nil {
		f.t.Fatal(err)
	}
	db := f.svc.store.db
	if _, err := db.Exec(db.Rebind(`INSERT INTO fcc_runs (campaign_id, run_number, state, snapshot, fleet_size, window_start_at, started_at, finished_at, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), campaign, n, "FINISHED", string(snap), fleet, start, start, start.Add(time.Hour), start, start); err != nil {
		f.t.Fatal(err)
	}
	id, err := f.svc.runCampaignRun(campaign, n)
	if err != nil {
		f.t.Fatal(err)
	}
	return id
}

func (s *Service) runCampaignRun(campaign int64, n int) (int64, error) {
	var id int64
	err := s.store.db.QueryRow(s.store.q(`SELECT id FROM fcc_runs WHERE campaign_id = ? AND run_number = ?`), campaign, n).Scan(&id)
	return id, err
}

var reportPaths = []string{"/FCC/reports/list", "/FCC/reports/results", "/FCC/reports/generate"}

// TestReports503 is the spec's 9503 rule: every report endpoint is refused
// while the store is not UP, before the body is read.
func TestReports503(t *testing.T) {
	f := newReportFixture(t)
	for _, state := range []results.State{results.StateUnavailable, results.StateSchemaBehind} {
		f.svc.results.gate = fakeGate{state}
		for _, p := range reportPaths {
			for _, body := range []any{map[string]any{}, "{not json"} {
				if r := f.do("POST", p, scopeAll, body).want(503); r.errorBody().Code != 9503 {
					t.Fatalf("%s %s: %+v", state, p, r.errorBody())
				}
			}
		}
	}
	f.svc.results.gate = nil
	f.do("POST", "/FCC/reports/generate", scopeAll, map[string]any{}).want(503)
	// The identity filter still comes first.
	f.do("POST", "/FCC/reports/generate", hdr{}, map[string]any{}).want(403)
}

// TestReportsRefused: 400 for bad bodies, enums, sorts and page bounds;
// 404 for campaigns and runs the caller cannot see or that do not match.
func TestReportsRefused(t *testing.T) {
	f := newReportFixture(t)
	bad := []struct {
		path string
		body any
	}{
		{"/FCC/reports/list", "{not json"},
		{"/FCC/reports/list", map[string]any{"type": "THROUGHPUT"}},
		{"/FCC/reports/list", map[string]any{"statuses": []string{"OK", "NOPE"}}},
		{"/FCC/reports/list", map[string]any{"sort": []SortEntry{{Field: "serial"}}}},
		{"/FCC/reports/list", map[string]any{"sort": []SortEntry{{Field: "runNumber", Direction: "UP"}}}},
		{"/FCC/reports/list", map[string]any{"pageSize": 501}},
		{"/FCC/reports/list", map[string]any{"pageSize": 0}},
		{"/FCC/reports/list", map[string]any{"pageNumbers": -1}},
		{"/FCC/reports/results", map[string]any{"pageSize": 1001}},
		{"/FCC/reports/results", map[string]any{"sort": []SortEntry{{Field: "runNumber"}}}},
		{"/FCC/reports/results", map[string]any{"startedFrom": "2026-12-02T00:00:00Z", "startedTo": "2026-12-01T00:00:00Z"}},
		{"/FCC/reports/generate", map[string]any{"afterStop": "yes"}},
		{"/FCC/reports/generate", map[string]any{"filters": map[string]any{"type": "nope"}}},
	}
	for _, tc := range bad {
		if r := f.do("POST", tc.path, scopeAll, tc.body).want(400); r.errorBody().Code != 9400 {
			t.Fatalf("%s %v: %+v", tc.path, tc.body, r.errorBody())
		}
	}
	notFound := []struct {
		id   hdr
		body map[string]any
	}{
		{scopeAll, map[string]any{"campaignId": 999}},
		{scopeAll, map[string]any{"runId": 999}},
		{scopeAll, map[string]any{"campaignId": f.a, "runId": f.b1}}, // a run of another campaign
		{scopeList(2, 2), map[string]any{"campaignId": f.b}},
		{scopeList(2, 2), map[string]any{"runId": f.b1}},
		{scopeList(2, 2), map[string]any{"filters": map[string]any{"runId": f.b1}}},
	}
	for _, tc := range notFound {
		for _, p := range reportPaths {
			if r := f.do("POST", p, tc.id, tc.body).want(404); r.errorBody().Code != 9404 {
				t.Fatalf("%s %v: %+v", p, tc.body, r.errorBody())
			}
		}
	}
}

func TestReportList(t *testing.T) {
	f := newReportFixture(t)
	list := func(id hdr, body map[string]any) ReportRunPage {
		t.Helper()
		var p ReportRunPage
		f.do("POST", "/FCC/reports/list", id, body).want(200).decode(&p)
		return p
	}
	// Default order: newest window first.
	p := list(scopeAll, map[string]any{})
	if len(p.Items) != 3 || p.Items[0].RunID != f.a2 || p.Items[1].RunID != f.b1 || p.Items[2].RunID != f.a1 || p.PageDetails.TotalItems != 3 {
		t.Fatalf("list %+v", p)
	}
	a1 := p.Items[2]
	want := results.RunCounts{Results: 3, OK: 1, BelowTier: 1, WANBusy: 1}
	if a1.RunCounts != want || a1.FleetSize != 5 || a1.CampaignID != f.a || a1.CampaignName != "north" || a1.CampaignType != TypeSpeed ||
		a1.DomainID != 2 || a1.StartedAt == nil || a1.FinishedAt == nil || a1.AckedAt != nil || a1.StoppedAt != nil {
		t.Fatalf("run a1 %+v", a1)
	}
	if len(a1.Thresholds) != 1 || *a1.Thresholds[0].SpeedTierDownload != 100000 || *a1.Thresholds[0].WanDownloadThreshold != 2000 || a1.Thresholds[0].FleetSize != 5 {
		t.Fatalf("thresholds %+v", a1.Thresholds)
	}
	// Sort whitelist, both directions; paging envelope.
	p = list(scopeAll, map[string]any{"sort": []SortEntry{{Field: "runNumber", Direction: "desc"}, {Field: "campaignName"}}, "pageSize": 2})
	if len(p.Items) != 2 || p.Items[0].RunID != f.a2 || p.Items[1].RunID != f.a1 ||
		!reflect.DeepEqual(p.PageDetails, PageDetails{CurrentPage: []int{1}, PageItems: 2, PageSize: 2, TotalItems: 3, TotalPages: 2}) {
		t.Fatalf("sorted page %+v", p)
	}
	p = list(scopeAll, map[string]any{"sort": []SortEntry{{Field: "runNumber", Direction: "desc"}, {Field: "campaignName"}}, "pageSize": 2, "pageNumbers": []int{2}})
	if len(p.Items) != 1 || p.Items[0].RunID != f.b1 || p.PageDetails.CurrentPage[0] != 2 {
		t.Fatalf("page 2 %+v", p)
	}
	// Scope LIST sees its domain only; a body list narrows and cannot widen.
	for _, tc := range []struct {
		id   hdr
		body map[string]any
		runs []int64
	}{
		{scopeList(2, 2), map[string]any{}, []int64{f.a2, f.a1}},
		{scopeList(2, 2), map[string]any{"domainIds": []int64{3}}, nil},
		{scopeList(2, 2, 3), map[string]any{"domainIds": []int64{3, 4}}, []int64{f.b1}},
		{scopeList(2), map[string]any{}, nil},
		{scopeAll, map[string]any{"domainIds": []int64{}}, nil},
		{scopeAll, map[string]any{"campaignId": f.a, "runId": f.a1}, []int64{f.a1}},
		{scopeAll, map[string]any{"startedFrom": "2026-12-01T20:30:00Z"}, []int64{f.a2, f.b1}},
	} {
		p := list(tc.id, tc.body)
		var got []int64
		for _, it := range p.Items {
			got = append(got, it.RunID)
		}
		if len(got) != len(tc.runs) || int(p.PageDetails.TotalItems) != len(tc.runs) {
			t.Fatalf("%v %v: runs %v, want %v", tc.id, tc.body, got, tc.runs)
		}
		for i := range got {
			if got[i] != tc.runs[i] {
				t.Fatalf("%v %v: runs %v, want %v", tc.id, tc.body, got, tc.runs)
			}
		}
	}
	// Result filters shape the counters, not the list.
	p = list(scopeAll, map[string]any{"campaignId": f.a, "statuses": []string{"WAN_BUSY"}})
	if len(p.Items) != 2 || p.Items[1].RunCounts != (results.RunCounts{Results: 1, WANBusy: 1}) || p.Items[0].RunCounts != (results.RunCounts{}) {
		t.Fatalf("counters under a status filter %+v", p.Items)
	}
}

func TestReportResults(t *testing.T) {
	f := newReportFixture(t)
	page := func(id hdr, body map[string]any) ReportResultPage {
		t.Helper()
		var p ReportResultPage
		f.do("POST", "/FCC/reports/results", id, body).want(200).decode(&p)
		return p
	}
	p := page(scopeAll, map[string]any{})
	if len(p.Items) != 8 || p.PageDetails.TotalItems != 8 || p.PageDetails.PageSize != 50 {
		t.Fatalf("all results: %d items, %+v", len(p.Items), p.PageDetails)
	}
	for i, it := range p.Items {
		if i > 0 && it.StartedAt.Before(p.Items[i-1].StartedAt.Time) {
			t.Fatalf("row %d out of order", i)
		}
		hasSpeed, hasLatency := it.Speed != nil, it.Latency != nil
		if hasSpeed && hasLatency || hasSpeed && it.Type != "SPEED" || hasLatency && it.Type != "LATENCY" {
			t.Fatalf("row %d carries the wrong blocks: %+v", i, it)
		}
	}
	// Both blocks are present on the wire, one of them null.
	raw := f.do("POST", "/FCC/reports/results", scopeAll, map[string]any{"type": "LATENCY", "pageSize": 1}).want(200)
	var generic struct {
		Items []map[string]json.RawMessage `json:"items"`
	}
	raw.decode(&generic)
	if len(generic.Items) != 1 || string(generic.Items[0]["speed"]) != "null" || string(generic.Items[0]["latency"]) == "null" {
		t.Fatalf("latency row on the wire: %s", raw.Body.String())
	}
	p = page(scopeAll, map[string]any{"pageSize": 3, "pageNumbers": 3})
	if len(p.Items) != 2 || !reflect.DeepEqual(p.PageDetails, PageDetails{CurrentPage: []int{3}, PageItems: 2, PageSize: 3, TotalItems: 8, TotalPages: 3}) {
		t.Fatalf("page 3: %+v", p.PageDetails)
	}
	p = page(scopeAll, map[string]any{"pageSize": 1000, "pageNumbers": 9})
	if len(p.Items) != 0 || p.PageDetails.TotalItems != 8 {
		t.Fatalf("beyond the end: %+v", p.PageDetails)
	}
	for _, tc := range []struct {
		id   hdr
		body map[string]any
		want int64
	}{
		{scopeList(2, 2), map[string]any{}, 7},
		{scopeList(3, 3), map[string]any{}, 1},
		{scopeList(2, 2), map[string]any{"domainIds": []int64{3}}, 0},
		{scopeAll, map[string]any{"serial": "a2"}, 2},
		{scopeAll, map[string]any{"type": "speed", "campaignId": f.a}, 4},
		{scopeAll, map[string]any{"runId": f.a1, "statuses": []string{"OK", "BELOW_TIER"}}, 2},
		{scopeAll, map[string]any{"cpeIds": []int64{102}}, 3},
		{scopeAll, map[string]any{"cpeIds": []int64{}}, 0},
		{scopeAll, map[string]any{"afterStop": true}, 0},
		{scopeAll, map[string]any{"filters": map[string]any{"campaignId": f.b}}, 1},
	} {
		if p := page(tc.id, tc.body); p.PageDetails.TotalItems != tc.want || int64(len(p.Items)) != tc.want {
			t.Fatalf("%v %v: %d rows, total %d; want %d", tc.id, tc.body, len(p.Items), p.PageDetails.TotalItems, tc.want)
		}
	}
}

func TestReportGenerate(t *testing.T) {
	f := newReportFixture(t)
	gen := func(id hdr, body map[string]any) ReportSummary {
		t.Helper()
		var s ReportSummary
		f.do("POST", "/FCC/reports/generate", id, body).want(200).decode(&s)
		return s
	}
	// Speed: (100000 + 50000 + 30000) / 3; latency: iteration 1 of a2 is
	// (12 + 18) / 2, iteration 2 has no average.
	s := gen(scopeAll, map[string]any{})
	if s.Results != 8 || s.DistinctSerials != 3 || s.DistinctRuns != 3 || *s.AverageKbps != 60000 || *s.AverageLatencyMs != 15 ||
		s.LatencyIterations != 1 || s.Breaches != 1 || s.GeneratedAt.IsZero() || s.FirstStartedAt == nil {
		t.Fatalf("summary %+v", s)
	}
	again := gen(scopeAll, map[string]any{})
	again.GeneratedAt = s.GeneratedAt
	if a, b := mustJSON(t, again), mustJSON(t, s); a != b {
		t.Fatalf("a second generate differs: %+v vs %+v", again, s)
	}
	s = gen(scopeList(2, 2), map[string]any{"type": "SPEED"})
	if s.Results != 4 || s.DistinctRuns != 2 || *s.AverageKbps != 75000 || s.AverageLatencyMs != nil {
		t.Fatalf("scope LIST speed summary %+v", s)
	}
	s = gen(scopeList(2, 2), map[string]any{"domainIds": []int64{3}})
	if s.Results != 0 || s.AverageKbps != nil || s.FirstStartedAt != nil {
		t.Fatalf("empty intersection %+v", s)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
