package fccwire_test

import (
	"fmt"
	"time"

	"cpesuite/internal/fcc/fccwire"
)

// Realistic messages of one SPEED and one LATENCY run, as the campaign
// service and the executor exchange them. Tests copy and change them.

var t0 = time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)

func at(d time.Duration) fccwire.Time { return fccwire.At(t0.Add(d)) }

func ptr[T any](v T) *T { return &v }

func speedActivate() *fccwire.Activate {
	return &fccwire.Activate{
		CommandID:    "outbox-4711",
		ActivationID: 912,
		FccTestID:    77,
		RunNumber:    1,
		Type:         fccwire.TypeSpeed,
		DomainID:     3,
		Part:         1,
		Parts:        1,
		Window:       fccwire.Window{StartAt: at(0), EndAt: at(2 * time.Hour)},
		Schedule: fccwire.Schedule{
			TotalTestDuration: 2, SingleTestDuration: 30, Iterations: 4, BatchInterval: 1,
			FailedTestRetries: 2, WanUsageRetries: 3, OnlyOnlineDevices: true, RequestDeviceConnect: true,
		},
		Config: fccwire.ActivateConfig{
			Retry: fccwire.Retry{StopDrainGraceSec: 900},
			Groups: []fccwire.Group{
				{
					ConfigID: 1, Manufacturer: "Acme", Model: "Gateway 98",
					Speed: &fccwire.SpeedSettings{
						TestMode:            fccwire.FileBased,
						DownloadURL:         "http://127.0.0.1:7580/download?size=10000000",
						UploadURL:           "http://127.0.0.1:7580/upload",
						DownloadConnections: ptr(4), UploadConnections: ptr(2),
						FileSizeUpload:    ptr(int64(5_000_000)),
						SpeedTierDownload: ptr(int64(100_000)), SpeedTierUpload: ptr(int64(20_000)),
						WanDownloadThreshold: ptr(int64(2_000)), WanUploadThreshold: ptr(int64(500)),
					},
					Devices: []fccwire.Device{
						{CpeID: 101, Serial: "ACME0001", Protocol: fccwire.ProtocolTR069},
						{CpeID: 102, Serial: "ACME 0002", Protocol: fccwire.ProtocolTR069},
					},
				},
				{
					ConfigID: 2, Manufacturer: "Acme", Model: "Router 181",
					Speed: &fccwire.SpeedSettings{
						TestMode: fccwire.TimeBased, TimeBasedTestDuration: ptr(15),
						// A query with & must travel unescaped.
						DownloadURL: "http://127.0.0.1:7580/download?size=10000000&x=1",
					},
					Devices: []fccwire.Device{
						{CpeID: 201, Serial: "R181-A", Protocol: fccwire.ProtocolTR181},
						{CpeID: 202, Serial: "usp:0001", Protocol: fccwire.ProtocolUSP},
					},
				},
			},
		},
	}
}

func latencyActivate() *fccwire.Activate {
	a := speedActivate()
	a.CommandID, a.ActivationID, a.FccTestID, a.Type = "outbox-4712", 913, 78, fccwire.TypeLatency
	a.RunNumber = 2
	a.Window.EndAt = at(time.Hour)
	a.Schedule = fccwire.Schedule{TotalTestDuration: 1, SingleTestDuration: 60, Iterations: 1}
	a.Config.Groups = []fccwire.Group{{
		ConfigID: 5,
		Ping: &fccwire.PingSettings{
			TestHost: "speedtest.example.net", NumberOfRepetitions: ptr(10), TimeoutMs: ptr(1000),
			DataBlockSize: ptr(64), LatencyTierMs: ptr(int64(40)),
		},
		Devices: []fccwire.Device{{CpeID: 101, Serial: "ACME0001", Protocol: fccwire.ProtocolTR069}},
	}}
	return a
}

func stop() *fccwire.Stop {
	return &fccwire.Stop{CommandID: "outbox-4713", ActivationID: 912, FccTestID: 77, Reason: fccwire.StopRequested, Message: "stopped by alice"}
}

func ack(status fccwire.AckStatus) *fccwire.CommandAck {
	a := &fccwire.CommandAck{CommandID: "outbox-4711", Command: fccwire.KindActivate, ActivationID: 912, Part: 1,
		Status: status, AcsVersion: "6.4.12", AckedAt: at(2 * time.Second)}
	if status == fccwire.Rejected {
		a.Reason, a.Message = fccwire.RejectInvalidConfig, "device 102: unknown model"
	}
	return a
}

func deviceState(s fccwire.DeviceStateValue, r fccwire.DeviceReason) *fccwire.DeviceState {
	return &fccwire.DeviceState{ActivationID: 912, CpeID: 202, Serial: "usp:0001", State: s, Reason: r, Seq: 1, At: at(3 * time.Second)}
}

func speedResult() *fccwire.Result {
	bom, eom := at(10*time.Second+250*time.Microsecond), at(18*time.Second+250*time.Microsecond)
	kbps, err := fccwire.Kbps(10_000_000, bom.Time, eom.Time)
	if err != nil {
		panic(err)
	}
	return &fccwire.Result{
		Type: fccwire.TypeSpeed, FccTestID: 77, ActivationID: 912, Iteration: 1, DomainID: 3, ConfigID: 1,
		CpeID: 101, Serial: "ACME0001", Direction: fccwire.Download,
		URL: "http://127.0.0.1:7580/download?size=10000000", TierKbps: ptr(int64(100_000)),
		StartedAt: at(9 * time.Second), FinishedAt: at(19 * time.Second), Status: fccwire.OutcomeBelowTier,
		Description: "10000 Kbps below the 100000 Kbps tier", WanUsageDlKbps: ptr(int64(120)), WanUsageUlKbps: ptr(int64(30)),
		Attempts: 1,
		Speed: &fccwire.SpeedResult{
			Kbps: kbps, TestMode: fccwire.FileBased,
			ROMTime: ptr(at(9*time.Second + 500*time.Millisecond)), BOM: bom, EOM: eom,
			TestBytes: 10_000_000, TotalBytes: ptr(int64(10_240_000)),
			TCPOpenRequestTime: ptr(at(9*time.Second + 600*time.Millisecond)), TCPOpenResponseTime: ptr(at(9*time.Second + 601*time.Millisecond)),
			Connections: 2,
			PerConnection: []fccwire.ConnectionResult{
				{Connection: 1, BOM: bom, EOM: eom, TestBytes: 5_000_000, TotalBytes: ptr(int64(5_120_000))},
				{Connection: 2, BOM: bom, EOM: at(17 * time.Second), TestBytes: 5_000_000},
			},
		},
	}
}

func latencyResult() *fccwire.Result {
	return &fccwire.Result{
		Type: fccwire.TypeLatency, FccTestID: 78, ActivationID: 913, Iteration: 1, DomainID: 3, ConfigID: 5,
		CpeID: 101, Serial: "ACME0001", Direction: fccwire.Ping, URL: "speedtest.example.net",
		StartedAt: at(time.Minute), FinishedAt: at(time.Minute + 10*time.Second), Status: fccwire.OutcomeOK,
		Attempts: 1,
		Latency:  &fccwire.LatencyResult{AverageMs: ptr(12.5), MinMs: ptr(9.125), MaxMs: ptr(31.0), SuccessCount: 9, FailureCount: 1},
	}
}

func finished() *fccwire.ActivationFinished {
	return &fccwire.ActivationFinished{ActivationID: 912, FccTestID: 77, Reason: fccwire.FinishCompleted, FinishedAt: at(2 * time.Hour),
		Devices: 4, Done: 3, Failed: 0, Skipped: 1, ResultsSent: 24}
}

// fleet returns n devices with serials like those of the emulator.
func fleet(n int) []fccwire.Device {
	out := make([]fccwire.Device, n)
	for i := range out {
		out[i] = fccwire.Device{CpeID: int64(i + 1), Serial: fmt.Sprintf("EMU-%08d", i+1), Protocol: fccwire.ProtocolTR069}
	}
	return out
}
