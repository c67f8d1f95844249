// Package sqltest runs tests against every sqlstore dialect, each on a
// database of its own.
//
// SQLite databases are files in the test's temporary directory. PostgreSQL
// and MariaDB databases live on the local test servers (see
// cpesuite/internal/testutil), in a schema or database named t_<random> that
// is created for the test and dropped when it ends; tests can therefore run
// in parallel, and a failed test leaves nothing behind. When a server is not
// reachable its subtest is skipped, or fails under CPESUITE_REQUIRE_SERVICES=1.
package sqltest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/testutil"

	"github.com/go-sql-driver/mysql"
)

// Dialects lists every dialect in the order ForEachDialect runs them.
var Dialects = []sqlstore.Dialect{sqlstore.SQLite, sqlstore.Postgres, sqlstore.MySQL}

// ForEachDialect runs fn as one subtest per dialect, named sqlite, postgres
// and mysql, each with a fresh, empty database that is closed and removed
// when the subtest ends. fn may call t.Parallel.
func ForEachDialect(t *testing.T, fn func(t *testing.T, db *sqlstore.DB)) {
	t.Helper()
	ForDialects(t, Dialects, fn)
}

// ForDialects is ForEachDialect over the dialects a store supports: a
// store that has no MySQL migrations names the others instead of skipping.
func ForDialects(t *testing.T, dialects []sqlstore.Dialect, fn func(t *testing.T, db *sqlstore.DB)) {
	t.Helper()
	for _, d := range dialects {
		t.Run(string(d), func(t *testing.T) {
			fn(t, Open(t, d))
		})
	}
}

// Open returns a fresh, empty database of dialect d that is closed and
// removed when t ends. It skips t when the dialect's server is not
// reachable (or fails it, under CPESUITE_REQUIRE_SERVICES=1).
func Open(t testing.TB, d sqlstore.Dialect) *sqlstore.DB {
	t.Helper()
	var cfg sqlstore.Config
	switch d {
	case sqlstore.SQLite:
		cfg = sqlstore.Config{Dialect: d, DSN: filepath.Join(t.TempDir(), "test.db")}
	case sqlstore.Postgres:
		cfg = postgresSchema(t)
	case sqlstore.MySQL:
		cfg = mysqlDatabase(t)
	default:
		t.Fatalf("sqltest: unknown dialect %q", d)
	}
	return open(t, cfg)
}

// cleanupTimeout bounds creating and dropping a test schema or database: a
// safety net sized for a busy machine. Cleanup runs after the test's
// context is cancelled, so it needs a context of its own.
const cleanupTimeout = testutil.MinDeadline

// open opens cfg and closes the pool when t ends.
func open(t testing.TB, cfg sqlstore.Config) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("sqltest: opening %s database: %v", cfg.Dialect, err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("sqltest: closing %s database: %v", cfg.Dialect, err)
		}
	})
	return db
}

// postgresSchema creates a schema for t on the test server and returns a
// configuration whose connections use it through search_path.
func postgresSchema(t testing.TB) sqlstore.Config {
	t.Helper()
	base := testutil.RequirePostgres(t)
	name := randomName()
	admin := sqlstore.Config{Dialect: sqlstore.Postgres, DSN: base, MaxOpenConns: 1}
	adminExec(t, admin, "CREATE SCHEMA "+name, "DROP SCHEMA IF EXISTS "+name+" CASCADE")

	var dsn string
	if strings.Contains(base, "://") {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatalf("sqltest: parsing PostgreSQL DSN: %v", err)
		}
		q := u.Query()
		q.Set("search_path", name)
		u.RawQuery = q.Encode()
		dsn = u.String()
	} else {
		dsn = base + " search_path=" + name
	}
	return sqlstore.Config{Dialect: sqlstore.Postgres, DSN: dsn}
}

// mysqlDatabase creates a database for t on the test server and returns a
// configuration that uses it.
func mysqlDatabase(t testing.TB) sqlstore.Config {
	t.Helper()
	base := testutil.RequireMariaDB(t)
	name := randomName()
	admin := sqlstore.Config{Dialect: sqlstore.MySQL, DSN: base, MaxOpenConns: 1}
	adminExec(t, admin, "CREATE DATABASE "+name, "DROP DATABASE IF EXISTS "+name)

	mcfg, err := mysql.ParseDSN(base)
	if err != nil {
		t.Fatalf("sqltest: parsing MariaDB DSN: %v", err)
	}
	mcfg.DBName = name
	return sqlstore.Config{Dialect: sqlstore.MySQL, DSN: mcfg.FormatDSN()}
}

// adminExec runs create on the server's default database now and drop when
// t ends. The drop is registered before the caller opens its own pool, so
// it runs after that pool is closed.
func adminExec(t testing.TB, admin sqlstore.Config, create, drop string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	db, err := sqlstore.Open(ctx, admin)
	if err != nil {
		t.Fatalf("sqltest: opening %s admin connection: %v", admin.Dialect, err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, create); err != nil {
		t.Fatalf("sqltest: %s: %v", create, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		db, err := sqlstore.Open(ctx, admin)
		if err != nil {
			t.Errorf("sqltest: opening %s admin connection: %v", admin.Dialect, err)
			return
		}
		defer db.Close()
		if _, err := db.ExecContext(ctx, drop); err != nil {
			t.Errorf("sqltest: %s: %v", drop, err)
		}
	})
}

// randomName returns a fresh lower-case identifier that is valid unquoted
// in every dialect.
func randomName() string {
	var b [8]byte
	rand.Read(b[:]) // Never fails; see its documentation.
	return "t_" + hex.EncodeToString(b[:])
}
