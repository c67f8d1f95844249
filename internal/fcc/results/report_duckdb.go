package results

import (
	"context"
	"fmt"
)

var duckSQL = reportSQL{}

// RunCounts implements Reports.
func (s *DuckDB) RunCounts(ctx context.Context, f Filter, activationIDs []int64) (map[int64]RunCounts, error) {
	out := map[int64]RunCounts{}
	if f.MatchesNothing() || len(activationIDs) == 0 {
		return out, nil
	}
	q, args, err := duckSQL.runCountsQuery(f, activationIDs)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("counting run results: %w", err)
	}
	defer rows.Close()
	if out, err = scanRunCounts(rows); err != nil {
		return nil, fmt.Errorf("counting run results: %w", err)
	}
	return out, nil
}

// Page implements Reports.
func (s *DuckDB) Page(ctx context.Context, f Filter, offset, limit int) ([]Row, int64, error) {
	if f.MatchesNothing() {
		return []Row{}, 0, nil
	}
	cq, cargs, err := duckSQL.countQuery(f)
	if err != nil {
		return nil, 0, err
	}
	var total int64
	if err := s.db.QueryRowContext(ctx, cq, cargs...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("counting results: %w", err)
	}
	out := make([]Row, 0, min(limit, 1024))
	if total == 0 || limit <= 0 || int64(offset) >= total {
		return out, total, nil
	}
	err = s.stream(ctx, f, offset, limit, func(r *Row) error {
		out = append(out, *r)
		return nil
	})
	return out, total, err
}

// Stream implements Reports. database/sql reads DuckDB's result in chunks,
// so memory does not grow with the row count.
func (s *DuckDB) Stream(ctx context.Context, f Filter, fn func(*Row) error) error {
	if f.MatchesNothing() {
		return nil
	}
	return s.stream(ctx, f, 0, -1, fn)
}

func (s *DuckDB) stream(ctx context.Context, f Filter, offset, limit int, fn func(*Row) error) error {
	q, args, err := duckSQL.rowsQuery(f, offset, limit)
	if err != nil {
		return err
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("reading results: %w", err)
	}
	defer rows.Close()
	var rec record
	dest := rowDest(&rec)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("reading results: %w", err)
		}
		r, err := reportRow(&rec)
		if err != nil {
			return fmt.Errorf("reading results: %w", err)
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading results: %w", err)
	}
	return nil
}

// Summarise implements Reports.
func (s *DuckDB) Summarise(ctx context.Context, f Filter) (Summary, error) {
	if f.MatchesNothing() {
		return Summary{}, nil
	}
	cq, lq, cargs, largs, err := duckSQL.summaryQueries(f)
	if err != nil {
		return Summary{}, err
	}
	var n, serials, runs, first, last, breaches, kbpsN, latN int64
	var kbpsSum, latSum float64
	if err := s.db.QueryRowContext(ctx, cq, cargs...).Scan(&n, &serials, &runs, &first, &last, &breaches, &kbpsSum, &kbpsN); err != nil {
		return Summary{}, fmt.Errorf("summarising results: %w", err)
	}
	if lq != "" && n > 0 {
		if err := s.db.QueryRowContext(ctx, lq, largs...).Scan(&latSum, &latN); err != nil {
			return Summary{}, fmt.Errorf("summarising latency results: %w", err)
		}
	}
	return summaryOf(n, serials, runs, first, last, breaches, kbpsSum, kbpsN, latSum, latN), nil
}

var _ Reports = (*DuckDB)(nil)
