// Package storetest is the conformance suite every results.Store engine
// passes: the same test body runs against DuckDB and ClickHouse.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/fcc/results"
	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/testutil"
)

// NewStore returns a fresh, empty store that has not been migrated. The
// suite closes it.
type NewStore func(t *testing.T) results.Store

// Run runs the suite. Each subtest gets its own store.
func Run(t *testing.T, newStore NewStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s results.Store)
	}{
		{"SchemaBehindUntilMigrated", testSchemaBehind},
		{"GoldenRoundTrip", testGoldenRoundTrip},
		{"EveryOutcome", testEveryOutcome},
		{"Dedup", testDedup},
		{"MixedBatchAndActivations", testMixed},
		{"Batch10000", testBatch10000},
		{"ConcurrentOverlappingInserts", testConcurrent},
		{"RefusedRows", testRefused},
		{"Closed", testClosed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			t.Cleanup(func() { s.Close() })
			tc.fn(t, s)
		})
	}
}

// RunUnavailable holds a store whose engine cannot be reached (a closed
// store, a server that is down) to the rules: Check says UNAVAILABLE with
// the driver's reason, every call fails, nothing panics.
func RunUnavailable(t *testing.T, s results.Store) {
	t.Helper()
	ctx := context.Background()
	st := s.Check(ctx)
	if st.State != results.StateUnavailable || st.Reason == "" || st.CheckedAt.IsZero() {
		t.Errorf("Check = %+v, want UNAVAILABLE with a reason and a time", st)
	}
	if n, err := s.Insert(ctx, []results.Row{SpeedRow(1, "DOWN1", fccwire.Download, 1)}); err == nil || n != 0 {
		t.Errorf("Insert = %d, %v; want an error", n, err)
	}
	if _, err := s.Rows(ctx, 1); err == nil {
		t.Error("Rows: want an error")
	}
	if err := s.Migrate(ctx); err == nil {
		t.Error("Migrate: want an error")
	}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Deadline(2*time.Minute))
	t.Cleanup(cancel)
	return ctx
}

func migrated(t *testing.T, s results.Store) context.Context {
	ctx := ctxFor(t)
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return ctx
}

func testSchemaBehind(t *testing.T, s results.Store) {
	ctx := ctxFor(t)
	st := s.Check(ctx)
	if st.State != results.StateSchemaBehind || !strings.HasSuffix(st.Reason, "migrations pending") {
		t.Fatalf("Check before Migrate = %+v, want SCHEMA_BEHIND, \"N migrations pending\"", st)
	}
	if _, err := s.Insert(ctx, []results.Row{SpeedRow(1, "S1", fccwire.Download, 1)}); err == nil {
		t.Error("Insert before Migrate: want an error")
	}
	for i := range 2 { // the second Migrate finds nothing to do
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("Migrate #%d: %v", i+1, err)
		}
		if st := s.Check(ctx); st.State != results.StateUp || st.CheckedAt.IsZero() {
			t.Fatalf("Check after Migrate #%d = %+v, want UP", i+1, st)
		}
	}
}

func testGoldenRoundTrip(t *testing.T, s results.Store) {
	ctx := migrated(t, s)
	for _, name := range []string{"result-speed.json", "result-latency.json"} {
		t.Run(name, func(t *testing.T) {
			golden := Golden(t, name)
			m, err := fccwire.Decode(fccwire.KindResult, golden)
			if err != nil {
				t.Fatal(err)
			}
			row := results.Row{Result: *m.(*fccwire.Result), HubbID: "HUBB-7", Source: results.SourceACS, Created: created(1)}
			if n, err := s.Insert(ctx, []results.Row{row}); err != nil || n != 1 {
				t.Fatalf("Insert = %d, %v; want 1", n, err)
			}
			got := mustRows(t, s, row.ActivationID)
			requireRows(t, got, []results.Row{row})
			b, err := fccwire.Encode(&got[0].Result)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != string(golden) {
				t.Errorf("re-encoded row differs from the golden file:\n got %s\nwant %s", b, golden)
			}
		})
	}
}

func testEveryOutcome(t *testing.T, s results.Store) {
	ctx := migrated(t, s)
	const aid = 500
	cases := []struct {
		name string
		row  results.Row
	}{
		{"speed OK", SpeedRow(aid, "A-OK", fccwire.Download, 1)},
		{"speed BELOW_TIER upload", with(SpeedRow(aid, "A-BELOW", fccwire.Upload, 2), func(r *results.Row) {
			r.Status = fccwire.OutcomeBelowTier
			r.Speed.PerConnection = nil
			r.Speed.ROMTime, r.Speed.TotalBytes, r.Speed.TCPOpenRequestTime, r.Speed.TCPOpenResponseTime = nil, nil, nil, nil
		})},
		{"speed ERROR without block", with(SpeedRow(aid, "A-ERR", fccwire.Download, 1), func(r *results.Row) {
			r.Status, r.Speed, r.Description, r.Attempts = fccwire.OutcomeError, nil, "Error_TransferFailed", 3
		})},
		{"speed WAN_BUSY", with(SpeedRow(aid, "A-WAN", fccwire.Download, 1), func(r *results.Row) {
			r.Status, r.Speed, r.TierKbps = fccwire.OutcomeWANBusy, nil, nil
			r.WanUsageDlKbps, r.WanUsageUlKbps = ptr[int64](99000), ptr[int64](0)
		})},
		{"speed after stop, legacy import", with(SpeedRow(aid, "A-LEG", fccwire.Upload, 7), func(r *results.Row) {
			r.AfterStop, r.Source, r.WireVersion, r.Kind = true, results.SourceLegacy, "", ""
			r.LegacyUgID, r.LegacyResultID = ptr[int64](4), ptr[int64](1<<40)
		})},
		{"latency OK", LatencyRow(aid+1, "B-OK", 1)},
		{"latency BELOW_TIER", with(LatencyRow(aid+1, "B-BELOW", 2), func(r *results.Row) { r.Status = fccwire.OutcomeBelowTier })},
		{"latency ERROR with counts", with(LatencyRow(aid+1, "B-ERR", 1), func(r *results.Row) {
			r.Status = fccwire.OutcomeError
			r.Latency = &fccwire.LatencyResult{FailureCount: 10}
		})},
		{"latency ERROR without block", with(LatencyRow(aid+1, "B-ERR2", 1), func(r *results.Row) {
			r.Status, r.Latency = fccwire.OutcomeError, nil
		})},
		{"latency WAN_BUSY", with(LatencyRow(aid+1, "B-WAN", 3), func(r *results.Row) {
			r.Status, r.Latency, r.WanUsageUlKbps = fccwire.OutcomeWANBusy, nil, ptr[int64](5000)
		})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if n, err := s.Insert(ctx, []results.Row{tc.row}); err != nil || n != 1 {
				t.Fatalf("Insert = %d, %v; want 1", n, err)
			}
			for _, r := range mustRows(t, s, tc.row.ActivationID) {
				if r.Serial == tc.row.Serial {
					requireRows(t, []results.Row{r}, []results.Row{tc.row})
					return
				}
			}
			t.Fatalf("row %s not read back", tc.row.Serial)
		})
	}
	if got := mustRows(t, s, aid); len(got) != 5 {
		t.Errorf("activation %d: %d rows, want 5", aid, len(got))
	}
}

func testDedup(t *testing.T, s results.Store) {
	ctx := migrated(t, s)
	first := SpeedRow(600, "DUP", fccwire.Download, 1)
	again := with(first, func(r *results.Row) { r.Description, r.Created = "re-sent", created(99) })
	other := SpeedRow(600, "DUP", fccwire.Upload, 1)
	steps := []struct {
		name string
		rows []results.Row
		want int
	}{
		{"same key twice in one batch", []results.Row{first, again, other}, 2},
		{"same keys in a later batch", []results.Row{again, other}, 0},
		{"one new key among known ones", []results.Row{other, SpeedRow(600, "DUP", fccwire.Download, 2), first}, 1},
	}
	for _, st := range steps {
		n, err := s.Insert(ctx, st.rows)
		if err != nil || n != st.want {
			t.Fatalf("%s: Insert = %d, %v; want %d", st.name, n, err, st.want)
		}
	}
	requireRows(t, mustRows(t, s, 600), []results.Row{first, SpeedRow(600, "DUP", fccwire.Download, 2), other})
}

func testMixed(t *testing.T, s results.Store) {
	ctx := migrated(t, s)
	batch := []results.Row{
		LatencyRow(701, "M2", 1), SpeedRow(700, "M1", fccwire.Upload, 1), SpeedRow(700, "M1", fccwire.Download, 1),
		LatencyRow(701, "M1", 2), LatencyRow(701, "M1", 1), SpeedRow(702, "M1", fccwire.Download, 1),
	}
	if n, err := s.Insert(ctx, batch); err != nil || n != len(batch) {
		t.Fatalf("Insert = %d, %v; want %d", n, err, len(batch))
	}
	requireRows(t, mustRows(t, s, 700), []results.Row{batch[2], batch[1]})
	requireRows(t, mustRows(t, s, 701), []results.Row{batch[4], batch[3], batch[0]})
	if got := mustRows(t, s, 703); len(got) != 0 {
		t.Errorf("unknown activation: %d rows, want none", len(got))
	}
	// New speed rows beside a stored latency key: the speed table must
	// not keep a half-written attempt (DuckDB's refused fast path).
	again := with(batch[0], func(r *results.Row) { r.Description = "re-sent" })
	more := []results.Row{SpeedRow(700, "M3", fccwire.Download, 1), again, LatencyRow(701, "M3", 1), SpeedRow(700, "M3", fccwire.Upload, 1)}
	if n, err := s.Insert(ctx, more); err != nil || n != 3 {
		t.Fatalf("Insert with one stored key = %d, %v; want 3", n, err)
	}
	requireRows(t, mustRows(t, s, 700), []results.Row{batch[2], batch[1], more[0], more[3]})
	requireRows(t, mustRows(t, s, 701), []results.Row{batch[4], batch[3], batch[0], more[2]})
}

func testBatch10000(t *testing.T, s results.Store) {
	ctx := migrated(t, s)
	batch := Batch(800, 10000, 0)
	if n, err := s.Insert(ctx, batch); err != nil || n != len(batch) {
		t.Fatalf("Insert = %d, %v; want %d", n, err, len(batch))
	}
	if n, err := s.Insert(ctx, batch); err != nil || n != 0 {
		t.Fatalf("second Insert = %d, %v; want 0", n, err)
	}
	got := mustRows(t, s, 800)
	if len(got) != len(batch) {
		t.Fatalf("Rows: %d, want %d", len(got), len(batch))
	}
	for i := 1; i < len(got); i++ {
		a, b := got[i-1], got[i]
		if a.Serial > b.Serial || a.Serial == b.Serial && (a.Direction > b.Direction || a.Direction == b.Direction && a.Iteration >= b.Iteration) {
			t.Fatalf("rows %d and %d out of natural key order: %s, %s", i-1, i, a.NaturalKey(), b.NaturalKey())
		}
	}
}

func testConcurrent(t *testing.T, s results.Store) {
	ctx := migrated(t, s)
	const writers, perWriter, overlap = 4, 600, 300
	// Each writer's batch shares `overlap` keys with every other writer's.
	var wg sync.WaitGroup
	counts := make([]int, writers)
	errs := make([]error, writers)
	for w := range writers {
		wg.Go(func() {
			shared := Batch(900, overlap, 0)
			own := Batch(900, perWriter-overlap, overlap+w*perWriter)
			batch := append(own, shared...)
			counts[w], errs[w] = s.Insert(ctx, batch)
		})
	}
	wg.Wait()
	total := 0
	for w := range writers {
		if errs[w] != nil {
			t.Fatalf("writer %d: %v", w, errs[w])
		}
		total += counts[w]
	}
	want := overlap + writers*(perWriter-overlap)
	if total != want {
		t.Errorf("Insert counts add up to %d, want %d distinct keys", total, want)
	}
	got := mustRows(t, s, 900)
	if len(got) != want {
		t.Errorf("Rows: %d, want %d", len(got), want)
	}
	seen := map[string]bool{}
	for _, r := range got {
		if seen[r.NaturalKey()] {
			t.Fatalf("key %s read twice", r.NaturalKey())
		}
		seen[r.NaturalKey()] = true
	}
}

func testRefused(t *testing.T, s results.Store) {
	ctx := migrated(t, s)
	good := SpeedRow(1000, "GOOD", fccwire.Download, 1)
	cases := []struct {
		name string
		rows []results.Row
	}{
		{"speed row with a latency block", []results.Row{good, with(SpeedRow(1000, "BAD", fccwire.Download, 1), func(r *results.Row) {
			r.Latency = &fccwire.LatencyResult{SuccessCount: 1}
		})}},
		{"latency row with a speed block", []results.Row{good, with(LatencyRow(1000, "BAD", 1), func(r *results.Row) {
			r.Speed = SpeedRow(1, "X", fccwire.Download, 1).Speed
		})}},
		{"unknown type", []results.Row{good, with(SpeedRow(1000, "BAD", fccwire.Download, 1), func(r *results.Row) { r.Type = "" })}},
		{"too many rows", make([]results.Row, results.MaxInsertRows+1)},
	}
	for _, tc := range cases {
		n, err := s.Insert(ctx, tc.rows)
		if err == nil || !errors.Is(err, apperr.ErrInvalid) || n != 0 {
			t.Errorf("%s: Insert = %d, %v; want an ErrInvalid", tc.name, n, err)
		}
	}
	if n, err := s.Insert(ctx, nil); err != nil || n != 0 {
		t.Errorf("empty Insert = %d, %v; want 0, nil", n, err)
	}
	if got := mustRows(t, s, 1000); len(got) != 0 {
		t.Errorf("a refused batch stored %d rows", len(got))
	}
}

func testClosed(t *testing.T, s results.Store) {
	ctx := migrated(t, s)
	if _, err := s.Insert(ctx, []results.Row{SpeedRow(1, "S", fccwire.Download, 1)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	RunUnavailable(t, s)
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// Golden returns a golden file of package fccwire.
func Golden(t testing.TB, name string) []byte {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "fccwire", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.TrimSpace(string(b)))
}

var t0 = time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)

func at(d time.Duration) fccwire.Time { return fccwire.At(t0.Add(d)) }

func created(sec int) time.Time {
	return t0.Add(time.Hour + time.Duration(sec)*time.Second + 123*time.Microsecond).UTC()
}

func ptr[T any](v T) *T { return &v }

func with(r results.Row, fn func(*results.Row)) results.Row {
	fn(&r)
	return r
}

// SpeedRow returns a full SPEED row (every optional field set, two
// connections) with the given natural key.
func SpeedRow(activationID int64, serial string, dir fccwire.Direction, iteration int) results.Row {
	start := time.Duration(iteration) * time.Minute
	return results.Row{
		Result: fccwire.Result{
			Envelope:       fccwire.Envelope{WireVersion: fccwire.Version, Kind: fccwire.KindResult},
			Type:           fccwire.TypeSpeed,
			FccTestID:      activationID / 10,
			ActivationID:   activationID,
			Iteration:      iteration,
			DomainID:       3,
			ConfigID:       1,
			CpeID:          101,
			Serial:         serial,
			Direction:      dir,
			URL:            "http://127.0.0.1:7580/download?size=10000000&x=é",
			TierKbps:       ptr[int64](100000),
			StartedAt:      at(start),
			FinishedAt:     at(start + 10*time.Second),
			Status:         fccwire.OutcomeOK,
			Description:    "it's \"fine\"\\",
			WanUsageDlKbps: ptr[int64](120),
			WanUsageUlKbps: ptr[int64](30),
			Attempts:       1,
			Speed: &fccwire.SpeedResult{
				Kbps:                123456.789,
				TestMode:            fccwire.FileBased,
				ROMTime:             ptr(at(start + 500*time.Millisecond)),
				BOM:                 at(start + time.Second + 250*time.Microsecond),
				EOM:                 at(start + 9*time.Second + 1*time.Microsecond),
				TestBytes:           10000000,
				TotalBytes:          ptr[int64](10240000),
				TCPOpenRequestTime:  ptr(at(start + 600*time.Millisecond)),
				TCPOpenResponseTime: ptr(at(start + 601*time.Millisecond)),
				Connections:         2,
				PerConnection: []fccwire.ConnectionResult{
					{Connection: 1, BOM: at(start + time.Second), EOM: at(start + 9*time.Second), TestBytes: 5000000, TotalBytes: ptr[int64](5120000)},
					{Connection: 2, ROMTime: ptr(at(start)), BOM: at(start + time.Second), EOM: at(start + 8*time.Second), TestBytes: 5000000},
				},
			},
		},
		HubbID:  "HUBB-" + serial,
		Source:  results.SourceACS,
		Created: created(iteration),
	}
}

// LatencyRow returns a LATENCY row with the given natural key.
func LatencyRow(activationID int64, serial string, iteration int) results.Row {
	start := time.Duration(iteration) * time.Minute
	return results.Row{
		Result: fccwire.Result{
			Envelope:     fccwire.Envelope{WireVersion: fccwire.Version, Kind: fccwire.KindResult},
			Type:         fccwire.TypeLatency,
			FccTestID:    activationID / 10,
			ActivationID: activationID,
			Iteration:    iteration,
			DomainID:     0,
			ConfigID:     5,
			CpeID:        102,
			Serial:       serial,
			Direction:    fccwire.Ping,
			URL:          "speedtest.example.net",
			StartedAt:    at(start),
			FinishedAt:   at(start + 10*time.Second),
			Status:       fccwire.OutcomeOK,
			Attempts:     2,
			Latency: &fccwire.LatencyResult{
				AverageMs: ptr(12.5), MinMs: ptr(9.125), MaxMs: ptr(31.0), SuccessCount: 9, FailureCount: 1,
			},
		},
		Source:  results.SourceACS,
		Created: created(iteration),
	}
}

// Batch returns n SPEED rows of one activation, keys numbered from first:
// serials SER-<k/4>, both directions, iterations 1 and 2.
func Batch(activationID int64, n, first int) []results.Row {
	rows := make([]results.Row, n)
	for i := range rows {
		k := first + i
		dir := fccwire.Download
		if k%2 == 1 {
			dir = fccwire.Upload
		}
		rows[i] = SpeedRow(activationID, fmt.Sprintf("SER-%07d", k/4), dir, 1+(k/2)%2)
	}
	return rows
}

func mustRows(t *testing.T, s results.Store, activationID int64) []results.Row {
	t.Helper()
	rows, err := s.Rows(context.Background(), activationID)
	if err != nil {
		t.Fatalf("Rows(%d): %v", activationID, err)
	}
	return rows
}

func requireRows(t *testing.T, got, want []results.Row) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d:\n got %s\nwant %s", len(got), len(want), js(got), js(want))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("row %d differs:\n got %s\nwant %s", i, js(got[i]), js(want[i]))
		}
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
