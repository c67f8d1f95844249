package fcc

import (
	"context"
	"database/sql"
)

// watchdogOnce closes runs the ACS has gone quiet about: a RUNNING run
// past its window end plus the finish grace is FINISHED (reason
// WATCHDOG); a STOPPING run older than its stop grace (frozen with the
// run) is STOPPED (reason FORCED). Both move the campaign on like any
// closed run.
func (s *Service) watchdogOnce(ctx context.Context) (int, error) {
	now := s.now()
	batch := s.cfg.Runs.WatchdogBatchSize
	var ids []int64
	rows, err := s.store.db.QueryContext(ctx, s.store.q(`SELECT id FROM fcc_runs WHERE state = ? AND window_end_at < ? ORDER BY window_end_at LIMIT ?`),
		RunRunning, now.Add(-s.cfg.TimeScale.Duration(s.cfg.Runs.WatchdogFinishGrace)), batch)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	finish := len(ids)
	rows, err = s.store.db.QueryContext(ctx, s.store.q(`SELECT `+runColumns+` FROM fcc_runs WHERE state = ? ORDER BY stopped_at LIMIT ?`), RunStopping, batch)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			rows.Close()
			return 0, err
		}
		if r.StoppedAt.Valid && now.After(r.StoppedAt.Time.Add(s.cfg.TimeScale.Seconds(r.StopGraceSec))) {
			ids = append(ids, r.ID)
		}
	}
	rows.Close()
	return s.moveEach(ctx, ids, func(tx *sql.Tx, i int, id int64) (bool, error) {
		from, to, reason := RunRunning, RunFinished, ReasonWatchdog
		if i >= finish {
			from, to, reason = RunStopping, RunStopped, ReasonForcedStop
		}
		return s.moveRun(ctx, tx, id, []string{from}, to, reason)
	})
}
