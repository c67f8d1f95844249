package sqlstore_test

import (
	"database/sql"
	"errors"
	"testing"

	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
)

func mustExec(t *testing.T, db *sqlstore.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(t.Context(), db.Rebind(query), args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func count(t *testing.T, db *sqlstore.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(t.Context(), db.Rebind(query), args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func TestRebindOnServer(t *testing.T) {
	sqltest.ForEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		mustExec(t, db, "CREATE TABLE r (a VARCHAR(20), b VARCHAR(20), c INTEGER)")
		// The literal '?' must reach the database as text, not as a
		// placeholder, or the argument count would not match.
		mustExec(t, db, "INSERT INTO r (a, b, c) VALUES (?, '?', ?) -- a comment?", "x", 7)
		if n := count(t, db, "SELECT COUNT(*) FROM r WHERE a = ? AND b = '?' AND c = ?", "x", 7); n != 1 {
			t.Fatalf("found %d rows, want 1", n)
		}
	})
}

func TestInTx(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name      string
		fn        func(tx *sql.Tx) error // after inserting one row
		wantErr   error
		wantPanic any
		wantRows  int
	}{
		{name: "commit", fn: func(*sql.Tx) error { return nil }, wantRows: 1},
		{name: "error rolls back", fn: func(*sql.Tx) error { return errBoom }, wantErr: errBoom},
		{name: "panic rolls back", fn: func(*sql.Tx) error { panic("kaput") }, wantPanic: "kaput"},
		{name: "fn may roll back itself", fn: func(tx *sql.Tx) error { tx.Rollback(); return errBoom }, wantErr: errBoom},
	}
	sqltest.ForEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		mustExec(t, db, "CREATE TABLE tx_items (id INTEGER PRIMARY KEY)")
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var gotPanic any
				var err error
				func() {
					defer func() { gotPanic = recover() }()
					err = db.InTx(t.Context(), func(tx *sql.Tx) error {
						if _, err := tx.ExecContext(t.Context(), db.Rebind("INSERT INTO tx_items (id) VALUES (?)"), i); err != nil {
							return err
						}
						return tt.fn(tx)
					})
				}()
				if gotPanic != tt.wantPanic {
					t.Fatalf("panic = %v, want %v", gotPanic, tt.wantPanic)
				}
				if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Fatalf("InTx = %v, want %v", err, tt.wantErr)
				}
				if n := count(t, db, "SELECT COUNT(*) FROM tx_items WHERE id = ?", i); n != tt.wantRows {
					t.Fatalf("%d rows after InTx, want %d", n, tt.wantRows)
				}
				// A connection left inside a transaction would make
				// later work on the pool fail or block.
				if got := db.Stats().InUse; got != 0 {
					t.Fatalf("%d connections still in use", got)
				}
			})
		}
	})
}
