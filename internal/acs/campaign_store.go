package acs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"cpesuite/internal/fcc/fccwire"
)

// Run states in acs_campaign_runs.
const (
	runReceiving = "receiving" // parts missing
	runRunning   = "running"
	runStopping  = "stopping" // STOP received, draining
	runStopped   = "stopped"  // STOP before the run started: never starts
	runFinished  = "finished"
)

// Measurement states in acs_campaign_measurements.
const (
	measRunning = "running"
	measDone    = "done"
)

// deviceInsertChunk bounds the rows of one multi-row INSERT (x 7 columns,
// far below SQLite's and PostgreSQL's placeholder limits).
const deviceInsertChunk = 200

// recordActivatePart stores one ACTIVATE part durably. It reports whether
// this part completed the run, which the caller then starts. A part held
// already changes nothing.
func (s *Store) recordActivatePart(ctx context.Context, m *fccwire.Activate, now time.Time) (start bool, err error) {
	head := *m
	head.Config.Groups = make([]fccwire.Group, len(m.Config.Groups))
	for i, g := range m.Config.Groups {
		g.Devices = nil
		head.Config.Groups[i] = g
	}
	headJSON, err := json.Marshal(&head)
	if err != nil {
		return false, err
	}
	now = now.UTC()
	err = s.db.InTx(ctx, func(tx *sql.Tx) error {
		var state string
		var hasHead bool
		err := s.txQueryRow(ctx, tx, s.q(`SELECT state, head IS NOT NULL FROM acs_campaign_runs WHERE activation_id = ?`), m.ActivationID).Scan(&state, &hasHead)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			state = runReceiving
			if _, err := s.txExec(ctx, tx, s.q(`INSERT INTO acs_campaign_runs (activation_id, fcc_test_id, command_id, test_type, parts, head, state, created_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?)`), m.ActivationID, m.FccTestID, m.CommandID, string(m.Type), m.Parts, string(headJSON), state, now); err != nil {
				return fmt.Errorf("campaign run: %w", err)
			}
		case err != nil:
			return err
		case !hasHead:
			// A STOP came first: keep the settings for inspection.
			if _, err := s.txExec(ctx, tx, s.q(`UPDATE acs_campaign_runs SET fcc_test_id = ?, command_id = ?, test_type = ?, parts = ?, head = ?
				WHERE activation_id = ?`), m.FccTestID, m.CommandID, string(m.Type), m.Parts, string(headJSON), m.ActivationID); err != nil {
				return err
			}
		}
		res, err := s.txExec(ctx, tx, s.q(`INSERT INTO acs_campaign_parts (activation_id, part, command_id, received_at) VALUES (?, ?, ?, ?)
			ON CONFLICT DO NOTHING`), m.ActivationID, m.Part, m.CommandID, now)
		if err != nil {
			return fmt.Errorf("campaign part: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // a re-delivery or re-send
		}
		if err := s.insertCampaignDevices(ctx, tx, m); err != nil {
			return err
		}
		if state != runReceiving {
			return nil
		}
		var held int
		if err := s.txQueryRow(ctx, tx, s.q(`SELECT COUNT(*) FROM acs_campaign_parts WHERE activation_id = ?`), m.ActivationID).Scan(&held); err != nil {
			return err
		}
		if held < m.Parts {
			return nil
		}
		start = true
		_, err = s.txExec(ctx, tx, s.q(`UPDATE acs_campaign_runs SET state = ?, started_at = ? WHERE activation_id = ?`), runRunning, now, m.ActivationID)
		return err
	})
	return start, err
}

func (s *Store) insertCampaignDevices(ctx context.Context, tx *sql.Tx, m *fccwire.Activate) error {
	type row struct {
		d      fccwire.Device
		config int64
		idx    int
	}
	var rows []row
	for _, g := range m.Config.Groups {
		for _, d := range g.Devices {
			rows = append(rows, row{d, g.ConfigID, len(rows)})
		}
	}
	for len(rows) > 0 {
		n := min(len(rows), deviceInsertChunk)
		var sb strings.Builder
		sb.WriteString(`INSERT INTO acs_campaign_devices (activation_id, cpe_id, serial, protocol, config_id, part, idx) VALUES `)
		args := make([]any, 0, n*7)
		for i, r := range rows[:n] {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("(?, ?, ?, ?, ?, ?, ?)")
			args = append(args, m.ActivationID, r.d.CpeID, r.d.Serial, string(r.d.Protocol), r.config, m.Part, r.idx)
		}
		sb.WriteString(" ON CONFLICT DO NOTHING")
		if _, err := s.txExec(ctx, tx, s.q(sb.String()), args...); err != nil {
			return fmt.Errorf("campaign devices: %w", err)
		}
		rows = rows[n:]
	}
	return nil
}

// recordStop stores a STOP. It reports whether a running run must now
// drain. A STOP of an unknown run is remembered so that its ACTIVATE, when
// it comes, is acknowledged but never started.
func (s *Store) recordStop(ctx context.Context, m *fccwire.Stop, now time.Time) (drain bool, err error) {
	now = now.UTC()
	err = s.db.InTx(ctx, func(tx *sql.Tx) error {
		var state string
		err := s.txQueryRow(ctx, tx, s.q(`SELECT state FROM acs_campaign_runs WHERE activation_id = ?`), m.ActivationID).Scan(&state)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			_, err := s.txExec(ctx, tx, s.q(`INSERT INTO acs_campaign_runs (activation_id, fcc_test_id, state, stop_command_id, stop_reason, stopped_at, created_at)
				VALUES (?, ?, ?, ?, ?, ?, ?)`), m.ActivationID, m.FccTestID, runStopped, m.CommandID, string(m.Reason), now, now)
			return err
		case err != nil:
			return err
		}
		next := ""
		switch state {
		case runReceiving:
			next = runStopped
		case runRunning:
			next, drain = runStopping, true
		default:
			return nil // stopping, stopped or finished already
		}
		_, err = s.txExec(ctx, tx, s.q(`UPDATE acs_campaign_runs SET state = ?, stop_command_id = ?, stop_reason = ?, stopped_at = ? WHERE activation_id = ?`),
			next, m.CommandID, string(m.Reason), now, m.ActivationID)
		return err
	})
	return drain, err
}

// campaignRunRow is a run as stored.
type campaignRunRow struct {
	head      fccwire.Activate
	state     string
	stoppedAt *time.Time
}

func (s *Store) campaignRun(ctx context.Context, id int64) (campaignRunRow, error) {
	var r campaignRunRow
	var head sql.NullString
	var stopped sql.NullTime
	err := s.queryRow(ctx, s.q(`SELECT head, state, stopped_at FROM acs_campaign_runs WHERE activation_id = ?`), id).Scan(&head, &r.state, &stopped)
	if err != nil {
		return r, err
	}
	if !head.Valid {
		return r, fmt.Errorf("campaign run %d has no settings", id)
	}
	if err := json.Unmarshal([]byte(head.String), &r.head); err != nil {
		return r, fmt.Errorf("campaign run %d settings: %w", id, err)
	}
	r.stoppedAt = nullTime(stopped)
	return r, nil
}

// unfinishedRuns lists the runs a (re)started executor must drive.
func (s *Store) unfinishedRuns(ctx context.Context) ([]int64, error) {
	rows, err := s.query(ctx, s.q(`SELECT activation_id FROM acs_campaign_runs WHERE state IN (?, ?) ORDER BY activation_id`), runRunning, runStopping)
	if err != nil {
		return nil, err
	}
	return scanIDs(rows)
}

// campaignDevice is one fleet row of a run with its progress.
type campaignDevice struct {
	CpeID    int64
	Serial   string
	Protocol fccwire.Protocol
	ConfigID int64
	State    fccwire.DeviceStateValue // "" before QUEUED
	Reason   fccwire.DeviceReason
	Seq      int64
}

func (d *campaignDevice) terminal() bool {
	return d.State == fccwire.DeviceDone || d.State == fccwire.DeviceFailed || d.State == fccwire.DeviceSkipped
}

func (s *Store) campaignDevices(ctx context.Context, id int64) ([]*campaignDevice, error) {
	rows, err := s.query(ctx, s.q(`SELECT cpe_id, serial, protocol, config_id, state, reason, seq FROM acs_campaign_devices
		WHERE activation_id = ? ORDER BY part, idx`), id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*campaignDevice
	for rows.Next() {
		d := &campaignDevice{}
		if err := rows.Scan(&d.CpeID, &d.Serial, &d.Protocol, &d.ConfigID, &d.State, &d.Reason, &d.Seq); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// measKey names one measurement: the result's natural key by cpe id.
type measKey struct {
	ActivationID int64
	CpeID        int64
	Direction    fccwire.Direction
	Iteration    int
}

// measurement is a measurement's stored progress.
type measurement struct {
	State         string
	Attempts      int
	Failures      int   // failed diagnostics, against failedTestRetries
	TransactionID int64 // 0: none in flight
	StartedAt     time.Time
	Status        fccwire.Outcome
}

func (s *Store) campaignMeasurements(ctx context.Context, id int64) (map[measKey]*measurement, error) {
	rows, err := s.query(ctx, s.q(`SELECT cpe_id, direction, iteration, state, attempts, failures, transaction_id, started_at, status
		FROM acs_campaign_measurements WHERE activation_id = ?`), id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[measKey]*measurement{}
	for rows.Next() {
		k := measKey{ActivationID: id}
		m := &measurement{}
		var txn sql.NullInt64
		if err := rows.Scan(&k.CpeID, &k.Direction, &k.Iteration, &m.State, &m.Attempts, &m.Failures, &txn, &m.StartedAt, &m.Status); err != nil {
			return nil, err
		}
		m.TransactionID = txn.Int64
		m.StartedAt = m.StartedAt.UTC()
		out[k] = m
	}
	return out, rows.Err()
}

// beginMeasurement records that a measurement started (once).
func (s *Store) beginMeasurement(ctx context.Context, k measKey, at time.Time) error {
	_, err := s.exec(ctx, s.q(`INSERT INTO acs_campaign_measurements (activation_id, cpe_id, direction, iteration, state, started_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`), k.ActivationID, k.CpeID, string(k.Direction), k.Iteration, measRunning, at.UTC())
	return err
}

// setMeasurementAttempts records tries that enqueued nothing (a busy WAN).
func (s *Store) setMeasurementAttempts(ctx context.Context, k measKey, attempts int) error {
	_, err := s.exec(ctx, s.q(`UPDATE acs_campaign_measurements SET attempts = ? WHERE activation_id = ? AND cpe_id = ? AND direction = ? AND iteration = ?`),
		attempts, k.ActivationID, k.CpeID, string(k.Direction), k.Iteration)
	return err
}

// enqueueMeasurement enqueues a measurement's diagnostic and records its
// transaction in the same commit: a restarted executor then waits on that
// transaction instead of measuring again.
func (s *Store) enqueueMeasurement(ctx context.Context, k measKey, attempts, failures int, label string, task NewTask) (Transaction, error) {
	var txn Transaction
	err := s.db.InTx(ctx, func(tx *sql.Tx) (err error) {
		if txn, err = s.enqueueTx(ctx, tx, label, []NewTask{task}); err != nil {
			return err
		}
		_, err = s.txExec(ctx, tx, s.q(`UPDATE acs_campaign_measurements SET attempts = ?, failures = ?, transaction_id = ?
			WHERE activation_id = ? AND cpe_id = ? AND direction = ? AND iteration = ?`),
			attempts, failures, txn.ID, k.ActivationID, k.CpeID, string(k.Direction), k.Iteration)
		return err
	})
	return txn, err
}

// finishMeasurement records the result and queues it for publishing, in
// one commit.
func (s *Store) finishMeasurement(ctx context.Context, k measKey, r *fccwire.Result, payload []byte) error {
	return s.db.InTx(ctx, func(tx *sql.Tx) error {
		res, err := s.txExec(ctx, tx, s.q(`UPDATE acs_campaign_measurements SET state = ?, attempts = ?, status = ?, natural_key = ?, finished_at = ?, transaction_id = NULL
			WHERE activation_id = ? AND cpe_id = ? AND direction = ? AND iteration = ? AND state = ?`),
			measDone, r.Attempts, string(r.Status), r.NaturalKey(), r.FinishedAt.Time, k.ActivationID, k.CpeID, string(k.Direction), k.Iteration, measRunning)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("measurement %+v is not running", k)
		}
		return s.queueOutbox(ctx, tx, k.ActivationID, fccwire.QueueResults, r.NaturalKey(), payload)
	})
}

func (s *Store) queueOutbox(ctx context.Context, tx *sql.Tx, activationID int64, queue, msgID string, payload []byte) error {
	_, err := s.txExec(ctx, tx, s.q(`INSERT INTO acs_campaign_outbox (activation_id, queue, msg_id, payload, created_at) VALUES (?, ?, ?, ?, ?)`),
		activationID, queue, msgID, string(payload), time.Now().UTC())
	return err
}

// setDeviceState moves a device to state and queues the DEVICE_STATE
// with the next seq, in one commit.
func (s *Store) setDeviceState(ctx context.Context, activationID int64, d *campaignDevice, state fccwire.DeviceStateValue, reason fccwire.DeviceReason, msg string) error {
	return s.db.InTx(ctx, func(tx *sql.Tx) error {
		return s.setDeviceStateTx(ctx, tx, activationID, d, state, reason, msg)
	})
}

// statesPerCommit bounds the device states setDeviceStates writes in one
// transaction (a write lock held for a few milliseconds at most).
const statesPerCommit = 200

// deviceChange is one device's move for setDeviceStates.
type deviceChange struct {
	d      *campaignDevice
	state  fccwire.DeviceStateValue
	reason fccwire.DeviceReason
}

// setDeviceStates is setDeviceState for many devices, statesPerCommit per
// commit, in order. A run's first states (QUEUED or SKIPPED for the whole
// fleet) were one commit per device: 10,000 commits before the first
// diagnostic of a 10,000-device run.
func (s *Store) setDeviceStates(ctx context.Context, activationID int64, changes []deviceChange) error {
	for len(changes) > 0 {
		n := min(len(changes), statesPerCommit)
		err := s.db.InTx(ctx, func(tx *sql.Tx) error {
			for _, c := range changes[:n] {
				if err := s.setDeviceStateTx(ctx, tx, activationID, c.d, c.state, c.reason, ""); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		changes = changes[n:]
	}
	return nil
}

func (s *Store) setDeviceStateTx(ctx context.Context, tx *sql.Tx, activationID int64, d *campaignDevice, state fccwire.DeviceStateValue, reason fccwire.DeviceReason, msg string) error {
	seq := d.Seq + 1
	b, err := fccwire.Encode(&fccwire.DeviceState{ActivationID: activationID, CpeID: d.CpeID, Serial: d.Serial, State: state,
		Reason: reason, Message: clip(msg, 1024), Seq: seq, At: fccwire.At(time.Now())})
	if err != nil {
		return err
	}
	if _, err := s.txExec(ctx, tx, s.q(`UPDATE acs_campaign_devices SET state = ?, reason = ?, seq = ? WHERE activation_id = ? AND cpe_id = ?`),
		string(state), string(reason), seq, activationID, d.CpeID); err != nil {
		return err
	}
	if err := s.queueOutbox(ctx, tx, activationID, fccwire.QueueDeviceState, "", b); err != nil {
		return err
	}
	d.State, d.Reason, d.Seq = state, reason, seq
	return nil
}

// finishRun ends a run: devices still open get FAILED with reason, the
// ACTIVATION_FINISHED is queued after them, the run is kept as finished.
func (s *Store) finishRun(ctx context.Context, head *fccwire.Activate, devices []*campaignDevice, reason fccwire.FinishReason, failWith fccwire.DeviceReason) error {
	return s.db.InTx(ctx, func(tx *sql.Tx) error {
		var state string
		if err := s.txQueryRow(ctx, tx, s.q(`SELECT state FROM acs_campaign_runs WHERE activation_id = ?`), head.ActivationID).Scan(&state); err != nil {
			return err
		}
		if state == runFinished {
			return nil
		}
		f := fccwire.ActivationFinished{ActivationID: head.ActivationID, FccTestID: head.FccTestID, Reason: reason,
			FinishedAt: fccwire.At(time.Now()), Devices: int64(len(devices))}
		for _, d := range devices {
			if !d.terminal() {
				if err := s.setDeviceStateTx(ctx, tx, head.ActivationID, d, fccwire.DeviceFailed, failWith, ""); err != nil {
					return err
				}
			}
			switch d.State {
			case fccwire.DeviceDone:
				f.Done++
			case fccwire.DeviceFailed:
				f.Failed++
			case fccwire.DeviceSkipped:
				f.Skipped++
			}
		}
		if err := s.txQueryRow(ctx, tx, s.q(`SELECT COUNT(*) FROM acs_campaign_measurements WHERE activation_id = ? AND state = ?`),
			head.ActivationID, measDone).Scan(&f.ResultsSent); err != nil {
			return err
		}
		b, err := fccwire.Encode(&f)
		if err != nil {
			return err
		}
		if err := s.queueOutbox(ctx, tx, head.ActivationID, fccwire.QueueActivationFinished, "", b); err != nil {
			return err
		}
		_, err = s.txExec(ctx, tx, s.q(`UPDATE acs_campaign_runs SET state = ?, finish_reason = ?, finished_at = ? WHERE activation_id = ?`),
			runFinished, string(reason), f.FinishedAt.Time, head.ActivationID)
		return err
	})
}

// outboxRow is a message waiting to be published.
type outboxRow struct {
	ID      int64
	Queue   string
	MsgID   string
	Payload []byte
}

func (s *Store) nextOutbox(ctx context.Context, limit int) ([]outboxRow, error) {
	rows, err := s.query(ctx, s.q(`SELECT id, queue, msg_id, payload FROM acs_campaign_outbox ORDER BY id LIMIT ?`), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []outboxRow
	for rows.Next() {
		var r outboxRow
		var p string
		if err := rows.Scan(&r.ID, &r.Queue, &r.MsgID, &p); err != nil {
			return nil, err
		}
		r.Payload = []byte(p)
		out = append(out, r)
	}
	return out, rows.Err()
}

func (s *Store) deleteOutbox(ctx context.Context, upTo int64) error {
	_, err := s.exec(ctx, s.q(`DELETE FROM acs_campaign_outbox WHERE id <= ?`), upTo)
	return err
}
