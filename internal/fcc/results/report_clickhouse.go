package results

import (
	"context"
	"strings"
)

var chSQL = reportSQL{clickhouse: true}

// RunCounts implements Reports.
func (s *ClickHouse) RunCounts(ctx context.Context, f Filter, activationIDs []int64) (map[int64]RunCounts, error) {
	out := map[int64]RunCounts{}
	if f.MatchesNothing() || len(activationIDs) == 0 {
		return out, nil
	}
	if s.isClosed() {
		return nil, errClosed
	}
	q, args, err := chSQL.runCountsQuery(f, activationIDs)
	if err != nil {
		return nil, err
	}
	rows, err := s.conn.Query(ctx, q, args...)
	if err != nil {
		return nil, s.errorf("counting run results", err)
	}
	defer rows.Close()
	if out, err = scanRunCounts(rows); err != nil {
		return nil, s.errorf("counting run results", err)
	}
	return out, nil
}

// Page implements Reports.
func (s *ClickHouse) Page(ctx context.Context, f Filter, offset, limit int) ([]Row, int64, error) {
	if f.MatchesNothing() {
		return []Row{}, 0, nil
	}
	if s.isClosed() {
		return nil, 0, errClosed
	}
	cq, cargs, err := chSQL.countQuery(f)
	if err != nil {
		return nil, 0, err
	}
	var total int64
	if err := s.conn.QueryRow(ctx, cq, cargs...).Scan(&total); err != nil {
		return nil, 0, s.errorf("counting results", err)
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

// Stream implements Reports. The native protocol delivers the answer in
// blocks, read one at a time, so memory does not grow with the row count.
func (s *ClickHouse) Stream(ctx context.Context, f Filter, fn func(*Row) error) error {
	if f.MatchesNothing() {
		return nil
	}
	return s.stream(ctx, f, 0, -1, fn)
}

func (s *ClickHouse) stream(ctx context.Context, f Filter, offset, limit int, fn func(*Row) error) error {
	if s.isClosed() {
		return errClosed
	}
	q, args, err := chSQL.rowsQuery(f, offset, limit)
	if err != nil {
		return err
	}
	rows, err := s.conn.Query(ctx, q, args...)
	if err != nil {
		return s.errorf("reading results", err)
	}
	defer rows.Close()
	rec := record{boolAsUint8: true}
	dest := rowDest(&rec)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return s.errorf("reading results", err)
		}
		r, err := reportRow(&rec)
		if err != nil {
			return s.errorf("reading results", err)
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return s.errorf("reading results", err)
	}
	return nil
}

// Summarise implements Reports.
func (s *ClickHouse) Summarise(ctx context.Context, f Filter) (Summary, error) {
	if f.MatchesNothing() {
		return Summary{}, nil
	}
	if s.isClosed() {
		return Summary{}, errClosed
	}
	split, err := s.splitFinal(ctx, f)
	if err != nil {
		return Summary{}, err
	}
	cq, lq, cargs, largs, err := reportSQL{clickhouse: true, split: split}.summaryQueries(f)
	if err != nil {
		return Summary{}, err
	}
	var n, serials, runs, first, last, breaches, kbpsN, latN int64
	var kbpsSum, latSum float64
	if err := s.conn.QueryRow(ctx, cq, cargs...).Scan(&n, &serials, &runs, &first, &last, &breaches, &kbpsSum, &kbpsN); err != nil {
		return Summary{}, s.errorf("summarising results", err)
	}
	if lq != "" && n > 0 {
		if err := s.conn.QueryRow(ctx, lq, largs...).Scan(&latSum, &latN); err != nil {
			return Summary{}, s.errorf("summarising latency results", err)
		}
	}
	return summaryOf(n, serials, runs, first, last, breaches, kbpsSum, kbpsN, latSum, latN), nil
}

// maxSplitRuns bounds the activations of one table read with FINAL by
// name; a table with more is read with FINAL throughout (slower, still
// exact), which keeps the statement's IN list and text bounded.
const maxSplitRuns = 10_000

// splitFinal finds, per table the filter reads, the activations whose rows
// lie in more than one active part. FINAL on 18.16 merges every part of a
// table in one thread and was most of the summary's time; but a part
// never holds a natural key twice (Insert drops repeats within a batch and
// keys already stored, a merge collapses them), so a key can only be
// duplicated across parts, and an activation whose rows all sit in one
// part needs no FINAL. Rows of two racing writers, or of batches not yet
// merged, put their activation in two parts and it is read with FINAL.
// The scan reads activation_id alone, narrowed by the filter's campaigns
// and runs (which lead the sorting key); other filter columns may differ
// between versions of a key, so they do not narrow it.
func (s *ClickHouse) splitFinal(ctx context.Context, f Filter) (map[string][]int64, error) {
	tables, err := reportTables(f)
	if err != nil {
		return nil, err
	}
	w, _ := chSQL.where(Filter{CampaignIDs: f.CampaignIDs, ActivationIDs: f.ActivationIDs}, nil)
	var q []string
	for _, t := range tables {
		q = append(q, "SELECT '"+t+"' AS t, activation_id FROM "+t+w+" GROUP BY activation_id HAVING uniqExact(_part) > 1")
	}
	rows, err := s.conn.Query(ctx, strings.Join(q, " UNION ALL "))
	if err != nil {
		return nil, s.errorf("finding runs across parts", err)
	}
	defer rows.Close()
	split := map[string][]int64{}
	for _, t := range tables {
		split[t] = []int64{}
	}
	for rows.Next() {
		var t string
		var id int64
		if err := rows.Scan(&t, &id); err != nil {
			return nil, s.errorf("finding runs across parts", err)
		}
		if ids, ok := split[t]; ok {
			if len(ids) >= maxSplitRuns {
				delete(split, t)
				continue
			}
			split[t] = append(ids, id)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.errorf("finding runs across parts", err)
	}
	return split, nil
}

var _ Reports = (*ClickHouse)(nil)
