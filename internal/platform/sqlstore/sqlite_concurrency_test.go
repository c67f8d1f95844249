package sqlstore_test

import (
	"database/sql"
	"sync"
	"testing"

	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
)

// TestSQLiteConcurrentWriters hammers one SQLite file from many goroutines
// and two pools with the write patterns services use: read-modify-write
// transactions, single-statement writes and reads in between. None may fail
// with SQLITE_BUSY, and no update may be lost.
func TestSQLiteConcurrentWriters(t *testing.T) {
	db := sqltest.Open(t, sqlstore.SQLite)
	other, err := sqlstore.Open(t.Context(), db.Config())
	if err != nil {
		t.Fatalf("opening a second pool: %v", err)
	}
	defer other.Close()
	mustExec(t, db, "CREATE TABLE seq (n INTEGER NOT NULL UNIQUE)")
	mustExec(t, db, "CREATE TABLE events (worker INTEGER NOT NULL, i INTEGER NOT NULL)")

	const workers, rounds = 16, 20
	start := make(chan struct{})
	errs := make(chan error, workers*rounds*3)
	var wg sync.WaitGroup
	for w := range workers {
		pool := db
		if w%2 == 1 {
			pool = other
		}
		wg.Go(func() {
			<-start
			for i := range rounds {
				// Read then write in one transaction: with deferred
				// transactions this is where SQLite fails without
				// waiting, and a lost update would break UNIQUE.
				errs <- pool.InTx(t.Context(), func(tx *sql.Tx) error {
					var next int
					if err := tx.QueryRowContext(t.Context(), "SELECT COALESCE(MAX(n), 0) + 1 FROM seq").Scan(&next); err != nil {
						return err
					}
					_, err := tx.ExecContext(t.Context(), "INSERT INTO seq (n) VALUES (?)", next)
					return err
				})
				_, err := pool.ExecContext(t.Context(), "INSERT INTO events (worker, i) VALUES (?, ?)", w, i)
				errs <- err
				var n int
				errs <- pool.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM events").Scan(&n)
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	failures := 0
	for err := range errs {
		if err != nil && failures < 5 {
			t.Errorf("concurrent use: %v", err)
			failures++
		}
	}
	if n := count(t, db, "SELECT COUNT(*) FROM seq"); n != workers*rounds {
		t.Errorf("seq has %d rows, want %d", n, workers*rounds)
	}
	if n := count(t, db, "SELECT MAX(n) FROM seq"); n != workers*rounds {
		t.Errorf("seq reached %d, want %d", n, workers*rounds)
	}
	if n := count(t, db, "SELECT COUNT(*) FROM events"); n != workers*rounds {
		t.Errorf("events has %d rows, want %d", n, workers*rounds)
	}
}
