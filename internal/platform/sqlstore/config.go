package sqlstore

import (
	"errors"
	"fmt"
	"runtime"
	"time"
)

// Config says which database to open and how to size its connection pool.
//
// Zero values select defaults: ConnectTimeout 10s; for SQLite
// max(4, GOMAXPROCS) connections, all kept idle, never recycled; for
// PostgreSQL and MySQL 25 connections, all kept idle, recycled after 30
// minutes.
type Config struct {
	// Dialect selects the driver.
	Dialect Dialect
	// DSN is the driver's data source name: a file path or file: URI for
	// SQLite, a postgres:// URL or key=value string for PostgreSQL, and a
	// go-sql-driver DSN (user:pass@tcp(host:port)/db?params) for MySQL.
	DSN string
	// MaxOpenConns caps the connections in the pool.
	MaxOpenConns int
	// MaxIdleConns caps the idle connections kept for reuse.
	MaxIdleConns int
	// ConnMaxLifetime closes connections older than this.
	ConnMaxLifetime time.Duration
	// ConnectTimeout bounds each dial and the ping done by Open.
	ConnectTimeout time.Duration
}

// Defaults for the server dialects. database/sql keeps only two idle
// connections unless told otherwise, which makes a busy service dial and
// close connections constantly; keeping the idle cap equal to the open cap
// avoids that churn.
const (
	defaultServerMaxOpenConns = 25
	defaultConnectTimeout     = 10 * time.Second
	// Server-side idle timeouts (MySQL's wait_timeout, proxies, firewalls)
	// silently kill old connections; recycling them first avoids
	// "invalid connection" errors on the first query after a quiet period.
	defaultServerConnMaxLifetime = 30 * time.Minute
)

// Validate reports every invalid field of c. Each error names its field.
func (c Config) Validate() error {
	var errs []error
	if !c.Dialect.valid() {
		errs = append(errs, fmt.Errorf("sqlstore config: Dialect %q is not one of sqlite, postgres, mysql", c.Dialect))
	}
	if c.DSN == "" {
		errs = append(errs, errors.New("sqlstore config: DSN is empty"))
	}
	if c.MaxOpenConns < 0 {
		errs = append(errs, fmt.Errorf("sqlstore config: MaxOpenConns must not be negative (got %d)", c.MaxOpenConns))
	}
	if c.MaxIdleConns < 0 {
		errs = append(errs, fmt.Errorf("sqlstore config: MaxIdleConns must not be negative (got %d)", c.MaxIdleConns))
	}
	if c.MaxOpenConns > 0 && c.MaxIdleConns > c.MaxOpenConns {
		errs = append(errs, fmt.Errorf("sqlstore config: MaxIdleConns (%d) exceeds MaxOpenConns (%d)", c.MaxIdleConns, c.MaxOpenConns))
	}
	if c.ConnMaxLifetime < 0 {
		errs = append(errs, fmt.Errorf("sqlstore config: ConnMaxLifetime must not be negative (got %s)", c.ConnMaxLifetime))
	}
	if c.ConnectTimeout < 0 {
		errs = append(errs, fmt.Errorf("sqlstore config: ConnectTimeout must not be negative (got %s)", c.ConnectTimeout))
	}
	return errors.Join(errs...)
}

// withDefaults fills the zero pool fields with the dialect's defaults.
func (c Config) withDefaults() Config {
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = defaultConnectTimeout
	}
	if c.Dialect == SQLite {
		// SQLite has one writer at a time, but in WAL mode readers never
		// block it nor each other. So the pool is not limited to one
		// connection (which would serialise every read behind every write,
		// and deadlock code that queries while iterating rows); instead
		// each connection waits on the write lock through busy_timeout and
		// every transaction begins IMMEDIATE (see sqliteDSN). The pure-Go
		// engine is CPU bound, so more connections than processors buy
		// nothing. Idle connections are kept forever because opening one
		// re-runs the pragmas and re-reads the schema.
		if c.MaxOpenConns == 0 {
			c.MaxOpenConns = max(4, runtime.GOMAXPROCS(0))
		}
		if c.MaxIdleConns == 0 {
			c.MaxIdleConns = c.MaxOpenConns
		}
		return c
	}
	if c.MaxOpenConns == 0 {
		c.MaxOpenConns = defaultServerMaxOpenConns
	}
	if c.MaxIdleConns == 0 {
		c.MaxIdleConns = c.MaxOpenConns
	}
	if c.ConnMaxLifetime == 0 {
		c.ConnMaxLifetime = defaultServerConnMaxLifetime
	}
	return c
}
