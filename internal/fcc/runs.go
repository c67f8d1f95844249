package fcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"cpesuite/internal/fcc/fccwire"
)

// Run states (the spec's names).
const (
	RunPlanned     = "PLANNED"
	RunDispatching = "DISPATCHING"
	RunRunning     = "RUNNING"
	RunStopping    = "STOPPING"
	RunStopped     = "STOPPED"
	RunFinished    = "FINISHED"
	RunFailed      = "FAILED"
)

// Outbox row states and commands.
const (
	OutboxPending   = "PENDING"
	OutboxSent      = "SENT"
	OutboxAbandoned = "ABANDONED"

	commandActivate = string(fccwire.KindActivate)
	commandStop     = string(fccwire.KindStop)
)

// Run reasons the service writes itself; the ACS's reasons (COMPLETED,
// WINDOW_CLOSED, STOPPED, INVALID_CONFIG, ...) are stored as they come.
const (
	ReasonWatchdog      = "WATCHDOG"
	ReasonForcedStop    = "FORCED"
	ReasonDrained       = "DRAINED"
	ReasonStopRequested = "STOP_REQUESTED"
)

// openRunStates are the states of a run that is not over.
var openRunStates = []string{RunPlanned, RunDispatching, RunRunning, RunStopping}

// run is one fcc_runs row as the engine needs it.
type run struct {
	ID           int64
	CampaignID   int64
	RunNumber    int
	State        string
	WindowStart  time.Time
	WindowEnd    sql.NullTime
	StoppedAt    sql.NullTime
	StopGraceSec int64
}

const runColumns = `id, campaign_id, run_number, state, window_start_at, window_end_at, stopped_at, stop_grace_sec`

func scanRun(sc interface{ Scan(...any) error }) (run, error) {
	var r run
	err := sc.Scan(&r.ID, &r.CampaignID, &r.RunNumber, &r.State, &r.WindowStart, &r.WindowEnd, &r.StoppedAt, &r.StopGraceSec)
	r.WindowStart = r.WindowStart.UTC()
	return r, err
}

func (s *Service) loadRun(ctx context.Context, q querier, id int64) (run, error) {
	r, err := scanRun(q.QueryRowContext(ctx, s.store.q(`SELECT `+runColumns+` FROM fcc_runs WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, notFound("run %d not found", id)
	}
	return r, err
}

func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }

func strsAsAny(v []string) []any {
	out := make([]any, len(v))
	for i, s := range v {
		out[i] = s
	}
	return out
}

// moveRun changes a run's state when it is in one of from, and applies
// what follows from the new state: a closed run (FINISHED, STOPPED) moves
// its campaign on, a FAILED one puts the campaign in ERROR and cancels the
// run's unsent ACTIVATE parts. It reports whether the run moved; a run in
// another state is left alone, which is what makes duplicates and races
// harmless.
func (s *Service) moveRun(ctx context.Context, tx *sql.Tx, runID int64, from []string, to, reason string) (bool, error) {
	now := s.now()
	set := `state = ?, reason = ?, updated_at = ?`
	args := []any{to, nullString(reason), now}
	switch to {
	case RunRunning:
		set += `, acked_at = ?, started_at = ?`
		args = append(args, now, now)
	case RunStopping:
		set += `, stopped_at = ?`
		args = append(args, now)
	case RunStopped:
		set += `, stopped_at = COALESCE(stopped_at, ?), finished_at = ?`
		args = append(args, now, now)
	case RunFinished, RunFailed:
		set += `, finished_at = ?`
		args = append(args, now)
	}
	args = append(append(args, runID), strsAsAny(from)...)
	res, err := tx.ExecContext(ctx, s.store.q(`UPDATE fcc_runs SET `+set+` WHERE id = ? AND state IN (`+placeholders(len(from))+`)`), args...)
	if err != nil {
		return false, fmt.Errorf("moving run %d to %s: %w", runID, to, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	s.runs.transition(to)
	s.log.Info("run state", "run", runID, "state", to, "reason", reason)
	switch to {
	case RunFinished, RunStopped:
		return true, s.afterRunClosed(ctx, tx, runID)
	case RunFailed:
		if err := s.cancelActivateRows(ctx, tx, runID, "run failed: "+reason); err != nil {
			return true, err
		}
		r, err := s.loadRun(ctx, tx, runID)
		if err != nil {
			return true, err
		}
		_, err = tx.ExecContext(ctx, s.store.q(`UPDATE fcc_campaigns SET state = ?, next_run_at = NULL, next_run_number = NULL, updated_at = ? WHERE id = ?`),
			StateError, now, r.CampaignID)
		return true, err
	}
	return true, nil
}

// failRun fails a run still PLANNED or DISPATCHING and, when stop is set,
// publishes a STOP through the outbox.
func (s *Service) failRun(ctx context.Context, tx *sql.Tx, runID int64, reason string, stop fccwire.StopReason) (bool, error) {
	moved, err := s.moveRun(ctx, tx, runID, []string{RunPlanned, RunDispatching}, RunFailed, reason)
	if err != nil || !moved || stop == "" {
		return moved, err
	}
	r, err := s.loadRun(ctx, tx, runID)
	if err != nil {
		return moved, err
	}
	_, err = s.enqueueStop(ctx, tx, r, stop, reason)
	return moved, err
}

// cancelActivateRows abandons the ACTIVATE parts of a run that have not
// been acknowledged, so that nothing re-sends a command of a run that is
// over or stopping.
func (s *Service) cancelActivateRows(ctx context.Context, tx *sql.Tx, runID int64, why string) error {
	_, err := tx.ExecContext(ctx, s.store.q(`UPDATE fcc_outbox SET state = ?, abandon_reason = ?, lease_owner = NULL, lease_until = NULL, updated_at = ?
		WHERE run_id = ? AND command = ? AND state IN (?, ?) AND acked_at IS NULL`),
		OutboxAbandoned, why, s.now(), runID, commandActivate, OutboxPending, OutboxSent)
	return err
}

// campaignCycle is what the campaign transitions after a run read.
type campaignCycle struct {
	State             string
	ReactivationType  sql.NullString
	RepeatEvery       sql.NullInt64
	StartsOn          sql.NullTime
	ReactivationCount int
	NextRunAt         sql.NullTime
	CycleFirstRun     sql.NullInt64
	CycleStartedAt    sql.NullTime
	StopRequested     bool
}

func (s *Service) loadCycle(ctx context.Context, q querier, campaign int64) (campaignCycle, error) {
	var c campaignCycle
	err := q.QueryRowContext(ctx, s.store.q(`SELECT state, reactivation_type, repeat_every, starts_on, reactivation_count,
		next_run_at, cycle_first_run, cycle_started_at, stop_requested FROM fcc_campaigns WHERE id = ?`), campaign).
		Scan(&c.State, &c.ReactivationType, &c.RepeatEvery, &c.StartsOn, &c.ReactivationCount, &c.NextRunAt, &c.CycleFirstRun, &c.CycleStartedAt, &c.StopRequested)
	if errors.Is(err, sql.ErrNoRows) {
		return c, notFound("campaign %d not found", campaign)
	}
	return c, err
}

// afterRunClosed is the one place the campaign moves after a run closed
// (FINISHED by the ACS or the watchdog, STOPPED by a drain, the ACS or
// the watchdog): the next run is planned while reactivations remain,
// otherwise the campaign is COMPLETED. A stop request ends the activation
// here too. A campaign that has moved on meanwhile (ERROR, a new
// activation with a run planned) is left alone.
func (s *Service) afterRunClosed(ctx context.Context, tx *sql.Tx, runID int64) error {
	r, err := s.loadRun(ctx, tx, runID)
	if err != nil {
		return err
	}
	c, err := s.loadCycle(ctx, tx, r.CampaignID)
	if err != nil {
		return err
	}
	if c.State != StateScheduled && c.State != StateScheduledForReactivation || c.NextRunAt.Valid {
		return nil
	}
	var later int
	if err := tx.QueryRowContext(ctx, s.store.q(`SELECT COUNT(*) FROM fcc_runs WHERE campaign_id = ? AND run_number > ?`), r.CampaignID, r.RunNumber).Scan(&later); err != nil {
		return err
	}
	if later > 0 {
		return nil
	}
	now := s.now()
	// n counts the runs of this activation: 1 for its first run. The spec's
	// "run number below reactivationCount" counts reactivations (0 for the
	// first run), so a campaign with reactivationCount N runs N+1 times.
	n := r.RunNumber
	if c.CycleFirstRun.Valid {
		n = r.RunNumber - int(c.CycleFirstRun.Int64) + 1
	}
	if !c.StopRequested && c.ReactivationType.Valid && n-1 < c.ReactivationCount {
		due := s.reactivationDue(c, r, n, now)
		_, err := tx.ExecContext(ctx, s.store.q(`UPDATE fcc_campaigns SET state = ?, next_run_at = ?, next_run_number = ?, updated_at = ? WHERE id = ?`),
			StateScheduledForReactivation, due, r.RunNumber+1, now, r.CampaignID)
		s.log.Info("campaign scheduled for reactivation", "campaign", r.CampaignID, "run", r.RunNumber+1, "due", due)
		return err
	}
	_, err = tx.ExecContext(ctx, s.store.q(`UPDATE fcc_campaigns SET state = ?, next_run_at = NULL, next_run_number = NULL, updated_at = ? WHERE id = ?`),
		StateCompleted, now, r.CampaignID)
	s.log.Info("campaign completed", "campaign", r.CampaignID, "runs", n)
	return err
}

// reactivationDue is when the run after the n-th run of an activation is
// due: startsOn + (n-1) periods when startsOn is set, else the first run's
// start + n periods; periods are campaign time (scaled); a time in the
// past means now.
func (s *Service) reactivationDue(c campaignCycle, r run, n int, now time.Time) time.Time {
	days := int64(1)
	if c.RepeatEvery.Valid && c.RepeatEvery.Int64 > 0 {
		days = c.RepeatEvery.Int64
	}
	if c.ReactivationType.String == ReactivationWeekly {
		days *= 7
	}
	period := 24 * time.Hour * time.Duration(days)
	var due time.Time
	switch {
	case c.StartsOn.Valid:
		due = c.StartsOn.Time.UTC().Add(s.cfg.TimeScale.Duration(period * time.Duration(n-1)))
	case c.CycleStartedAt.Valid:
		due = c.CycleStartedAt.Time.UTC().Add(s.cfg.TimeScale.Duration(period * time.Duration(n)))
	default:
		due = r.WindowStart.Add(s.cfg.TimeScale.Duration(period * time.Duration(n)))
	}
	if due.Before(now) {
		return now
	}
	return due
}

// insertOutbox writes one PENDING row and returns its id.
func (s *Service) insertOutbox(ctx context.Context, tx *sql.Tx, runID int64, command, commandID string, part, parts int, payload []byte) (int64, error) {
	now := s.now()
	var id int64
	err := tx.QueryRowContext(ctx, s.store.q(`INSERT INTO fcc_outbox (run_id, command, command_id, part, parts, payload, state, attempts, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?) RETURNING id`), runID, command, nullString(commandID), part, parts, string(payload), OutboxPending, now, now).Scan(&id)
	return id, err
}

// enqueueStop writes a STOP of run r to the outbox; the dispatcher sends
// it like any command (acks, re-sends and the attempt limit included).
// Its commandId is its own row's id.
func (s *Service) enqueueStop(ctx context.Context, tx *sql.Tx, r run, reason fccwire.StopReason, msg string) (int64, error) {
	id, err := s.insertOutbox(ctx, tx, r.ID, commandStop, "", 1, 1, nil)
	if err != nil {
		return 0, fmt.Errorf("writing the STOP of run %d: %w", r.ID, err)
	}
	cmd := strconv.FormatInt(id, 10)
	if len(msg) > 1024 {
		msg = msg[:1024]
	}
	b, err := fccwire.Encode(&fccwire.Stop{CommandID: cmd, ActivationID: r.ID, FccTestID: r.CampaignID, Reason: reason, Message: msg})
	if err != nil {
		return 0, err
	}
	_, err = tx.ExecContext(ctx, s.store.q(`UPDATE fcc_outbox SET command_id = ?, payload = ? WHERE id = ?`), cmd, string(b), id)
	s.log.Info("stop queued", "run", r.ID, "campaign", r.CampaignID, "reason", reason, "outbox", id)
	return id, err
}

// AfterStopDeadline tells result ingestion when answers of a run become
// late: stopped_at plus the run's frozen stop grace (scaled), for a run
// that was stopped (STOPPING or STOPPED). For any other run stopped is
// false.
func (s *Service) AfterStopDeadline(ctx context.Context, activationID int64) (deadline time.Time, stopped bool, err error) {
	r, err := s.loadRun(ctx, s.store.db, activationID)
	if err != nil {
		return time.Time{}, false, err
	}
	if (r.State != RunStopping && r.State != RunStopped) || !r.StoppedAt.Valid {
		return time.Time{}, false, nil
	}
	return r.StoppedAt.Time.UTC().Add(s.cfg.TimeScale.Seconds(r.StopGraceSec)), true, nil
}
