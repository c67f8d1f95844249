package fcc

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/testutil"
)

// TestRunLifecycle: activation, run PLANNED then DISPATCHING when the
// queue accepts the ACTIVATE, RUNNING when every part is acked (duplicate
// acks ignored), device states kept by seq, FINISHED on
// ACTIVATION_FINISHED and the campaign COMPLETED with no reactivation.
func TestRunLifecycle(t *testing.T) {
	for _, d := range []sqlstore.Dialect{sqlstore.SQLite, sqlstore.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			h, acs := runHarness(t, d, nil)
			c := h.immediateCampaign(nil)
			h.activate(c)
			cmd := acs.nextActivate()
			a := cmd.act
			if a.FccTestID != c || a.RunNumber != 1 || a.Part != 1 || a.Parts != 1 || a.Config.Retry.StopDrainGraceSec != 900 || a.Type != fccwire.TypeSpeed {
				t.Fatalf("ACTIVATE head %s", cmd.raw)
			}
			if cmd.msgID != fccwire.CommandMsgID(a.CommandID, 1, 1) {
				t.Fatalf("message id %q", cmd.msgID)
			}
			devs := a.Config.Groups[0].Devices
			if len(devs) != 2 || devs[0].Serial != "A1" && devs[1].Serial != "A1" || devs[0].Protocol != fccwire.ProtocolTR069 {
				t.Fatalf("devices %+v", devs)
			}
			r := h.waitRun(c, 1, RunDispatching)
			if r.id != a.ActivationID {
				t.Fatalf("activationId %d, run %d", a.ActivationID, r.id)
			}
			var snap string
			if err := h.svc.store.db.QueryRow(h.svc.store.q(`SELECT snapshot FROM fcc_runs WHERE id = ?`), r.id).Scan(&snap); err != nil {
				t.Fatal(err)
			}
			s, err := RunSnapshotOf([]byte(snap))
			if err != nil || len(s.Groups) != 1 || s.Groups[0].Setting.SpeedTierDownload == nil || *s.Groups[0].Setting.SpeedTierDownload != 100000 || s.Groups[0].FleetSize != 2 {
				t.Fatalf("snapshot %s, %v", snap, err)
			}
			acs.ack(a, fccwire.Accepted, "")
			acs.ack(a, fccwire.Accepted, "")
			h.waitRun(c, 1, RunRunning)
			testutil.Eventually(t, testutil.MinDeadline, "outbox row acked", func() bool { o := h.outbox(r.id); return len(o) == 1 && o[0].acked })

			acs.state(r.id, h.dev["A1"], "A1", fccwire.DeviceRunning, "", 2)
			acs.state(r.id, h.dev["A1"], "A1", fccwire.DeviceQueued, "", 1) // late, older
			acs.state(r.id, h.dev["A2"], "A2", fccwire.DeviceSkipped, fccwire.ReasonUnsupported, 1)
			testutil.Eventually(t, testutil.MinDeadline, "device states", func() bool {
				var st string
				var seq int64
				_ = h.svc.store.db.QueryRow(h.svc.store.q(`SELECT state, seq FROM fcc_run_devices WHERE run_id = ? AND serial = 'A1'`), r.id).Scan(&st, &seq)
				var n int
				_ = h.svc.store.db.QueryRow(h.svc.store.q(`SELECT COUNT(*) FROM fcc_run_devices WHERE run_id = ?`), r.id).Scan(&n)
				return n == 2 && st == "RUNNING" && seq == 2
			})
			if rv, _ := h.run(c, 1); rv.inFlight != 1 {
				t.Fatalf("in flight %d, want 1", rv.inFlight)
			}
			acs.finished(a, fccwire.FinishCompleted)
			r = h.waitRun(c, 1, RunFinished)
			if r.reason != "COMPLETED" {
				t.Fatalf("reason %q", r.reason)
			}
			h.waitCampaign(c, StateCompleted)
		})
	}
}

// TestAckTimeoutResendsIdenticalBytes: a SENT row with no ack within the
// ack time-out is re-sent byte for byte under the next attempt's message
// id, and the first ack stops the re-sends.
func TestAckTimeoutResendsIdenticalBytes(t *testing.T) {
	for _, d := range []sqlstore.Dialect{sqlstore.SQLite, sqlstore.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			h, acs := runHarness(t, d, func(c *Config) { c.Runs.CommandAckTimeout = 50 * time.Millisecond })
			c := h.immediateCampaign(nil)
			h.activate(c)
			first := acs.nextActivate()
			second := acs.nextActivate()
			if !bytes.Equal(first.raw, second.raw) {
				t.Fatalf("re-send differs:\n%s\n%s", first.raw, second.raw)
			}
			a := first.act
			if first.msgID != fccwire.CommandMsgID(a.CommandID, 1, 1) || second.msgID != fccwire.CommandMsgID(a.CommandID, 1, 2) {
				t.Fatalf("message ids %q, %q", first.msgID, second.msgID)
			}
			o := h.outbox(a.ActivationID)
			if o[0].payload != string(first.raw) {
				t.Fatal("stored payload differs from the bytes sent")
			}
			acs.ack(a, fccwire.Accepted, "")
			h.waitRun(c, 1, RunRunning)
		})
	}
}

// TestOutboxAbandoned: at the attempt limit the row is ABANDONED, the run
// FAILED with a reason naming the row, the campaign ERROR, and a STOP
// (OUTBOX_ABANDONED) is published.
func TestOutboxAbandoned(t *testing.T) {
	for _, d := range []sqlstore.Dialect{sqlstore.SQLite, sqlstore.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			h, acs := runHarness(t, d, func(c *Config) {
				c.Runs.CommandAckTimeout = 20 * time.Millisecond
				c.Runs.OutboxMaxAttempts = 3
			})
			c := h.immediateCampaign(nil)
			h.activate(c)
			a := acs.nextActivate().act
			stop := acs.nextStop(fccwire.StopOutboxAbandoned)
			if stop.stop.ActivationID != a.ActivationID {
				t.Fatalf("STOP of run %d, want %d", stop.stop.ActivationID, a.ActivationID)
			}
			r := h.waitRun(c, 1, RunFailed)
			rowID := a.CommandID
			if want := "outbox row " + rowID + " abandoned after 3 attempts"; r.reason != want {
				t.Fatalf("reason %q, want %q", r.reason, want)
			}
			h.waitCampaign(c, StateError)
			o := h.outbox(r.id)
			if o[0].state != OutboxAbandoned || o[0].attempts != 3 {
				t.Fatalf("outbox %+v", o[0])
			}
		})
	}
}

// TestRunFailures covers the other ways a run fails before it runs.
func TestRunFailures(t *testing.T) {
	tests := []struct {
		name       string
		edit       func(*Config)
		act        func(h *harness, acs *acsPeer, a *fccwire.Activate, r runView)
		reason     string
		stopReason fccwire.StopReason
	}{
		{"rejected", nil, func(h *harness, acs *acsPeer, a *fccwire.Activate, r runView) {
			acs.ack(a, fccwire.Rejected, fccwire.RejectInvalidConfig)
		}, "INVALID_CONFIG", ""},
		{"late ack", func(c *Config) {
			c.Runs.ActivationMaxDelay = 100 * time.Millisecond
			c.Runs.AckTimeoutInterval = time.Hour // the poller must not expire it first
		}, func(h *harness, acs *acsPeer, a *fccwire.Activate, r runView) {
			testutil.Eventually(h.t, testutil.MinDeadline, "the activation delay to pass", func() bool {
				return time.Since(r.windowStart) > 200*time.Millisecond
			})
			acs.ack(a, fccwire.Accepted, "")
		}, "ACS_UNAVAILABLE", fccwire.StopACSUnavailable},
		{"window start expired", func(c *Config) { c.Runs.ActivationMaxDelay = 50 * time.Millisecond },
			func(*harness, *acsPeer, *fccwire.Activate, runView) {}, "ACTIVATION_EXPIRED", fccwire.StopActivationExpired},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, acs := runHarness(t, sqlstore.SQLite, tc.edit)
			c := h.immediateCampaign(nil)
			h.activate(c)
			a := acs.nextActivate().act
			r, _ := h.run(c, 1)
			tc.act(h, acs, a, r)
			r = h.waitRun(c, 1, RunFailed)
			mustContain(t, r.reason, tc.reason)
			h.waitCampaign(c, StateError)
			if tc.stopReason != "" {
				acs.nextStop(tc.stopReason)
			}
		})
	}
}

// TestWatchdogFinishesAQuietRun: a RUNNING run past its window end plus
// the finish grace is FINISHED (WATCHDOG) and the campaign moves on.
func TestWatchdogFinishesAQuietRun(t *testing.T) {
	h, acs := runHarness(t, sqlstore.SQLite, func(c *Config) {
		c.TimeScale = scaled(t, 86400) // the 2-hour window lasts 83 ms
		c.Runs.CommandAckTimeout = 1000 * time.Hour
		c.Runs.ActivationMaxDelay = 1000 * time.Hour
		c.Runs.WatchdogFinishGrace = 15 * time.Minute
	})
	c := h.immediateCampaign(nil)
	h.activate(c)
	acs.ack(acs.nextActivate().act, fccwire.Accepted, "")
	r := h.waitRun(c, 1, RunFinished)
	if r.reason != ReasonWatchdog {
		t.Fatalf("reason %q", r.reason)
	}
	h.waitCampaign(c, StateCompleted)
}

// TestStopDrain: a stop request makes a RUNNING run STOPPING and publishes
// STOP (STOP_REQUESTED); the run is STOPPED when its in-flight count
// reaches 0, and the campaign COMPLETED; the after-stop deadline is
// stopped_at plus the frozen stop grace.
func TestStopDrain(t *testing.T) {
	for _, d := range []sqlstore.Dialect{sqlstore.SQLite, sqlstore.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			h, acs := runHarness(t, d, nil)
			c := h.immediateCampaign(nil)
			h.activate(c)
			a := acs.nextActivate().act
			acs.ack(a, fccwire.Accepted, "")
			r := h.waitRun(c, 1, RunRunning)
			if _, stopped, err := h.svc.AfterStopDeadline(t.Context(), r.id); err != nil || stopped {
				t.Fatalf("running run: stopped %v, %v", stopped, err)
			}
			acs.state(r.id, h.dev["A1"], "A1", fccwire.DeviceRunning, "", 1)
			acs.state(r.id, h.dev["A2"], "A2", fccwire.DeviceRunning, "", 1)
			testutil.Eventually(t, testutil.MinDeadline, "two in flight", func() bool { rv, _ := h.run(c, 1); return rv.inFlight == 2 })
			var out ActivateResponse
			h.do("POST", "/FCC/deactivate", scopeAll, map[string]int64{"id": c}).want(200).decode(&out)
			r = h.waitRun(c, 1, RunStopping)
			stop := acs.nextStop(fccwire.StopRequested)
			acs.ackStop(stop.stop)
			h.do("POST", "/FCC/deactivate", scopeAll, map[string]int64{"id": c}).want(409)
			acs.state(r.id, h.dev["A1"], "A1", fccwire.DeviceFailed, fccwire.ReasonStopped, 2)
			testutil.Eventually(t, testutil.MinDeadline, "one in flight", func() bool { rv, _ := h.run(c, 1); return rv.inFlight == 1 })
			if rv, _ := h.run(c, 1); rv.state != RunStopping {
				t.Fatalf("state %s with one device in flight", rv.state)
			}
			acs.state(r.id, h.dev["A2"], "A2", fccwire.DeviceDone, "", 2)
			r = h.waitRun(c, 1, RunStopped)
			if r.reason != ReasonDrained {
				t.Fatalf("reason %q", r.reason)
			}
			h.waitCampaign(c, StateCompleted)
			deadline, stopped, err := h.svc.AfterStopDeadline(t.Context(), r.id)
			if err != nil || !stopped || !deadline.Equal(r.stoppedAt.Time.UTC().Add(900*time.Second)) {
				t.Fatalf("after-stop deadline %v, %v, %v (stopped at %v)", deadline, stopped, err, r.stoppedAt.Time)
			}
		})
	}
}

// TestForcedStop: a STOPPING run the ACS never closes is STOPPED by the
// watchdog once its stop grace has passed.
func TestForcedStop(t *testing.T) {
	h, acs := runHarness(t, sqlstore.SQLite, func(c *Config) {
		c.TimeScale = scaled(t, 86400) // 900 s of stop grace last ~10 ms
		c.Runs.CommandAckTimeout = 1000 * time.Hour
		c.Runs.ActivationMaxDelay = 1000 * time.Hour
		c.Runs.WatchdogFinishGrace = 1000 * time.Hour
	})
	c := h.immediateCampaign(nil)
	h.activate(c)
	acs.ack(acs.nextActivate().act, fccwire.Accepted, "")
	h.waitRun(c, 1, RunRunning)
	h.do("POST", "/FCC/deactivate", scopeAll, map[string]int64{"id": c}).want(200)
	r := h.waitRun(c, 1, RunStopped)
	if r.reason != ReasonForcedStop {
		t.Fatalf("reason %q", r.reason)
	}
	h.waitCampaign(c, StateCompleted)
}

// TestStopOfAPlannedRun: a run created but never sent is STOPPED at once
// and its ACTIVATE row ABANDONED; nothing reaches the ACS.
func TestStopOfAPlannedRun(t *testing.T) {
	h := newHarness(t, sqlstore.SQLite, func(c *Config) { c.Runs = fastRuns() })
	useGate(h.svc, fakeGate{"UP"})
	c := h.immediateCampaign(nil)
	h.activate(c)
	if ok, err := h.svc.createRun(t.Context(), c); err != nil || !ok {
		t.Fatalf("createRun %v, %v", ok, err)
	}
	r := h.waitRun(c, 1, RunPlanned)
	h.do("POST", "/FCC/deactivate", scopeAll, map[string]int64{"id": c}).want(200)
	r = h.waitRun(c, 1, RunStopped)
	if o := h.outbox(r.id); len(o) != 1 || o[0].state != OutboxAbandoned || o[0].abandonReason != ReasonStopRequested {
		t.Fatalf("outbox %+v", o)
	}
	if st := h.campaignState(c); st != StateCompleted {
		t.Fatalf("campaign %s", st)
	}
}

// TestReactivation: with reactivationCount 1 the first run's close plans
// the second (SCHEDULED_FOR_REACTIVATION, due one scaled day after run 1
// started), and the second's close completes the campaign.
func TestReactivation(t *testing.T) {
	h, acs := runHarness(t, sqlstore.SQLite, func(c *Config) {
		c.TimeScale = scaled(t, 86400) // a day lasts a second
		c.Runs.CommandAckTimeout = 1000 * time.Hour
		c.Runs.ActivationMaxDelay = 1000 * time.Hour
		c.Runs.WatchdogFinishGrace = 1000 * time.Hour
	})
	c := h.immediateCampaign(func(c *Campaign) {
		c.Reactivation = &Reactivation{Type: ReactivationDaily, RepeatEvery: ptr(1), ReactivationCount: ptr(1)}
	})
	h.activate(c)
	a1 := acs.nextActivate().act
	acs.ack(a1, fccwire.Accepted, "")
	r1 := h.waitRun(c, 1, RunRunning)
	acs.finished(a1, fccwire.FinishWindowClosed)
	h.waitRun(c, 1, RunFinished)
	h.waitCampaign(c, StateScheduledForReactivation)
	a2 := acs.nextActivate().act
	if a2.RunNumber != 2 || a2.ActivationID == a1.ActivationID {
		t.Fatalf("second ACTIVATE %+v", a2)
	}
	r2, _ := h.run(c, 2)
	if due := r1.windowStart.Add(time.Second); r2.windowStart.Before(due.Add(-time.Millisecond)) {
		t.Fatalf("run 2 started %v, before its due time %v", r2.windowStart, due)
	}
	acs.ack(a2, fccwire.Accepted, "")
	h.waitRun(c, 2, RunRunning)
	if st := h.campaignState(c); st != StateScheduledForReactivation {
		t.Fatalf("campaign %s while run 2 runs", st)
	}
	acs.finished(a2, fccwire.FinishCompleted)
	h.waitRun(c, 2, RunFinished)
	h.waitCampaign(c, StateCompleted)
	var payload string
	if err := h.svc.store.db.QueryRow(h.svc.store.q(`SELECT snapshot FROM fcc_runs WHERE id = ?`), r2.id).Scan(&payload); err != nil || !json.Valid([]byte(payload)) {
		t.Fatalf("snapshot of run 2: %v", err)
	}
}
