package fcc

import (
	"context"
	"database/sql"
	"time"
)

// RunInfo is one run of a campaign as POST /FCC/activations/list answers
// it: the operator's view of where an activation is, before the reports.
type RunInfo struct {
	ID            int64            `json:"id"`
	RunNumber     int              `json:"runNumber"`
	State         string           `json:"state"`
	Reason        *string          `json:"reason"`
	WindowStartAt time.Time        `json:"windowStartAt"`
	WindowEndAt   *time.Time       `json:"windowEndAt"`
	AckedAt       *time.Time       `json:"ackedAt"`
	StartedAt     *time.Time       `json:"startedAt"`
	StoppedAt     *time.Time       `json:"stoppedAt"`
	FinishedAt    *time.Time       `json:"finishedAt"`
	FleetSize     int64            `json:"fleetSize"`
	Devices       map[string]int64 `json:"devices"`
	// Results counts the rows of the run in the result store; null while
	// the store is not UP.
	Results *int64 `json:"results"`
}

// RunList is the answer of POST /FCC/activations/list.
type RunList struct {
	CampaignID int64     `json:"campaignId"`
	State      string    `json:"state"`
	Items      []RunInfo `json:"items"`
}

func (s *Service) listRunsRPC(ctx context.Context, id Identity, req idBody) (RunList, error) {
	campaignID, err := req.need()
	if err != nil {
		return RunList{}, err
	}
	c, err := s.visibleCampaign(ctx, id, campaignID)
	if err != nil {
		return RunList{}, err
	}
	out := RunList{CampaignID: campaignID, State: c.State, Items: []RunInfo{}}
	rows, err := s.store.db.QueryContext(ctx, s.store.q(`SELECT id, run_number, state, reason, window_start_at, window_end_at,
		acked_at, started_at, stopped_at, finished_at, fleet_size FROM fcc_runs WHERE campaign_id = ? ORDER BY run_number`), campaignID)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() {
		var r RunInfo
		var reason sql.NullString
		var end, acked, started, stopped, finished sql.NullTime
		if err := rows.Scan(&r.ID, &r.RunNumber, &r.State, &reason, &r.WindowStartAt, &end, &acked, &started, &stopped, &finished, &r.FleetSize); err != nil {
			return out, err
		}
		if reason.Valid {
			r.Reason = &reason.String
		}
		r.WindowStartAt = r.WindowStartAt.UTC()
		r.WindowEndAt, r.AckedAt, r.StartedAt, r.StoppedAt, r.FinishedAt = utcPtr(end), utcPtr(acked), utcPtr(started), utcPtr(stopped), utcPtr(finished)
		out.Items = append(out.Items, r)
	}
	if err := rows.Err(); err != nil {
		return out, err
	}
	rows.Close()
	for i := range out.Items {
		r := &out.Items[i]
		if r.Devices, err = s.runDeviceCounts(ctx, r.ID); err != nil {
			return out, err
		}
		r.Results = s.countResults(ctx, r.ID)
	}
	return out, nil
}

func utcPtr(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	u := t.Time.UTC()
	return &u
}

func (s *Service) runDeviceCounts(ctx context.Context, runID int64) (map[string]int64, error) {
	rows, err := s.store.db.QueryContext(ctx, s.store.q(`SELECT state, COUNT(*) FROM fcc_run_devices WHERE run_id = ? GROUP BY state`), runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var st string
		var n int64
		if err := rows.Scan(&st, &n); err != nil {
			return nil, err
		}
		out[st] = n
	}
	return out, rows.Err()
}

// countResults is nil unless the result store is UP and answers.
func (s *Service) countResults(ctx context.Context, runID int64) *int64 {
	if s.results.store == nil || s.requireResultStore() != nil {
		return nil
	}
	rows, err := s.results.store.Rows(ctx, runID)
	if err != nil {
		s.log.Warn("counting a run's results", "run", runID, "err", err)
		return nil
	}
	n := int64(len(rows))
	return &n
}
