package results

import (
	"context"
	"time"

	"cpesuite/internal/fcc/fccwire"
)

// Filter selects result rows for the reports (the spec's report filters),
// already resolved by the service: the caller's scope applied, the
// campaign and run checked for visibility. A nil slice means no
// restriction; an empty non-nil slice means nothing matches.
type Filter struct {
	CampaignIDs   []int64 // fccTestId
	ActivationIDs []int64
	DomainIDs     []int64
	// Type reads one table when set; "" reads both.
	Type     fccwire.TestType
	Serial   string // exact, case-insensitive
	CpeIDs   []int64
	Statuses []fccwire.Outcome
	// StartedFrom and StartedTo bound startedAt: [from, to).
	StartedFrom, StartedTo *time.Time
	AfterStop              *bool
}

// MatchesNothing reports a filter that cannot match a row: an empty
// non-nil id list, or an empty time range. Callers answer it without a
// query (the spec's empty intersection never reads).
func (f Filter) MatchesNothing() bool {
	empty := func(v []int64) bool { return v != nil && len(v) == 0 }
	if empty(f.CampaignIDs) || empty(f.ActivationIDs) || empty(f.DomainIDs) || empty(f.CpeIDs) {
		return true
	}
	if f.Statuses != nil && len(f.Statuses) == 0 {
		return true
	}
	return f.StartedFrom != nil && f.StartedTo != nil && !f.StartedFrom.Before(*f.StartedTo)
}

// RunCounts are the five result counters of a report list row.
type RunCounts struct {
	Results   int64 `json:"results"`
	OK        int64 `json:"ok"`
	BelowTier int64 `json:"belowTier"`
	Errors    int64 `json:"errors"`
	WANBusy   int64 `json:"wanBusy"`
}

// Summary is the report summary's figures: counts over the union of both
// tables, the average speed (Kbps) of measured speed rows, and the average
// of per-iteration latency averages (iterations without a value skipped).
type Summary struct {
	Results            int64
	DistinctSerials    int64
	DistinctRuns       int64
	AvgKbps            *float64
	AvgLatencyMs       *float64
	FirstStartedAt     *time.Time
	LastFinishedAt     *time.Time
	BreachCount        int64
	MeasuredIterations int64
}

// Reports are the report queries. Both engines implement them; the service
// type-asserts a Store to Reports.
type Reports interface {
	// RunCounts returns the counters of each activation id given (ids with
	// no row are absent), under f.
	RunCounts(ctx context.Context, f Filter, activationIDs []int64) (map[int64]RunCounts, error)
	// Page returns rows in the fixed order (startedAt, activationId,
	// serial, direction, iteration) and the real total of the filtered set.
	Page(ctx context.Context, f Filter, offset, limit int) ([]Row, int64, error)
	// Summarise computes the summary of the filtered set.
	Summarise(ctx context.Context, f Filter) (Summary, error)
	// Stream calls fn for every row of the filtered set in the fixed order,
	// from a cursor, with memory independent of the row count; an error of
	// fn ends the stream and is returned.
	Stream(ctx context.Context, f Filter, fn func(*Row) error) error
}
