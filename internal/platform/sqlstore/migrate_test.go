package sqlstore_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
)

// The migrations below are written in SQL that all three dialects accept,
// so one set serves every subtest.
const (
	createWidgets = "CREATE TABLE widgets (id INTEGER PRIMARY KEY, name VARCHAR(50) NOT NULL)"
	// Fails if 0001 has not run, and with a primary key violation if run twice.
	insertWidget = "INSERT INTO widgets (id, name) VALUES (1, 'first')"
	// Several statements in one file.
	addColor = "ALTER TABLE widgets ADD COLUMN color VARCHAR(20);\nUPDATE widgets SET color = 'red';\n"
)

// migrationsFS lays files out as a service's embedded migrations/ directory
// would be after fs.Sub: one directory per dialect.
func migrationsFS(d sqlstore.Dialect, files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, body := range files {
		fsys[string(d)+"/"+name] = &fstest.MapFile{Data: []byte(body)}
	}
	return fsys
}

type appliedRow struct {
	version   int
	name      string
	checksum  string
	appliedAt time.Time
}

func appliedRows(t *testing.T, db *sqlstore.DB, service string) []appliedRow {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), db.Rebind(
		"SELECT version, name, checksum, applied_at FROM schema_migrations WHERE service = ? ORDER BY version"), service)
	if err != nil {
		t.Fatalf("reading schema_migrations: %v", err)
	}
	defer rows.Close()
	var out []appliedRow
	for rows.Next() {
		var r appliedRow
		if err := rows.Scan(&r.version, &r.name, &r.checksum, &r.appliedAt); err != nil {
			t.Fatalf("scanning schema_migrations: %v", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("reading schema_migrations: %v", err)
	}
	return out
}

func migrate(t *testing.T, db *sqlstore.DB, service string, files map[string]string) {
	t.Helper()
	if err := sqlstore.Migrate(t.Context(), db, service, migrationsFS(db.Dialect(), files)); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
}

func TestMigrate(t *testing.T) {
	v1 := map[string]string{"0001_create_widgets.sql": createWidgets, "0002_insert_widget.sql": insertWidget}
	v2 := map[string]string{"0001_create_widgets.sql": createWidgets, "0002_insert_widget.sql": insertWidget, "0003_add_color.sql": addColor}

	sqltest.ForEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		before := time.Now().Add(-time.Minute)
		migrate(t, db, "acs", v1)

		first := appliedRows(t, db, "acs")
		wantNames := []string{"0001_create_widgets.sql", "0002_insert_widget.sql"}
		if len(first) != len(wantNames) {
			t.Fatalf("recorded %d migrations, want %d: %+v", len(first), len(wantNames), first)
		}
		for i, r := range first {
			if r.version != i+1 || r.name != wantNames[i] || len(r.checksum) != 64 || r.appliedAt.Before(before) {
				t.Errorf("record %d = %+v, want version %d, name %s, a sha256 checksum and a recent time", i, r, i+1, wantNames[i])
			}
		}

		t.Run("re-run is a no-op", func(t *testing.T) {
			migrate(t, db, "acs", v1)
			if again := appliedRows(t, db, "acs"); !equalRows(again, first) {
				t.Fatalf("records changed on re-run:\n got %+v\nwant %+v", again, first)
			}
		})

		t.Run("appended migration applies alone", func(t *testing.T) {
			// Re-running 0002 would fail on the duplicate primary key.
			migrate(t, db, "acs", v2)
			rows := appliedRows(t, db, "acs")
			if len(rows) != 3 || !equalRows(rows[:2], first) || rows[2].name != "0003_add_color.sql" {
				t.Fatalf("records = %+v, want the first two unchanged and 0003 added", rows)
			}
			if n := count(t, db, "SELECT COUNT(*) FROM widgets WHERE color = 'red'"); n != 1 {
				t.Fatalf("%d red widgets, want 1: every statement of 0003 must run", n)
			}
		})

		t.Run("another service shares the table", func(t *testing.T) {
			migrate(t, db, "fcc", map[string]string{"0001_create_gadgets.sql": "CREATE TABLE gadgets (id INTEGER PRIMARY KEY)"})
			if rows := appliedRows(t, db, "fcc"); len(rows) != 1 || rows[0].name != "0001_create_gadgets.sql" {
				t.Fatalf("fcc records = %+v", rows)
			}
			if rows := appliedRows(t, db, "acs"); len(rows) != 3 {
				t.Fatalf("acs records = %+v, want 3", rows)
			}
		})

		refusals := []struct {
			name    string
			files   map[string]string
			wantErr []string
		}{
			{
				name:    "changed checksum",
				files:   map[string]string{"0001_create_widgets.sql": createWidgets + " ", "0002_insert_widget.sql": insertWidget, "0003_add_color.sql": addColor},
				wantErr: []string{"0001_create_widgets.sql", "changed after it was applied"},
			},
			{
				name:    "renamed",
				files:   map[string]string{"0001_create_widgets.sql": createWidgets, "0002_insert.sql": insertWidget, "0003_add_color.sql": addColor},
				wantErr: []string{"0002_insert.sql", "0002_insert_widget.sql", "rename"},
			},
			{
				name:    "database ahead of the files",
				files:   v1,
				wantErr: []string{"migration 3 (0003_add_color.sql)", "only 2 migrations"},
			},
		}
		for _, tt := range refusals {
			t.Run("refuses "+tt.name, func(t *testing.T) {
				err := sqlstore.Migrate(t.Context(), db, "acs", migrationsFS(db.Dialect(), tt.files))
				for _, want := range tt.wantErr {
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Fatalf("Migrate = %v, want an error containing %q", err, want)
					}
				}
				if rows := appliedRows(t, db, "acs"); len(rows) != 3 {
					t.Fatalf("records = %+v, want the 3 earlier ones untouched", rows)
				}
			})
		}
	})
}

func equalRows(a, b []appliedRow) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].version != b[i].version || a[i].name != b[i].name || a[i].checksum != b[i].checksum || !a[i].appliedAt.Equal(b[i].appliedAt) {
			return false
		}
	}
	return true
}

// TestMigrateFailure checks that a failing migration is not recorded, and
// that on dialects with transactional DDL it leaves nothing behind.
func TestMigrateFailure(t *testing.T) {
	sqltest.ForEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		files := map[string]string{
			"0001_create_widgets.sql": createWidgets,
			"0002_broken.sql":         "CREATE TABLE half (id INTEGER);\nINSERT INTO no_such_table VALUES (1);\n",
		}
		err := sqlstore.Migrate(t.Context(), db, "acs", migrationsFS(db.Dialect(), files))
		if err == nil || !strings.Contains(err.Error(), "0002_broken.sql") {
			t.Fatalf("Migrate = %v, want an error naming 0002_broken.sql", err)
		}
		if rows := appliedRows(t, db, "acs"); len(rows) != 1 {
			t.Fatalf("records = %+v, want only 0001", rows)
		}
		_, err = db.ExecContext(t.Context(), "SELECT COUNT(*) FROM half")
		halfExists := err == nil
		// MySQL commits each DDL statement at once, as Migrate documents.
		if wantHalf := db.Dialect() == sqlstore.MySQL; halfExists != wantHalf {
			t.Fatalf("table from the failed migration exists: %v, want %v", halfExists, wantHalf)
		}
	})
}

func TestMigrateRefusesBadFiles(t *testing.T) {
	tests := []struct {
		name    string
		service string
		fsys    fstest.MapFS
		wantErr string
	}{
		{"empty service", "", migrationsFS(sqlstore.SQLite, map[string]string{"0001_a.sql": ""}), "service name"},
		{"no dialect directory", "acs", migrationsFS(sqlstore.Postgres, map[string]string{"0001_a.sql": ""}), "no migrations for dialect sqlite"},
		{"name without number", "acs", migrationsFS(sqlstore.SQLite, map[string]string{"0001_a.sql": "", "init.sql": ""}), "bad migration file name sqlite/init.sql"},
		{"name without underscore", "acs", migrationsFS(sqlstore.SQLite, map[string]string{"0001.sql": ""}), "bad migration file name sqlite/0001.sql"},
		{"wrong extension", "acs", migrationsFS(sqlstore.SQLite, map[string]string{"0001_a.sql": "", "0002_b.txt": ""}), "bad migration file name sqlite/0002_b.txt"},
		{"stray file", "acs", migrationsFS(sqlstore.SQLite, map[string]string{"0001_a.sql": "", "README.md": ""}), "bad migration file name sqlite/README.md"},
		{"subdirectory", "acs", migrationsFS(sqlstore.SQLite, map[string]string{"0001_a.sql": "", "old/0001_a.sql": ""}), "unexpected directory sqlite/old"},
		{"gap", "acs", migrationsFS(sqlstore.SQLite, map[string]string{"0001_a.sql": "", "0003_c.sql": ""}), "sqlite/0003_c.sql follows sqlite/0001_a.sql (version 2 is missing)"},
		{"duplicate", "acs", migrationsFS(sqlstore.SQLite, map[string]string{"0001_a.sql": "", "0002_b.sql": "", "2_c.sql": ""}), "duplicate migration version 2"},
		{"not starting at 1", "acs", migrationsFS(sqlstore.SQLite, map[string]string{"0002_b.sql": ""}), "must start at version 1"},
	}
	db := sqltest.Open(t, sqlstore.SQLite)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := sqlstore.Migrate(t.Context(), db, tt.service, tt.fsys)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Migrate = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
	// Layout errors are found before the database is touched.
	if n := count(t, db, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'schema_migrations'"); n != 0 {
		t.Fatalf("schema_migrations was created by a refused Migrate")
	}
}

// TestMigrateEmbedLayout checks that an FS with a top-level migrations
// directory, as //go:embed migrations produces, works as is, and that a
// blank file is a valid placeholder.
func TestMigrateEmbedLayout(t *testing.T) {
	db := sqltest.Open(t, sqlstore.SQLite)
	fsys := fstest.MapFS{
		"migrations/sqlite/0001_create_widgets.sql": {Data: []byte(createWidgets)},
		"migrations/sqlite/0002_nothing.sql":        {Data: []byte("\n")},
		"migrations/postgres/0001_other.sql":        {Data: []byte("not sqlite")},
	}
	if err := sqlstore.Migrate(t.Context(), db, "acs", fsys); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	if rows := appliedRows(t, db, "acs"); len(rows) != 2 {
		t.Fatalf("records = %+v, want 2", rows)
	}
}

// TestMigrateConcurrent runs several Migrate calls at once on one database,
// through two pools as two processes would, and checks that each migration
// ran exactly once: 0001 fails if run twice, and 0002 and 0003 each leave a
// row per run.
func TestMigrateConcurrent(t *testing.T) {
	files := map[string]string{
		"0001_create_runs.sql": "CREATE TABLE runs (migration INTEGER NOT NULL)",
		"0002_second.sql":      "INSERT INTO runs (migration) VALUES (2)",
		"0003_third.sql":       "INSERT INTO runs (migration) VALUES (3)",
	}
	const callers = 6
	sqltest.ForEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		other, err := sqlstore.Open(context.Background(), db.Config())
		if err != nil {
			t.Fatalf("opening a second pool: %v", err)
		}
		defer other.Close()
		fsys := migrationsFS(db.Dialect(), files)

		start := make(chan struct{})
		errs := make(chan error, callers)
		var wg sync.WaitGroup
		for i := range callers {
			pool := db
			if i%2 == 1 {
				pool = other
			}
			wg.Go(func() {
				<-start
				errs <- sqlstore.Migrate(t.Context(), pool, "acs", fsys)
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("Migrate: %v", err)
			}
		}
		if n := count(t, db, "SELECT COUNT(*) FROM runs"); n != 2 {
			t.Errorf("runs has %d rows, want 2 (one per data migration)", n)
		}
		if rows := appliedRows(t, db, "acs"); len(rows) != 3 {
			t.Errorf("records = %+v, want 3", rows)
		}
	})
}
