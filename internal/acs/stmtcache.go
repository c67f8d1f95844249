package acs

import (
	"context"
	"database/sql"
	"sync"
)

// maxCachedStmts bounds the statement cache. The store's fixed queries are
// well under it; queries built at run time (filters, IN lists, multi-row
// inserts of varying size) fill the rest, and once it is full a new query
// text runs unprepared, as it did without the cache.
const maxCachedStmts = 256

// stmtCache keeps the store's statements prepared by query text. The
// pure-Go SQLite engine spends about as long parsing a statement as
// running it (a sixth of a campaign's CPU before this cache), and the
// queries that run per session and per diagnostic are few and fixed.
// database/sql prepares each statement once per pooled connection and
// reuses it inside transactions on that connection.
type stmtCache struct {
	db *sql.DB
	mu sync.RWMutex
	m  map[string]*sql.Stmt
}

func newStmtCache(db *sql.DB) *stmtCache { return &stmtCache{db: db, m: map[string]*sql.Stmt{}} }

// get returns the prepared statement of query, or nil when the cache is
// full or the query does not prepare (the caller then runs it unprepared,
// which reports the error the usual way).
//
// Preparing takes a pooled connection. Inside a transaction (inTx) the
// caller already holds one, and on SQLite the write lock too, so waiting
// for another could deadlock a full pool: there the statement is prepared
// in the background and this call runs unprepared.
func (c *stmtCache) get(ctx context.Context, query string, inTx bool) *sql.Stmt {
	c.mu.RLock()
	st, ok := c.m[query]
	full := len(c.m) >= maxCachedStmts
	c.mu.RUnlock()
	if ok || full {
		return st
	}
	if inTx {
		c.mu.Lock()
		if _, ok := c.m[query]; !ok && len(c.m) < maxCachedStmts {
			c.m[query] = nil // claimed: one background prepare per query
			go c.prepare(context.WithoutCancel(ctx), query)
		}
		c.mu.Unlock()
		return nil
	}
	return c.prepare(ctx, query)
}

// prepare prepares query and caches it.
func (c *stmtCache) prepare(ctx context.Context, query string) *sql.Stmt {
	// A caller's cancellation must not leave a failed entry behind.
	st, err := c.db.PrepareContext(context.WithoutCancel(ctx), query)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		if have, ok := c.m[query]; ok && have == nil {
			delete(c.m, query) // a later call may try again
		}
		return nil
	}
	if have := c.m[query]; have != nil {
		_ = st.Close() // prepared twice concurrently: keep the first
		return have
	}
	if _, claimed := c.m[query]; !claimed && len(c.m) >= maxCachedStmts {
		_ = st.Close()
		return nil
	}
	c.m[query] = st
	return st
}

func (s *Store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := s.stmts.get(ctx, query, false); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return s.db.ExecContext(ctx, query, args...)
}

func (s *Store) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := s.stmts.get(ctx, query, false); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return s.db.QueryContext(ctx, query, args...)
}

func (s *Store) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if st := s.stmts.get(ctx, query, false); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return s.db.QueryRowContext(ctx, query, args...)
}

// txStmt binds a cached statement to tx; it reuses the statement already
// prepared on the transaction's connection.
func (s *Store) txStmt(ctx context.Context, tx *sql.Tx, query string) *sql.Stmt {
	if st := s.stmts.get(ctx, query, true); st != nil {
		return tx.StmtContext(ctx, st)
	}
	return nil
}

func (s *Store) txExec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	if st := s.txStmt(ctx, tx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return tx.ExecContext(ctx, query, args...)
}

func (s *Store) txQuery(ctx context.Context, tx *sql.Tx, query string, args ...any) (*sql.Rows, error) {
	if st := s.txStmt(ctx, tx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return tx.QueryContext(ctx, query, args...)
}

func (s *Store) txQueryRow(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	if st := s.txStmt(ctx, tx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return tx.QueryRowContext(ctx, query, args...)
}
