package results

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// MaxInsertRows bounds one Insert call: the legacy import writes 10,000
// rows at a time and live ingestion 100, so a larger batch is a caller's
// bug; it is refused with ErrInvalid rather than held in memory twice.
const MaxInsertRows = 100_000

// DuckDBFile is the file name of the embedded store under the data
// directory.
const DuckDBFile = "fcc-results.duckdb"

// DuckDB is the embedded engine: one file, one writer at a time inside the
// process (DuckDB allows one writing process per file), reads concurrent.
type DuckDB struct {
	db         *sql.DB
	migrations []migration
	now        func() time.Time

	// mu serialises writers. wconn is the writer's own connection: its
	// temporary staging tables live as long as it does.
	mu     sync.Mutex
	wconn  *sql.Conn
	closed bool
}

// OpenDuckDB opens (creating when absent) the DuckDB file at path. A file
// another process holds open for writing is refused here.
func OpenDuckDB(path string) (*DuckDB, error) {
	db, err := sql.Open("duckdb", path)
	if err != nil {
		return nil, fmt.Errorf("opening result store %s: %w", path, err)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("opening result store %s: %w", path, err)
	}
	return &DuckDB{db: db, migrations: mustMigrations("duckdb"), now: time.Now}, nil
}

// Migrate implements Store. Each migration and its version row commit
// together.
func (s *DuckDB) Migrate(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+TableSchemaVersion+` (
		version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)`); err != nil {
		return fmt.Errorf("creating %s: %w", TableSchemaVersion, err)
	}
	stored, err := s.storedVersion(ctx)
	if err != nil {
		return err
	}
	for _, m := range s.migrations[min(stored, len(s.migrations)):] {
		if err := s.apply(ctx, m); err != nil {
			return fmt.Errorf("result store migration %s: %w", m.name, err)
		}
	}
	return nil
}

func (s *DuckDB) apply(ctx context.Context, m migration) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, st := range m.statements {
		if _, err := tx.ExecContext(ctx, st); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+TableSchemaVersion+` VALUES (?, ?, ?)`, m.version, m.name, s.now().UTC()); err != nil {
		return err
	}
	return tx.Commit()
}

func (s *DuckDB) storedVersion(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_name = ?`, TableSchemaVersion).Scan(&n)
	if err != nil || n == 0 {
		return 0, err
	}
	var v int
	err = s.db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM `+TableSchemaVersion).Scan(&v)
	return v, err
}

// Ping implements Pinger.
func (s *DuckDB) Ping(ctx context.Context) error {
	var one int
	return s.db.QueryRowContext(ctx, `SELECT 1`).Scan(&one)
}

// Check implements Store.
func (s *DuckDB) Check(ctx context.Context) Status {
	now := s.now()
	v, err := s.storedVersion(ctx)
	if err != nil {
		return Status{State: StateUnavailable, Reason: err.Error(), CheckedAt: now}
	}
	st := schemaStatus(v, len(s.migrations))
	st.CheckedAt = now
	return st
}

// Insert implements Store. The common batch holds only new keys (the
// ingester has already dropped most repeats), so the fast path appends it
// straight into the result tables inside one transaction and lets the
// natural-key primary key refuse it if a key is already stored; only then
// does the batch take the slow path, staging tables and INSERT ... ON
// CONFLICT DO NOTHING, whose row count is the number of new rows. The
// conflict-checked INSERT ... SELECT cost about 20 ms a batch whatever its
// size, the appends a fraction of that (BENCHMARKS.md).
func (s *DuckDB) Insert(ctx context.Context, rows []Row) (int, error) {
	if len(rows) > MaxInsertRows {
		return 0, errTooMany(len(rows))
	}
	speed, latency, err := split(rows)
	if err != nil || len(speed)+len(latency) == 0 {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	conn, err := s.writer(ctx)
	if err != nil {
		return 0, err
	}
	batches := []tableRows{{TableSpeed, speed}, {TableLatency, latency}}
	now := s.now().UTC()
	n, err := s.appendNew(ctx, conn, batches, now)
	if isConflict(err) {
		n, err = s.insertStaged(ctx, conn, batches, now)
	}
	if err != nil && s.wconn != nil {
		// A failed batch may leave the connection mid-transaction or its
		// staging tables half full; a fresh connection starts clean.
		s.wconn.Close()
		s.wconn = nil
	}
	return n, err
}

type tableRows struct {
	table string
	rows  []*Row
}

// appendNew appends every row into its result table in one transaction.
// A key the table already holds fails it with a constraint error and
// nothing of the batch is stored.
func (s *DuckDB) appendNew(ctx context.Context, conn *sql.Conn, batches []tableRows, now time.Time) (n int, err error) {
	if _, err := conn.ExecContext(ctx, `BEGIN TRANSACTION`); err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			// A refused commit has already rolled back; a second ROLLBACK
			// then fails harmlessly, and any other failure drops the
			// connection in Insert.
			if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`); rerr != nil && !isConflict(err) {
				err = errors.Join(err, rerr)
			}
		}
	}()
	for _, b := range batches {
		if len(b.rows) == 0 {
			continue
		}
		if err := appendRows(conn, "", b.table, b.table, b.rows, now); err != nil {
			return 0, fmt.Errorf("inserting results: %w", err)
		}
		n += len(b.rows)
	}
	if _, err := conn.ExecContext(ctx, `COMMIT`); err != nil {
		return 0, fmt.Errorf("inserting results: %w", err)
	}
	return n, nil
}

// isConflict reports a primary-key violation: a key of the batch is stored.
// A COMMIT reports it typed; the Appender reports it as "Failed to append:
// Duplicate key ... violates primary key constraint", typed Invalid.
func isConflict(err error) bool {
	var de *duckdb.Error
	if !errors.As(err, &de) {
		return false
	}
	return de.Type == duckdb.ErrorTypeConstraint || strings.Contains(de.Msg, "violates primary key constraint")
}

// insertStaged is the slow path for a batch with stored keys.
func (s *DuckDB) insertStaged(ctx context.Context, conn *sql.Conn, batches []tableRows, now time.Time) (int, error) {
	for _, b := range batches {
		if len(b.rows) == 0 {
			continue
		}
		if err := appendRows(conn, "temp", stageOf(b.table), b.table, b.rows, now); err != nil {
			return 0, fmt.Errorf("staging results: %w", err)
		}
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	total := 0
	for _, b := range batches {
		if len(b.rows) == 0 {
			continue
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO `+b.table+` SELECT * FROM temp.`+stageOf(b.table)+` ON CONFLICT DO NOTHING`)
		if err != nil {
			return 0, fmt.Errorf("inserting results: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, err
		}
		total += int(n)
		if _, err := tx.ExecContext(ctx, `DELETE FROM temp.`+stageOf(b.table)); err != nil {
			return 0, err
		}
	}
	return total, tx.Commit()
}

func stageOf(table string) string { return "stage_" + table }

// writer returns the writer connection, creating it and its staging
// tables (same columns as the result tables, no key) on first use.
func (s *DuckDB) writer(ctx context.Context) (*sql.Conn, error) {
	if s.closed {
		return nil, errClosed
	}
	if s.wconn != nil {
		return s.wconn, nil
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range []string{TableSpeed, TableLatency} {
		if _, err := conn.ExecContext(ctx, `CREATE OR REPLACE TEMP TABLE `+stageOf(t)+` AS SELECT `+columnList(t)+` FROM `+t+` LIMIT 0`); err != nil {
			conn.Close()
			return nil, fmt.Errorf("creating staging table: %w", err)
		}
	}
	s.wconn = conn
	return conn, nil
}

// appendRows appends rows of table into catalog.main.dest (the table
// itself, or its staging table in catalog "temp").
func appendRows(conn *sql.Conn, catalog, dest, table string, rows []*Row, now time.Time) error {
	return conn.Raw(func(dc any) error {
		a, err := duckdb.NewAppender(dc.(driver.Conn), catalog, "main", dest)
		if err != nil {
			return err
		}
		for _, r := range rows {
			v, err := values(r, table, now)
			if err != nil {
				a.Close()
				return err
			}
			if err := a.AppendRow(v...); err != nil {
				a.Close()
				return err
			}
		}
		return a.Close()
	})
}

// Rows implements Store.
func (s *DuckDB) Rows(ctx context.Context, activationID int64) ([]Row, error) {
	var out []Row
	for _, t := range []string{TableSpeed, TableLatency} {
		rows, err := s.db.QueryContext(ctx, `SELECT `+columnList(t)+` FROM `+t+` WHERE activation_id = ? ORDER BY serial, direction, iteration`, activationID)
		if err != nil {
			return nil, fmt.Errorf("reading results: %w", err)
		}
		var rec record
		for rows.Next() {
			if err := rows.Scan(rec.dest(t)...); err != nil {
				rows.Close()
				return nil, fmt.Errorf("reading results: %w", err)
			}
			r, err := rec.row(t)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("reading results of activation %d: %w", activationID, err)
			}
			out = append(out, r)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("reading results: %w", err)
		}
	}
	sortRows(out)
	return out, nil
}

// Close implements Store. It waits for a running Insert.
func (s *DuckDB) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	if s.wconn != nil {
		errs = append(errs, s.wconn.Close())
		s.wconn = nil
	}
	errs = append(errs, s.db.Close())
	return errors.Join(errs...)
}

var errClosed = errors.New("result store is closed")

var (
	_ Store  = (*DuckDB)(nil)
	_ Pinger = (*DuckDB)(nil)
)
