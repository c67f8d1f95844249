package acs_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"cpesuite/internal/acs"
	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/testutil"
)

// expectRun checks what the service would: every device's state history
// (seq growing from 1, ending where want says), one result per natural
// key and the finish counters.
func expectRun(t *testing.T, env *campaignEnv, id int64, devices []fccwire.Device, final map[int64]fccwire.DeviceStateValue, results int) *fccwire.ActivationFinished {
	t.Helper()
	f := env.finished(id)
	// Results and states published before the finish are in the queues;
	// give the collector the moment it needs to read them.
	testutil.Eventually(t, testutil.MinDeadline, "results of the run", func() bool { return len(env.col.resultsOf(id)) >= results })
	seen := map[string]bool{}
	for _, r := range env.col.resultsOf(id) {
		if seen[r.NaturalKey()] {
			t.Errorf("result %s published twice", r.NaturalKey())
		}
		seen[r.NaturalKey()] = true
	}
	if len(seen) != results || f.ResultsSent != int64(results) {
		t.Errorf("%d distinct results, resultsSent %d, want %d", len(seen), f.ResultsSent, results)
	}
	for _, d := range devices {
		want := final[d.CpeID]
		var states []*fccwire.DeviceState
		testutil.Eventually(t, testutil.MinDeadline, "final state of "+d.Serial, func() bool {
			states = env.col.statesOf(id, d.CpeID)
			return len(states) > 0 && states[len(states)-1].State == want
		})
		for i, s := range states {
			if s.Seq != int64(i+1) {
				t.Errorf("%s: state %d (%s) has seq %d", d.Serial, i, s.State, s.Seq)
			}
		}
	}
	if f.Devices != int64(len(devices)) {
		t.Errorf("finished with devices %d, want %d", f.Devices, len(devices))
	}
	env.col.check()
	return f
}

// TestCampaignSpeed runs a two-iteration SPEED campaign over emulated
// CPEs of both data models and a USP device: every CPE measures download
// and upload once per iteration against the speedtest target, a throttled
// CPE (makeSpeedDelay) is BELOW_TIER, the TR-181 CPE reports its two
// connections, and the USP device is SKIPPED / UNSUPPORTED without a task.
func TestCampaignSpeed(t *testing.T) {
	env := newCampaignEnv(t, nil)
	env.startExecutor()
	a098, b098 := env.cpe("SPD098A", "tr098-base.xml"), env.cpe("SPD098B", "tr098-base.xml")
	a181 := env.cpe("SPD181A", "tr181-base.xml")
	usp := env.row("USP0001", fccwire.ProtocolUSP)
	env.emu("POST", "/api/makeSpeedDelay", map[string]string{"serial": "SPD098B"}, nil)

	small := "?size=300000"
	g1 := fccwire.Group{ConfigID: 1, Speed: &fccwire.SpeedSettings{TestMode: fccwire.FileBased, DownloadURL: env.speedURL + "/download" + small,
		FileSizeUpload: i64(300_000), SpeedTierDownload: i64(20_000), SpeedTierUpload: i64(20_000)}, Devices: []fccwire.Device{a098, b098, usp}}
	g2 := fccwire.Group{ConfigID: 2, Speed: &fccwire.SpeedSettings{TestMode: fccwire.FileBased, DownloadURL: env.speedURL + "/download" + small,
		FileSizeUpload: i64(300_000), DownloadConnections: ip(2)}, Devices: []fccwire.Device{a181}}
	run := newActivate(101, fccwire.TypeSpeed, 30, g1, g2)
	env.activate(run)

	ack := env.ack(run.CommandID, 1)
	if ack.Status != fccwire.Accepted || ack.Command != fccwire.KindActivate || ack.AcsVersion != acs.ExecutorVersion {
		t.Fatalf("ack %+v", ack)
	}
	devices := []fccwire.Device{a098, b098, usp, a181}
	f := expectRun(t, env, 101, devices, map[int64]fccwire.DeviceStateValue{a098.CpeID: fccwire.DeviceDone, b098.CpeID: fccwire.DeviceDone,
		a181.CpeID: fccwire.DeviceDone, usp.CpeID: fccwire.DeviceSkipped}, 12)
	if f.Reason != fccwire.FinishCompleted || f.Done != 3 || f.Skipped != 1 || f.Failed != 0 {
		t.Errorf("finished %+v", f)
	}
	if s := env.col.statesOf(101, usp.CpeID); len(s) != 1 || s[0].Reason != fccwire.ReasonUnsupported {
		t.Errorf("USP device states %+v, want one SKIPPED/UNSUPPORTED", s)
	}
	if n := env.diagnostics(usp.CpeID); len(n) != 0 {
		t.Errorf("USP device got diagnostics %v", n)
	}
	for _, d := range []fccwire.Device{a098, b098, a181} {
		n := env.diagnostics(d.CpeID)
		if n[acs.KindDownloadDiagnostics] != 2 || n[acs.KindUploadDiagnostics] != 2 {
			t.Errorf("%s: diagnostics %v, want 2 downloads and 2 uploads", d.Serial, n)
		}
		states := env.col.statesOf(101, d.CpeID)
		var names []fccwire.DeviceStateValue
		for _, s := range states {
			names = append(names, s.State)
		}
		if fmt.Sprint(names) != "[QUEUED RUNNING DONE]" {
			t.Errorf("%s: states %v", d.Serial, names)
		}
	}
	for _, r := range env.col.resultsOf(101) {
		want := fccwire.OutcomeOK
		if r.Serial == "SPD098B" {
			want = fccwire.OutcomeBelowTier
		}
		if r.Status != want || r.Speed == nil || r.Attempts != 1 || r.AfterStop {
			t.Errorf("%s %s #%d: status %s (want %s), attempts %d, speed %+v", r.Serial, r.Direction, r.Iteration, r.Status, want, r.Attempts, r.Speed)
			continue
		}
		if r.Serial == "SPD181A" && r.Direction == fccwire.Download && (r.Speed.Connections != 2 || len(r.Speed.PerConnection) != 2) {
			t.Errorf("TR-181 download: %d connections, %d per-connection results", r.Speed.Connections, len(r.Speed.PerConnection))
		}
		if r.Serial == "SPD098A" && (r.TierKbps == nil || *r.TierKbps != 20_000) {
			t.Errorf("tierKbps %v", r.TierKbps)
		}
	}
}

// TestCampaignLatency runs IPPing on both data models with the group's
// ping settings; a tier no ping on loopback misses is OK.
func TestCampaignLatency(t *testing.T) {
	env := newCampaignEnv(t, nil)
	env.startExecutor()
	a, b := env.cpe("LAT098", "tr098-base.xml"), env.cpe("LAT181", "tr181-base.xml")
	g := fccwire.Group{ConfigID: 3, Ping: &fccwire.PingSettings{TestHost: "127.0.0.1", NumberOfRepetitions: ip(3), TimeoutMs: ip(1000),
		DataBlockSize: ip(64), LatencyTierMs: i64(5000)}, Devices: []fccwire.Device{a, b}}
	run := newActivate(201, fccwire.TypeLatency, 60, g)
	env.activate(run)
	f := expectRun(t, env, 201, []fccwire.Device{a, b}, map[int64]fccwire.DeviceStateValue{a.CpeID: fccwire.DeviceDone, b.CpeID: fccwire.DeviceDone}, 2)
	if f.Reason != fccwire.FinishCompleted || f.Done != 2 {
		t.Errorf("finished %+v", f)
	}
	for _, r := range env.col.resultsOf(201) {
		if r.Direction != fccwire.Ping || r.Status != fccwire.OutcomeOK || r.Latency == nil || r.Latency.SuccessCount+r.Latency.FailureCount != 3 || r.URL != "127.0.0.1" {
			t.Errorf("%s: %+v latency %+v", r.Serial, r, r.Latency)
		}
		if n := env.diagnostics(r.CpeID); n[acs.KindIPPing] != 1 {
			t.Errorf("%s: diagnostics %v", r.Serial, n)
		}
	}
}

// TestCampaignWANBusy: a CPE whose WAN is busy (makeWanBusy) above the
// group's threshold at every one of 1 + wanUsageRetries checks gets
// WAN_BUSY with its usage and no diagnostic; an idle CPE of the same
// group is measured, with the usage it was judged on.
func TestCampaignWANBusy(t *testing.T) {
	env := newCampaignEnv(t, nil)
	env.startExecutor()
	busy, idle := env.cpe("WANBUSY", "tr181-base.xml"), env.cpe("WANIDLE", "tr098-base.xml")
	env.emu("POST", "/apiV2/makeWanBusy", map[string]any{"serial": "WANBUSY", "downloadBytesPerSecond": 50_000_000}, nil)
	g := fccwire.Group{ConfigID: 4, Speed: &fccwire.SpeedSettings{TestMode: fccwire.FileBased, DownloadURL: env.speedURL + "/download?size=100000",
		FileSizeUpload: i64(100_000), WanDownloadThreshold: i64(10_000)}, Devices: []fccwire.Device{busy, idle}}
	run := newActivate(301, fccwire.TypeSpeed, 60, g)
	run.Schedule.WanUsageRetries = 2
	env.activate(run)
	expectRun(t, env, 301, []fccwire.Device{busy, idle}, map[int64]fccwire.DeviceStateValue{busy.CpeID: fccwire.DeviceDone, idle.CpeID: fccwire.DeviceDone}, 4)
	for _, r := range env.col.resultsOf(301) {
		if r.WanUsageDlKbps == nil || r.WanUsageUlKbps == nil {
			t.Errorf("%s %s: no WAN usage", r.Serial, r.Direction)
			continue
		}
		if r.Serial == "WANBUSY" {
			if r.Status != fccwire.OutcomeWANBusy || r.Attempts != 3 || r.Speed != nil || *r.WanUsageDlKbps <= 10_000 {
				t.Errorf("busy %s: status %s, attempts %d, usage %d", r.Direction, r.Status, r.Attempts, *r.WanUsageDlKbps)
			}
		} else if r.Status != fccwire.OutcomeOK || *r.WanUsageDlKbps > 10_000 {
			t.Errorf("idle %s: status %s, usage %d", r.Direction, r.Status, *r.WanUsageDlKbps)
		}
	}
	if n := env.diagnostics(busy.CpeID); len(n) != 0 {
		t.Errorf("busy CPE got diagnostics %v", n)
	}
}

// TestCampaignFailedRetries: a download that cannot connect is tried
// 1 + failedTestRetries times, then reported ERROR with the CPE's state;
// a device none of whose measurements succeeded ends FAILED / ERROR.
func TestCampaignFailedRetries(t *testing.T) {
	env := newCampaignEnv(t, nil)
	env.startExecutor()
	d := env.cpe("FAIL181", "tr181-base.xml")
	g := fccwire.Group{ConfigID: 5, Speed: &fccwire.SpeedSettings{TestMode: fccwire.FileBased, DownloadURL: "http://127.0.0.1:1/download",
		UploadURL: "http://127.0.0.1:1/upload"}, Devices: []fccwire.Device{d}}
	run := newActivate(401, fccwire.TypeSpeed, 60, g)
	run.Schedule.FailedTestRetries = 1
	env.activate(run)
	f := expectRun(t, env, 401, []fccwire.Device{d}, map[int64]fccwire.DeviceStateValue{d.CpeID: fccwire.DeviceFailed}, 2)
	if f.Failed != 1 {
		t.Errorf("finished %+v", f)
	}
	for _, r := range env.col.resultsOf(401) {
		if r.Status != fccwire.OutcomeError || r.Attempts != 2 || r.Description == "" || r.Speed != nil {
			t.Errorf("%s: status %s attempts %d description %q", r.Direction, r.Status, r.Attempts, r.Description)
		}
	}
	if n := env.diagnostics(d.CpeID); n[acs.KindDownloadDiagnostics] != 2 || n[acs.KindUploadDiagnostics] != 2 {
		t.Errorf("diagnostics %v, want 2 of each", n)
	}
	states := env.col.statesOf(401, d.CpeID)
	if last := states[len(states)-1]; last.Reason != fccwire.ReasonError {
		t.Errorf("final state %+v", last)
	}
}

// TestCampaignOnlyOnline: with onlyOnlineDevices an offline device is
// SKIPPED / OFFLINE and never gets a task.
func TestCampaignOnlyOnline(t *testing.T) {
	env := newCampaignEnv(t, nil)
	env.startExecutor()
	on, off := env.cpe("ONLINE1", "tr098-base.xml"), env.row("OFFLINE1", fccwire.ProtocolTR069)
	g := fccwire.Group{ConfigID: 6, Speed: &fccwire.SpeedSettings{TestMode: fccwire.FileBased, DownloadURL: env.speedURL + "/download?size=100000",
		FileSizeUpload: i64(100_000)}, Devices: []fccwire.Device{on, off}}
	run := newActivate(501, fccwire.TypeSpeed, 60, g)
	run.Schedule.OnlyOnlineDevices = true
	env.activate(run)
	f := expectRun(t, env, 501, []fccwire.Device{on, off}, map[int64]fccwire.DeviceStateValue{on.CpeID: fccwire.DeviceDone, off.CpeID: fccwire.DeviceSkipped}, 2)
	if f.Skipped != 1 || f.Done != 1 {
		t.Errorf("finished %+v", f)
	}
	states := env.col.statesOf(501, off.CpeID)
	if last := states[len(states)-1]; last.Reason != fccwire.ReasonOffline {
		t.Errorf("offline device %+v", last)
	}
	if n := env.diagnostics(off.CpeID); len(n) != 0 {
		t.Errorf("offline device got diagnostics %v", n)
	}
}

// TestCampaignRejects: commands that break the contract are answered
// REJECTED with the reason, ids recovered from the bytes; nothing runs.
func TestCampaignRejects(t *testing.T) {
	env := newCampaignEnv(t, nil)
	env.startExecutor()
	dev := fccwire.Device{CpeID: 1, Serial: "X1", Protocol: fccwire.ProtocolTR069}
	valid := func(id int64) []byte {
		a := newActivate(id, fccwire.TypeSpeed, 60, fccwire.Group{ConfigID: 1, Speed: &fccwire.SpeedSettings{TestMode: fccwire.FileBased}, Devices: []fccwire.Device{dev}})
		b, err := fccwire.Encode(a)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []struct {
		name   string
		id     int64
		edit   func([]byte) []byte
		reason fccwire.RejectReason
	}{
		{"older wire", 601, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"wireVersion":"1.5"`), []byte(`"wireVersion":"1.3"`), 1)
		}, fccwire.RejectUnsupportedVersion},
		{"blank serial", 602, func(b []byte) []byte { return bytes.Replace(b, []byte(`"serial":"X1"`), []byte(`"serial":" "`), 1) }, fccwire.RejectInvalidConfig},
		{"unknown type", 603, func(b []byte) []byte { return bytes.Replace(b, []byte(`"type":"SPEED"`), []byte(`"type":"JITTER"`), 1) }, fccwire.RejectInvalidConfig},
		{"bad URL", 604, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"testMode":"FILE_BASED"`), []byte(`"testMode":"FILE_BASED","downloadUrl":"gopher://x/y"`), 1)
		}, fccwire.RejectInvalidConfig},
		{"unknown field", 605, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"runNumber":1`), []byte(`"runNumber":1,"extra":1`), 1)
		}, fccwire.RejectInvalidConfig},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env.publish(tc.edit(valid(tc.id)), "")
			ack := env.ack(fmt.Sprintf("act-%d", tc.id), 1)
			if ack.Status != fccwire.Rejected || ack.Reason != tc.reason || ack.ActivationID != tc.id || ack.Message == "" {
				t.Errorf("ack %+v, want REJECTED %s", ack, tc.reason)
			}
		})
	}
	// Not even ids: dropped (nobody to answer), and the queue moves on.
	env.publish([]byte(`{"kind":"ACTIVATE","oops"`), "")
	env.publish(valid(606), "")
	if ack := env.ack("act-606", 1); ack.Status != fccwire.Accepted {
		t.Errorf("valid command after garbage: %+v", ack)
	}
	env.col.check()
	env.col.mu.Lock()
	defer env.col.mu.Unlock()
	if len(env.col.states) != 0 && env.col.states[0].ActivationID != 606 {
		t.Errorf("a rejected run reported device states: %+v", env.col.states[0])
	}
}

// TestCampaignPartsAndRedelivery: a run in two parts starts only when it
// holds both; a part sent again (the outbox's re-send, a new message id)
// is acknowledged again and changes nothing; every device is measured
// once.
func TestCampaignPartsAndRedelivery(t *testing.T) {
	env := newCampaignEnv(t, nil)
	env.startExecutor()
	a, b := env.cpe("PART1", "tr098-base.xml"), env.cpe("PART2", "tr181-base.xml")
	run := newActivate(701, fccwire.TypeSpeed, 60, fccwire.Group{ConfigID: 1, Speed: &fccwire.SpeedSettings{TestMode: fccwire.FileBased,
		DownloadURL: env.speedURL + "/download?size=100000", FileSizeUpload: i64(100_000)}, Devices: []fccwire.Device{a, b}})
	whole, _ := fccwire.Encode(run)
	parts, err := fccwire.SplitActivate(*run, len(whole)-40)
	if err != nil || len(parts) != 2 {
		t.Fatalf("split: %d parts, %v", len(parts), err)
	}
	env.publish(parts[0], fccwire.CommandMsgID(run.CommandID, 1, 1))
	env.publish(parts[0], fccwire.CommandMsgID(run.CommandID, 1, 2))
	testutil.Eventually(t, testutil.MinDeadline, "two acks of part 1", func() bool { return len(env.col.acksOf(run.CommandID, 1)) == 2 })
	if s := env.col.statesOf(701, a.CpeID); len(s) != 0 {
		t.Fatalf("run started with one part of two: %+v", s)
	}
	env.publish(parts[1], fccwire.CommandMsgID(run.CommandID, 2, 1))
	env.publish(parts[1], fccwire.CommandMsgID(run.CommandID, 2, 2))
	for _, ack := range append(env.col.acksOf(run.CommandID, 1), env.ack(run.CommandID, 2)) {
		if ack.Status != fccwire.Accepted {
			t.Errorf("ack %+v", ack)
		}
	}
	expectRun(t, env, 701, []fccwire.Device{a, b}, map[int64]fccwire.DeviceStateValue{a.CpeID: fccwire.DeviceDone, b.CpeID: fccwire.DeviceDone}, 4)
	testutil.Eventually(t, testutil.MinDeadline, "two acks of part 2", func() bool { return len(env.col.acksOf(run.CommandID, 2)) == 2 })
	for _, d := range []fccwire.Device{a, b} {
		if n := env.diagnostics(d.CpeID); n[acs.KindDownloadDiagnostics] != 1 || n[acs.KindUploadDiagnostics] != 1 {
			t.Errorf("%s: diagnostics %v", d.Serial, n)
		}
	}
}

// TestCampaignStop: a STOP of an unknown run is accepted and keeps its
// late ACTIVATE from starting; a STOP of a running run lets in-flight
// diagnostics finish within the drain bound (afterStop results) and ends
// the run STOPPED; with a zero bound the in-flight ones are cancelled and
// their devices FAILED / STOPPED.
func TestCampaignStop(t *testing.T) {
	env := newCampaignEnv(t, nil)
	env.startExecutor()

	env.stop(&fccwire.Stop{CommandID: "stop-801", ActivationID: 801, FccTestID: 7, Reason: fccwire.StopActivationExpired}, 1)
	if ack := env.ack("stop-801", 0); ack.Status != fccwire.Accepted || ack.Command != fccwire.KindStop {
		t.Fatalf("stop ack %+v", ack)
	}
	late := env.cpe("STOPLATE", "tr098-base.xml")
	env.activate(newActivate(801, fccwire.TypeSpeed, 60, fccwire.Group{ConfigID: 1, Speed: &fccwire.SpeedSettings{TestMode: fccwire.FileBased}, Devices: []fccwire.Device{late}}))
	if ack := env.ack("act-801", 1); ack.Status != fccwire.Accepted {
		t.Fatalf("late activate ack %+v", ack)
	}

	slow, fast := env.cpe("STOPSLOW", "tr181-base.xml"), env.cpe("STOPFAST", "tr098-base.xml")
	env.emu("POST", "/api/makeSpeedDelay", map[string]string{"serial": "STOPSLOW"}, nil)
	for _, tc := range []struct {
		name    string
		id      int64
		graceS  int64
		state   fccwire.DeviceStateValue
		results int
	}{
		{"drain", 802, 36_000, fccwire.DeviceFailed, 1}, // 10 h campaign time: 10 s here
		{"forced", 803, 0, fccwire.DeviceFailed, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := newActivate(tc.id, fccwire.TypeSpeed, 30, fccwire.Group{ConfigID: 1, Speed: &fccwire.SpeedSettings{TestMode: fccwire.FileBased,
				DownloadURL: env.speedURL + "/download?size=100000", FileSizeUpload: i64(100_000)}, Devices: []fccwire.Device{slow}})
			run.Config.Retry.StopDrainGraceSec = tc.graceS
			env.activate(run)
			// The throttled download is in flight once the device runs.
			testutil.Eventually(t, testutil.MinDeadline, "device RUNNING", func() bool {
				s := env.col.statesOf(tc.id, slow.CpeID)
				return len(s) > 0 && s[len(s)-1].State == fccwire.DeviceRunning
			})
			testutil.Eventually(t, testutil.MinDeadline, "download in flight", func() bool { return env.diagnostics(slow.CpeID)[acs.KindDownloadDiagnostics] > 0 })
			env.stop(&fccwire.Stop{CommandID: fmt.Sprintf("stop-%d", tc.id), ActivationID: tc.id, FccTestID: 7, Reason: fccwire.StopRequested}, 1)
			f := expectRun(t, env, tc.id, []fccwire.Device{slow}, map[int64]fccwire.DeviceStateValue{slow.CpeID: tc.state}, tc.results)
			if f.Reason != fccwire.FinishStopped {
				t.Errorf("finished %+v", f)
			}
			for _, r := range env.col.resultsOf(tc.id) {
				if !r.AfterStop || r.Direction != fccwire.Download {
					t.Errorf("result after the stop: %s afterStop %v", r.Direction, r.AfterStop)
				}
			}
			states := env.col.statesOf(tc.id, slow.CpeID)
			if last := states[len(states)-1]; last.Reason != fccwire.ReasonStopped {
				t.Errorf("final state %+v", last)
			}
			// No upload was started after the STOP; nothing is left open.
			tasks, _ := env.acs.Store().DeviceTasks(context.Background(), slow.CpeID, 100)
			for _, task := range tasks {
				if task.Open() {
					t.Errorf("task %d (%s) still open after the run ended", task.ID, task.Kind)
				}
			}
		})
	}
	if n := env.diagnostics(fast.CpeID); len(n) != 0 {
		t.Errorf("device of no run measured: %v", n)
	}
	if n := env.diagnostics(late.CpeID); len(n) != 0 {
		t.Errorf("the stopped run's late ACTIVATE started diagnostics: %v", n)
	}
	if s := env.col.statesOf(801, late.CpeID); len(s) != 0 {
		t.Errorf("the stopped run's late ACTIVATE reported states: %+v", s)
	}
	if n := env.diagnostics(slow.CpeID); n[acs.KindUploadDiagnostics] != 0 {
		t.Errorf("uploads started after STOP: %v", n)
	}
}

// TestCampaignRestart stops the executor in the middle of a run and
// starts a new one on the same database: the run continues, no (device,
// direction, iteration) is measured twice (the ACS's task store says so)
// and every result is published.
func TestCampaignRestart(t *testing.T) {
	env := newCampaignEnv(t, nil)
	stop := env.startExecutor()
	var devs []fccwire.Device
	for i, f := range []string{"tr098-base.xml", "tr181-base.xml", "tr098-base.xml", "tr181-base.xml"} {
		devs = append(devs, env.cpe(fmt.Sprintf("RST%d", i), f))
	}
	run := newActivate(901, fccwire.TypeSpeed, 30, fccwire.Group{ConfigID: 1, Speed: &fccwire.SpeedSettings{TestMode: fccwire.FileBased,
		DownloadURL: env.speedURL + "/download?size=2000000", FileSizeUpload: i64(2_000_000)}, Devices: devs})
	env.activate(run)
	testutil.Eventually(t, testutil.MinDeadline, "first results", func() bool { return len(env.col.resultsOf(901)) >= 2 })
	stop()
	if env.col.finishedOf(901) != nil && len(env.col.resultsOf(901)) == 16 {
		t.Log("the run finished before the executor stopped; the restart only re-reads it")
	}
	t.Logf("executor stopped after %d of 16 results", len(env.col.resultsOf(901)))
	env.startExecutor()
	final := map[int64]fccwire.DeviceStateValue{}
	for _, d := range devs {
		final[d.CpeID] = fccwire.DeviceDone
	}
	f := expectRun(t, env, 901, devs, final, 16)
	if f.Reason != fccwire.FinishCompleted || f.Done != 4 {
		t.Errorf("finished %+v", f)
	}
	for _, d := range devs {
		if n := env.diagnostics(d.CpeID); n[acs.KindDownloadDiagnostics] != 2 || n[acs.KindUploadDiagnostics] != 2 {
			t.Errorf("%s: diagnostics %v, want 2 of each (one per direction and iteration)", d.Serial, n)
		}
	}
	_ = time.Second
}
