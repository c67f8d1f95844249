package results

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"cpesuite/internal/platform/config"
)

// Engines.
const (
	EngineDuckDB     = "duckdb"
	EngineClickHouse = "clickhouse"
)

// Config holds the svc.fcc.resultstore.* settings. Properties the spec
// names without an environment variable use Spring's relaxed binding
// (svc.fcc.resultstore.health.cache-ttl -> SVC_FCC_RESULTSTORE_HEALTH_CACHE_TTL).
type Config struct {
	Enabled bool
	// Engine is duckdb (embedded file <data-dir>/fcc-results.duckdb) or
	// clickhouse.
	Engine string
	// DSN is the ClickHouse DSN, or the DuckDB file path (empty: the
	// default file). Secret: it may hold a password.
	DSN string
	// CacheTTL is both how long Status is served from cache and the probe
	// interval.
	CacheTTL time.Duration
	// QueryTimeoutSec bounds one probe check.
	QueryTimeoutSec int
	// SchemaCheckInterval is how often the schema version is re-read while
	// nothing is pending.
	SchemaCheckInterval time.Duration
	// MigrationRetryInterval is how often the probe retries Migrate while
	// the schema is behind.
	MigrationRetryInterval time.Duration
	// DownInterval is the probe interval while the store is UNAVAILABLE.
	DownInterval time.Duration
}

// RegisterFlags declares the variables.
func (c *Config) RegisterFlags(s *config.Set) {
	s.Bool(&c.Enabled, "svc.fcc.resultstore.enabled", "SVC_FCC_RESULTSTORE_ENABLED", true, "use the result store (false: activation and reports answer 503)")
	s.OneOf(&c.Engine, "fcc.resultstore.engine", "CPESUITE_FCC_RESULTSTORE_ENGINE", EngineDuckDB, "result store engine", EngineDuckDB, EngineClickHouse)
	s.Secret(&c.DSN, "fcc.resultstore.dsn", "CPESUITE_FCC_RESULTSTORE_DSN", "", "result store DSN: clickhouse://host:9000/database for ClickHouse; for DuckDB a file path, empty: <data-dir>/"+DuckDBFile)
	s.Duration(&c.CacheTTL, "svc.fcc.resultstore.health.cache-ttl", "SVC_FCC_RESULTSTORE_HEALTH_CACHE_TTL", 10*time.Second, "result store probe interval and status cache lifetime")
	s.Int(&c.QueryTimeoutSec, "svc.fcc.resultstore.health.query-timeout-sec", "SVC_FCC_RESULTSTORE_HEALTH_QUERY_TIMEOUT_SEC", 3, "seconds one result store health check may take")
	s.Duration(&c.SchemaCheckInterval, "svc.fcc.resultstore.health.schema-check-interval", "SVC_FCC_RESULTSTORE_HEALTH_SCHEMA_CHECK_INTERVAL", 5*time.Minute, "how often the result store's schema version is re-read (every probe while migrations are pending)")
	s.Duration(&c.MigrationRetryInterval, "svc.fcc.resultstore.migration.retry-interval", "SVC_FCC_RESULTSTORE_MIGRATION_RETRY_INTERVAL", 60*time.Second, "how often pending result store migrations are retried")
	s.Duration(&c.DownInterval, "svc.fcc.resultstore.health.down-interval", "SVC_FCC_RESULTSTORE_HEALTH_DOWN_INTERVAL", time.Minute, "probe interval while the result store is unreachable")
}

// QueryTimeout is QueryTimeoutSec as a duration.
func (c *Config) QueryTimeout() time.Duration { return time.Duration(c.QueryTimeoutSec) * time.Second }

// Validate checks the values.
func (c *Config) Validate() error {
	switch {
	case !c.Enabled:
		return nil
	case c.Engine == EngineClickHouse && c.DSN == "":
		return config.Errorf("CPESUITE_FCC_RESULTSTORE_DSN", "is required with CPESUITE_FCC_RESULTSTORE_ENGINE=clickhouse (clickhouse://host:9000/database)")
	case c.CacheTTL <= 0:
		return config.Errorf("SVC_FCC_RESULTSTORE_HEALTH_CACHE_TTL", "must be positive")
	case c.QueryTimeoutSec < 1:
		return config.Errorf("SVC_FCC_RESULTSTORE_HEALTH_QUERY_TIMEOUT_SEC", "must be at least 1")
	case c.SchemaCheckInterval <= 0:
		return config.Errorf("SVC_FCC_RESULTSTORE_HEALTH_SCHEMA_CHECK_INTERVAL", "must be positive")
	case c.MigrationRetryInterval <= 0:
		return config.Errorf("SVC_FCC_RESULTSTORE_MIGRATION_RETRY_INTERVAL", "must be positive")
	case c.DownInterval <= 0:
		return config.Errorf("SVC_FCC_RESULTSTORE_HEALTH_DOWN_INTERVAL", "must be positive")
	}
	return nil
}

// Open returns the configured engine. It does not migrate (the probe
// does) and, for ClickHouse, does not need the server to be up.
func Open(ctx context.Context, cfg Config, dataDir string) (Store, error) {
	if !cfg.Enabled {
		return nil, errors.New("the result store is disabled (SVC_FCC_RESULTSTORE_ENABLED=false)")
	}
	switch cfg.Engine {
	case EngineClickHouse:
		return OpenClickHouse(cfg.DSN, ClickHouseOptions{})
	case EngineDuckDB, "":
		path := cfg.DSN
		if path == "" {
			path = filepath.Join(dataDir, DuckDBFile)
		}
		return OpenDuckDB(path)
	}
	return nil, config.Errorf("CPESUITE_FCC_RESULTSTORE_ENGINE", "unknown engine %q", cfg.Engine)
}
