package sqlstore

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"testing/fstest"
)

// BenchmarkOpenMigrateSQLite is the start-up cost a service pays for its
// embedded database: open a new SQLite file (WAL, pragmas) and apply five
// migrations.
func BenchmarkOpenMigrateSQLite(b *testing.B) {
	fsys := fstest.MapFS{}
	for i := 1; i <= 5; i++ {
		fsys["sqlite/000"+strconv.Itoa(i)+"_t.sql"] = &fstest.MapFile{Data: []byte(
			"CREATE TABLE t" + strconv.Itoa(i) + " (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, created_at TIMESTAMP);")}
	}
	dir := b.TempDir()
	ctx := context.Background()
	n := 0
	for b.Loop() {
		n++
		db, err := OpenSQLiteFile(ctx, filepath.Join(dir, strconv.Itoa(n), "svc.db"))
		if err != nil {
			b.Fatal(err)
		}
		if err := Migrate(ctx, db, "bench", fsys); err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
}
