package fcc

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/fcc/results"
	"cpesuite/internal/platform/apperr"
)

// Page bounds of the report endpoints (the spec's Limits).
const (
	reportListDefaultPageSize    = 25
	reportListMaxPageSize        = 500
	reportResultsDefaultPageSize = 50
	reportResultsMaxPageSize     = 1000
)

// ReportRequest is the body of the report endpoints: the filters flat
// beside paging and sort, as POST /FCC/items has them. A nested "filters"
// object, when present, is read instead of the flat fields.
type ReportRequest struct {
	ReportFilterBody
	Filters     *ReportFilterBody `json:"filters"`
	Sort        []SortEntry       `json:"sort"`
	PageNumbers PageNumber        `json:"pageNumbers"`
	PageSize    *int              `json:"pageSize"`
}

func (r *ReportRequest) filter() ReportFilterBody {
	if r.Filters != nil {
		return *r.Filters
	}
	return r.ReportFilterBody
}

// ReportRun is one row of POST /FCC/reports/list: a run, its campaign, the
// five result counters, the dispatched fleet (devices that never answered
// count too) and the thresholds of the run's own snapshot.
type ReportRun struct {
	RunID        int64   `json:"runId"`
	RunNumber    int     `json:"runNumber"`
	State        string  `json:"state"`
	Reason       *string `json:"reason"`
	CampaignID   int64   `json:"campaignId"`
	CampaignName string  `json:"campaignName"`
	CampaignType string  `json:"campaignType"`
	DomainID     int64   `json:"domainId"`
	FleetSize    int64   `json:"fleetSize"`
	results.RunCounts
	WindowStartAt time.Time         `json:"windowStartAt"`
	AckedAt       *time.Time        `json:"ackedAt"`
	StartedAt     *time.Time        `json:"startedAt"`
	StoppedAt     *time.Time        `json:"stoppedAt"`
	FinishedAt    *time.Time        `json:"finishedAt"`
	Thresholds    []ReportThreshold `json:"thresholds"`
}

// ReportThreshold is one configuration's thresholds as the run froze them.
type ReportThreshold struct {
	ConfigID             int64  `json:"configId"`
	Manufacturer         string `json:"manufacturer"`
	Model                string `json:"model"`
	FleetSize            int    `json:"fleetSize"`
	WanDownloadThreshold *int64 `json:"wanDownloadThreshold"`
	WanUploadThreshold   *int64 `json:"wanUploadThreshold"`
	SpeedTierDownload    *int64 `json:"speedTierDownload"`
	SpeedTierUpload      *int64 `json:"speedTierUpload"`
}

// ReportRunPage is the answer of POST /FCC/reports/list.
type ReportRunPage struct {
	Items       []ReportRun `json:"items"`
	PageDetails PageDetails `json:"pageDetails"`
}

// ReportResult is one measurement row of POST /FCC/reports/results: the
// spec's common block and exactly one of speed and latency (the other
// null). Speed is always Kbps.
type ReportResult struct {
	Type           string                 `json:"type"`
	FccTestID      int64                  `json:"fccTestId"`
	ActivationID   int64                  `json:"activationId"`
	Iteration      int                    `json:"iteration"`
	DomainID       int64                  `json:"domainId"`
	CpeID          int64                  `json:"cpeId"`
	Serial         string                 `json:"serial"`
	HubbID         string                 `json:"hubbId"`
	Direction      string                 `json:"direction"`
	URL            string                 `json:"url"`
	TierKbps       *int64                 `json:"tierKbps"`
	StartedAt      fccwire.Time           `json:"startedAt"`
	FinishedAt     fccwire.Time           `json:"finishedAt"`
	Status         string                 `json:"status"`
	Description    *string                `json:"description"`
	WanUsageDlKbps *int64                 `json:"wanUsageDlKbps"`
	WanUsageUlKbps *int64                 `json:"wanUsageUlKbps"`
	AfterStop      bool                   `json:"afterStop"`
	Source         string                 `json:"source"`
	LegacyUgID     *int64                 `json:"legacyUgId"`
	LegacyResultID *int64                 `json:"legacyResultId"`
	Created        fccwire.Time           `json:"created"`
	Speed          *fccwire.SpeedResult   `json:"speed"`
	Latency        *fccwire.LatencyResult `json:"latency"`
}

// ReportResultOf is a stored row in the report's shape (the export uses it
// too).
func ReportResultOf(r *results.Row) ReportResult {
	out := ReportResult{
		Type: string(r.Type), FccTestID: r.FccTestID, ActivationID: r.ActivationID, Iteration: r.Iteration,
		DomainID: r.DomainID, CpeID: r.CpeID, Serial: r.Serial, HubbID: r.HubbID, Direction: string(r.Direction),
		URL: r.URL, TierKbps: r.TierKbps, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt, Status: string(r.Status),
		WanUsageDlKbps: r.WanUsageDlKbps, WanUsageUlKbps: r.WanUsageUlKbps, AfterStop: r.AfterStop, Source: r.Source,
		LegacyUgID: r.LegacyUgID, LegacyResultID: r.LegacyResultID, Created: fccwire.At(r.Created),
		Speed: r.Speed, Latency: r.Latency,
	}
	if r.Description != "" {
		d := r.Description
		out.Description = &d
	}
	return out
}

// ReportResultPage is the answer of POST /FCC/reports/results.
type ReportResultPage struct {
	Items       []ReportResult `json:"items"`
	PageDetails PageDetails    `json:"pageDetails"`
}

// ReportSummary is the answer of POST /FCC/reports/generate.
type ReportSummary struct {
	GeneratedAt     time.Time `json:"generatedAt"`
	Results         int64     `json:"results"`
	DistinctSerials int64     `json:"distinctSerials"`
	DistinctRuns    int64     `json:"distinctRuns"`
	// AverageKbps is over the speed rows with a measurement.
	AverageKbps *float64 `json:"averageKbps"`
	// AverageLatencyMs averages the per-iteration averages of each run,
	// iterations without any average skipped.
	AverageLatencyMs  *float64   `json:"averageLatencyMs"`
	LatencyIterations int64      `json:"latencyIterations"`
	Breaches          int64      `json:"breaches"`
	FirstStartedAt    *time.Time `json:"firstStartedAt"`
	LastFinishedAt    *time.Time `json:"lastFinishedAt"`
}

// reports is the result store's report side, or the 503 of the spec.
func (s *Service) reports() (results.Reports, error) {
	if err := s.requireResultStore(); err != nil {
		return nil, err
	}
	rep, ok := s.results.store.(results.Reports)
	if !ok {
		return nil, apperr.New(apperr.ErrUnavailable, "", "the result store answers no reports")
	}
	return rep, nil
}

var reportSortColumns = map[string]string{
	"runId": "r.id", "runNumber": "r.run_number", "state": "r.state", "campaignId": "r.campaign_id", "campaignName": "c.name",
	"windowStartAt": "r.window_start_at", "ackedAt": "r.acked_at", "startedAt": "r.started_at", "stoppedAt": "r.stopped_at",
	"finishedAt": "r.finished_at", "fleetSize": "r.fleet_size",
}

const reportSortFields = "runId, runNumber, state, campaignId, campaignName, windowStartAt, ackedAt, startedAt, stoppedAt, finishedAt, fleetSize"

func reportOrder(sort []SortEntry) (string, error) {
	var order []string
	for i, e := range sort {
		col, ok := reportSortColumns[e.Field]
		if !ok {
			return "", invalid("sort[%d].field %q cannot be sorted on (%s)", i, e.Field, reportSortFields)
		}
		dir := strings.ToUpper(e.Direction)
		switch dir {
		case "", "ASC":
			dir = "ASC"
		case "DESC":
		default:
			return "", invalid("sort[%d].direction %q is not one of ASC, DESC", i, e.Direction)
		}
		order = append(order, col+" "+dir)
	}
	if len(order) == 0 {
		order = append(order, "r.window_start_at DESC")
	}
	return strings.Join(append(order, "r.id DESC"), ", "), nil
}

// ReportList answers POST /FCC/reports/list: runs (fcc_runs with their
// campaign) selected by the run-level filters (campaign, run, domain,
// type, window start within the startedAt bounds), each with its counters
// under the whole filter.
func (s *Service) ReportList(ctx context.Context, id Identity, req ReportRequest) (ReportRunPage, error) {
	rep, err := s.reports()
	if err != nil {
		return ReportRunPage{}, err
	}
	page, size, err := pageParams(req.PageNumbers, req.PageSize, reportListDefaultPageSize, reportListMaxPageSize)
	if err != nil {
		return ReportRunPage{}, err
	}
	order, err := reportOrder(req.Sort)
	if err != nil {
		return ReportRunPage{}, err
	}
	f, err := s.reportFilter(ctx, id, req.filter())
	if err != nil {
		return ReportRunPage{}, err
	}
	empty := ReportRunPage{Items: []ReportRun{}, PageDetails: pageDetails(page, size, 0, 0)}
	if f.MatchesNothing() {
		return empty, nil
	}
	var where []string
	var args []any
	in := func(col string, ids []int64) {
		if ids != nil {
			where = append(where, col+" IN ("+strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")+")")
			args = append(args, int64sAsAny(ids)...)
		}
	}
	in("r.campaign_id", f.CampaignIDs)
	in("r.id", f.ActivationIDs)
	// Above the in-list bound the domains are applied in memory, as the
	// campaign list does.
	inMemory := len(f.DomainIDs) > inMemoryDomains
	if !inMemory {
		in("c.domain_id", f.DomainIDs)
	}
	if f.Type != "" {
		where, args = append(where, "c.type = ?"), append(args, string(f.Type))
	}
	if f.StartedFrom != nil {
		where, args = append(where, "r.window_start_at >= ?"), append(args, *f.StartedFrom)
	}
	if f.StartedTo != nil {
		where, args = append(where, "r.window_start_at < ?"), append(args, *f.StartedTo)
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	from := ` FROM fcc_runs r JOIN fcc_campaigns c ON c.id = r.campaign_id` + cond
	var total int64
	query := `SELECT r.id, r.run_number, r.state, r.reason, r.campaign_id, c.name, c.type, c.domain_id, r.fleet_size,
		r.window_start_at, r.acked_at, r.started_at, r.stopped_at, r.finished_at, r.snapshot` + from + ` ORDER BY ` + order
	if !inMemory {
		if err := s.store.db.QueryRowContext(ctx, s.store.q(`SELECT COUNT(*)`+from), args...).Scan(&total); err != nil {
			return empty, fmt.Errorf("counting runs: %w", err)
		}
		if total == 0 {
			return empty, nil
		}
		query += ` LIMIT ? OFFSET ?`
		args = append(args, size, (page-1)*size)
	}
	items, err := s.reportRuns(ctx, query, args, f, inMemory)
	if err != nil {
		return empty, err
	}
	if inMemory {
		total = int64(len(items))
		lo := min((page-1)*size, len(items))
		items = items[lo:min(lo+size, len(items))]
	}
	runs := make([]int64, len(items))
	for i := range items {
		runs[i] = items[i].RunID
	}
	counts, err := rep.RunCounts(ctx, f, runs)
	if err != nil {
		return empty, err
	}
	for i := range items {
		items[i].RunCounts = counts[items[i].RunID]
	}
	return ReportRunPage{Items: items, PageDetails: pageDetails(page, size, len(items), total)}, nil
}

func (s *Service) reportRuns(ctx context.Context, query string, args []any, f results.Filter, inMemory bool) ([]ReportRun, error) {
	rows, err := s.store.db.QueryContext(ctx, s.store.q(query), args...)
	if err != nil {
		return nil, fmt.Errorf("listing runs: %w", err)
	}
	defer rows.Close()
	items := []ReportRun{}
	for rows.Next() {
		var r ReportRun
		var reason sql.NullString
		var acked, started, stopped, finished sql.NullTime
		var snapshot string
		if err := rows.Scan(&r.RunID, &r.RunNumber, &r.State, &reason, &r.CampaignID, &r.CampaignName, &r.CampaignType, &r.DomainID,
			&r.FleetSize, &r.WindowStartAt, &acked, &started, &stopped, &finished, &snapshot); err != nil {
			return nil, fmt.Errorf("listing runs: %w", err)
		}
		if inMemory && !slices.Contains(f.DomainIDs, r.DomainID) {
			continue
		}
		if reason.Valid {
			r.Reason = &reason.String
		}
		r.WindowStartAt = r.WindowStartAt.UTC()
		r.AckedAt, r.StartedAt, r.StoppedAt, r.FinishedAt = utcPtr(acked), utcPtr(started), utcPtr(stopped), utcPtr(finished)
		r.Thresholds = thresholdsOf(snapshot)
		items = append(items, r)
	}
	return items, rows.Err()
}

// thresholdsOf reads the thresholds of a run's snapshot; a run from before
// snapshots (an empty or unreadable one) has none.
func thresholdsOf(snapshot string) []ReportThreshold {
	out := []ReportThreshold{}
	snap, err := RunSnapshotOf([]byte(snapshot))
	if err != nil {
		return out
	}
	for _, g := range snap.Groups {
		st := g.Setting
		out = append(out, ReportThreshold{ConfigID: g.ConfigID, Manufacturer: g.Manufacturer, Model: g.Model, FleetSize: g.FleetSize,
			WanDownloadThreshold: st.WanDownloadThreshold, WanUploadThreshold: st.WanUploadThreshold,
			SpeedTierDownload: st.SpeedTierDownload, SpeedTierUpload: st.SpeedTierUpload})
	}
	return out
}

// ReportResults answers POST /FCC/reports/results.
func (s *Service) ReportResults(ctx context.Context, id Identity, req ReportRequest) (ReportResultPage, error) {
	rep, err := s.reports()
	if err != nil {
		return ReportResultPage{}, err
	}
	page, size, err := pageParams(req.PageNumbers, req.PageSize, reportResultsDefaultPageSize, reportResultsMaxPageSize)
	if err != nil {
		return ReportResultPage{}, err
	}
	if len(req.Sort) > 0 {
		return ReportResultPage{}, invalid("the results of a report come in a fixed order; sort is not accepted")
	}
	f, err := s.reportFilter(ctx, id, req.filter())
	if err != nil {
		return ReportResultPage{}, err
	}
	out := ReportResultPage{Items: []ReportResult{}, PageDetails: pageDetails(page, size, 0, 0)}
	if f.MatchesNothing() {
		return out, nil
	}
	rows, total, err := rep.Page(ctx, f, (page-1)*size, size)
	if err != nil {
		return out, err
	}
	for i := range rows {
		out.Items = append(out.Items, ReportResultOf(&rows[i]))
	}
	out.PageDetails = pageDetails(page, size, len(out.Items), total)
	return out, nil
}

// ReportGenerate answers POST /FCC/reports/generate: a read that stores
// nothing, safe to repeat.
func (s *Service) ReportGenerate(ctx context.Context, id Identity, req ReportRequest) (ReportSummary, error) {
	rep, err := s.reports()
	if err != nil {
		return ReportSummary{}, err
	}
	f, err := s.reportFilter(ctx, id, req.filter())
	if err != nil {
		return ReportSummary{}, err
	}
	out := ReportSummary{GeneratedAt: s.now().UTC()}
	if f.MatchesNothing() {
		return out, nil
	}
	sum, err := rep.Summarise(ctx, f)
	if err != nil {
		return out, err
	}
	out.Results, out.DistinctSerials, out.DistinctRuns = sum.Results, sum.DistinctSerials, sum.DistinctRuns
	out.AverageKbps, out.AverageLatencyMs, out.LatencyIterations = sum.AvgKbps, sum.AvgLatencyMs, sum.MeasuredIterations
	out.Breaches, out.FirstStartedAt, out.LastFinishedAt = sum.BreachCount, sum.FirstStartedAt, sum.LastFinishedAt
	return out, nil
}
