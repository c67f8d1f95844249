package fcc

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/platform/sqlstore"
)

// outboxRow is one fcc_outbox row as the dispatcher needs it.
type outboxRow struct {
	ID        int64
	RunID     int64
	Command   string
	CommandID string
	Part      int
	Payload   []byte
	Attempts  int
}

const outboxColumns = `id, run_id, command, COALESCE(command_id, ''), part, payload, attempts`

func scanOutbox(rows *sql.Rows) ([]outboxRow, error) {
	defer rows.Close()
	var out []outboxRow
	for rows.Next() {
		var r outboxRow
		var payload string
		if err := rows.Scan(&r.ID, &r.RunID, &r.Command, &r.CommandID, &r.Part, &payload, &r.Attempts); err != nil {
			return nil, err
		}
		r.Payload = []byte(payload)
		out = append(out, r)
	}
	return out, rows.Err()
}

// claimPending leases up to limit PENDING rows to this dispatcher. On
// PostgreSQL the rows are locked with SKIP LOCKED, so two dispatchers
// never claim one row; on SQLite the claim is one conditional UPDATE
// inside the database's single write lock.
func (s *Service) claimPending(ctx context.Context, limit int) ([]outboxRow, error) {
	now := s.now()
	until := now.Add(outboxLease)
	owner := s.runs.owner
	var claimed []outboxRow
	err := s.store.db.InTx(ctx, func(tx *sql.Tx) error {
		var ids []any
		if s.store.db.Dialect() == sqlstore.Postgres {
			rows, err := tx.QueryContext(ctx, s.store.q(`SELECT id FROM fcc_outbox WHERE state = ? AND (lease_until IS NULL OR lease_until < ?)
				ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`), OutboxPending, now, limit)
			if err != nil {
				return err
			}
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id); err != nil {
					rows.Close()
					return err
				}
				ids = append(ids, id)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if len(ids) == 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, s.store.q(`UPDATE fcc_outbox SET lease_owner = ?, lease_until = ? WHERE id IN (`+placeholders(len(ids))+`)`),
				append([]any{owner, until}, ids...)...); err != nil {
				return err
			}
		} else {
			if _, err := tx.ExecContext(ctx, s.store.q(`UPDATE fcc_outbox SET lease_owner = ?, lease_until = ? WHERE id IN (
				SELECT id FROM fcc_outbox WHERE state = ? AND (lease_until IS NULL OR lease_until < ?) ORDER BY id LIMIT ?)`),
				owner, until, OutboxPending, now, limit); err != nil {
				return err
			}
		}
		rows, err := tx.QueryContext(ctx, s.store.q(`SELECT `+outboxColumns+` FROM fcc_outbox WHERE state = ? AND lease_owner = ? ORDER BY id`),
			OutboxPending, owner)
		if err != nil {
			return err
		}
		claimed, err = scanOutbox(rows)
		return err
	})
	return claimed, err
}

// dispatchOnce offers one batch of PENDING rows to the command queue.
// Accepted rows become SENT and their run DISPATCHING. A failed publish
// counts as an attempt and ends the tick (the grid is most likely down;
// the rest of the batch would only burn attempts); a row that reaches the
// attempt limit this way is ABANDONED.
func (s *Service) dispatchOnce(ctx context.Context) (int, error) {
	rows, err := s.claimPending(ctx, s.cfg.Runs.OutboxBatchSize)
	if err != nil {
		return 0, fmt.Errorf("dispatcher: claiming rows: %w", err)
	}
	sent := 0
	for i, r := range rows {
		pctx, cancel := context.WithTimeout(ctx, publishTimeout)
		perr := s.runs.commands.Publish(pctx, r.Payload, fccwire.CommandMsgID(r.CommandID, r.Part, r.Attempts+1))
		cancel()
		if perr != nil {
			s.log.Warn("dispatcher: publish failed", "outbox", r.ID, "run", r.RunID, "err", perr)
			if err := s.publishFailed(ctx, r); err != nil {
				return sent, err
			}
			for _, rest := range rows[i+1:] {
				s.releaseLease(ctx, rest.ID)
			}
			return sent, nil
		}
		if err := s.markSent(ctx, r); err != nil {
			return sent, err
		}
		sent++
	}
	return sent, nil
}

func (s *Service) releaseLease(ctx context.Context, id int64) {
	if _, err := s.store.db.ExecContext(ctx, s.store.q(`UPDATE fcc_outbox SET lease_owner = NULL, lease_until = NULL WHERE id = ? AND lease_owner = ?`), id, s.runs.owner); err != nil {
		s.log.Warn("dispatcher: releasing a lease", "outbox", id, "err", err)
	}
}

func (s *Service) markSent(ctx context.Context, r outboxRow) error {
	return s.store.db.InTx(ctx, func(tx *sql.Tx) error {
		now := s.now()
		res, err := tx.ExecContext(ctx, s.store.q(`UPDATE fcc_outbox SET state = ?, attempts = attempts + 1, last_sent_at = ?, lease_owner = NULL, lease_until = NULL, updated_at = ?
			WHERE id = ? AND state = ? AND lease_owner = ?`), OutboxSent, now, now, r.ID, OutboxPending, s.runs.owner)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			// The row was cancelled while it was being published (a stop
			// request or an expiry): the ACS may now hold an ACTIVATE of a
			// run that is over, so it gets a STOP unless one is queued.
			if r.Command == commandActivate {
				return s.defensiveStop(ctx, tx, r.RunID)
			}
			return nil
		}
		if s.runs != nil {
			s.runs.sent.Inc()
		}
		if r.Command == commandActivate {
			if _, err := s.moveRun(ctx, tx, r.RunID, []string{RunPlanned}, RunDispatching, ""); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Service) defensiveStop(ctx context.Context, tx *sql.Tx, runID int64) error {
	var stops int
	if err := tx.QueryRowContext(ctx, s.store.q(`SELECT COUNT(*) FROM fcc_outbox WHERE run_id = ? AND command = ?`), runID, commandStop).Scan(&stops); err != nil {
		return err
	}
	if stops > 0 {
		return nil
	}
	r, err := s.loadRun(ctx, tx, runID)
	if err != nil {
		return err
	}
	reason := fccwire.StopRequested
	if r.State == RunFailed {
		reason = fccwire.StopActivationExpired
	}
	_, err = s.enqueueStop(ctx, tx, r, reason, "the ACTIVATE was sent while the run was being closed")
	return err
}

func (s *Service) publishFailed(ctx context.Context, r outboxRow) error {
	var attempts int
	err := s.store.db.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.store.q(`UPDATE fcc_outbox SET attempts = attempts + 1, lease_owner = NULL, lease_until = NULL, updated_at = ?
			WHERE id = ? AND lease_owner = ?`), s.now(), r.ID, s.runs.owner); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, s.store.q(`SELECT attempts FROM fcc_outbox WHERE id = ?`), r.ID).Scan(&attempts)
	})
	if err != nil {
		return err
	}
	if attempts >= s.cfg.Runs.OutboxMaxAttempts {
		return s.abandon(ctx, r.ID, attempts)
	}
	return nil
}

// abandon gives a row up at the attempt limit. For an ACTIVATE part whose
// run is still PLANNED or DISPATCHING the run FAILS with a reason naming
// the row, the campaign goes to ERROR and a STOP (OUTBOX_ABANDONED) is
// queued; a run that already moved on is left alone.
func (s *Service) abandon(ctx context.Context, id int64, attempts int) error {
	return s.store.db.InTx(ctx, func(tx *sql.Tx) error {
		why := fmt.Sprintf("outbox row %d abandoned after %d attempts", id, attempts)
		res, err := tx.ExecContext(ctx, s.store.q(`UPDATE fcc_outbox SET state = ?, abandon_reason = ?, lease_owner = NULL, lease_until = NULL, updated_at = ?
			WHERE id = ? AND state IN (?, ?)`), OutboxAbandoned, why, s.now(), id, OutboxPending, OutboxSent)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		if s.runs != nil {
			s.runs.abandoned.Inc()
		}
		s.log.Warn("outbox row abandoned", "outbox", id, "attempts", attempts)
		var runID int64
		var command string
		if err := tx.QueryRowContext(ctx, s.store.q(`SELECT run_id, command FROM fcc_outbox WHERE id = ?`), id).Scan(&runID, &command); err != nil {
			return err
		}
		if command != commandActivate {
			return nil
		}
		_, err = s.failRun(ctx, tx, runID, why, fccwire.StopOutboxAbandoned)
		return err
	})
}

// ackTimeoutOnce re-sends SENT rows that got no ack within the ack
// time-out (the stored bytes, unchanged; the message id names the
// attempt), abandons rows at the attempt limit, and fails runs whose
// window start is older than the activation delay while still PLANNED or
// DISPATCHING.
func (s *Service) ackTimeoutOnce(ctx context.Context) (int, error) {
	now := s.now()
	cfg := s.cfg.Runs
	cutoff := now.Add(-s.cfg.TimeScale.Duration(cfg.CommandAckTimeout))
	rows, err := s.store.db.QueryContext(ctx, s.store.q(`SELECT `+outboxColumns+` FROM fcc_outbox
		WHERE state = ? AND acked_at IS NULL AND last_sent_at < ? ORDER BY id LIMIT ?`), OutboxSent, cutoff, cfg.OutboxBatchSize)
	if err != nil {
		return 0, err
	}
	due, err := scanOutbox(rows)
	if err != nil {
		return 0, err
	}
	acted := 0
	for _, r := range due {
		if r.Attempts >= cfg.OutboxMaxAttempts {
			if err := s.abandon(ctx, r.ID, r.Attempts); err != nil {
				return acted, err
			}
			acted++
			continue
		}
		// Claim the re-send first: of two pollers only one bumps the
		// attempt, so a row is never re-sent twice for one time-out.
		res, err := s.store.db.ExecContext(ctx, s.store.q(`UPDATE fcc_outbox SET attempts = attempts + 1, last_sent_at = ?, updated_at = ?
			WHERE id = ? AND attempts = ? AND state = ? AND acked_at IS NULL`), now, now, r.ID, r.Attempts, OutboxSent)
		if err != nil {
			return acted, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, publishTimeout)
		perr := s.runs.commands.Publish(pctx, r.Payload, fccwire.CommandMsgID(r.CommandID, r.Part, r.Attempts+1))
		cancel()
		if perr != nil {
			// Counted as an attempt; the next time-out tries again.
			s.log.Warn("ack poller: re-send failed", "outbox", r.ID, "attempt", r.Attempts+1, "err", perr)
			continue
		}
		s.runs.resent.Inc()
		s.log.Info("command re-sent after the ack time-out", "outbox", r.ID, "run", r.RunID, "attempt", r.Attempts+1)
		acted++
	}
	// PENDING rows that reached the limit through failed publishes.
	prow, err := s.store.db.QueryContext(ctx, s.store.q(`SELECT id, attempts FROM fcc_outbox WHERE state = ? AND attempts >= ? ORDER BY id LIMIT ?`),
		OutboxPending, cfg.OutboxMaxAttempts, cfg.OutboxBatchSize)
	if err != nil {
		return acted, err
	}
	type idAttempts struct{ id, attempts int64 }
	var stale []idAttempts
	for prow.Next() {
		var v idAttempts
		if err := prow.Scan(&v.id, &v.attempts); err != nil {
			prow.Close()
			return acted, err
		}
		stale = append(stale, v)
	}
	prow.Close()
	for _, v := range stale {
		if err := s.abandon(ctx, v.id, int(v.attempts)); err != nil {
			return acted, err
		}
		acted++
	}
	n, err := s.expireRuns(ctx, now)
	return acted + n, err
}

// expireRuns fails runs still PLANNED or DISPATCHING whose window start is
// older than the activation delay, whatever their outbox rows say.
func (s *Service) expireRuns(ctx context.Context, now time.Time) (int, error) {
	cutoff := now.Add(-s.cfg.TimeScale.Duration(s.cfg.Runs.ActivationMaxDelay))
	rows, err := s.store.db.QueryContext(ctx, s.store.q(`SELECT id FROM fcc_runs WHERE state IN (?, ?) AND window_start_at < ? ORDER BY id LIMIT ?`),
		RunPlanned, RunDispatching, cutoff, s.cfg.Runs.OutboxBatchSize)
	if err != nil {
		return 0, err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	return s.moveEach(ctx, ids, func(tx *sql.Tx, _ int, id int64) (bool, error) {
		return s.failRun(ctx, tx, id, "ACTIVATION_EXPIRED: window start older than svc.fcc.activation-max-delay", fccwire.StopActivationExpired)
	})
}

// moveEach applies move to each run in a transaction of its own (one
// run's failure leaves the others' moves committed) and counts the runs
// that moved.
func (s *Service) moveEach(ctx context.Context, ids []int64, move func(tx *sql.Tx, i int, id int64) (bool, error)) (int, error) {
	n := 0
	for i, id := range ids {
		err := s.store.db.InTx(ctx, func(tx *sql.Tx) error {
			moved, err := move(tx, i, id)
			if moved {
				n++
			}
			return err
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
