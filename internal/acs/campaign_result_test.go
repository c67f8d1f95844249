package acs

import (
	"testing"

	"cpesuite/internal/fcc/fccwire"
)

func u64(n uint64) *uint64 { return &n }

// TestUsageKbps: WAN usage from two counter reads; TR-098's 32-bit
// counters wrap (the difference is taken modulo 2^32), TR-181's 64-bit
// ones going down were reset and count from zero.
func TestUsageKbps(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to uint64
		wrap32   bool
		secs     float64
		want     int64
	}{
		{"steady", 1_000_000, 1_125_000, true, 1, 1000},
		{"wrapped 32-bit", 1<<32 - 25_000, 100_000, true, 1, 1000},
		{"reset 64-bit", 5_000_000_000, 125_000, false, 1, 1000},
		{"idle", 42, 42, false, 2, 0},
		{"two seconds", 0, 250_000, false, 2, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := usageKbps(tc.from, tc.to, tc.wrap32, tc.secs); got != tc.want {
				t.Errorf("usageKbps(%d, %d) = %d, want %d", tc.from, tc.to, got, tc.want)
			}
		})
	}
}

// TestSpeedBlock: the speed block takes TR-143's BOM/EOM and test bytes
// (received for a download, sent for an upload), computes kbps with the
// wire's one formula, and refuses figures that cannot make a measurement.
func TestSpeedBlock(t *testing.T) {
	const bom, eom = "2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:02.000000Z"
	plan := diagPlan{testMode: fccwire.FileBased, connections: 1}
	for _, tc := range []struct {
		name    string
		dir     fccwire.Direction
		tr      TransferResult
		kbps    float64
		wantErr bool
	}{
		{"download", fccwire.Download, TransferResult{BOMTime: bom, EOMTime: eom, TestBytesReceived: u64(1_000_000), TotalBytesReceived: u64(1_100_000)}, 4000, false},
		{"upload sent bytes", fccwire.Upload, TransferResult{BOMTime: bom, EOMTime: eom, TestBytesSent: u64(500_000)}, 2000, false},
		{"upload TR-098 file length", fccwire.Upload, TransferResult{BOMTime: bom, EOMTime: eom, TestFileLength: u64(250_000)}, 1000, false},
		{"no EOM", fccwire.Download, TransferResult{BOMTime: bom, TestBytesReceived: u64(1)}, 0, true},
		{"EOM before BOM", fccwire.Download, TransferResult{BOMTime: eom, EOMTime: bom, TestBytesReceived: u64(1)}, 0, true},
		{"no bytes", fccwire.Download, TransferResult{BOMTime: bom, EOMTime: eom}, 0, true},
		{"bad time", fccwire.Download, TransferResult{BOMTime: "yesterday", EOMTime: eom, TestBytesReceived: u64(1)}, 0, true},
		{"per connection", fccwire.Download, TransferResult{BOMTime: bom, EOMTime: eom, TestBytesReceived: u64(1_000_000),
			PerConnection: []PerConnectionResult{{Index: 1, BOMTime: bom, EOMTime: eom, TestBytesReceived: u64(600_000)},
				{Index: 2, BOMTime: bom, EOMTime: eom, TestBytesReceived: u64(400_000)}}}, 4000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp, err := speedBlock(tc.dir, tc.tr, plan)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if sp.Kbps != tc.kbps {
				t.Errorf("kbps %v, want %v", sp.Kbps, tc.kbps)
			}
			if n := len(tc.tr.PerConnection); n > 0 && (sp.Connections != n || len(sp.PerConnection) != n) {
				t.Errorf("connections %d, per connection %d, want %d", sp.Connections, len(sp.PerConnection), n)
			}
		})
	}
}

// TestLatencyBlock: a ping with no answer is no measurement.
func TestLatencyBlock(t *testing.T) {
	if _, err := latencyBlock(PingResult{SuccessCount: u64(0), FailureCount: u64(4)}); err == nil {
		t.Error("a ping with no answer made a result")
	}
	l, err := latencyBlock(PingResult{SuccessCount: u64(3), FailureCount: u64(1), AverageResponseTimeMs: u64(5), MinimumResponseTimeMs: u64(2), MaximumResponseTimeMs: u64(9)})
	if err != nil || *l.AverageMs != 5 || *l.MinMs != 2 || *l.MaxMs != 9 || l.SuccessCount != 3 || l.FailureCount != 1 {
		t.Errorf("%+v %v", l, err)
	}
}
