package configsvc

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // TZ must resolve on hosts without a zoneinfo database

	"cpesuite/internal/configsvc/jwtauth"
	"cpesuite/internal/configsvc/mailer"
	"cpesuite/internal/platform/config"
	"cpesuite/internal/platform/grid"
)

// Profiles of APP_PROFILES_ACTIVE. The spec's vendor B is Oracle, which is
// not available here; PostgreSQL takes its place behind the DBB_* names.
const (
	ProfileLocal    = "local"
	ProfileMySQL    = "mysql"
	ProfilePostgres = "postgres"
)

// Config is the configuration service's configuration. Every variable keeps
// the name the spec gives it (the platform services specification, part B); the few the
// spec does not name carry the service's CFG_ prefix.
type Config struct {
	Addr    string // from the port table; SERVER_PORT overrides it when run alone
	DataDir string // set by the module

	Profile string

	ServerPort     string
	ServerHTTPPort string
	SSLEnabled     bool
	SSLCertFile    string
	SSLKeyFile     string

	DBHost string
	DBA    VendorDB
	DBB    VendorDB
	Pool   PoolConfig

	JWTSecret       string
	JWTExpiration   time.Duration
	JWTRefreshTTL   time.Duration
	JWTExpirationMS int64
	JWTRefreshMS    int64
	CookieSecure    bool
	CookieDomain    string

	BootstrapUsername string
	BootstrapPassword string
	BootstrapEmail    string
	BootstrapLocale   string

	Mail mailer.Config

	GridClusterName    string
	CacheConfigPath    string
	CacheIsServer      bool
	ExclusionCacheName string

	CORSOrigins []string
	LogLevel    string
	TZ          string
	RuntimeOpts string

	AuditRetentionDays int
	AuditRedaction     []string

	OTPLength   int
	OTPTTL      time.Duration
	OTPAttempts int
}

// VendorDB is one vendor's DB*_ variables.
type VendorDB struct {
	JDBCURL  string
	Host     string
	Port     int
	Schema   string // DBA_SCHEMA: the database; DBB_SCHEMA: the search path
	Service  string // DBB_SERVICE: the PostgreSQL database (Oracle's service name in the spec)
	User     string
	Password string
}

// PoolConfig is the DB_* pool settings.
type PoolConfig struct {
	MaxPoolSize int
	MinIdle     int
	TimeoutMS   int
}

// Built-in database credentials. The spec leaves them out; these match the
// development databases of deploy/.
const (
	defaultDBUser     = "configs"
	defaultDBPassword = "configs"
)

// RegisterFlags declares the variables.
func (c *Config) RegisterFlags(s *config.Set) {
	s.OneOf(&c.Profile, "configs.profile", "APP_PROFILES_ACTIVE", ProfileLocal, "database profile: local (SQLite in the data dir), mysql (vendor A, DBA_*), postgres (vendor B, DBB_*)", ProfileLocal, ProfileMySQL, ProfilePostgres)
	s.Func(config.Var{Flag: "configs.server-port", Env: "SERVER_PORT", Usage: "port of `cpesuite run configs` (HTTPS when SERVER_SSL_ENABLED); empty: the port table's 8081"}, portVar(&c.ServerPort))
	s.Func(config.Var{Flag: "configs.server-http-port", Env: "SERVER_HTTP_PORT", Usage: "plain HTTP port served beside HTTPS in dual mode (SERVER_SSL_ENABLED=true)"}, portVar(&c.ServerHTTPPort))
	s.Bool(&c.SSLEnabled, "configs.ssl-enabled", "SERVER_SSL_ENABLED", false, "serve HTTPS on SERVER_PORT")
	s.String(&c.SSLCertFile, "configs.ssl-cert-file", "SERVER_SSL_CERTIFICATE", "", "PEM certificate chain for HTTPS")
	s.String(&c.SSLKeyFile, "configs.ssl-key-file", "SERVER_SSL_CERTIFICATE_PRIVATE_KEY", "", "PEM private key for HTTPS")

	s.String(&c.DBHost, "configs.db-host", "DB_HOST", "", "database host used when DBA_HOST/DBB_HOST are unset")
	c.DBA.register(s, "dba", "DBA", 3306, "configs", "")
	c.DBB.register(s, "dbb", "DBB", 5432, "", "configs")
	s.Int(&c.Pool.MaxPoolSize, "configs.db-max-pool-size", "DB_MAX_POOL_SIZE", 10, "maximum open database connections")
	s.Int(&c.Pool.MinIdle, "configs.db-min-idle", "DB_MIN_IDLE", 5, "idle connections kept for reuse")
	s.Int(&c.Pool.TimeoutMS, "configs.db-connection-timeout-ms", "DB_CONNECTION_TIMEOUT_MS", 30000, "database connect time-out in milliseconds")

	s.Secret(&c.JWTSecret, "configs.jwt-secret", "JWT_SECRET", "", "base64 HMAC key of at least 32 bytes; empty: generated once into <data-dir>/configs-jwt.key")
	s.Int64(&c.JWTExpirationMS, "configs.jwt-expiration", "JWT_EXPIRATION", 86400000, "access-token lifetime in milliseconds")
	s.Int64(&c.JWTRefreshMS, "configs.jwt-refresh-expiration", "JWT_REFRESH_TOKEN_EXPIRATION", 604800000, "refresh-token lifetime in milliseconds")
	s.Bool(&c.CookieSecure, "configs.cookie-secure", "COOKIE_SECURE", true, "mark the refresh-token cookie Secure")
	s.String(&c.CookieDomain, "configs.cookie-domain", "COOKIE_DOMAIN", "", "Domain attribute of the refresh-token cookie; empty: host-only")

	s.String(&c.BootstrapUsername, "configs.bootstrap-admin-username", "CFG_BOOTSTRAP_ADMIN_USERNAME", "admin", "first administrator, created on first start")
	s.Secret(&c.BootstrapPassword, "configs.bootstrap-admin-password", "CFG_BOOTSTRAP_ADMIN_PASSWORD", "", "first administrator's password; required on first start, otherwise no account is created")
	s.String(&c.BootstrapEmail, "configs.bootstrap-admin-email", "CFG_BOOTSTRAP_ADMIN_EMAIL", "", "first administrator's e-mail")
	s.String(&c.BootstrapLocale, "configs.bootstrap-admin-locale", "CFG_BOOTSTRAP_ADMIN_LOCALE", "", "first administrator's locale (en, ru)")

	s.String(&c.Mail.Mode, "configs.mail-mode", "MAIL_MODE", "AUTO", "AUTO or OFFLINE (case-insensitive; blank or unknown: AUTO with a warning)")
	s.String(&c.Mail.Host, "configs.mail-host", "MAIL_HOST", "smtp.gmail.com", "SMTP host")
	s.Int(&c.Mail.Port, "configs.mail-port", "MAIL_PORT", 587, "SMTP port")
	s.String(&c.Mail.Username, "configs.mail-username", "MAIL_USERNAME", "", "SMTP user")
	s.Secret(&c.Mail.Password, "configs.mail-password", "MAIL_PASSWORD", "", "SMTP password")
	s.OneOf(&c.Mail.Protocol, "configs.mail-protocol", "MAIL_PROTOCOL", "smtp", "smtp (STARTTLS or plain) or smtps (implicit TLS)", "smtp", "smtps")
	s.Bool(&c.Mail.Auth, "configs.mail-smtp-auth", "MAIL_SMTP_AUTH", true, "authenticate to the SMTP server")
	s.Bool(&c.Mail.StartTLS, "configs.mail-smtp-starttls", "MAIL_SMTP_STARTTLS", true, "require STARTTLS")
	s.String(&c.Mail.From, "configs.mail-from", "MAIL_FROM", "no-reply@cpesuite.local", "sender address")
	s.String(&c.Mail.LoginURL, "configs.mail-login-url", "MAIL_LOGIN_URL", "", "http(s) address of the sign-in button in e-mails; otherwise a text hint")

	s.String(&c.GridClusterName, "configs.grid-cluster-name", "GRID_CLUSTER_NAME", "dev", "grid cluster name; prefixes the service's grid maps so clusters sharing one NATS stay apart")
	s.String(&c.CacheConfigPath, "configs.cache-config-path", "CACHE_CONFIG_PATH", "classpath:", "directory holding grid-client.json (members, clusterName); classpath: uses the built-in settings")
	s.Bool(&c.CacheIsServer, "configs.cache-is-server", "CACHE_IS_SERVER", true, "use the embedded grid member of this process when GRID_MEMBERS is empty")
	s.String(&c.ExclusionCacheName, "configs.exclusion-models-cache-name", "CFG_ACS_EXCLUSION_MODELS_CACHE_NAME", "qoeProductClassGroupCache", "grid map holding the product-class groups")

	s.List(&c.CORSOrigins, "configs.cors-allowed-origins", "CORS_ALLOWED_ORIGINS", "http://localhost:9002", "comma-separated origins allowed by CORS (scheme sensitive)")
	s.OneOf(&c.LogLevel, "configs.logging-level", "LOGGING_LEVEL", "INFO", "level of the service's own logs", "ERROR", "WARN", "INFO", "DEBUG")
	s.String(&c.TZ, "configs.tz", "TZ", "UTC", "time zone of the daily 03:00 audit clean-up")
	s.String(&c.RuntimeOpts, "configs.runtime-opts", "RUNTIME_OPTS", "", "JVM options in the original image; accepted and ignored (use GOGC/GOMEMLIMIT)")

	s.Int(&c.AuditRetentionDays, "configs.audit-retention-days", "AUDIT_RETENTION_DAYS", 30, "days audit events are kept (3..90, clamped with a warning; 0 disables the clean-up)")
	s.List(&c.AuditRedaction, "configs.audit-redaction-fields", "CFG_AUDIT_REDACTION_FIELDS", "", "field names redacted in audit details, added to the built-in ones")

	s.Int(&c.OTPLength, "configs.deletion-otp-length", "CFG_DELETION_OTP_LENGTH", 6, "digits of the deletion one-time password (4..12)")
	s.Duration(&c.OTPTTL, "configs.deletion-otp-ttl", "CFG_DELETION_OTP_TTL", 10*time.Minute, "lifetime of a deletion request")
	s.Int(&c.OTPAttempts, "configs.deletion-otp-attempts", "CFG_DELETION_OTP_ATTEMPTS", 5, "wrong one-time passwords allowed before the request is void")
}

func (v *VendorDB) register(s *config.Set, flag, env string, port int, schema, service string) {
	s.Secret(&v.JDBCURL, "configs."+flag+"-jdbc-url", env+"_JDBC_URL", "", "JDBC-style URL; wins over the decomposed values")
	s.String(&v.Host, "configs."+flag+"-host", env+"_HOST", "", "database host (default DB_HOST, then localhost)")
	s.Int(&v.Port, "configs."+flag+"-port", env+"_PORT", port, "database port")
	if env == "DBA" {
		s.String(&v.Schema, "configs."+flag+"-schema", env+"_SCHEMA", schema, "database (schema) name")
	} else {
		s.String(&v.Service, "configs."+flag+"-service", env+"_SERVICE", service, "PostgreSQL database (the Oracle service name in the spec)")
		s.String(&v.Schema, "configs."+flag+"-schema", env+"_SCHEMA", schema, "schema (search_path); empty: the user's default")
	}
	s.String(&v.User, "configs."+flag+"-user", env+"_USER", defaultDBUser, "database user")
	s.Secret(&v.Password, "configs."+flag+"-password", env+"_PASSWORD", defaultDBPassword, "database password")
}

func portVar(p *string) func(string) error {
	return func(v string) error {
		v = strings.TrimSpace(v)
		if v == "" {
			*p = ""
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 65535 {
			return fmt.Errorf("%q is not a port from 0 to 65535", v)
		}
		*p = v
		return nil
	}
}

// Validate checks the values that can be checked without I/O.
func (c *Config) Validate() error {
	if c.JWTSecret != "" {
		if _, err := jwtauth.DecodeSecret(c.JWTSecret); err != nil {
			return err
		}
	}
	switch {
	case c.JWTExpirationMS < 1000:
		return config.Errorf("JWT_EXPIRATION", "must be at least 1000 (milliseconds)")
	case c.JWTRefreshMS < c.JWTExpirationMS:
		return config.Errorf("JWT_REFRESH_TOKEN_EXPIRATION", "must not be shorter than JWT_EXPIRATION")
	case c.Pool.MaxPoolSize < 1:
		return config.Errorf("DB_MAX_POOL_SIZE", "must be at least 1")
	case c.Pool.MinIdle < 0 || c.Pool.MinIdle > c.Pool.MaxPoolSize:
		return config.Errorf("DB_MIN_IDLE", "must be from 0 to DB_MAX_POOL_SIZE (%d)", c.Pool.MaxPoolSize)
	case c.Pool.TimeoutMS < 250:
		return config.Errorf("DB_CONNECTION_TIMEOUT_MS", "must be at least 250")
	case c.Mail.Port < 1 || c.Mail.Port > 65535:
		return config.Errorf("MAIL_PORT", "must be from 1 to 65535")
	case c.OTPLength < 4 || c.OTPLength > 12:
		return config.Errorf("CFG_DELETION_OTP_LENGTH", "must be from 4 to 12")
	case c.OTPTTL < time.Minute:
		return config.Errorf("CFG_DELETION_OTP_TTL", "must be at least 1m")
	case c.OTPAttempts < 1:
		return config.Errorf("CFG_DELETION_OTP_ATTEMPTS", "must be at least 1")
	case strings.TrimSpace(c.BootstrapUsername) == "":
		return config.Errorf("CFG_BOOTSTRAP_ADMIN_USERNAME", "must not be empty")
	case strings.TrimSpace(c.GridClusterName) == "":
		return config.Errorf("GRID_CLUSTER_NAME", "must not be empty")
	case strings.TrimSpace(c.ExclusionCacheName) == "":
		return config.Errorf("CFG_ACS_EXCLUSION_MODELS_CACHE_NAME", "must not be empty")
	}
	if _, err := time.LoadLocation(c.TZ); err != nil {
		return config.Errorf("TZ", "unknown time zone %q", c.TZ)
	}
	for _, o := range c.CORSOrigins {
		if o == "*" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return config.Errorf("CORS_ALLOWED_ORIGINS", "%q is not an origin such as https://portal.example.com", o)
		}
	}
	if c.SSLEnabled && (c.SSLCertFile == "" || c.SSLKeyFile == "") {
		return config.Errorf("SERVER_SSL_ENABLED", "needs SERVER_SSL_CERTIFICATE and SERVER_SSL_CERTIFICATE_PRIVATE_KEY")
	}
	c.JWTExpiration = time.Duration(c.JWTExpirationMS) * time.Millisecond
	c.JWTRefreshTTL = time.Duration(c.JWTRefreshMS) * time.Millisecond
	return nil
}

// Audit retention bounds of the spec's Limits table.
const (
	minRetentionDays = 3
	maxRetentionDays = 90
)

// RetentionDays returns AUDIT_RETENTION_DAYS clamped to 3..90 (0 disables
// the clean-up), logging a warning when it had to clamp.
func (c *Config) RetentionDays(log *slog.Logger) int {
	d := c.AuditRetentionDays
	switch {
	case d == 0:
		return 0
	case d < minRetentionDays:
		log.Warn("AUDIT_RETENTION_DAYS below the minimum; clamped", "value", d, "used", minRetentionDays)
		return minRetentionDays
	case d > maxRetentionDays:
		log.Warn("AUDIT_RETENTION_DAYS above the maximum; clamped", "value", d, "used", maxRetentionDays)
		return maxRetentionDays
	}
	return d
}

// clientFile is the grid client file under CACHE_CONFIG_PATH; a mounted
// file replaces the built-in settings entirely.
const clientFile = "grid-client.json"

// GridMembers returns the members the grid client connects to: GRID_MEMBERS
// when set, else those of CACHE_CONFIG_PATH/grid-client.json, else none
// (the embedded member).
func (c *Config) GridMembers(env []string) ([]string, error) {
	if len(env) > 0 {
		return env, nil
	}
	base := strings.TrimSpace(c.CacheConfigPath)
	if base == "" || base == "classpath:" {
		return nil, nil
	}
	path := filepath.Join(base, clientFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, config.Errorf("CACHE_CONFIG_PATH", "reading %s: %v", path, err)
	}
	var f struct {
		Members []string `json:"members"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, config.Errorf("CACHE_CONFIG_PATH", "%s is not {\"members\": [\"host[:port]\", ...]}: %v", path, err)
	}
	members, err := grid.ParseMembers(strings.Join(f.Members, ","))
	if err != nil {
		return nil, config.Errorf("CACHE_CONFIG_PATH", "%s: %v", path, err)
	}
	return members, nil
}
