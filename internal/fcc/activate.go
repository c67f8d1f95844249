package fcc

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// ActivateResponse answers POST /FCC/activate and POST /FCC/deactivate.
type ActivateResponse struct {
	ID    int64  `json:"id"`
	State string `json:"state"`
	// PlannedStart is when the scheduler creates the next run; absent when
	// nothing is planned.
	PlannedStart *time.Time `json:"plannedStart,omitempty"`
}

// wireSerialOK holds a serial to what the wire accepts (1.3): not blank, at
// most 64 characters, no surrounding white space, no control characters.
func wireSerialOK(s string) bool {
	if s == "" || len(s) > 64 || strings.TrimSpace(s) != s {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// Activate schedules a campaign (POST /FCC/activate): the campaign becomes
// SCHEDULED, its activation count grows (which freezes its fleet) and the
// scheduler creates the run at the activation date (now when the date is
// past or the activation is Immediately).
func (s *Service) Activate(ctx context.Context, id Identity, campaign int64) (ActivateResponse, error) {
	// The whole request is refused while results could not be stored.
	if err := s.requireResultStore(); err != nil {
		return ActivateResponse{}, err
	}
	c, err := s.visibleCampaign(ctx, id, campaign)
	if err != nil {
		return ActivateResponse{}, err
	}
	if c.Activation == nil || c.Activation.TotalTestDuration == nil || c.Activation.SingleTestDuration == nil {
		return ActivateResponse{}, invalid("campaign %d has no activation schedule", campaign)
	}
	if len(c.Configs) == 0 {
		return ActivateResponse{}, invalid("campaign %d has no configuration", campaign)
	}
	now, user := s.now(), s.auditUser(id)
	due := now
	if c.Activation.Type == ActivationScheduled && c.Activation.Date != nil && c.Activation.Date.After(now) {
		due = c.Activation.Date.UTC()
	}
	err = s.store.db.InTx(ctx, func(tx *sql.Tx) error {
		if err := s.checkNothingOpen(ctx, tx, campaign); err != nil {
			return err
		}
		if err := s.checkFleetForWire(ctx, tx, campaign); err != nil {
			return err
		}
		var next int
		if err := tx.QueryRowContext(ctx, s.store.q(`SELECT COALESCE(MAX(run_number), 0) + 1 FROM fcc_runs WHERE campaign_id = ?`), campaign).Scan(&next); err != nil {
			return err
		}
		// The version guards against a concurrent save or activation.
		res, err := tx.ExecContext(ctx, s.store.q(`UPDATE fcc_campaigns SET state = ?, activation_count = activation_count + 1,
			next_run_at = ?, next_run_number = ?, cycle_first_run = ?, cycle_started_at = NULL, stop_requested = ?,
			version = version + 1, updated_at = ?, updated_by = ? WHERE id = ? AND version = ?`),
			StateScheduled, due, next, next, false, now, user, campaign, c.Version)
		if err != nil {
			return fmt.Errorf("activating campaign %d: %w", campaign, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return conflict("campaign %d changed while it was being activated; try again", campaign)
		}
		return s.store.audit(ctx, tx, campaign, "ACTIVATE", user, id.ClientType, now, map[string]any{"run": next, "plannedStart": due})
	})
	if err != nil {
		return ActivateResponse{}, err
	}
	s.log.Info("campaign activated", "campaign", campaign, "user", user, "plannedStart", due)
	s.runs.nudge()
	return ActivateResponse{ID: campaign, State: StateScheduled, PlannedStart: &due}, nil
}

// checkNothingOpen answers 409 while a run is planned or open.
func (s *Service) checkNothingOpen(ctx context.Context, q querier, campaign int64) error {
	cy, err := s.loadCycle(ctx, q, campaign)
	if err != nil {
		return err
	}
	if (cy.State == StateScheduled || cy.State == StateScheduledForReactivation) && cy.NextRunAt.Valid {
		return conflict("campaign %d is %s with a run planned for %s", campaign, cy.State, cy.NextRunAt.Time.UTC().Format(time.RFC3339))
	}
	var runNumber int
	var state string
	err = q.QueryRowContext(ctx, s.store.q(`SELECT run_number, state FROM fcc_runs WHERE campaign_id = ? AND state IN (`+placeholders(len(openRunStates))+`) ORDER BY run_number DESC LIMIT 1`),
		append([]any{campaign}, strsAsAny(openRunStates)...)...).Scan(&runNumber, &state)
	switch {
	case err == sql.ErrNoRows:
		return nil
	case err != nil:
		return err
	}
	return conflict("campaign %d has run %d in state %s", campaign, runNumber, state)
}

// checkFleetForWire refuses an empty frozen fleet and devices the ACS would
// refuse (wire 1.3: a blank serial is REJECTED / INVALID_CONFIG, so the
// service refuses such devices itself), naming up to 20 cpeIds.
func (s *Service) checkFleetForWire(ctx context.Context, q querier, campaign int64) error {
	rows, err := q.QueryContext(ctx, s.store.q(`SELECT cpe_id, serial FROM fcc_fleet WHERE campaign_id = ? ORDER BY cpe_id`), campaign)
	if err != nil {
		return err
	}
	defer rows.Close()
	n := 0
	var bad []string
	for rows.Next() {
		var cpe int64
		var serial string
		if err := rows.Scan(&cpe, &serial); err != nil {
			return err
		}
		n++
		if !wireSerialOK(serial) {
			bad = append(bad, fmt.Sprint(cpe))
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if n == 0 {
		return invalid("campaign %d has an empty fleet; there is nothing to measure", campaign)
	}
	if len(bad) > 0 {
		return invalid("campaign %d: %d device(s) have a blank or invalid serial number, which the ACS refuses (wire 1.3): cpeId %s", campaign, len(bad), capList(bad))
	}
	return nil
}

// Deactivate is a stop request (POST /FCC/deactivate). A planned run that
// was never sent is STOPPED at once and its outbox rows ABANDONED with the
// reason STOP_REQUESTED; a run the ACS may hold (DISPATCHING, RUNNING)
// becomes STOPPING and a STOP is published through the outbox. The
// activation ends: no further reactivation is planned, and the campaign is
// COMPLETED when its last run closes (at once when none is open).
func (s *Service) Deactivate(ctx context.Context, id Identity, campaign int64) (ActivateResponse, error) {
	if _, err := s.visibleCampaign(ctx, id, campaign); err != nil {
		return ActivateResponse{}, err
	}
	now, user := s.now(), s.auditUser(id)
	var state string
	err := s.store.db.InTx(ctx, func(tx *sql.Tx) error {
		cy, err := s.loadCycle(ctx, tx, campaign)
		if err != nil {
			return err
		}
		planned := (cy.State == StateScheduled || cy.State == StateScheduledForReactivation) && cy.NextRunAt.Valid
		rows, err := tx.QueryContext(ctx, s.store.q(`SELECT `+runColumns+` FROM fcc_runs WHERE campaign_id = ? AND state IN (?, ?, ?, ?) ORDER BY run_number`),
			append([]any{campaign}, strsAsAny(openRunStates)...)...)
		if err != nil {
			return err
		}
		var open []run
		for rows.Next() {
			r, err := scanRun(rows)
			if err != nil {
				rows.Close()
				return err
			}
			open = append(open, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		stoppable := planned
		for _, r := range open {
			if r.State != RunStopping {
				stoppable = true
			}
		}
		if !stoppable {
			if len(open) > 0 {
				return conflict("campaign %d: run %d is already stopping", campaign, open[0].RunNumber)
			}
			return conflict("campaign %d has no run planned or running (state %s)", campaign, cy.State)
		}
		if _, err := tx.ExecContext(ctx, s.store.q(`UPDATE fcc_campaigns SET stop_requested = ?, next_run_at = NULL, next_run_number = NULL, updated_at = ?, updated_by = ? WHERE id = ?`),
			true, now, user, campaign); err != nil {
			return err
		}
		for _, r := range open {
			switch r.State {
			case RunPlanned:
				if err := s.cancelActivateRows(ctx, tx, r.ID, ReasonStopRequested); err != nil {
					return err
				}
				if _, err := s.moveRun(ctx, tx, r.ID, []string{RunPlanned}, RunStopped, ReasonStopRequested); err != nil {
					return err
				}
			case RunDispatching, RunRunning:
				if err := s.cancelActivateRows(ctx, tx, r.ID, ReasonStopRequested); err != nil {
					return err
				}
				moved, err := s.moveRun(ctx, tx, r.ID, []string{RunDispatching, RunRunning}, RunStopping, ReasonStopRequested)
				if err != nil {
					return err
				}
				if moved {
					if _, err := s.enqueueStop(ctx, tx, r, "STOP_REQUESTED", "stop requested by "+user); err != nil {
						return err
					}
				}
			}
		}
		if len(open) == 0 {
			// Only a planned run, never created: nothing ran, the
			// activation is over.
			if _, err := tx.ExecContext(ctx, s.store.q(`UPDATE fcc_campaigns SET state = ? WHERE id = ?`), StateCompleted, campaign); err != nil {
				return err
			}
		}
		if err := tx.QueryRowContext(ctx, s.store.q(`SELECT state FROM fcc_campaigns WHERE id = ?`), campaign).Scan(&state); err != nil {
			return err
		}
		return s.store.audit(ctx, tx, campaign, "DEACTIVATE", user, id.ClientType, now, map[string]any{"openRuns": len(open), "planned": planned})
	})
	if err != nil {
		return ActivateResponse{}, err
	}
	s.log.Info("campaign deactivated", "campaign", campaign, "user", user, "state", state)
	s.runs.nudge()
	return ActivateResponse{ID: campaign, State: state}, nil
}

func (s *Service) activateRPC(ctx context.Context, id Identity, b idBody) (ActivateResponse, error) {
	// The 503 rule comes before anything but the identity filter, body
	// checks included.
	if err := s.requireResultStore(); err != nil {
		return ActivateResponse{}, err
	}
	n, err := b.need()
	if err != nil {
		return ActivateResponse{}, err
	}
	return s.Activate(ctx, id, n)
}

func (s *Service) deactivateRPC(ctx context.Context, id Identity, b idBody) (ActivateResponse, error) {
	n, err := b.need()
	if err != nil {
		return ActivateResponse{}, err
	}
	return s.Deactivate(ctx, id, n)
}
