package fcc

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"cpesuite/internal/fcc/fccwire"
)

// RunSnapshot is what a run froze when it was created (fcc_runs.snapshot):
// the schedule, the stop grace sent to the ACS and every configuration's
// resolved settings. Reports read thresholds from here, never from the
// campaign, whose settings may have been edited since.
type RunSnapshot struct {
	Type              string           `json:"type"`
	DomainID          int64            `json:"domainId"`
	Schedule          fccwire.Schedule `json:"schedule"`
	StopDrainGraceSec int64            `json:"stopDrainGraceSec"`
	Groups            []SnapshotGroup  `json:"groups"`
}

// SnapshotGroup is one configuration of a run's snapshot.
type SnapshotGroup struct {
	ConfigID     int64   `json:"configId"`
	Manufacturer string  `json:"manufacturer"`
	Model        string  `json:"model"`
	FleetSize    int     `json:"fleetSize"`
	Setting      Setting `json:"setting"`
}

// RunSnapshotOf parses fcc_runs.snapshot.
func RunSnapshotOf(b []byte) (RunSnapshot, error) {
	var s RunSnapshot
	err := json.Unmarshal(b, &s)
	return s, err
}

// scheduleOnce creates the run of every due campaign, at most one batch.
func (s *Service) scheduleOnce(ctx context.Context, batch int) (int, error) {
	now := s.now()
	rows, err := s.store.db.QueryContext(ctx, s.store.q(`SELECT id FROM fcc_campaigns WHERE next_run_at IS NOT NULL AND next_run_at <= ?
		AND state IN (?, ?) ORDER BY next_run_at, id LIMIT ?`), now, StateScheduled, StateScheduledForReactivation, batch)
	if err != nil {
		return 0, fmt.Errorf("scheduler: listing due campaigns: %w", err)
	}
	var due []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		due = append(due, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	created := 0
	for _, id := range due {
		ok, err := s.createRun(ctx, id)
		if err != nil {
			// One campaign's failure must not hold the others back.
			s.log.Error("scheduler: creating a run", "campaign", id, "err", err)
			continue
		}
		if ok {
			created++
		}
	}
	return created, nil
}

type fleetRow struct {
	config   int64
	cpe      int64
	serial   string
	protocol string
}

func wireProtocol(p string) fccwire.Protocol {
	switch fccwire.Protocol(p) {
	case fccwire.ProtocolTR069, fccwire.ProtocolTR181, fccwire.ProtocolUSP:
		return fccwire.Protocol(p)
	}
	return fccwire.ProtocolUnknown
}

func intPtr(p *int64) *int {
	if p == nil {
		return nil
	}
	v := int(*p)
	return &v
}

func strOrEmpty(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// wireGroup turns a configuration's resolved setting into the ACTIVATE's
// settings block. A speed setting without a mode is sent FILE_BASED, the
// mode that needs no further field.
func wireGroup(typ string, cfg TestConfig) (fccwire.Group, error) {
	g := fccwire.Group{ConfigID: *cfg.ID, Manufacturer: cfg.Manufacturer, Model: cfg.Model}
	var st Setting
	if len(cfg.Settings) > 0 {
		st = cfg.Settings[0]
	}
	switch typ {
	case TypeSpeed:
		sp := &fccwire.SpeedSettings{TestMode: fccwire.FileBased, DownloadURL: strOrEmpty(st.DownloadURL), UploadURL: strOrEmpty(st.UploadURL),
			DownloadConnections: intPtr(st.DownloadConnections), UploadConnections: intPtr(st.UploadConnections), FileSizeUpload: st.FileSizeUpload,
			SpeedTierDownload: st.SpeedTierDownload, SpeedTierUpload: st.SpeedTierUpload,
			WanDownloadThreshold: st.WanDownloadThreshold, WanUploadThreshold: st.WanUploadThreshold}
		if st.TestMode != nil && *st.TestMode == ModeTimeBased {
			sp.TestMode = fccwire.TimeBased
			sp.TimeBasedTestDuration = intPtr(st.TimeBasedTestDuration)
		}
		g.Speed = sp
	case TypeLatency:
		if st.TestHost == nil || *st.TestHost == "" {
			return g, fmt.Errorf("configuration %d has no testHost", *cfg.ID)
		}
		g.Ping = &fccwire.PingSettings{TestHost: *st.TestHost, NumberOfRepetitions: intPtr(st.NumberOfRepetitions),
			TimeoutMs: intPtr(st.Timeout), DataBlockSize: intPtr(st.DataBlockSize)}
	default:
		return g, fmt.Errorf("unknown campaign type %q", typ)
	}
	return g, nil
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// createRun creates the due run of one campaign: the run row (PLANNED, or
// FAILED when the campaign cannot be turned into a valid ACTIVATE) and one
// outbox row per ACTIVATE part, in one transaction. The claim on the
// campaign's next_run_at and UNIQUE(campaign_id, run_number) make a second
// scheduler's attempt a no-op.
func (s *Service) createRun(ctx context.Context, campaign int64) (bool, error) {
	c, err := s.store.campaign(ctx, s.store.db, campaign)
	if err != nil {
		return false, err
	}
	var nextAt sql.NullTime
	var nextNumber sql.NullInt64
	var cycleFirst sql.NullInt64
	if err := s.store.db.QueryRowContext(ctx, s.store.q(`SELECT next_run_at, next_run_number, cycle_first_run FROM fcc_campaigns WHERE id = ?`), campaign).
		Scan(&nextAt, &nextNumber, &cycleFirst); err != nil {
		return false, err
	}
	if !nextAt.Valid || !nextNumber.Valid {
		return false, nil
	}
	fleet, err := s.frozenFleet(ctx, campaign)
	if err != nil {
		return false, err
	}
	now := s.now()
	start := now
	if nextAt.Time.After(now) {
		start = nextAt.Time.UTC()
	}
	a := c.Activation
	hours := deref(a.TotalTestDuration)
	end := start.Add(s.cfg.TimeScale.Hours(int64(hours)))
	graceSec := int64(s.cfg.Runs.StopGrace / time.Second)
	sched := fccwire.Schedule{TotalTestDuration: hours, SingleTestDuration: deref(a.SingleTestDuration),
		Iterations: fccwire.Iterations(hours, deref(a.SingleTestDuration)), BatchInterval: deref(a.BatchInterval),
		FailedTestRetries: deref(a.FailedTestRetries), WanUsageRetries: deref(a.WanUsageRetries),
		OnlyOnlineDevices: a.OnlyOnlineDevices, RequestDeviceConnect: a.RequestDeviceConnect}
	snap := RunSnapshot{Type: c.Type, DomainID: *c.DomainID, Schedule: sched, StopDrainGraceSec: graceSec}
	act := fccwire.Activate{ActivationID: 0, FccTestID: campaign, RunNumber: int(nextNumber.Int64), Type: fccwire.TestType(c.Type),
		DomainID: *c.DomainID, Window: fccwire.Window{StartAt: fccwire.At(start), EndAt: fccwire.At(end)}, Schedule: sched,
		Config: fccwire.ActivateConfig{Retry: fccwire.Retry{StopDrainGraceSec: graceSec}}}
	var buildErr error
	size := 0
	for _, cfg := range c.Configs {
		g, err := wireGroup(c.Type, cfg)
		if err != nil && buildErr == nil {
			buildErr = err
		}
		for _, d := range fleet[*cfg.ID] {
			g.Devices = append(g.Devices, fccwire.Device{CpeID: d.cpe, Serial: d.serial, Protocol: wireProtocol(d.protocol)})
		}
		size += len(g.Devices)
		act.Config.Groups = append(act.Config.Groups, g)
		st := Setting{}
		if len(cfg.Settings) > 0 {
			st = cfg.Settings[0]
		}
		snap.Groups = append(snap.Groups, SnapshotGroup{ConfigID: *cfg.ID, Manufacturer: cfg.Manufacturer, Model: cfg.Model, FleetSize: len(g.Devices), Setting: st})
	}
	snapBytes, err := json.Marshal(snap)
	if err != nil {
		return false, err
	}
	created := false
	err = s.store.db.InTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.store.q(`UPDATE fcc_campaigns SET next_run_at = NULL, updated_at = ?
			WHERE id = ? AND next_run_number = ? AND next_run_at IS NOT NULL AND next_run_at <= ? AND state IN (?, ?)`),
			now, campaign, nextNumber.Int64, now, StateScheduled, StateScheduledForReactivation)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // another scheduler took it, or the campaign was stopped
		}
		if !cycleFirst.Valid || cycleFirst.Int64 == nextNumber.Int64 {
			if _, err := tx.ExecContext(ctx, s.store.q(`UPDATE fcc_campaigns SET cycle_started_at = ? WHERE id = ?`), start, campaign); err != nil {
				return err
			}
		}
		var runID int64
		err = tx.QueryRowContext(ctx, s.store.q(`INSERT INTO fcc_runs (campaign_id, run_number, state, snapshot, fleet_size, window_start_at, window_end_at,
			stop_grace_sec, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
			campaign, nextNumber.Int64, RunPlanned, string(snapBytes), size, start, end, graceSec, now, now).Scan(&runID)
		if err != nil {
			return fmt.Errorf("creating run %d of campaign %d: %w", nextNumber.Int64, campaign, err)
		}
		created = true
		s.runs.transition(RunPlanned)
		// The commandId of every part is the id of part 1's row: it must
		// be in the bytes, so the row exists before its payload.
		first, err := s.insertOutbox(ctx, tx, runID, commandActivate, "", 1, 1, nil)
		if err != nil {
			return err
		}
		act.ActivationID = runID
		act.CommandID = strconv.FormatInt(first, 10)
		var parts [][]byte
		if buildErr == nil {
			parts, buildErr = fccwire.SplitActivate(act, 0)
		}
		if buildErr != nil {
			// The campaign cannot be sent as it is: fail the run visibly
			// rather than retrying it every tick.
			s.log.Error("scheduler: the campaign cannot be sent", "campaign", campaign, "run", runID, "err", buildErr)
			if _, err := tx.ExecContext(ctx, s.store.q(`DELETE FROM fcc_outbox WHERE id = ?`), first); err != nil {
				return err
			}
			_, err := s.moveRun(ctx, tx, runID, []string{RunPlanned}, RunFailed, "INVALID_CONFIG: "+buildErr.Error())
			return err
		}
		if _, err := tx.ExecContext(ctx, s.store.q(`UPDATE fcc_outbox SET command_id = ?, parts = ?, payload = ? WHERE id = ?`),
			act.CommandID, len(parts), string(parts[0]), first); err != nil {
			return err
		}
		for i, p := range parts[1:] {
			if _, err := s.insertOutbox(ctx, tx, runID, commandActivate, act.CommandID, i+2, len(parts), p); err != nil {
				return err
			}
		}
		s.log.Info("run created", "campaign", campaign, "run", runID, "number", nextNumber.Int64, "devices", size, "parts", len(parts), "start", start)
		return nil
	})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return false, err
		}
		// A unique violation means another scheduler created the run.
		return false, fmt.Errorf("campaign %d: %w", campaign, err)
	}
	return created, nil
}

// frozenFleet reads a campaign's frozen fleet by configuration, in cpe id
// order (the fleet order of the ACTIVATE parts).
func (s *Service) frozenFleet(ctx context.Context, campaign int64) (map[int64][]fleetRow, error) {
	rows, err := s.store.db.QueryContext(ctx, s.store.q(`SELECT config_id, cpe_id, serial, protocol FROM fcc_fleet WHERE campaign_id = ? ORDER BY config_id, cpe_id`), campaign)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64][]fleetRow{}
	for rows.Next() {
		var f fleetRow
		if err := rows.Scan(&f.config, &f.cpe, &f.serial, &f.protocol); err != nil {
			return nil, err
		}
		out[f.config] = append(out[f.config], f)
	}
	return out, rows.Err()
}
