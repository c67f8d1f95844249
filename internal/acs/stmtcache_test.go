package acs

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
)

func TestStmtCache(t *testing.T) {
	for _, d := range []sqlstore.Dialect{sqlstore.SQLite, sqlstore.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			s, err := OpenStore(ctx, sqltest.Open(t, d), 1)
			if err != nil {
				t.Fatal(err)
			}
			// A transaction meeting a query text nobody prepared yet, with
			// every pooled connection taken (here the pool's only one, by
			// the transaction itself): preparing synchronously there waited
			// for a connection forever.
			s.db.SetMaxOpenConns(1)
			tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			err = s.db.InTx(tctx, func(tx *sql.Tx) error {
				var n int
				return s.txQueryRow(tctx, tx, "SELECT COUNT(*) + 1 FROM acs_devices").Scan(&n)
			})
			cancel()
			if err != nil {
				t.Fatalf("transaction with a new query text on a full pool: %v", err)
			}
			s.db.SetMaxOpenConns(4)
			// More transactions than connections, all at once.
			var wg sync.WaitGroup
			errs := make(chan error, 16)
			for g := range 16 {
				wg.Go(func() {
					errs <- s.db.InTx(ctx, func(tx *sql.Tx) error {
						var n int
						return s.txQueryRow(ctx, tx, fmt.Sprintf("SELECT COUNT(*) + %d FROM acs_devices", g%3)).Scan(&n)
					})
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatalf("transaction: %v", err)
				}
			}

			// Past the bound, queries still run, unprepared.
			for i := range maxCachedStmts + 20 {
				var n int
				if err := s.queryRow(ctx, fmt.Sprintf("SELECT %d", i)).Scan(&n); err != nil || n != i {
					t.Fatalf("query %d: %d, %v", i, n, err)
				}
			}
			s.stmts.mu.RLock()
			size := len(s.stmts.m)
			s.stmts.mu.RUnlock()
			if size > maxCachedStmts {
				t.Fatalf("cache holds %d statements, bound %d", size, maxCachedStmts)
			}

			// A query that does not prepare reports its error the usual way
			// and leaves nothing cached.
			var n int
			if err := s.queryRow(ctx, "SELECT nope FROM nowhere").Scan(&n); err == nil {
				t.Fatal("a broken query succeeded")
			}
			s.stmts.mu.RLock()
			_, cached := s.stmts.m["SELECT nope FROM nowhere"]
			s.stmts.mu.RUnlock()
			if cached {
				t.Fatal("a broken query was cached")
			}
		})
	}
}
