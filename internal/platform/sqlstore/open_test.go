package sqlstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"

	"github.com/go-sql-driver/mysql"
)

func TestOpen(t *testing.T) {
	sqltest.ForEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		if err := db.PingContext(t.Context()); err != nil {
			t.Fatalf("Ping: %v", err)
		}
		if got := db.Dialect().String(); got != t.Name()[strings.LastIndex(t.Name(), "/")+1:] {
			t.Errorf("Dialect() = %q, want the subtest's dialect", got)
		}
		var one int
		if err := db.QueryRowContext(t.Context(), "SELECT 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("SELECT 1 = %d, %v", one, err)
		}
		cfg := db.Config()
		if cfg.MaxOpenConns <= 0 || cfg.MaxIdleConns != cfg.MaxOpenConns || cfg.ConnectTimeout <= 0 {
			t.Errorf("Config() = %+v, want the pool defaults filled in", cfg)
		}
		if got := db.Stats().MaxOpenConnections; got != cfg.MaxOpenConns {
			t.Errorf("pool MaxOpenConnections = %d, want %d", got, cfg.MaxOpenConns)
		}
	})
}

func TestOpenSQLiteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "dir", "acs.db")
	db, err := sqlstore.OpenSQLiteFile(t.Context(), path)
	if err != nil {
		t.Fatalf("OpenSQLiteFile: %v", err)
	}
	defer db.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file not created: %v", err)
	}
	pragmas := []struct {
		name string
		want string
	}{
		{"journal_mode", "wal"},
		{"foreign_keys", "1"},
		{"busy_timeout", "10000"},
		{"synchronous", "1"}, // NORMAL
	}
	for _, p := range pragmas {
		var got string
		if err := db.QueryRowContext(t.Context(), "PRAGMA "+p.name).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s: %v", p.name, err)
		}
		if got != p.want {
			t.Errorf("PRAGMA %s = %q, want %q", p.name, got, p.want)
		}
	}
}

func TestOpenSQLiteMemory(t *testing.T) {
	db, err := sqlstore.Open(t.Context(), sqlstore.Config{Dialect: sqlstore.SQLite, DSN: ":memory:", MaxOpenConns: 8})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	if got := db.Stats().MaxOpenConnections; got != 1 {
		t.Errorf("MaxOpenConnections = %d, want 1 for an in-memory database", got)
	}
	// With more than one connection the second statement could land on
	// another, empty, in-memory database.
	if _, err := db.ExecContext(t.Context(), "CREATE TABLE m (x INTEGER)"); err != nil {
		t.Fatalf("CREATE TABLE: %v", err)
	}
	if _, err := db.ExecContext(t.Context(), "INSERT INTO m VALUES (1)"); err != nil {
		t.Fatalf("INSERT: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	tests := []struct {
		name    string
		cfg     sqlstore.Config
		wantErr string
	}{
		{"invalid config", sqlstore.Config{Dialect: "oracle", DSN: "x"}, "Dialect"},
		{"sqlite deferred transactions", sqlstore.Config{Dialect: sqlstore.SQLite, DSN: filepath.Join(t.TempDir(), "x.db") + "?_txlock=deferred"}, "_txlock"},
		{"bad postgres DSN", sqlstore.Config{Dialect: sqlstore.Postgres, DSN: "postgres://[::1"}, "DSN"},
		{"bad mysql DSN", sqlstore.Config{Dialect: sqlstore.MySQL, DSN: "no-slash"}, "DSN"},
		// Port 1 refuses connections at once, so these do not wait.
		{"postgres unreachable", sqlstore.Config{Dialect: sqlstore.Postgres, DSN: "postgres://u@127.0.0.1:1/db", ConnectTimeout: 5 * time.Second}, "connecting to postgres"},
		{"mysql unreachable", sqlstore.Config{Dialect: sqlstore.MySQL, DSN: "u@tcp(127.0.0.1:1)/db", ConnectTimeout: 5 * time.Second}, "connecting to mysql"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := sqlstore.Open(t.Context(), tt.cfg)
			if err == nil {
				db.Close()
				t.Fatalf("Open succeeded, want an error containing %q", tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Open error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestOpenMySQLForcesParams opens the test database through a DSN without
// parseTime and multiStatements and checks that both are on anyway.
func TestOpenMySQLForcesParams(t *testing.T) {
	base := sqltest.Open(t, sqlstore.MySQL)
	mcfg, err := mysql.ParseDSN(base.Config().DSN)
	if err != nil {
		t.Fatalf("ParseDSN: %v", err)
	}
	mcfg.ParseTime, mcfg.MultiStatements = false, false
	cfg := base.Config()
	cfg.DSN = mcfg.FormatDSN()
	db, err := sqlstore.Open(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()

	if _, err := db.ExecContext(t.Context(), "CREATE TABLE ts (at DATETIME(6)); INSERT INTO ts VALUES ('2024-05-06 07:08:09.5')"); err != nil {
		t.Fatalf("multi-statement Exec: %v", err)
	}
	var at time.Time
	if err := db.QueryRowContext(t.Context(), "SELECT at FROM ts").Scan(&at); err != nil {
		t.Fatalf("scanning DATETIME into time.Time: %v", err)
	}
	if want := time.Date(2024, 5, 6, 7, 8, 9, 5e8, time.UTC); !at.Equal(want) {
		t.Errorf("at = %v, want %v", at, want)
	}
	var tz string
	if err := db.QueryRowContext(t.Context(), "SELECT @@session.time_zone").Scan(&tz); err != nil || tz != "+00:00" {
		t.Errorf("session time_zone = %q, %v; want +00:00", tz, err)
	}
}

// TestOpenSecondPool checks that Config() opens another pool on the same
// database, which the concurrency tests rely on to act as a second process.
func TestOpenSecondPool(t *testing.T) {
	sqltest.ForEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		if _, err := db.ExecContext(t.Context(), "CREATE TABLE shared (x INTEGER)"); err != nil {
			t.Fatalf("CREATE TABLE: %v", err)
		}
		other, err := sqlstore.Open(context.Background(), db.Config())
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer other.Close()
		if _, err := other.ExecContext(t.Context(), "INSERT INTO shared VALUES (1)"); err != nil {
			t.Fatalf("second pool does not see the first one's table: %v", err)
		}
	})
}

func TestOpenService(t *testing.T) {
	dir := t.TempDir()
	def := filepath.Join(dir, "default.db")
	db, err := sqlstore.OpenService(context.Background(), "sqlite", "", def)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := os.Stat(def); err != nil {
		t.Fatalf("empty DSN must open the default file: %v", err)
	}
	named := filepath.Join(dir, "named.db")
	db, err = sqlstore.OpenService(context.Background(), "sqlite", named, def)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := os.Stat(named); err != nil {
		t.Fatalf("a DSN names the file: %v", err)
	}
	if _, err := sqlstore.OpenService(context.Background(), "postgres", "", def); err == nil {
		t.Fatal("postgres without a DSN must fail")
	}
}
