package sqltest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
	"cpesuite/internal/testutil"
)

// whereIs names the database the pool uses: the SQLite file, the
// PostgreSQL schema or the MySQL database.
func whereIs(t *testing.T, db *sqlstore.DB) string {
	t.Helper()
	query := map[sqlstore.Dialect]string{
		sqlstore.SQLite:   "SELECT file FROM pragma_database_list WHERE name = 'main'",
		sqlstore.Postgres: "SELECT current_schema()",
		sqlstore.MySQL:    "SELECT DATABASE()",
	}[db.Dialect()]
	var name string
	if err := db.QueryRowContext(t.Context(), query).Scan(&name); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return name
}

// stillExists reports whether the database named by whereIs survived its test.
func stillExists(t *testing.T, d sqlstore.Dialect, name string) bool {
	t.Helper()
	var cfg sqlstore.Config
	var query string
	switch d {
	case sqlstore.SQLite:
		_, err := os.Stat(name)
		return err == nil
	case sqlstore.Postgres:
		cfg = sqlstore.Config{Dialect: d, DSN: testutil.RequirePostgres(t)}
		query = "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = $1"
	case sqlstore.MySQL:
		cfg = sqlstore.Config{Dialect: d, DSN: testutil.RequireMariaDB(t)}
		query = "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?"
	}
	db, err := sqlstore.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(t.Context(), query, name).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n > 0
}

func TestForEachDialect(t *testing.T) {
	names := map[sqlstore.Dialect]string{}
	sqltest.ForEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		if want := string(db.Dialect()); !strings.HasSuffix(t.Name(), "/"+want) {
			t.Errorf("subtest %s got a %s database", t.Name(), want)
		}
		names[db.Dialect()] = whereIs(t, db)
		if !strings.HasPrefix(filepath.Base(names[db.Dialect()]), "t_") && db.Dialect() != sqlstore.SQLite {
			t.Errorf("%s database is %q, want a t_<random> name", db.Dialect(), names[db.Dialect()])
		}

		// A second database of the same dialect is a different one.
		other := sqltest.Open(t, db.Dialect())
		if whereIs(t, other) == names[db.Dialect()] {
			t.Fatalf("two sqltest databases share %s", names[db.Dialect()])
		}
		if _, err := db.ExecContext(t.Context(), "CREATE TABLE mine (x INTEGER)"); err != nil {
			t.Fatalf("CREATE TABLE: %v", err)
		}
		if _, err := other.ExecContext(t.Context(), "CREATE TABLE mine (x INTEGER)"); err != nil {
			t.Fatalf("the other database sees this one's table: %v", err)
		}
	})
	for d, name := range names {
		if stillExists(t, d, name) {
			t.Errorf("%s database %s still exists after its test", d, name)
		}
	}
}
