package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// DB is a connection pool that knows its dialect. It embeds *sql.DB, so
// services use the familiar database/sql methods on it directly.
type DB struct {
	*sql.DB
	dialect Dialect
	cfg     Config
}

// Dialect returns the dialect the database speaks.
func (db *DB) Dialect() Dialect { return db.dialect }

// Config returns the configuration the database was opened with, defaults
// filled in. Opening it again gives a second, independent pool on the same
// database. The DSN may hold a password: do not log it.
func (db *DB) Config() Config { return db.cfg }

// Rebind rewrites the ? placeholders of query into the dialect's native
// form, so that a store writes each query once for every dialect. For
// PostgreSQL they become $1, $2, ... in order; question marks inside string
// literals, quoted identifiers and comments are left alone. SQLite and MySQL
// get the query unchanged.
func (db *DB) Rebind(query string) string { return rebind(db.dialect, query) }

// InTx runs fn in a transaction. It commits when fn returns nil. It rolls
// back when fn returns an error, which InTx then returns as is (joined with
// the rollback's error should that fail too), and when fn panics, in which
// case the panic continues after the rollback.
//
// fn must do all its work through the *sql.Tx it is given. On SQLite a
// read-write transaction holds the database's single write lock, so a write
// through db from inside fn waits for a lock its own caller holds and fails
// with SQLITE_BUSY once the busy timeout expires.
func (db *DB) InTx(ctx context.Context, fn func(*sql.Tx) error) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("beginning transaction: %w", err)
	}
	committed := false
	defer func() {
		if committed {
			return
		}
		// Runs on error and on panic alike; a panic keeps unwinding
		// after the deferred call returns.
		if rbErr := tx.Rollback(); rbErr != nil && !errors.Is(rbErr, sql.ErrTxDone) && err != nil {
			err = errors.Join(err, fmt.Errorf("rolling back transaction: %w", rbErr))
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	committed = true
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing transaction: %w", err)
	}
	return nil
}
