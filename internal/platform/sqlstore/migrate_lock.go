package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"time"
)

// lockMigrations takes the dialect's migration lock on conn and returns the
// function that releases it. The lock is scoped to the PostgreSQL schema or
// the MySQL database, so that isolated test schemas on one server do not
// wait for each other, while processes sharing a schema do.
func lockMigrations(ctx context.Context, conn *sql.Conn, d Dialect) (unlock func(), err error) {
	switch d {
	case Postgres:
		return lockPostgres(ctx, conn)
	case MySQL:
		return lockMySQL(ctx, conn)
	}
	// SQLite: every migration transaction begins IMMEDIATE and so already
	// holds the database's only write lock; see Migrate.
	return func() {}, nil
}

// unlockTimeout bounds the release of a lock, which runs even when the
// caller's context is already cancelled.
const unlockTimeout = 5 * time.Second

func lockPostgres(ctx context.Context, conn *sql.Conn) (func(), error) {
	var schema sql.NullString
	if err := conn.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return nil, fmt.Errorf("finding current schema: %w", err)
	}
	if !schema.Valid {
		return nil, errors.New("no current schema: the search_path names no existing schema")
	}
	key := lockKey("postgres/" + schema.String)
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
		return nil, fmt.Errorf("taking migration lock: %w", err)
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unlockTimeout)
		defer cancel()
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_unlock($1)", key); err != nil {
			discard(conn)
		}
	}, nil
}

// mysqlLockWait is how long one GET_LOCK call waits on the server. Migrate
// calls it again until it gets the lock or ctx ends, because MariaDB
// rejects GET_LOCK's "wait forever" value.
const mysqlLockWait = 10

func lockMySQL(ctx context.Context, conn *sql.Conn) (func(), error) {
	var database sql.NullString
	if err := conn.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&database); err != nil {
		return nil, fmt.Errorf("finding current database: %w", err)
	}
	if !database.Valid {
		return nil, errors.New("no current database: the DSN names none")
	}
	// Lock names are limited to 64 characters and database names may use
	// all of them, so the name carries a hash.
	name := fmt.Sprintf("cpesuite_migrate_%016x", uint64(lockKey("mysql/"+database.String)))
	for {
		var got sql.NullInt64
		if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, ?)", name, mysqlLockWait).Scan(&got); err != nil {
			return nil, fmt.Errorf("taking migration lock: %w", err)
		}
		if !got.Valid {
			return nil, errors.New("taking migration lock: GET_LOCK failed")
		}
		if got.Int64 == 1 {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("taking migration lock: %w", err)
		}
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unlockTimeout)
		defer cancel()
		if _, err := conn.ExecContext(ctx, "SELECT RELEASE_LOCK(?)", name); err != nil {
			discard(conn)
		}
	}, nil
}

// discard closes the physical connection behind conn instead of returning
// it to the pool. Session locks live as long as the session, so a
// connection whose unlock failed must not be reused: closing it is the
// release that always works.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
}

// lockKey hashes a lock scope into the int64 key space of
// pg_advisory_lock.
func lockKey(scope string) int64 {
	h := fnv.New64a()
	h.Write([]byte("cpesuite/sqlstore/migrate/" + scope))
	return int64(h.Sum64())
}
