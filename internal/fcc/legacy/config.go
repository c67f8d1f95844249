package legacy

import (
	"time"

	"cpesuite/internal/platform/config"
)

// MaxBatchSize bounds svc.fcc.legacy-import.batch-size and a start
// request's batchSize: one batch is held in memory whole (about 1 KB a row),
// so 100,000 rows is roughly 100 MB at most.
const MaxBatchSize = 100000

// Config holds svc.fcc.legacy-import.* and the legacy source's database.
type Config struct {
	Enabled bool
	// BatchSize is the rows of one read and one insert.
	BatchSize int
	// WindowSettle is added to the fixed 24 hours lag of a pass cutoff.
	WindowSettle time.Duration
	// Zone names the zone of the naive legacy timestamps; empty is the
	// service's zone (time.Local). It is fixed per pass: a pass resumed
	// after a change keeps the zone it started with.
	Zone string
	// StaleAfter is the heartbeat age after which a RUNNING kind may be
	// taken over by another start. A running pass beats once per batch
	// and at least every StaleAfter/4, so 5 minutes tolerates a stalled
	// batch of a minute or more while a crashed pass is not held for long.
	StaleAfter time.Duration

	SourceDialect string
	SourceDSN     string
}

// RegisterFlags declares the variables.
func (c *Config) RegisterFlags(s *config.Set) {
	s.Bool(&c.Enabled, "svc.fcc.legacy-import.enabled", "SVC_FCC_LEGACY_IMPORT_ENABLED", true, "false makes POST /FCC/admin/legacy-import/start answer 400; status still answers")
	s.Int(&c.BatchSize, "svc.fcc.legacy-import.batch-size", "SVC_FCC_LEGACY_IMPORT_BATCH_SIZE", 10000, "legacy rows per read and insert")
	s.Duration(&c.WindowSettle, "svc.fcc.legacy-import.window-settle", "SVC_FCC_LEGACY_IMPORT_WINDOW_SETTLE", time.Hour, "added to the fixed 24 hours lag of a legacy pass cutoff")
	s.String(&c.Zone, "svc.fcc.legacy-import.zone", "SVC_FCC_LEGACY_IMPORT_ZONE", "", "IANA zone of the naive legacy timestamps; empty: the service's zone; fixed per pass")
	s.Duration(&c.StaleAfter, "svc.fcc.legacy-import.stale-after", "SVC_FCC_LEGACY_IMPORT_STALE_AFTER", 5*time.Minute, "heartbeat age after which a RUNNING legacy pass may be taken over")
	s.OneOf(&c.SourceDialect, "fcc.legacy-db-dialect", "CPESUITE_FCC_LEGACY_DB_DIALECT", "sqlite", "engine of the legacy result tables", "sqlite", "postgres")
	s.Secret(&c.SourceDSN, "fcc.legacy-db-dsn", "CPESUITE_FCC_LEGACY_DB_DSN", "", "DSN of the legacy result tables; empty: <data-dir>/legacy.db")
}

// Validate checks the values.
func (c *Config) Validate() error {
	switch {
	case c.BatchSize < 1 || c.BatchSize > MaxBatchSize:
		return config.Errorf("SVC_FCC_LEGACY_IMPORT_BATCH_SIZE", "must be from 1 to %d", MaxBatchSize)
	case c.WindowSettle < 0:
		return config.Errorf("SVC_FCC_LEGACY_IMPORT_WINDOW_SETTLE", "must not be negative")
	case c.StaleAfter < time.Second:
		return config.Errorf("SVC_FCC_LEGACY_IMPORT_STALE_AFTER", "must be at least 1s")
	}
	if _, err := c.location(); err != nil {
		return config.Errorf("SVC_FCC_LEGACY_IMPORT_ZONE", "unknown zone %q", c.Zone)
	}
	return nil
}

// ZoneID is the configured zone's name, the service's zone when empty.
func (c *Config) ZoneID() string {
	if c.Zone == "" {
		return time.Local.String()
	}
	return c.Zone
}

func (c *Config) location() (*time.Location, error) { return loadZone(c.ZoneID()) }

func loadZone(name string) (*time.Location, error) {
	if name == "" || name == "Local" {
		return time.Local, nil
	}
	return time.LoadLocation(name)
}
