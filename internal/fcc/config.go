package fcc

import (
	"time"

	"cpesuite/internal/fcc/ingest"
	"cpesuite/internal/fcc/legacy"
	"cpesuite/internal/fcc/results"
	"cpesuite/internal/platform/campaigntime"
	"cpesuite/internal/platform/config"
)

// Config is the campaign service's configuration. Properties of the spec's
// Limits table keep the environment names the spec gives; properties the
// spec names without one use Spring's relaxed binding of the property name
// (svc.fcc.iotw.enabled -> SVC_FCC_IOTW_ENABLED), which is what existing
// deployments of the service set.
type Config struct {
	Addr    string // set by the module from the port table
	DataDir string // set by the module
	// TimeScale is CPESUITE_CAMPAIGN_TIME_SCALE, set by the process so that
	// the ACS runs on the same one.
	TimeScale campaigntime.Scale

	DBDialect    string
	DBDSN        string
	ACSDBDialect string
	ACSDBDSN     string

	MaxDevicesPerTest  int
	MaxConfigsPerTest  int
	ResolvePageSize    int
	SerialFileMaxSize  int64
	ExportTimeout      time.Duration
	IOTWEnabled        bool
	DefaultConnections int
	UserFallback       string
	ACSSchemaCheck     bool

	// Runs: activation, scheduler, outbox, watchdog (config_runs.go).
	Runs RunsConfig
	// ResultStore: svc.fcc.resultstore.* (package results).
	ResultStore results.Config
	// Ingest: svc.fcc.result.*, dedup and dead letters (package ingest).
	Ingest ingest.Config
	// Legacy: svc.fcc.legacy-import.* and the legacy source (package legacy).
	Legacy legacy.Config
}

// RegisterFlags declares the variables.
func (c *Config) RegisterFlags(s *config.Set) {
	s.OneOf(&c.DBDialect, "fcc.db-dialect", "CPESUITE_FCC_DB_DIALECT", "sqlite", "campaign store engine", "sqlite", "postgres")
	s.Secret(&c.DBDSN, "fcc.db-dsn", "CPESUITE_FCC_DB_DSN", "", "campaign store DSN; empty: <data-dir>/fcc.db (SQLite)")
	s.OneOf(&c.ACSDBDialect, "fcc.acs-db-dialect", "CPESUITE_FCC_ACS_DB_DIALECT", "sqlite", "engine of the ACS device tables the service reads", "sqlite", "postgres")
	s.Secret(&c.ACSDBDSN, "fcc.acs-db-dsn", "CPESUITE_FCC_ACS_DB_DSN", "", "DSN of the ACS device tables; empty: <data-dir>/acs.db, the embedded ACS's store")
	s.Int(&c.MaxDevicesPerTest, "svc.fcc.max-devices-per-test", "FCC_MAX_DEVICES_PER_TEST", 20000, "devices per configuration; also the ceiling of a resolve page and of a serial list")
	s.Int(&c.MaxConfigsPerTest, "svc.fcc.max-configs-per-test", "FCC_MAX_CONFIGS_PER_TEST", 10, "configurations per campaign")
	s.Int(&c.ResolvePageSize, "svc.fcc.resolve.default-page-size", "SVC_FCC_RESOLVE_DEFAULT_PAGE_SIZE", 100, "page size of POST /FCC/devices/resolve when the request names none")
	s.Int64(&c.SerialFileMaxSize, "svc.fcc.serial-file-max-size", "FCC_SERIAL_FILE_MAX_SIZE", 10<<20, "multipart max file size and max request size in bytes (one variable feeds both)")
	s.Duration(&c.ExportTimeout, "svc.fcc.export-request-timeout", "FCC_EXPORT_REQUEST_TIMEOUT", 10*time.Minute, "longest export stream")
	s.Bool(&c.IOTWEnabled, "svc.fcc.iotw.enabled", "SVC_FCC_IOTW_ENABLED", true, "saved conditions (conditionId) may select fleets")
	s.Int(&c.DefaultConnections, "svc.fcc.default-max-connections", "SVC_FCC_DEFAULT_MAX_CONNECTIONS", 16, "TR-143 connection ceiling of models without a capability row")
	s.Bool(&c.ACSSchemaCheck, "svc.fcc.ftacs.schema-check.enabled", "SVC_FCC_FTACS_SCHEMA_CHECK_ENABLED", true, "check at start-up that the ACS device tables are readable")
	s.String(&c.UserFallback, "svc.fcc.audit.user-fallback", "SVC_FCC_AUDIT_USER_FALLBACK", "unknown", "audit user when X-SVC-User-Id is absent")
	c.Runs.RegisterFlags(s)
	c.ResultStore.RegisterFlags(s)
	c.Ingest.RegisterFlags(s)
	c.Legacy.RegisterFlags(s)
}

// Validate checks the values.
func (c *Config) Validate() error {
	switch {
	case c.MaxDevicesPerTest < 1:
		return config.Errorf("FCC_MAX_DEVICES_PER_TEST", "must be at least 1")
	case c.MaxConfigsPerTest < 1:
		return config.Errorf("FCC_MAX_CONFIGS_PER_TEST", "must be at least 1")
	case c.ResolvePageSize < 1 || c.ResolvePageSize > c.MaxDevicesPerTest:
		return config.Errorf("SVC_FCC_RESOLVE_DEFAULT_PAGE_SIZE", "must be from 1 to FCC_MAX_DEVICES_PER_TEST (%d)", c.MaxDevicesPerTest)
	case c.SerialFileMaxSize < 1024:
		return config.Errorf("FCC_SERIAL_FILE_MAX_SIZE", "must be at least 1024 bytes")
	case c.ExportTimeout < time.Second:
		return config.Errorf("FCC_EXPORT_REQUEST_TIMEOUT", "must be at least 1s")
	case c.DefaultConnections < 1:
		return config.Errorf("SVC_FCC_DEFAULT_MAX_CONNECTIONS", "must be at least 1")
	case c.UserFallback == "":
		return config.Errorf("SVC_FCC_AUDIT_USER_FALLBACK", "must not be empty")
	}
	for _, v := range []interface{ Validate() error }{&c.Runs, &c.ResultStore, &c.Ingest, &c.Legacy} {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	return nil
}
