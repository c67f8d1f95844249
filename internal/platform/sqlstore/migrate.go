package sqlstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Migrate brings the schema of service up to date by applying, in order, the
// migrations of db's dialect that the database has not recorded yet.
//
// Layout: migrations holds one directory per dialect, named sqlite, postgres
// and mysql, either at its root or under a migrations directory (so a
// service can pass its embed.FS of "migrations" as is). Each directory
// contains files named NNNN_name.sql, numbered from 1 without gaps; the
// number of leading zeros does not matter. Anything else in the directory is
// an error, so that a misnamed file is never silently skipped.
//
// Each migration runs in its own transaction together with its record in
// the schema_migrations table, which Migrate creates when absent and which
// several services may share (rows are keyed by service and version). On
// PostgreSQL and SQLite DDL is transactional, so a failed migration leaves
// nothing behind. MySQL commits implicitly after every DDL statement: a
// migration that fails part-way keeps the statements before the failure and
// is not recorded, so keep MySQL migrations to one DDL statement per file or
// make them safe to re-run. PostgreSQL statements that refuse to run in a
// transaction (CREATE INDEX CONCURRENTLY) cannot be used.
//
// Migrations are append-only: if the content or name of an applied file
// changed, Migrate fails naming the file; if the database records a version
// the files do not have (an older binary against a newer database), it
// fails too. Running Migrate again is a no-op.
//
// Several processes may call Migrate on one database at once; each migration
// is applied exactly once. PostgreSQL and MySQL serialise whole runs with an
// advisory lock (pg_advisory_lock, GET_LOCK) scoped to the schema or
// database. SQLite needs no extra lock: each migration's transaction begins
// IMMEDIATE, holding the database's only write lock, and checks again
// inside it whether the migration was applied meanwhile.
func Migrate(ctx context.Context, db *DB, service string, migrations fs.FS) error {
	if service == "" || len(service) > maxServiceLen {
		return fmt.Errorf("migrating: service name must have 1 to %d bytes, got %q", maxServiceLen, service)
	}
	files, err := loadMigrations(migrations, db.dialect)
	if err != nil {
		return fmt.Errorf("migrating %s: %w", service, err)
	}

	// One pinned connection carries the session lock and every statement,
	// so a pool limited to one connection cannot deadlock against it.
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrating %s: acquiring connection: %w", service, err)
	}
	defer conn.Close()

	unlock, err := lockMigrations(ctx, conn, db.dialect)
	if err != nil {
		return fmt.Errorf("migrating %s: %w", service, err)
	}
	defer unlock()

	if _, err := conn.ExecContext(ctx, versionTableDDL[db.dialect]); err != nil {
		return fmt.Errorf("migrating %s: creating schema_migrations: %w", service, err)
	}
	applied, err := appliedMigrations(ctx, conn, db, service)
	if err != nil {
		return fmt.Errorf("migrating %s: %w", service, err)
	}
	if err := checkApplied(files, applied); err != nil {
		return fmt.Errorf("migrating %s: %w", service, err)
	}
	for _, m := range files {
		if _, ok := applied[m.version]; ok {
			continue
		}
		if err := applyMigration(ctx, conn, db, service, m); err != nil {
			return fmt.Errorf("migrating %s: %w", service, err)
		}
	}
	return nil
}

// maxServiceLen and maxNameLen match the column sizes of schema_migrations.
const (
	maxServiceLen = 100
	maxNameLen    = 255
)

// versionTableDDL creates the version table in each dialect's types.
// MySQL uses DATETIME because its TIMESTAMP ends in 2038 and, on older
// servers, updates itself on every row change.
var versionTableDDL = map[Dialect]string{
	SQLite: `CREATE TABLE IF NOT EXISTS schema_migrations (
	service    TEXT      NOT NULL,
	version    INTEGER   NOT NULL,
	name       TEXT      NOT NULL,
	checksum   TEXT      NOT NULL,
	applied_at TIMESTAMP NOT NULL,
	PRIMARY KEY (service, version)
)`,
	Postgres: `CREATE TABLE IF NOT EXISTS schema_migrations (
	service    VARCHAR(100) NOT NULL,
	version    INTEGER      NOT NULL,
	name       VARCHAR(255) NOT NULL,
	checksum   CHAR(64)     NOT NULL,
	applied_at TIMESTAMPTZ  NOT NULL,
	PRIMARY KEY (service, version)
)`,
	MySQL: `CREATE TABLE IF NOT EXISTS schema_migrations (
	service    VARCHAR(100) NOT NULL,
	version    INTEGER      NOT NULL,
	name       VARCHAR(255) NOT NULL,
	checksum   CHAR(64)     NOT NULL,
	applied_at DATETIME(6)  NOT NULL,
	PRIMARY KEY (service, version)
)`,
}

// migration is one parsed migration file.
type migration struct {
	version  int
	name     string // file name, e.g. 0001_init.sql
	path     string // path inside the fs.FS, for error messages
	sql      string
	checksum string // hex SHA-256 of the file's bytes
}

// appliedMigration is one row of schema_migrations.
type appliedMigration struct {
	name, checksum string
}

var migrationName = regexp.MustCompile(`^([0-9]+)_([A-Za-z0-9][A-Za-z0-9_.-]*)\.sql$`)

// loadMigrations reads and validates the migration files of dialect d.
func loadMigrations(fsys fs.FS, d Dialect) ([]migration, error) {
	dir := string(d)
	if st, err := fs.Stat(fsys, dir); err != nil || !st.IsDir() {
		alt := path.Join("migrations", dir)
		if st, err := fs.Stat(fsys, alt); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("no migrations for dialect %s: want a directory %s/ or %s/", d, dir, alt)
		}
		dir = alt
	}
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("reading migrations: %w", err)
	}

	var files []migration
	for _, e := range entries {
		p := path.Join(dir, e.Name())
		if e.IsDir() {
			return nil, fmt.Errorf("unexpected directory %s among migrations", p)
		}
		match := migrationName.FindStringSubmatch(e.Name())
		if match == nil {
			return nil, fmt.Errorf("bad migration file name %s: want NNNN_name.sql", p)
		}
		if len(e.Name()) > maxNameLen {
			return nil, fmt.Errorf("bad migration file name %s: longer than %d bytes", p, maxNameLen)
		}
		version, err := strconv.Atoi(match[1])
		if err != nil || version > 1<<31-1 {
			return nil, fmt.Errorf("bad migration file name %s: version number out of range", p)
		}
		body, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, fmt.Errorf("reading migration %s: %w", p, err)
		}
		sum := sha256.Sum256(body)
		files = append(files, migration{
			version: version, name: e.Name(), path: p,
			sql: string(body), checksum: hex.EncodeToString(sum[:]),
		})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no migration files in %s", dir)
	}

	sort.Slice(files, func(i, j int) bool { return files[i].version < files[j].version })
	for i, m := range files {
		switch {
		case i > 0 && m.version == files[i-1].version:
			return nil, fmt.Errorf("duplicate migration version %d: %s and %s", m.version, files[i-1].path, m.path)
		case m.version != i+1 && i == 0:
			return nil, fmt.Errorf("migrations must start at version 1, but the first is %s", m.path)
		case m.version != i+1:
			return nil, fmt.Errorf("gap in migrations: %s follows %s (version %d is missing)", m.path, files[i-1].path, i+1)
		}
	}
	return files, nil
}

// appliedMigrations returns the recorded migrations of service by version.
func appliedMigrations(ctx context.Context, conn *sql.Conn, db *DB, service string) (map[int]appliedMigration, error) {
	rows, err := conn.QueryContext(ctx,
		db.Rebind("SELECT version, name, checksum FROM schema_migrations WHERE service = ?"), service)
	if err != nil {
		return nil, fmt.Errorf("reading schema_migrations: %w", err)
	}
	defer rows.Close()
	applied := map[int]appliedMigration{}
	for rows.Next() {
		var (
			version int
			a       appliedMigration
		)
		if err := rows.Scan(&version, &a.name, &a.checksum); err != nil {
			return nil, fmt.Errorf("reading schema_migrations: %w", err)
		}
		applied[version] = a
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading schema_migrations: %w", err)
	}
	return applied, nil
}

// checkApplied enforces the append-only rule against what the database
// recorded.
func checkApplied(files []migration, applied map[int]appliedMigration) error {
	for _, m := range files {
		if a, ok := applied[m.version]; ok {
			if err := sameMigration(m, a); err != nil {
				return err
			}
		}
	}
	for version, a := range applied {
		if version < 1 || version > len(files) {
			return fmt.Errorf("the database has migration %d (%s) applied, but this binary has only %d migrations: is it older than the database?",
				version, a.name, len(files))
		}
	}
	return nil
}

// sameMigration checks that file m is the migration recorded as a.
func sameMigration(m migration, a appliedMigration) error {
	if a.checksum != m.checksum {
		return fmt.Errorf("%s changed after it was applied (checksum %.12s, recorded %.12s); migrations are append-only, add a new one instead",
			m.path, m.checksum, a.checksum)
	}
	if a.name != m.name {
		return fmt.Errorf("%s was applied as version %d under the name %s; migrations are append-only, do not rename them",
			m.path, m.version, a.name)
	}
	return nil
}

// applyMigration runs one migration and records it in one transaction.
func applyMigration(ctx context.Context, conn *sql.Conn, db *DB, service string, m migration) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("applying %s: beginning transaction: %w", m.path, err)
	}
	defer tx.Rollback() // A no-op after Commit.

	// Checked again inside the transaction: on SQLite, where no advisory
	// lock is taken, this read happens under the write lock, so another
	// process that applied the migration meanwhile is seen here.
	var a appliedMigration
	err = tx.QueryRowContext(ctx,
		db.Rebind("SELECT name, checksum FROM schema_migrations WHERE service = ? AND version = ?"),
		service, m.version).Scan(&a.name, &a.checksum)
	switch {
	case err == nil:
		return sameMigration(m, a)
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("applying %s: reading schema_migrations: %w", m.path, err)
	}

	// Some drivers reject an empty statement; a blank file is a valid
	// placeholder that keeps the numbering of a dialect that needs no
	// change.
	if strings.TrimSpace(m.sql) != "" {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("applying %s: %w", m.path, err)
		}
	}
	if _, err := tx.ExecContext(ctx,
		db.Rebind("INSERT INTO schema_migrations (service, version, name, checksum, applied_at) VALUES (?, ?, ?, ?, ?)"),
		service, m.version, m.name, m.checksum, time.Now().UTC()); err != nil {
		return fmt.Errorf("applying %s: recording it in schema_migrations: %w", m.path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("applying %s: committing: %w", m.path, err)
	}
	return nil
}
