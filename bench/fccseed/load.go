package fccseed

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"cpesuite/internal/platform/sqlstore"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// progressEvery is how many devices pass between two progress calls.
const progressEvery = 10_000

// Columns written per table; the others keep their defaults.
var (
	domainCols = []string{"id", "parent_id", "name", "created_at"}
	mfCols     = []string{"id", "name"}
	classCols  = []string{"id", "manufacturer_id", "oui", "product_class", "model_name", "protocol_id", "created_at"}
	deviceCols = []string{"id", "oui", "product_class", "serial", "product_class_id", "domain_id", "software_version", "data_model", "online", "online_until", "created_at", "updated_at"}
)

const rootDomain = int64(1)

func (g *generator) domainRow(i int) []any {
	id := int64(i + 2)
	return []any{id, rootDomain, domainName(id), g.now}
}

func (g *generator) manufacturerRow(i int) []any {
	id := int64(i + 1)
	return []any{id, manufacturerName(id)}
}

func (g *generator) classRow(i int) []any {
	pc := &g.classes[i]
	return []any{pc.id, pc.manufacturer, pc.oui, pc.class, pc.name, pc.protocol, g.now}
}

func (d *device) row(now time.Time) []any {
	var pc any
	if d.productClass != 0 {
		pc = d.productClass
	}
	return []any{d.id, d.oui, d.class, d.serial, pc, d.domain, d.softwareVersion, d.dataModel, d.online, d.onlineUntil, now, now}
}

// loadPostgres writes everything with COPY in one transaction on one pgx
// connection: COPY is several times faster than any INSERT form.
func loadPostgres(ctx context.Context, db *sqlstore.DB, g *generator, progress func(int)) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("postgres driver connection is %T, not pgx stdlib", dc)
		}
		tx, err := sc.Conn().Begin(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(ctx) }() // a no-op after Commit

		copyIn := func(table string, cols []string, src pgx.CopyFromSource) error {
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{table}, cols, src); err != nil {
				return fmt.Errorf("copying %s: %w", table, err)
			}
			return nil
		}
		if err := copyIn("acs_domains", domainCols, pgx.CopyFromSlice(g.s.Domains, func(i int) ([]any, error) { return g.domainRow(i), nil })); err != nil {
			return err
		}
		if err := copyIn("acs_manufacturers", mfCols, pgx.CopyFromSlice(g.s.Manufacturers, func(i int) ([]any, error) { return g.manufacturerRow(i), nil })); err != nil {
			return err
		}
		if err := copyIn("acs_product_classes", classCols, pgx.CopyFromSlice(g.s.Models, func(i int) ([]any, error) { return g.classRow(i), nil })); err != nil {
			return err
		}
		devices := pgx.CopyFromFunc(func() ([]any, error) {
			if g.done() {
				return nil, nil
			}
			d := g.device()
			if g.next%progressEvery == 0 || g.done() {
				progress(g.next)
			}
			return d.row(g.now), nil
		})
		if err := copyIn("acs_devices", deviceCols, devices); err != nil {
			return err
		}
		return tx.Commit(ctx)
	})
}

// sqliteBatch is the number of device rows per INSERT: 12 columns x 2000
// rows = 24,000 variables, below SQLite's limit of 32,766.
const sqliteBatch = 2000

// loadSQLite writes everything in one transaction with multi-row INSERTs
// of a prepared statement: one transaction avoids a commit (and a WAL
// checkpoint) per batch, and multi-row statements cut the per-statement
// overhead of the driver.
func loadSQLite(ctx context.Context, db *sqlstore.DB, g *generator, progress func(int)) error {
	return db.InTx(ctx, func(tx *sql.Tx) error {
		// A page cache of 256MB instead of the default 2MB keeps the
		// index pages of a large load in memory instead of spilling
		// them to the WAL again and again: a million devices load
		// about 20% faster. The pooled connection gets its own size
		// back before the transaction ends.
		var cache int
		if err := tx.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&cache); err != nil {
			return fmt.Errorf("reading the page cache size: %w", err)
		}
		if _, err := tx.ExecContext(ctx, "PRAGMA cache_size = -262144"); err != nil {
			return fmt.Errorf("growing the page cache: %w", err)
		}
		defer func() { _, _ = tx.ExecContext(ctx, "PRAGMA cache_size = "+strconv.Itoa(cache)) }()
		if err := insertRows(ctx, tx, "acs_domains", domainCols, g.s.Domains, g.domainRow, nil); err != nil {
			return err
		}
		if err := insertRows(ctx, tx, "acs_manufacturers", mfCols, g.s.Manufacturers, g.manufacturerRow, nil); err != nil {
			return err
		}
		if err := insertRows(ctx, tx, "acs_product_classes", classCols, g.s.Models, g.classRow, nil); err != nil {
			return err
		}
		row := func(int) []any {
			d := g.device()
			return d.row(g.now)
		}
		return insertRows(ctx, tx, "acs_devices", deviceCols, g.counts.Devices, row, progress)
	})
}

// insertRows inserts n rows, row(i) for i in order, in multi-row INSERTs
// of at most sqliteBatch rows (fewer for wide tables), calling progress
// after each statement.
func insertRows(ctx context.Context, tx *sql.Tx, table string, cols []string, n int, row func(int) []any, progress func(int)) error {
	batch := min(sqliteBatch, 32000/len(cols))
	var (
		full *sql.Stmt
		args = make([]any, 0, batch*len(cols))
	)
	defer func() {
		if full != nil {
			full.Close()
		}
	}()
	for done := 0; done < n; {
		size := min(batch, n-done)
		args = args[:0]
		for i := range size {
			args = append(args, row(done+i)...)
		}
		var err error
		if size == batch {
			if full == nil {
				if full, err = tx.PrepareContext(ctx, insertSQL(table, cols, size)); err != nil {
					return fmt.Errorf("preparing insert into %s: %w", table, err)
				}
			}
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, insertSQL(table, cols, size), args...)
		}
		if err != nil {
			return fmt.Errorf("inserting into %s: %w", table, err)
		}
		done += size
		if progress != nil {
			progress(done)
		}
	}
	return nil
}

func insertSQL(table string, cols []string, rows int) string {
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	var b strings.Builder
	b.WriteString("INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES ")
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(one)
	}
	return b.String()
}
