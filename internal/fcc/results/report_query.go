package results

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/platform/apperr"
)

// reportSQL builds the report queries of one engine. The two engines
// share the statements; they differ in casts, FINAL, boolean literals,
// LIMIT syntax and the distinct count, which is all this type knows.
// Every value that comes from a caller is bound (`?`, both drivers) except
// integer ids, which are formatted here and cannot carry SQL.
type reportSQL struct {
	clickhouse bool
	// split (ClickHouse only) names per table the activations whose rows
	// lie in more than one active part: only those are read with FINAL,
	// the rest plainly (see ClickHouse.splitFinal). A table absent from
	// split is read with FINAL throughout.
	split map[string][]int64
}

// reportOrder is the fixed order of Page and Stream: the natural key after
// startedAt, so the order is total (direction tells the tables apart).
const reportOrder = "started_at_us, activation_id, serial, direction, iteration"

func (d reportSQL) from(table string) string {
	if d.clickhouse {
		// Two processes racing on a key may both have written it; FINAL
		// collapses what the background merges have not yet.
		return table + " FINAL"
	}
	return table
}

// sources returns what to read table t from under the predicate w (" WHERE
// ..." or ""): "t FINAL" + w, or, with a split, the table plainly for the
// activations that lie in one part and with FINAL for the others. Both
// branches carry w, so their arguments repeat.
func (d reportSQL) sources(t, w string) []string {
	if !d.clickhouse {
		return []string{t + w}
	}
	ids, ok := d.split[t]
	switch {
	case !ok:
		return []string{d.from(t) + w}
	case len(ids) == 0:
		return []string{t + w}
	}
	and := func(cond string) string {
		if w == "" {
			return " WHERE " + cond
		}
		return w + " AND " + cond
	}
	list := idList(ids)
	return []string{t + and("activation_id NOT IN ("+list+")"), d.from(t) + and("activation_id IN ("+list+")")}
}

func (d reportSQL) i64(e string) string {
	if d.clickhouse {
		return "toInt64(" + e + ")"
	}
	return "CAST(" + e + " AS BIGINT)"
}

func (d reportSQL) f64(e string) string {
	if d.clickhouse {
		return "toFloat64(" + e + ")"
	}
	return "CAST(" + e + " AS DOUBLE)"
}

func (d reportSQL) distinct(col string) string {
	if d.clickhouse {
		return "uniqExact(" + col + ")"
	}
	return "count(DISTINCT " + col + ")"
}

func (d reportSQL) boolean(b bool) string {
	switch {
	case d.clickhouse && b:
		return "1"
	case d.clickhouse:
		return "0"
	case b:
		return "true"
	}
	return "false"
}

func (d reportSQL) limit(offset, limit int) string {
	if d.clickhouse {
		return fmt.Sprintf(" LIMIT %d, %d", offset, limit)
	}
	return fmt.Sprintf(" LIMIT %d OFFSET %d", limit, offset)
}

// null is a NULL of a block column's type, so that the two tables' rows
// line up in one UNION ALL (ClickHouse 18.16 wants equal types).
func (d reportSQL) null(col string) string {
	ch, duck := "Nullable(Int64)", "BIGINT"
	switch col {
	case "kbps", "average_ms", "min_ms", "max_ms":
		ch, duck = "Nullable(Float64)", "DOUBLE"
	case "test_mode", "per_connection":
		ch, duck = "Nullable(String)", "VARCHAR"
	case "connections", "success_count", "failure_count":
		ch, duck = "Nullable(Int32)", "INTEGER"
	}
	if d.clickhouse {
		return "CAST(NULL AS " + ch + ") AS " + col
	}
	return "CAST(NULL AS " + duck + ") AS " + col
}

// tables returns the tables a filter reads: one when it names a type.
func reportTables(f Filter) ([]string, error) {
	switch f.Type {
	case "":
		return []string{TableSpeed, TableLatency}, nil
	case fccwire.TypeSpeed:
		return []string{TableSpeed}, nil
	case fccwire.TypeLatency:
		return []string{TableLatency}, nil
	}
	return nil, apperr.New(apperr.ErrInvalid, "", "report type %q is not SPEED or LATENCY", f.Type)
}

func idList(ids []int64) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	return b.String()
}

// where renders the filter's predicate (" WHERE ..." or "") and its
// arguments. extra adds activation ids (RunCounts' runs) to the filter's.
func (d reportSQL) where(f Filter, extra []int64) (string, []any) {
	var conds []string
	var args []any
	in := func(col string, ids []int64) {
		if ids != nil {
			conds = append(conds, col+" IN ("+idList(ids)+")")
		}
	}
	in("fcc_test_id", f.CampaignIDs)
	in("activation_id", f.ActivationIDs)
	in("activation_id", extra)
	in("domain_id", f.DomainIDs)
	in("cpe_id", f.CpeIDs)
	if f.Serial != "" {
		lower := "lower"
		if d.clickhouse {
			lower = "lowerUTF8"
		}
		conds = append(conds, lower+"(serial) = ?")
		args = append(args, strings.ToLower(f.Serial))
	}
	if f.Statuses != nil {
		conds = append(conds, "status IN ("+strings.TrimSuffix(strings.Repeat("?,", len(f.Statuses)), ",")+")")
		for _, s := range f.Statuses {
			args = append(args, string(s))
		}
	}
	if f.StartedFrom != nil {
		conds = append(conds, "started_at_us >= ?")
		args = append(args, micros(*f.StartedFrom))
	}
	if f.StartedTo != nil {
		conds = append(conds, "started_at_us < ?")
		args = append(args, micros(*f.StartedTo))
	}
	if f.AfterStop != nil {
		conds = append(conds, "after_stop = "+d.boolean(*f.AfterStop))
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// union selects cols from every table of the filter, filtered, as one
// UNION ALL; perTable may replace a column's expression per table.
func (d reportSQL) union(f Filter, extra []int64, perTable func(table string) []string) (string, []any, error) {
	tables, err := reportTables(f)
	if err != nil {
		return "", nil, err
	}
	w, wargs := d.where(f, extra)
	var parts []string
	var args []any
	for _, t := range tables {
		for _, src := range d.sources(t, w) {
			parts = append(parts, "SELECT "+strings.Join(perTable(t), ", ")+" FROM "+src)
			args = append(args, wargs...)
		}
	}
	return strings.Join(parts, " UNION ALL "), args, nil
}

func fixed(cols ...string) func(string) []string {
	return func(string) []string { return cols }
}

// rowColumns are the columns of a report row: the common block, the speed
// block and the latency block, NULL for the other table's block.
func (d reportSQL) rowColumns(table string) []string {
	out := append([]string(nil), commonColumns...)
	for _, c := range speedColumns {
		if table == TableSpeed {
			out = append(out, c)
		} else {
			out = append(out, d.null(c))
		}
	}
	for _, c := range latencyColumns {
		if table == TableLatency {
			out = append(out, c)
		} else {
			out = append(out, d.null(c))
		}
	}
	return out
}

// rowsQuery selects report rows in the fixed order; limit < 0 means all.
func (d reportSQL) rowsQuery(f Filter, offset, limit int) (string, []any, error) {
	u, args, err := d.union(f, nil, d.rowColumns)
	if err != nil {
		return "", nil, err
	}
	all := append(append(append([]string(nil), commonColumns...), speedColumns...), latencyColumns...)
	q := "SELECT " + strings.Join(all, ", ") + " FROM (" + u + ") AS r ORDER BY " + reportOrder
	if limit >= 0 {
		q += d.limit(offset, limit)
	}
	return q, args, nil
}

func (d reportSQL) countQuery(f Filter) (string, []any, error) {
	u, args, err := d.union(f, nil, fixed("activation_id"))
	if err != nil {
		return "", nil, err
	}
	return "SELECT " + d.i64("count(*)") + " FROM (" + u + ") AS r", args, nil
}

func countOf(status fccwire.Outcome) string {
	return "coalesce(sum(CASE WHEN status = '" + string(status) + "' THEN 1 ELSE 0 END), 0)"
}

// runCountsQuery answers activation_id and the five counters per run.
func (d reportSQL) runCountsQuery(f Filter, runs []int64) (string, []any, error) {
	u, args, err := d.union(f, runs, fixed("activation_id", "status"))
	if err != nil {
		return "", nil, err
	}
	return "SELECT activation_id, " + d.i64("count(*)") + ", " + d.i64(countOf(fccwire.OutcomeOK)) + ", " +
		d.i64(countOf(fccwire.OutcomeBelowTier)) + ", " + d.i64(countOf(fccwire.OutcomeError)) + ", " +
		d.i64(countOf(fccwire.OutcomeWANBusy)) + " FROM (" + u + ") AS r GROUP BY activation_id", args, nil
}

// summaryQueries are the two statements of a summary: one scan of the
// union for the counts, the distinct serials and runs, the time bounds and
// the speed sum and count (kbps is NULL on latency rows, so count(kbps)
// counts measured speed rows only); and the latency sum and count of
// per-iteration averages, which needs its own grouping. The speed figures
// used to be a third statement and a third scan of results_speed. latency
// is "" when the filter does not read results_latency.
func (d reportSQL) summaryQueries(f Filter) (counts, latency string, cargs, largs []any, err error) {
	u, cargs, err := d.union(f, nil, func(t string) []string {
		cols := []string{"serial", "activation_id", "started_at_us", "finished_at_us", "status", "kbps"}
		if t != TableSpeed {
			cols[5] = d.null("kbps")
		}
		return cols
	})
	if err != nil {
		return
	}
	counts = "SELECT " + d.i64("count(*)") + ", " + d.i64(d.distinct("serial")) + ", " + d.i64(d.distinct("activation_id")) + ", " +
		d.i64("coalesce(min(started_at_us), 0)") + ", " + d.i64("coalesce(max(finished_at_us), 0)") + ", " +
		d.i64(countOf(fccwire.OutcomeBelowTier)) + ", " + d.f64("coalesce(sum(kbps), 0)") + ", " + d.i64("count(kbps)") + " FROM (" + u + ") AS r"
	w, wargs := d.where(f, nil)
	tables, _ := reportTables(f)
	if slices.Contains(tables, TableLatency) {
		// An iteration's average is over the run's devices; an iteration
		// where no device has an average is skipped.
		var src []string
		for _, from := range d.sources(TableLatency, w) {
			src = append(src, "SELECT activation_id, iteration, average_ms FROM "+from)
			largs = append(largs, wargs...)
		}
		latency = "SELECT " + d.f64("coalesce(sum(a), 0)") + ", " + d.i64("count(*)") + " FROM (SELECT sum(average_ms) / count(average_ms) AS a FROM (" +
			strings.Join(src, " UNION ALL ") + ") AS l GROUP BY activation_id, iteration HAVING count(average_ms) > 0) AS i"
	}
	return
}

// summaryOf assembles a Summary from the statements' answers.
func summaryOf(results, serials, runs, first, last, breaches int64, kbpsSum float64, kbpsN int64, latSum float64, latN int64) Summary {
	s := Summary{Results: results, DistinctSerials: serials, DistinctRuns: runs, BreachCount: breaches, MeasuredIterations: latN}
	if results > 0 {
		f, l := fromMicros(first), fromMicros(last)
		s.FirstStartedAt, s.LastFinishedAt = &f, &l
	}
	if kbpsN > 0 {
		v := kbpsSum / float64(kbpsN)
		s.AvgKbps = &v
	}
	if latN > 0 {
		v := latSum / float64(latN)
		s.AvgLatencyMs = &v
	}
	return s
}

// rowDest are scan destinations in rowsQuery's column order.
func rowDest(rec *record) []any {
	d := rec.dest(TableSpeed)
	return append(d, &rec.averageMs, &rec.minMs, &rec.maxMs, &rec.successCount, &rec.failureCount)
}

// reportRow turns a scanned union row back into a Row.
func reportRow(rec *record) (Row, error) {
	t := TableSpeed
	if rec.typ == string(fccwire.TypeLatency) {
		t = TableLatency
	}
	return rec.row(t)
}

// rowCursor is what both engines' result cursors offer (database/sql's
// Rows and the ClickHouse driver's Rows).
type rowCursor interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// scanRunCounts reads the rows of runCountsQuery, on either engine.
func scanRunCounts(rows rowCursor) (map[int64]RunCounts, error) {
	out := map[int64]RunCounts{}
	for rows.Next() {
		var id int64
		var c RunCounts
		if err := rows.Scan(&id, &c.Results, &c.OK, &c.BelowTier, &c.Errors, &c.WANBusy); err != nil {
			return nil, err
		}
		out[id] = c
	}
	return out, rows.Err()
}
