package acs

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"cpesuite/internal/platform/campaigntime"
	"cpesuite/internal/platform/config"
	"cpesuite/internal/platform/sqlstore"
)

// Config is the ACS target's configuration. Addr and APIAddr come from the
// process port table.
type Config struct {
	Addr    string
	APIAddr string

	CWMPPath       string
	DBDialect      string
	DBDSN          string // empty: <data-dir>/acs.db for SQLite
	SessionTimeout time.Duration
	MaxSessions    int
	RetryAfter     time.Duration
	MaxBodyBytes   int64

	Auth                 string // "digest", "basic" or "digest,basic"
	Username             string
	Password             string
	AllowUnauthenticated bool

	ConnReq ConnRequestConfig

	OnlineGrace         float64
	DefaultOnlineWindow time.Duration
	MaxAttempts         int
	MaxDiagnostics      int
	DiagnosticsTimeout  time.Duration
	SpeedtestURL        string
	DefaultDomain       int64
	InformBatch         int
	InformWriters       int

	// Executor is the campaign executor's configuration (campaign.go).
	Executor ExecutorConfig

	// TimeScale is CPESUITE_CAMPAIGN_TIME_SCALE, set by the process so that
	// the campaign executor runs on the campaign service's clock.
	TimeScale campaigntime.Scale
}

// RegisterFlags registers the ACS variables.
func (c *Config) RegisterFlags(s *config.Set) {
	s.String(&c.CWMPPath, "acs.cwmp-path", "CPESUITE_ACS_CWMP_PATH", "/", "path CPEs post CWMP messages to")
	s.OneOf(&c.DBDialect, "acs.db-dialect", "CPESUITE_ACS_DB_DIALECT", "sqlite", "device store engine", "sqlite", "postgres")
	s.Secret(&c.DBDSN, "acs.db-dsn", "CPESUITE_ACS_DB_DSN", "", "device store DSN; empty: <data-dir>/acs.db (SQLite)")
	s.Duration(&c.SessionTimeout, "acs.session-timeout", "CPESUITE_ACS_SESSION_TIMEOUT", 30*time.Second, "idle time after which a CWMP session is dropped")
	s.Int(&c.MaxSessions, "acs.max-sessions", "CPESUITE_ACS_MAX_SESSIONS", 5000, "concurrent sessions; above it new Informs get 503 with Retry-After")
	s.Duration(&c.RetryAfter, "acs.retry-after", "CPESUITE_ACS_RETRY_AFTER", 30*time.Second, "Retry-After given with 503 answers")
	s.Int64(&c.MaxBodyBytes, "acs.max-body-bytes", "CPESUITE_ACS_MAX_BODY_BYTES", 1<<20, "largest CWMP message accepted")
	s.String(&c.Auth, "acs.auth", "CPESUITE_ACS_AUTH", "digest,basic", "CPE authentication schemes offered: digest, basic or both")
	s.String(&c.Username, "acs.username", "CPESUITE_ACS_USERNAME", "cpe", "global CPE username")
	s.Secret(&c.Password, "acs.password", "CPESUITE_ACS_PASSWORD", "", "global CPE password; empty: generated once and kept in <data-dir>/acs-cpe-password")
	s.Bool(&c.AllowUnauthenticated, "acs.allow-unauthenticated", "CPESUITE_ACS_ALLOW_UNAUTHENTICATED", false, "accept CPEs that present no credentials (credentials that are presented are still checked)")
	s.Duration(&c.ConnReq.Timeout, "acs.cr-timeout", "CPESUITE_ACS_CR_TIMEOUT", 5*time.Second, "connection request time-out per attempt")
	s.Int(&c.ConnReq.Attempts, "acs.cr-attempts", "CPESUITE_ACS_CR_ATTEMPTS", 3, "connection request attempts")
	s.Duration(&c.ConnReq.Backoff, "acs.cr-backoff", "CPESUITE_ACS_CR_BACKOFF", 500*time.Millisecond, "pause before the second attempt; doubles")
	s.String(&c.ConnReq.Username, "acs.cr-username", "CPESUITE_ACS_CR_USERNAME", "", "connection request username for devices without their own; empty: the CPE username and password")
	s.Secret(&c.ConnReq.Password, "acs.cr-password", "CPESUITE_ACS_CR_PASSWORD", "", "connection request password for devices without their own")
	s.Func(config.Var{Flag: "acs.online-grace", Env: "CPESUITE_ACS_ONLINE_GRACE", Default: "2", Usage: "a device is online for periodic interval x this factor after its last contact"},
		func(v string) error { return parseFactor(&c.OnlineGrace, v) })
	s.Duration(&c.DefaultOnlineWindow, "acs.online-window", "CPESUITE_ACS_ONLINE_WINDOW", 10*time.Minute, "online window of devices with no periodic interval")
	s.Int(&c.MaxAttempts, "acs.max-attempts", "CPESUITE_ACS_MAX_ATTEMPTS", 3, "sessions a task may be sent in before it faults")
	s.Int(&c.MaxDiagnostics, "acs.max-diagnostics", "CPESUITE_ACS_MAX_DIAGNOSTICS", 50, "diagnostics running at once across the ACS")
	s.Duration(&c.DiagnosticsTimeout, "acs.diagnostics-timeout", "CPESUITE_ACS_DIAGNOSTICS_TIMEOUT", 10*time.Minute, "a diagnostic without 8 DIAGNOSTICS COMPLETE by then faults")
	s.String(&c.SpeedtestURL, "acs.speedtest-url", "CPESUITE_ACS_SPEEDTEST_URL", "http://127.0.0.1:7580", "base URL of the TR-143 server used when a diagnostic names none")
	s.Int64(&c.DefaultDomain, "acs.default-domain", "CPESUITE_ACS_DEFAULT_DOMAIN", 1, "domain of newly seen devices")
	s.Int(&c.InformBatch, "acs.inform-batch", "CPESUITE_ACS_INFORM_BATCH", MaxInformBatch, "most Informs written in one transaction")
	s.Int(&c.InformWriters, "acs.inform-writers", "CPESUITE_ACS_INFORM_WRITERS", 2, "concurrent Inform batch writers")
	c.Executor.RegisterFlags(s)
}

func parseFactor(p *float64, v string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f < 1 {
		return errors.New("want a number of at least 1, e.g. 2 or 1.5")
	}
	*p = f
	return nil
}

// Validate checks the settings against each other.
func (c *Config) Validate() error {
	if !strings.HasPrefix(c.CWMPPath, "/") {
		return config.Errorf("CPESUITE_ACS_CWMP_PATH", "must start with /")
	}
	if c.DBDialect == string(sqlstore.Postgres) && c.DBDSN == "" {
		return config.Errorf("CPESUITE_ACS_DB_DSN", "required when CPESUITE_ACS_DB_DIALECT=postgres")
	}
	if c.SessionTimeout < time.Second {
		return config.Errorf("CPESUITE_ACS_SESSION_TIMEOUT", "must be at least 1s")
	}
	if c.MaxSessions < 1 {
		return config.Errorf("CPESUITE_ACS_MAX_SESSIONS", "must be at least 1")
	}
	if c.MaxBodyBytes < 4096 || c.MaxBodyBytes > 64<<20 {
		return config.Errorf("CPESUITE_ACS_MAX_BODY_BYTES", "must be from 4096 to %d", 64<<20)
	}
	for _, a := range config.SplitList(c.Auth) {
		if a != "digest" && a != "basic" {
			return config.Errorf("CPESUITE_ACS_AUTH", "unknown scheme %q: want digest, basic or both", a)
		}
	}
	if len(config.SplitList(c.Auth)) == 0 {
		return config.Errorf("CPESUITE_ACS_AUTH", "name at least one scheme")
	}
	if c.ConnReq.Attempts < 1 || c.ConnReq.Attempts > 10 {
		return config.Errorf("CPESUITE_ACS_CR_ATTEMPTS", "must be from 1 to 10")
	}
	if c.ConnReq.Timeout <= 0 {
		return config.Errorf("CPESUITE_ACS_CR_TIMEOUT", "must be positive")
	}
	if c.MaxAttempts < 1 {
		return config.Errorf("CPESUITE_ACS_MAX_ATTEMPTS", "must be at least 1")
	}
	if c.MaxDiagnostics < 1 {
		return config.Errorf("CPESUITE_ACS_MAX_DIAGNOSTICS", "must be at least 1")
	}
	if err := checkURL("url", c.SpeedtestURL, true); err != nil {
		return config.Errorf("CPESUITE_ACS_SPEEDTEST_URL", "%v", err)
	}
	if c.InformBatch < 1 || c.InformBatch > MaxInformBatch {
		return config.Errorf("CPESUITE_ACS_INFORM_BATCH", "must be from 1 to %d", MaxInformBatch)
	}
	if c.InformWriters < 1 || c.InformWriters > 16 {
		return config.Errorf("CPESUITE_ACS_INFORM_WRITERS", "must be from 1 to 16")
	}
	if c.Executor.Enabled {
		return c.Executor.Validate()
	}
	return nil
}
