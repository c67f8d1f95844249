package legacy_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/fcc/legacy"
	"cpesuite/internal/platform/sqlstore"
)

// serialDevices resolves LEG<n> case-insensitively to device n+1, as the
// ACS lookup does, and leaves LEG000003 unresolved; ids are stable across
// calls so that snapshot rows can be counted exactly.
func serialDevices(_ context.Context, serials []string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, s := range serials {
		u := strings.ToUpper(s)
		if u == "LEG000003" || !strings.HasPrefix(u, "LEG") {
			continue
		}
		n, err := strconv.ParseInt(u[3:], 10, 64)
		if err != nil {
			continue
		}
		out[s] = n + 1
	}
	return out, nil
}

// TestDeviceSnapshot: the batched device snapshot records each resolved
// (run, device) pair once, whether the pairs of a batch span several
// multi-row inserts, spread over many batches, come twice under serials
// that differ in case only, or are written by both kinds' passes at once.
func TestDeviceSnapshot(t *testing.T) {
	const ugs, runs, serials = 2, 2, 1500 // 4 runs x 1500 serials = 6000 pairs
	cases := []struct {
		name    string
		batch   int
		latency int // latency rows over the same runs and serials
		kinds   []string
	}{
		{name: "one batch of 6000 new pairs", batch: 10000, kinds: []string{"SPEED"}},
		{name: "pairs spread over batches of 700", batch: 700, kinds: []string{"SPEED"}},
		{name: "both kinds at once on the same runs", batch: 1000, latency: 6000},
	}
	dialects(t, func(t *testing.T, d sqlstore.Dialect) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				e := newEnvOpts(t, d, envOpts{edit: func(c *legacy.Config) { c.BatchSize = tc.batch }, devices: serialDevices})
				seed := legacy.Seed{UGs: ugs, Runs: runs, Serials: serials, Speed: ugs * runs * serials, Latency: tc.latency,
					FirstID: 1, From: old(), Step: time.Second}
				e.seed(seed)
				// The same runs under lower-case serials: fresh (run,
				// serial) pairs that resolve to devices already recorded.
				var lower []legacy.SpeedRow
				for i := range ugs * runs * 10 {
					if i/(ugs*runs) == 3 {
						continue // LEG000003 stays unresolved whatever its case
					}
					r := seed.SpeedRow(i)
					r.ResultID, r.Iteration = 100000+int64(i), 50
					s := strings.ToLower(*r.Serial)
					r.Serial = &s
					lower = append(lower, r)
				}
				if err := legacy.InsertSpeed(context.Background(), e.src, lower...); err != nil {
					t.Fatal(err)
				}
				if _, err := e.start(legacy.StartRequest{Kinds: tc.kinds}); err != nil {
					t.Fatal(err)
				}
				ks := e.waitState(legacy.KindSpeed, legacy.StateCompleted, legacy.StateFailed)
				if ks.State != legacy.StateCompleted || ks.RowsWritten != int64(seed.Speed+len(lower)) {
					t.Fatalf("speed pass: %+v", ks)
				}
				unresolved := ks.DevicesUnresolved
				if tc.latency > 0 {
					kl := e.waitState(legacy.KindLatency, legacy.StateCompleted, legacy.StateFailed)
					if kl.State != legacy.StateCompleted || kl.RowsWritten != int64(tc.latency) {
						t.Fatalf("latency pass: %+v", kl)
					}
					unresolved += kl.DevicesUnresolved
				}
				want := int64(ugs * runs * (serials - 1))
				if got := e.count(`SELECT COUNT(*) FROM fcc_run_devices`); got != want {
					t.Fatalf("%d snapshot rows, want %d (one per run and resolved device)", got, want)
				}
				if got := e.count(`SELECT COUNT(DISTINCT run_id) FROM fcc_run_devices`); got != ugs*runs {
					t.Fatalf("snapshot over %d runs, want %d", got, ugs*runs)
				}
				// LEG000003 on each run; when both passes meet a pair
				// before either has committed it, both count it.
				if lo, hi := int64(ugs*runs), int64(2*ugs*runs); unresolved < lo || (tc.latency == 0 && unresolved != lo) || unresolved > hi {
					t.Fatalf("%d unresolved pairs, want %d (up to %d with both kinds)", unresolved, lo, hi)
				}
			})
		}
	})
}
