package fcc

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/grid"
	"cpesuite/internal/platform/service"
)

// consumerAckWait is how long a consumer may hold a grid message before
// the grid hands it out again: far above one database write.
const consumerAckWait = 30 * time.Second

// consumerFetchWait bounds one pull; an idle consumer re-pulls this often.
const consumerFetchWait = time.Second

// retryDelay is how long a message whose database write failed waits
// before it is delivered again.
const retryDelay = time.Second

// consumer returns the loop that reads one queue of ACS messages. A
// message is acknowledged to the grid only after its database write, so a
// crash re-delivers it (every handler is idempotent); one that does not
// decode can never succeed and is dropped (Term) after a log line.
func (s *Service) consumer(q *grid.Queue, kind fccwire.Kind) service.Service {
	return service.Funcs{RunFn: func(ctx context.Context) error {
		for ctx.Err() == nil {
			ds, err := q.Fetch(ctx, s.cfg.Runs.ConsumerBatchSize, consumerFetchWait)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				s.log.Warn("fcc: fetching from the grid", "queue", q.Name(), "err", err)
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(retryDelay):
				}
				continue
			}
			for _, d := range ds {
				s.consume(ctx, d, kind)
			}
		}
		return nil
	}}
}

func (s *Service) consume(ctx context.Context, d *grid.Delivery, kind fccwire.Kind) {
	m, err := fccwire.Decode(kind, d.Data)
	if err != nil {
		s.log.Error("fcc: dropping a message that does not decode", "kind", kind, "seq", d.Seq, "err", err)
		if err := d.Term(); err != nil {
			s.log.Warn("fcc: terminating a message", "seq", d.Seq, "err", err)
		}
		return
	}
	switch m := m.(type) {
	case *fccwire.CommandAck:
		err = s.handleAck(ctx, m)
	case *fccwire.DeviceState:
		err = s.handleDeviceState(ctx, m)
	case *fccwire.ActivationFinished:
		err = s.handleFinished(ctx, m)
	}
	if err != nil {
		s.log.Error("fcc: handling a message", "kind", kind, "seq", d.Seq, "err", err)
		if err := d.Nak(retryDelay); err != nil {
			s.log.Warn("fcc: handing a message back", "seq", d.Seq, "err", err)
		}
		return
	}
	if err := d.Ack(ctx); err != nil {
		s.log.Warn("fcc: acknowledging a message", "seq", d.Seq, "err", err)
	}
}

// handleAck records the first ack of a command (later ones are ignored).
// ACCEPTED for every part makes the run RUNNING, unless it came later than
// the activation delay after the window start: then the run FAILS with
// ACS_UNAVAILABLE and a STOP is sent defensively. REJECTED fails the run
// with the ACS's reason and puts the campaign in ERROR.
func (s *Service) handleAck(ctx context.Context, a *fccwire.CommandAck) error {
	part := a.Part
	if part == 0 {
		part = 1
	}
	return s.store.db.InTx(ctx, func(tx *sql.Tx) error {
		now := s.now()
		var id, runID int64
		var command string
		err := tx.QueryRowContext(ctx, s.store.q(`SELECT id, run_id, command FROM fcc_outbox WHERE command_id = ? AND part = ?`), a.CommandID, part).
			Scan(&id, &runID, &command)
		if errors.Is(err, sql.ErrNoRows) || err == nil && (runID != a.ActivationID || command != string(a.Command)) {
			s.log.Warn("fcc: ack of an unknown command ignored", "commandId", a.CommandID, "part", part, "activationId", a.ActivationID)
			return nil
		}
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, s.store.q(`UPDATE fcc_outbox SET acked_at = ?, ack_status = ?, updated_at = ? WHERE id = ? AND acked_at IS NULL`),
			now, string(a.Status), now, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 || command != commandActivate {
			return nil // a duplicate, or the ack of a STOP
		}
		if a.Status == fccwire.Rejected {
			_, err := s.moveRun(ctx, tx, runID, []string{RunPlanned, RunDispatching}, RunFailed, string(a.Reason))
			return err
		}
		r, err := s.loadRun(ctx, tx, runID)
		if err != nil {
			return err
		}
		if r.State != RunPlanned && r.State != RunDispatching {
			return nil
		}
		if now.After(r.WindowStart.Add(s.cfg.TimeScale.Duration(s.cfg.Runs.ActivationMaxDelay))) {
			_, err := s.failRun(ctx, tx, runID, "ACS_UNAVAILABLE", fccwire.StopACSUnavailable)
			return err
		}
		var parts, accepted int
		if err := tx.QueryRowContext(ctx, s.store.q(`SELECT MAX(parts), COUNT(CASE WHEN ack_status = ? THEN 1 END) FROM fcc_outbox WHERE run_id = ? AND command = ?`),
			string(fccwire.Accepted), runID, commandActivate).Scan(&parts, &accepted); err != nil {
			return err
		}
		if accepted >= parts {
			_, err := s.moveRun(ctx, tx, runID, []string{RunPlanned, RunDispatching}, RunRunning, "")
			return err
		}
		return nil
	})
}

// handleDeviceState keeps the newest state of each device of a run (a
// lower seq never overwrites a higher one) and the run's in-flight count
// (its devices in RUNNING). A STOPPING run whose count reaches 0 is
// STOPPED: the ACS has drained it.
func (s *Service) handleDeviceState(ctx context.Context, m *fccwire.DeviceState) error {
	return s.store.db.InTx(ctx, func(tx *sql.Tx) error {
		r, err := s.loadRun(ctx, tx, m.ActivationID)
		if err != nil {
			if errors.Is(err, apperr.ErrNotFound) {
				s.log.Warn("fcc: device state of an unknown run ignored", "activationId", m.ActivationID)
				return nil
			}
			return err
		}
		res, err := tx.ExecContext(ctx, s.store.q(`INSERT INTO fcc_run_devices (run_id, cpe_id, serial, state, reason, seq, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (run_id, cpe_id) DO UPDATE SET serial = excluded.serial, state = excluded.state, reason = excluded.reason,
			seq = excluded.seq, updated_at = excluded.updated_at WHERE fcc_run_devices.seq < excluded.seq`),
			r.ID, m.CpeID, m.Serial, string(m.State), nullString(string(m.Reason)), m.Seq, s.now())
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // older than what is stored
		}
		var inFlight int64
		if err := tx.QueryRowContext(ctx, s.store.q(`SELECT COUNT(*) FROM fcc_run_devices WHERE run_id = ? AND state = ?`), r.ID, string(fccwire.DeviceRunning)).Scan(&inFlight); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.store.q(`UPDATE fcc_runs SET in_flight = ? WHERE id = ?`), inFlight, r.ID); err != nil {
			return err
		}
		if r.State == RunStopping && inFlight == 0 {
			_, err := s.moveRun(ctx, tx, r.ID, []string{RunStopping}, RunStopped, ReasonDrained)
			return err
		}
		return nil
	})
}

// handleFinished closes a RUNNING or STOPPING run as the ACS reports:
// FINISHED (COMPLETED, WINDOW_CLOSED) or STOPPED; the campaign then moves
// on (afterRunClosed). A run in another state is left alone (a duplicate).
func (s *Service) handleFinished(ctx context.Context, m *fccwire.ActivationFinished) error {
	to := RunFinished
	if m.Reason == fccwire.FinishStopped {
		to = RunStopped
	}
	return s.store.db.InTx(ctx, func(tx *sql.Tx) error {
		_, err := s.moveRun(ctx, tx, m.ActivationID, []string{RunRunning, RunStopping}, to, string(m.Reason))
		return err
	})
}
