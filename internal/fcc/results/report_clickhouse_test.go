package results_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/fcc/results"
	"cpesuite/internal/fcc/results/storetest"
	"cpesuite/internal/testutil"
)

func TestClickHouseReports(t *testing.T) {
	storetest.RunReports(t, newClickHouse)
}

// The summary reads activations whose rows lie in one part without FINAL;
// keys written twice (two racing writers) sit in two parts and must still
// count once. Merges are stopped so the duplicates stay in their parts.
func TestClickHouseSummaryDuplicatesAcrossParts(t *testing.T) {
	dsn := clickHouseDB(t)
	opts, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := clickhouse.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	s, err := results.OpenClickHouse(dsn, results.ClickHouseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
	defer cancel()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{results.TableSpeed, results.TableLatency} {
		if err := raw.Exec(ctx, "SYSTEM STOP MERGES "+table); err != nil {
			t.Fatalf("stopping merges: %v", err)
		}
	}
	if _, err := s.Insert(ctx, storetest.ReportSeed()); err != nil {
		t.Fatal(err)
	}
	filters := []struct {
		name string
		f    results.Filter
	}{
		{"all", results.Filter{}},
		{"campaign 1", results.Filter{CampaignIDs: []int64{1}}},
		{"run 11", results.Filter{ActivationIDs: []int64{11}}},
		{"latency", results.Filter{Type: fccwire.TypeLatency}},
		{"speed of campaign 2", results.Filter{CampaignIDs: []int64{2}, Type: fccwire.TypeSpeed}},
	}
	var rep results.Reports = s
	want := map[string]string{}
	for _, tc := range filters {
		sum, err := rep.Summarise(ctx, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		want[tc.name] = jsonOf(t, sum)
	}
	// A second copy of run 11 in new parts, as a racing writer leaves it;
	// runs 12 and 21 stay in one part each and are read without FINAL.
	for _, table := range []string{results.TableSpeed, results.TableLatency} {
		if err := raw.Exec(ctx, "INSERT INTO "+table+" SELECT * FROM "+table+" WHERE activation_id = 11"); err != nil {
			t.Fatalf("duplicating run 11: %v", err)
		}
	}
	var parts uint64
	if err := raw.QueryRow(ctx, "SELECT count() FROM system.parts WHERE database = currentDatabase() AND table = ? AND active", results.TableSpeed).Scan(&parts); err != nil || parts < 2 {
		t.Fatalf("%s has %d active parts (%v); the test needs the duplicates in their own part", results.TableSpeed, parts, err)
	}
	for _, tc := range filters {
		t.Run(tc.name, func(t *testing.T) {
			got, err := rep.Summarise(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if g := jsonOf(t, got); g != want[tc.name] {
				t.Errorf("with run 11 in two parts:\n %s\nwant\n %s", g, want[tc.name])
			}
		})
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
