package storetest

import (
	"cmp"
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/fcc/results"
)

// RunReports is the report half of the conformance suite: every filter,
// the fixed order, real totals, the run counters and the summary figures
// over one seeded set (ReportSeed), on a store that implements
// results.Reports.
func RunReports(t *testing.T, newStore NewStore) {
	s := newStore(t)
	t.Cleanup(func() { s.Close() })
	rep, ok := s.(results.Reports)
	if !ok {
		t.Fatalf("%T does not implement results.Reports", s)
	}
	ctx := migrated(t, s)
	seed := ReportSeed()
	if n, err := s.Insert(ctx, seed); err != nil || n != len(seed) {
		t.Fatalf("Insert = %d, %v; want %d", n, err, len(seed))
	}
	t.Run("Filters", func(t *testing.T) { testReportFilters(t, rep, seed) })
	t.Run("Paging", func(t *testing.T) { testReportPaging(t, rep, seed) })
	t.Run("RunCounts", func(t *testing.T) { testRunCounts(t, rep) })
	t.Run("Summary", func(t *testing.T) { testSummary(t, rep) })
	t.Run("StreamStops", func(t *testing.T) { testStreamStops(t, rep) })
}

// The seed's times: t0 plus minutes.
func min_(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }

// ReportSeed is the report suite's set: campaign 1 (domain 3) with runs
// 11 and 12, campaign 2 (domain 4) with run 21; speed rows that are OK,
// BELOW_TIER, WAN_BUSY and ERROR (the last two without a speed block);
// latency rows where iteration 2 of run 11 has no average at all (ERROR
// and WAN_BUSY rows without a block) and iteration 2 of run 12 has a block
// without an average.
func ReportSeed() []results.Row {
	speed := func(run int64, serial string, dir fccwire.Direction, it int, st fccwire.Outcome, kbps float64, startMin int, cpe int64) results.Row {
		return with(SpeedRow(run, serial, dir, it), func(r *results.Row) {
			r.Status, r.CpeID = st, cpe
			r.DomainID = 3
			if run/10 == 2 {
				r.DomainID = 4
			}
			r.StartedAt, r.FinishedAt = fccwire.At(min_(startMin)), fccwire.At(min_(startMin).Add(10*time.Second))
			if kbps == 0 {
				r.Speed = nil
			} else {
				r.Speed.Kbps = kbps
			}
		})
	}
	latency := func(run int64, serial string, it int, st fccwire.Outcome, avg *float64, block bool, startMin int, cpe int64) results.Row {
		return with(LatencyRow(run, serial, it), func(r *results.Row) {
			r.Status, r.CpeID = st, cpe
			r.DomainID = 3
			r.StartedAt, r.FinishedAt = fccwire.At(min_(startMin)), fccwire.At(min_(startMin).Add(10*time.Second))
			switch {
			case !block:
				r.Latency = nil
			case avg == nil:
				r.Latency = &fccwire.LatencyResult{SuccessCount: 0, FailureCount: 10}
			default:
				r.Latency.AverageMs = avg
			}
		})
	}
	d := speed(11, "SER-B", fccwire.Download, 2, fccwire.OutcomeError, 0, 3, 102)
	d.AfterStop = true
	return []results.Row{
		speed(11, "SER-A", fccwire.Download, 1, fccwire.OutcomeOK, 100000, 1, 101),
		speed(11, "SER-A", fccwire.Upload, 1, fccwire.OutcomeBelowTier, 20000, 1, 101),
		speed(11, "SER-B", fccwire.Download, 1, fccwire.OutcomeWANBusy, 0, 2, 102),
		d,
		speed(12, "SER-A", fccwire.Download, 1, fccwire.OutcomeOK, 60000, 10, 101),
		speed(21, "SER-C", fccwire.Download, 1, fccwire.OutcomeOK, 30000, 5, 103),
		latency(11, "SER-A", 1, fccwire.OutcomeOK, ptr(10.0), true, 1, 101),
		latency(11, "SER-B", 1, fccwire.OutcomeOK, ptr(20.0), true, 2, 102),
		latency(11, "SER-A", 2, fccwire.OutcomeError, nil, false, 3, 101),
		latency(11, "SER-B", 2, fccwire.OutcomeWANBusy, nil, false, 3, 102),
		latency(12, "SER-A", 1, fccwire.OutcomeOK, ptr(40.0), true, 10, 101),
		latency(12, "SER-A", 2, fccwire.OutcomeError, nil, true, 11, 101),
	}
}

// matches is the suite's own reading of a filter, to hold the engines'
// SQL to.
func matches(f results.Filter, r *results.Row) bool {
	in := func(ids []int64, v int64) bool { return ids == nil || slices.Contains(ids, v) }
	switch {
	case !in(f.CampaignIDs, r.FccTestID), !in(f.ActivationIDs, r.ActivationID), !in(f.DomainIDs, r.DomainID), !in(f.CpeIDs, r.CpeID):
		return false
	case f.Type != "" && f.Type != r.Type:
		return false
	case f.Serial != "" && !strings.EqualFold(f.Serial, r.Serial):
		return false
	case f.Statuses != nil && !slices.Contains(f.Statuses, r.Status):
		return false
	case f.StartedFrom != nil && r.StartedAt.Before(*f.StartedFrom):
		return false
	case f.StartedTo != nil && !r.StartedAt.Before(*f.StartedTo):
		return false
	case f.AfterStop != nil && *f.AfterStop != r.AfterStop:
		return false
	}
	return true
}

// ordered returns the rows f selects in the fixed order.
func ordered(seed []results.Row, f results.Filter) []results.Row {
	var out []results.Row
	for i := range seed {
		if matches(f, &seed[i]) {
			out = append(out, seed[i])
		}
	}
	slices.SortFunc(out, func(a, b results.Row) int {
		return cmp.Or(a.StartedAt.Compare(b.StartedAt.Time), cmp.Compare(a.ActivationID, b.ActivationID), strings.Compare(a.Serial, b.Serial),
			strings.Compare(string(a.Direction), string(b.Direction)), cmp.Compare(a.Iteration, b.Iteration))
	})
	return out
}

func tptr(t time.Time) *time.Time { return &t }

// reportFilters are the filters the suite tries, with the number of seed
// rows each selects (counted by hand, so a wrong reference fails too).
var reportFilters = []struct {
	name string
	f    results.Filter
	want int
}{
	{"none", results.Filter{}, 12},
	{"campaign", results.Filter{CampaignIDs: []int64{1}}, 11},
	{"run", results.Filter{CampaignIDs: []int64{1}, ActivationIDs: []int64{12}}, 3},
	{"domain narrows", results.Filter{DomainIDs: []int64{4, 9}}, 1},
	{"empty domain list", results.Filter{DomainIDs: []int64{}}, 0},
	{"type speed", results.Filter{Type: fccwire.TypeSpeed}, 6},
	{"type latency", results.Filter{Type: fccwire.TypeLatency}, 6},
	{"serial case-insensitive", results.Filter{Serial: "ser-b"}, 4},
	{"serial unknown", results.Filter{Serial: "SER-Z"}, 0},
	{"statuses", results.Filter{Statuses: []fccwire.Outcome{fccwire.OutcomeWANBusy, fccwire.OutcomeBelowTier}}, 3},
	{"empty status list", results.Filter{Statuses: []fccwire.Outcome{}}, 0},
	{"started bounds", results.Filter{StartedFrom: tptr(min_(2)), StartedTo: tptr(min_(10))}, 6},
	{"started from", results.Filter{StartedFrom: tptr(min_(10))}, 3},
	{"after stop", results.Filter{AfterStop: ptr(true)}, 1},
	{"not after stop", results.Filter{AfterStop: ptr(false)}, 11},
	{"devices", results.Filter{CpeIDs: []int64{103, 102}}, 5},
	{"combined", results.Filter{CampaignIDs: []int64{1}, Type: fccwire.TypeLatency, Serial: "SER-A", Statuses: []fccwire.Outcome{fccwire.OutcomeError}}, 2},
}

func testReportFilters(t *testing.T, rep results.Reports, seed []results.Row) {
	ctx := ctxFor(t)
	for _, tc := range reportFilters {
		t.Run(tc.name, func(t *testing.T) {
			want := ordered(seed, tc.f)
			if len(want) != tc.want {
				t.Fatalf("the suite's reference selects %d rows, the table says %d", len(want), tc.want)
			}
			got, total, err := rep.Page(ctx, tc.f, 0, 100)
			if err != nil {
				t.Fatalf("Page: %v", err)
			}
			if total != int64(tc.want) {
				t.Errorf("total %d, want %d", total, tc.want)
			}
			requireRows(t, got, want)
			var streamed []results.Row
			if err := rep.Stream(ctx, tc.f, func(r *results.Row) error { streamed = append(streamed, *r); return nil }); err != nil {
				t.Fatalf("Stream: %v", err)
			}
			requireRows(t, streamed, want)
		})
	}
	if _, _, err := rep.Page(ctx, results.Filter{Type: "THROUGHPUT"}, 0, 10); err == nil {
		t.Error("Page with an unknown type: want an error")
	}
}

func testReportPaging(t *testing.T, rep results.Reports, seed []results.Row) {
	ctx := ctxFor(t)
	all := ordered(seed, results.Filter{})
	// The fixed order, spelled out: startedAt first, then run, serial,
	// direction (DOWNLOAD < PING < UPLOAD), iteration.
	keys := []struct {
		run    int64
		serial string
		dir    fccwire.Direction
	}{{11, "SER-A", fccwire.Download}, {11, "SER-A", fccwire.Ping}, {11, "SER-A", fccwire.Upload}, {11, "SER-B", fccwire.Download}, {11, "SER-B", fccwire.Ping}}
	for i, k := range keys {
		if r := all[i]; r.ActivationID != k.run || r.Serial != k.serial || r.Direction != k.dir {
			t.Fatalf("reference row %d is %d/%s/%s, want %+v", i, r.ActivationID, r.Serial, r.Direction, k)
		}
	}
	for _, tc := range []struct{ offset, limit, want int }{{0, 5, 5}, {5, 5, 5}, {10, 5, 2}, {12, 5, 0}, {40, 5, 0}, {3, 1, 1}} {
		got, total, err := rep.Page(ctx, results.Filter{}, tc.offset, tc.limit)
		if err != nil {
			t.Fatalf("Page(%d, %d): %v", tc.offset, tc.limit, err)
		}
		if total != 12 || len(got) != tc.want {
			t.Fatalf("Page(%d, %d) = %d rows of %d, want %d of 12", tc.offset, tc.limit, len(got), total, tc.want)
		}
		requireRows(t, got, all[min(tc.offset, len(all)):min(tc.offset+tc.limit, len(all))])
	}
}

func testRunCounts(t *testing.T, rep results.Reports) {
	ctx := ctxFor(t)
	for _, tc := range []struct {
		name string
		f    results.Filter
		want map[int64]results.RunCounts
	}{
		{"all", results.Filter{}, map[int64]results.RunCounts{
			11: {Results: 8, OK: 3, BelowTier: 1, Errors: 2, WANBusy: 2},
			12: {Results: 3, OK: 2, Errors: 1},
			21: {Results: 1, OK: 1},
		}},
		{"speed", results.Filter{Type: fccwire.TypeSpeed}, map[int64]results.RunCounts{
			11: {Results: 4, OK: 1, BelowTier: 1, Errors: 1, WANBusy: 1},
			12: {Results: 1, OK: 1},
			21: {Results: 1, OK: 1},
		}},
		{"serial", results.Filter{Serial: "ser-b"}, map[int64]results.RunCounts{
			11: {Results: 4, OK: 1, Errors: 1, WANBusy: 2},
		}},
		{"nothing", results.Filter{DomainIDs: []int64{}}, map[int64]results.RunCounts{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := rep.RunCounts(ctx, tc.f, []int64{11, 12, 21, 99})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("RunCounts = %+v, want %+v", got, tc.want)
			}
		})
	}
	got, err := rep.RunCounts(ctx, results.Filter{}, []int64{12})
	if err != nil || len(got) != 1 || got[12].Results != 3 {
		t.Fatalf("RunCounts of run 12 only = %+v, %v", got, err)
	}
}

func testSummary(t *testing.T, rep results.Reports) {
	ctx := ctxFor(t)
	for _, tc := range []struct {
		name string
		f    results.Filter
		want results.Summary
	}{
		// Speed: (100000 + 20000 + 60000 + 30000) / 4 over the rows with a
		// measurement. Latency: iteration 1 of run 11 averages 10 and 20
		// to 15, iteration 1 of run 12 is 40, the two iterations 2 have no
		// average: (15 + 40) / 2 = 27.5, not the row average 23.33.
		{"all", results.Filter{}, results.Summary{Results: 12, DistinctSerials: 3, DistinctRuns: 3,
			AvgKbps: ptr(52500.0), AvgLatencyMs: ptr(27.5), FirstStartedAt: tptr(min_(1)), LastFinishedAt: tptr(min_(11).Add(10 * time.Second)),
			BreachCount: 1, MeasuredIterations: 2}},
		{"campaign 1", results.Filter{CampaignIDs: []int64{1}}, results.Summary{Results: 11, DistinctSerials: 2, DistinctRuns: 2,
			AvgKbps: ptr(60000.0), AvgLatencyMs: ptr(27.5), FirstStartedAt: tptr(min_(1)), LastFinishedAt: tptr(min_(11).Add(10 * time.Second)),
			BreachCount: 1, MeasuredIterations: 2}},
		// WAN_BUSY rows count as results and never as breaches.
		{"wan busy", results.Filter{Statuses: []fccwire.Outcome{fccwire.OutcomeWANBusy}}, results.Summary{Results: 2, DistinctSerials: 1, DistinctRuns: 1,
			FirstStartedAt: tptr(min_(2)), LastFinishedAt: tptr(min_(3).Add(10 * time.Second))}},
		{"latency of SER-B", results.Filter{Type: fccwire.TypeLatency, Serial: "Ser-B"}, results.Summary{Results: 2, DistinctSerials: 1, DistinctRuns: 1,
			AvgLatencyMs: ptr(20.0), FirstStartedAt: tptr(min_(2)), LastFinishedAt: tptr(min_(3).Add(10 * time.Second)), MeasuredIterations: 1}},
		{"speed of campaign 2", results.Filter{CampaignIDs: []int64{2}, Type: fccwire.TypeSpeed}, results.Summary{Results: 1, DistinctSerials: 1, DistinctRuns: 1,
			AvgKbps: ptr(30000.0), FirstStartedAt: tptr(min_(5)), LastFinishedAt: tptr(min_(5).Add(10 * time.Second))}},
		{"nothing", results.Filter{Serial: "SER-Z"}, results.Summary{}},
		{"empty intersection", results.Filter{DomainIDs: []int64{}}, results.Summary{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := rep.Summarise(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if js(got) != js(tc.want) {
				t.Fatalf("Summarise =\n %s\nwant\n %s", js(got), js(tc.want))
			}
		})
	}
}

func testStreamStops(t *testing.T, rep results.Reports) {
	ctx := ctxFor(t)
	stop := context.Canceled
	n := 0
	err := rep.Stream(ctx, results.Filter{}, func(*results.Row) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if err != stop || n != 3 {
		t.Fatalf("Stream returned %v after %d rows; want fn's error after 3", err, n)
	}
}
