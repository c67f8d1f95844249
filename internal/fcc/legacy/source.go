package legacy

import (
	"context"
	"fmt"
	"strings"
	"time"

	"cpesuite/internal/platform/sqlstore"
)

// naiveLayout is the one form naive legacy timestamps are written and
// compared in: fixed width, so that text comparison on SQLite orders like
// time, and a form PostgreSQL parses into TIMESTAMP.
const naiveLayout = "2006-01-02 15:04:05.000000"

// minNaive is the lower bound of the first pass (no watermark yet).
const minNaive = "0001-01-01 00:00:00.000000"

// Naive formats the wall clock of t (its zone ignored) as a naive legacy
// timestamp.
func Naive(t time.Time) string { return t.Format(naiveLayout) }

// naiveTime scans a naive timestamp: PostgreSQL returns a time.Time whose
// wall clock is the stored value, SQLite the stored text.
type naiveTime struct {
	wall  time.Time // zone UTC, wall clock as stored
	valid bool
}

func (n *naiveTime) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*n = naiveTime{}
	case time.Time:
		*n = naiveTime{wall: time.Date(x.Year(), x.Month(), x.Day(), x.Hour(), x.Minute(), x.Second(), x.Nanosecond(), time.UTC), valid: true}
	case string:
		return n.parse(x)
	case []byte:
		return n.parse(string(x))
	default:
		return fmt.Errorf("legacy: naive timestamp of type %T", v)
	}
	return nil
}

func (n *naiveTime) parse(s string) error {
	for _, layout := range []string{naiveLayout, "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05"} {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
			*n = naiveTime{wall: t, valid: true}
			return nil
		}
	}
	return fmt.Errorf("legacy: unparseable naive timestamp %q", s)
}

// in places the wall clock in loc.
func (n naiveTime) in(loc *time.Location) time.Time {
	w := n.wall
	return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), loc).UTC()
}

// sourceDDL is the legacy schema of SOURCE.md per dialect: naive
// timestamps are TIMESTAMP (without time zone) on PostgreSQL and fixed
// width text on SQLite.
func sourceDDL(d sqlstore.Dialect) []string {
	ts, float := "TIMESTAMP", "DOUBLE PRECISION"
	if d == sqlstore.SQLite {
		ts, float = "TEXT", "REAL"
	}
	return []string{
		`CREATE TABLE legacy_user_groups (
			ug_id     BIGINT PRIMARY KEY,
			name      TEXT NOT NULL,
			domain_id BIGINT NOT NULL,
			test_type TEXT NOT NULL
		)`,
		`CREATE TABLE legacy_speed_results (
			result_id   BIGINT PRIMARY KEY,
			ug_id       BIGINT NOT NULL,
			run_no      INTEGER NOT NULL,
			serial      TEXT,
			direction   TEXT NOT NULL,
			iteration   INTEGER NOT NULL,
			speed_type  TEXT,
			start_date  ` + ts + `,
			end_date    ` + ts + `,
			kbps        ` + float + `,
			test_bytes  BIGINT,
			total_bytes TEXT,
			tier        TEXT,
			status      INTEGER,
			properties  TEXT
		)`,
		`CREATE INDEX legacy_speed_results_start ON legacy_speed_results (start_date)`,
		`CREATE TABLE legacy_latency_results (
			result_id     BIGINT PRIMARY KEY,
			ug_id         BIGINT NOT NULL,
			run_no        INTEGER NOT NULL,
			serial        TEXT,
			iteration     INTEGER NOT NULL,
			start_date    ` + ts + `,
			end_date      ` + ts + `,
			avg_ms        ` + float + `,
			min_ms        ` + float + `,
			max_ms        ` + float + `,
			success_count INTEGER,
			failure_count INTEGER,
			status        INTEGER,
			properties    TEXT
		)`,
		`CREATE INDEX legacy_latency_results_start ON legacy_latency_results (start_date)`,
	}
}

// CreateSource creates the legacy tables of SOURCE.md on db: for tests,
// benchmarks and demonstrations; the importer never writes the source.
func CreateSource(ctx context.Context, db *sqlstore.DB) error {
	for _, q := range sourceDDL(db.Dialect()) {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("legacy source schema: %w", err)
		}
	}
	return nil
}

// UserGroup is a row of legacy_user_groups, the campaign anchor.
type UserGroup struct {
	UgID     int64
	Name     string
	DomainID int64
	TestType string
}

// SpeedRow is a row of legacy_speed_results; nil pointers are NULL.
type SpeedRow struct {
	ResultID   int64
	UgID       int64
	RunNo      int
	Serial     *string
	Direction  string
	Iteration  int
	SpeedType  *string
	StartDate  *time.Time // wall clock, zone ignored
	EndDate    *time.Time
	Kbps       *float64
	TestBytes  *int64
	TotalBytes *string
	Tier       *string
	Status     *int
	Properties *string
}

// LatencyRow is a row of legacy_latency_results.
type LatencyRow struct {
	ResultID     int64
	UgID         int64
	RunNo        int
	Serial       *string
	Iteration    int
	StartDate    *time.Time
	EndDate      *time.Time
	AvgMs        *float64
	MinMs        *float64
	MaxMs        *float64
	SuccessCount *int
	FailureCount *int
	Status       *int
	Properties   *string
}

func optNaive(t *time.Time) any {
	if t == nil {
		return nil
	}
	return Naive(*t)
}

func opt[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// insertChunk bounds one multi-row INSERT's parameters (PostgreSQL allows
// 65535, SQLite 32766).
const insertChunk = 1000

func insertRows(ctx context.Context, db *sqlstore.DB, head string, n int, cols int, arg func(i int) []any) error {
	for start := 0; start < n; start += insertChunk {
		end := min(start+insertChunk, n)
		var b strings.Builder
		b.WriteString(head)
		args := make([]any, 0, (end-start)*cols)
		ph := "(" + strings.TrimSuffix(strings.Repeat("?,", cols), ",") + ")"
		for i := start; i < end; i++ {
			if i > start {
				b.WriteByte(',')
			}
			b.WriteString(ph)
			args = append(args, arg(i)...)
		}
		if _, err := db.ExecContext(ctx, db.Rebind(b.String()), args...); err != nil {
			return err
		}
	}
	return nil
}

// InsertUserGroups writes anchors into the source.
func InsertUserGroups(ctx context.Context, db *sqlstore.DB, ugs ...UserGroup) error {
	return insertRows(ctx, db, `INSERT INTO legacy_user_groups (ug_id, name, domain_id, test_type) VALUES `, len(ugs), 4, func(i int) []any {
		u := ugs[i]
		return []any{u.UgID, u.Name, u.DomainID, u.TestType}
	})
}

// InsertSpeed writes speed rows into the source.
func InsertSpeed(ctx context.Context, db *sqlstore.DB, rows ...SpeedRow) error {
	return insertRows(ctx, db, `INSERT INTO legacy_speed_results (result_id, ug_id, run_no, serial, direction, iteration, speed_type,
		start_date, end_date, kbps, test_bytes, total_bytes, tier, status, properties) VALUES `, len(rows), 15, func(i int) []any {
		r := rows[i]
		return []any{r.ResultID, r.UgID, r.RunNo, opt(r.Serial), r.Direction, r.Iteration, opt(r.SpeedType), optNaive(r.StartDate),
			optNaive(r.EndDate), opt(r.Kbps), opt(r.TestBytes), opt(r.TotalBytes), opt(r.Tier), opt(r.Status), opt(r.Properties)}
	})
}

// InsertLatency writes latency rows into the source.
func InsertLatency(ctx context.Context, db *sqlstore.DB, rows ...LatencyRow) error {
	return insertRows(ctx, db, `INSERT INTO legacy_latency_results (result_id, ug_id, run_no, serial, iteration, start_date, end_date,
		avg_ms, min_ms, max_ms, success_count, failure_count, status, properties) VALUES `, len(rows), 14, func(i int) []any {
		r := rows[i]
		return []any{r.ResultID, r.UgID, r.RunNo, opt(r.Serial), r.Iteration, optNaive(r.StartDate), optNaive(r.EndDate),
			opt(r.AvgMs), opt(r.MinMs), opt(r.MaxMs), opt(r.SuccessCount), opt(r.FailureCount), opt(r.Status), opt(r.Properties)}
	})
}

// Seed describes generated source rows. Row i of a kind belongs to user
// group 1+i%UGs, run 1+(i/UGs)%Runs, serial LEG<n> with n=(i/UGs/Runs)%Serials;
// speed rows then alternate DOWNLOAD and UPLOAD; the rest of the quotient
// is the iteration. So every row has a natural key of its own, and
// StartDate of row i is From + i*Step (naive).
type Seed struct {
	UGs, Runs, Serials int
	Speed, Latency     int   // rows of each table
	FirstID            int64 // result id of row 0 (both tables)
	From               time.Time
	Step               time.Duration
	DomainID           int64
}

func (s Seed) parts(i int) (ug int64, run, serial, rest int) {
	ug = int64(1 + i%s.UGs)
	q := i / s.UGs
	run = 1 + q%s.Runs
	q /= s.Runs
	return ug, run, q % s.Serials, q / s.Serials
}

// SpeedRow returns generated speed row i.
func (s Seed) SpeedRow(i int) SpeedRow {
	ug, run, serial, rest := s.parts(i)
	dir := "DOWNLOAD"
	if rest%2 == 1 {
		dir = "UPLOAD"
	}
	start := s.From.Add(time.Duration(i) * s.Step)
	end := start.Add(10 * time.Second)
	sn, st := fmt.Sprintf("LEG%06d", serial), "FILE_BASED"
	kbps, tb, total := float64(50000+i%1000), int64(62500000), "70000000"
	tier, status, props := "100000", 0, `{"url":"http://speed.example/10MB"}`
	return SpeedRow{ResultID: s.FirstID + int64(i), UgID: ug, RunNo: run, Serial: &sn, Direction: dir, Iteration: 1 + rest/2,
		SpeedType: &st, StartDate: &start, EndDate: &end, Kbps: &kbps, TestBytes: &tb, TotalBytes: &total, Tier: &tier, Status: &status, Properties: &props}
}

// LatencyRow returns generated latency row i.
func (s Seed) LatencyRow(i int) LatencyRow {
	ug, run, serial, rest := s.parts(i)
	start := s.From.Add(time.Duration(i) * s.Step)
	end := start.Add(5 * time.Second)
	sn := fmt.Sprintf("LEG%06d", serial)
	avg, lo, hi, ok, ko, status := 12.5, 10.0, 20.0, 10, 0, 0
	props := `{"host":"ping.example"}`
	return LatencyRow{ResultID: s.FirstID + int64(i), UgID: ug, RunNo: run, Serial: &sn, Iteration: 1 + rest,
		StartDate: &start, EndDate: &end, AvgMs: &avg, MinMs: &lo, MaxMs: &hi, SuccessCount: &ok, FailureCount: &ko, Status: &status, Properties: &props}
}

// UserGroups returns the generated anchors (user groups 1..UGs).
func (s Seed) UserGroups() []UserGroup {
	out := make([]UserGroup, s.UGs)
	for i := range out {
		out[i] = UserGroup{UgID: int64(i + 1), Name: fmt.Sprintf("legacy group %d", i+1), DomainID: s.DomainID, TestType: "SPEED"}
	}
	return out
}

// Write inserts the generated anchors and rows (anchors only when
// FirstID is 0 or 1, so a later Seed can add rows to the same groups).
func (s Seed) Write(ctx context.Context, db *sqlstore.DB) error {
	if s.FirstID <= 1 {
		if err := InsertUserGroups(ctx, db, s.UserGroups()...); err != nil {
			return err
		}
	}
	for start := 0; start < s.Speed; start += insertChunk {
		rows := make([]SpeedRow, 0, insertChunk)
		for i := start; i < min(start+insertChunk, s.Speed); i++ {
			rows = append(rows, s.SpeedRow(i))
		}
		if err := InsertSpeed(ctx, db, rows...); err != nil {
			return err
		}
	}
	for start := 0; start < s.Latency; start += insertChunk {
		rows := make([]LatencyRow, 0, insertChunk)
		for i := start; i < min(start+insertChunk, s.Latency); i++ {
			rows = append(rows, s.LatencyRow(i))
		}
		if err := InsertLatency(ctx, db, rows...); err != nil {
			return err
		}
	}
	return nil
}

// WriteBulkPostgres generates the same rows as Write inside PostgreSQL
// (generate_series), for sources of millions of rows.
func (s Seed) WriteBulkPostgres(ctx context.Context, db *sqlstore.DB) error {
	if db.Dialect() != sqlstore.Postgres {
		return fmt.Errorf("legacy: WriteBulkPostgres needs PostgreSQL")
	}
	if s.FirstID <= 1 {
		if err := InsertUserGroups(ctx, db, s.UserGroups()...); err != nil {
			return err
		}
	}
	from := Naive(s.From)
	stepUs := s.Step.Microseconds()
	// q1 = i/UGs, q2 = q1/Runs, rest = q2/Serials, as in Seed.parts.
	common := fmt.Sprintf(`$1::bigint + i, 1 + i %% %[1]d, 1 + (i / %[1]d) %% %[2]d,
		'LEG' || lpad(((i / %[1]d / %[2]d) %% %[3]d)::text, 6, '0')`, s.UGs, s.Runs, s.Serials)
	rest := fmt.Sprintf(`(i / %d / %d / %d)`, s.UGs, s.Runs, s.Serials)
	start := fmt.Sprintf(`'%s'::timestamp + (i * %d) * interval '1 microsecond'`, from, stepUs)
	if _, err := db.ExecContext(ctx, `INSERT INTO legacy_speed_results (result_id, ug_id, run_no, serial, direction, iteration, speed_type,
		start_date, end_date, kbps, test_bytes, total_bytes, tier, status, properties)
		SELECT `+common+`, CASE WHEN `+rest+` % 2 = 1 THEN 'UPLOAD' ELSE 'DOWNLOAD' END, 1 + `+rest+` / 2, 'FILE_BASED',
		`+start+`, `+start+` + interval '10 seconds', 50000 + i % 1000, 62500000, '70000000', '100000', 0, '{"url":"http://speed.example/10MB"}'
		FROM generate_series(0, $2::bigint - 1) AS i`, s.FirstID, s.Speed); err != nil {
		return fmt.Errorf("seeding speed rows: %w", err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO legacy_latency_results (result_id, ug_id, run_no, serial, iteration, start_date, end_date,
		avg_ms, min_ms, max_ms, success_count, failure_count, status, properties)
		SELECT `+common+`, 1 + `+rest+`, `+start+`, `+start+` + interval '5 seconds', 12.5, 10, 20, 10, 0, 0, '{"host":"ping.example"}'
		FROM generate_series(0, $2::bigint - 1) AS i`, s.FirstID, s.Latency); err != nil {
		return fmt.Errorf("seeding latency rows: %w", err)
	}
	// Without statistics PostgreSQL estimates the window predicate wrongly
	// and answers each batch's read by bitmap-scanning every remaining row
	// (0.8 s a batch at 2.5M rows instead of 10 ms); autovacuum analyzes a
	// fresh bulk load only later.
	for _, t := range []string{"legacy_user_groups", "legacy_speed_results", "legacy_latency_results"} {
		if _, err := db.ExecContext(ctx, `ANALYZE `+t); err != nil {
			return fmt.Errorf("analyzing %s: %w", t, err)
		}
	}
	return nil
}
