package fcc

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/fcc/results"
	"cpesuite/internal/platform/apperr"
)

// ReportFilterBody is the report filters the spec shares between
// POST /FCC/reports/list, /results, /generate and /export.
type ReportFilterBody struct {
	// DomainIDs can only narrow the caller's scope; an empty list (or one
	// that misses every visible domain) matches nothing.
	DomainIDs  []int64 `json:"domainIds"`
	CampaignID *int64  `json:"campaignId"`
	// RunID must belong to CampaignID when both are given.
	RunID *int64 `json:"runId"`
	// Type (SPEED or LATENCY) reads one result table.
	Type string `json:"type"`
	// Serial matches whole, case-insensitively.
	Serial string `json:"serial"`
	// StartedFrom and StartedTo bound a result's startedAt: [from, to).
	StartedFrom *time.Time `json:"startedFrom"`
	StartedTo   *time.Time `json:"startedTo"`
	// Statuses is a list of OK, BELOW_TIER, ERROR, WAN_BUSY; empty means
	// every status.
	Statuses  []string `json:"statuses"`
	AfterStop *bool    `json:"afterStop"`
	// CpeIDs is the device filter: at most svc.fcc.max-devices-per-test
	// ids; an empty list matches nothing.
	CpeIDs []int64 `json:"cpeIds"`
}

var reportTypes = []string{string(fccwire.TypeSpeed), string(fccwire.TypeLatency)}

var reportStatuses = []string{string(fccwire.OutcomeOK), string(fccwire.OutcomeBelowTier), string(fccwire.OutcomeError), string(fccwire.OutcomeWANBusy)}

// reportFilter turns a report body into a result filter with the caller's
// scope applied: 400 for a bad enum or bound, 404 for a campaign or run the
// caller cannot see or a run of another campaign. The domain list is the
// intersection of the body's and the visible ones, so an empty one (a
// non-nil empty slice) means the caller sees nothing; Filter.MatchesNothing
// then tells the caller to answer without reading.
func (s *Service) reportFilter(ctx context.Context, id Identity, body ReportFilterBody) (results.Filter, error) {
	var f results.Filter
	if body.Type != "" {
		t := strings.ToUpper(body.Type)
		if err := checkEnum("type", t, reportTypes); err != nil {
			return f, err
		}
		f.Type = fccwire.TestType(t)
	}
	// An empty status list is no status filter: statuses are not a
	// visibility list, so nothing is widened by reading it so.
	if len(body.Statuses) > 0 {
		f.Statuses = make([]fccwire.Outcome, 0, len(body.Statuses))
		for i, st := range body.Statuses {
			st = strings.ToUpper(st)
			if !slices.Contains(reportStatuses, st) {
				return f, invalid("statuses[%d] %q is not one of %s", i, body.Statuses[i], strings.Join(reportStatuses, ", "))
			}
			if !slices.Contains(f.Statuses, fccwire.Outcome(st)) {
				f.Statuses = append(f.Statuses, fccwire.Outcome(st))
			}
		}
	}
	if body.StartedFrom != nil && body.StartedTo != nil && body.StartedTo.Before(*body.StartedFrom) {
		return f, invalid("startedTo must not be before startedFrom")
	}
	f.StartedFrom, f.StartedTo = utcTime(body.StartedFrom), utcTime(body.StartedTo)
	f.Serial = strings.TrimSpace(body.Serial)
	f.AfterStop = body.AfterStop
	if body.CpeIDs != nil {
		if len(body.CpeIDs) > s.cfg.MaxDevicesPerTest {
			return f, invalid("cpeIds holds %d ids; at most %d (svc.fcc.max-devices-per-test)", len(body.CpeIDs), s.cfg.MaxDevicesPerTest)
		}
		f.CpeIDs = distinct(body.CpeIDs)
	}
	f.DomainIDs = scopeDomains(id, body.DomainIDs)

	campaignID := body.CampaignID
	if body.RunID != nil {
		owner, err := s.runCampaign(ctx, *body.RunID)
		if err != nil {
			return f, err
		}
		if campaignID != nil && *campaignID != owner {
			return f, notFound("run %d not found in campaign %d", *body.RunID, *campaignID)
		}
		if _, err := s.visibleCampaign(ctx, id, owner); err != nil {
			// The run's campaign is invisible: the run is not found.
			if errors.Is(err, apperr.ErrNotFound) {
				return f, notFound("run %d not found", *body.RunID)
			}
			return f, err
		}
		f.ActivationIDs = []int64{*body.RunID}
		if campaignID == nil {
			campaignID = &owner
		}
	} else if campaignID != nil {
		if _, err := s.visibleCampaign(ctx, id, *campaignID); err != nil {
			return f, err
		}
	}
	if campaignID != nil {
		f.CampaignIDs = []int64{*campaignID}
	}
	return f, nil
}

// scopeDomains is the domain list of a report: nil for scope ALL without a
// body list, otherwise the body list (when given) intersected with the
// visible domains, never nil.
func scopeDomains(id Identity, body []int64) []int64 {
	if id.All {
		if body == nil {
			return nil
		}
		return distinct(body)
	}
	if body == nil {
		// Never nil: a LIST caller without visible domains sees nothing.
		return append([]int64{}, id.DomainIDs...)
	}
	out := []int64{}
	for _, d := range distinct(body) {
		if id.Sees(d) {
			out = append(out, d)
		}
	}
	return out
}

func distinct(v []int64) []int64 {
	out := slices.Clone(v)
	slices.Sort(out)
	return slices.Compact(out)
}

func utcTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// runCampaign returns the campaign of a run, 404 when there is no such run.
func (s *Service) runCampaign(ctx context.Context, runID int64) (int64, error) {
	var c int64
	err := s.store.db.QueryRowContext(ctx, s.store.q(`SELECT campaign_id FROM fcc_runs WHERE id = ?`), runID).Scan(&c)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, notFound("run %d not found", runID)
	}
	return c, err
}
