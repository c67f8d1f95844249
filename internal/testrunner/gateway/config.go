package gateway

import (
	"net/netip"
	"net/url"
	"time"

	"cpesuite/internal/platform/config"
	"cpesuite/internal/platform/passwd"
	"cpesuite/internal/testrunner/gateway/accounts"
	"cpesuite/internal/testrunner/portainer"
)

// Config is the gateway's start-up configuration.
type Config struct {
	Addr    string // from the port table
	DataDir string // the process data dir, set by the module

	DBDialect string
	DBDSN     string

	TokenTTL          time.Duration
	TrustedProxiesRaw string
	TrustedProxies    []netip.Prefix
	// Hashing bounds the password hashing of logins; nil means the
	// process's passwd.Shared(). Not a setting: tests hand in their own.
	Hashing *passwd.Limiter

	AdminUsername string
	AdminPassword string

	// LocalWorker, when set, is registered as stand LocalStand at start
	// (cpesuite up runs one worker in the process).
	LocalWorker string
	LocalStand  string

	ProxyTimeout  time.Duration
	HealthTimeout time.Duration

	Portainer portainer.Config
	// WorkerImage and StackNetwork shape the stacks the gateway creates.
	WorkerImage   string
	EmulatorImage string
	StackNetwork  string
}

// RegisterFlags declares the variables.
func (c *Config) RegisterFlags(s *config.Set) {
	s.OneOf(&c.DBDialect, "gateway.db-dialect", "CPESUITE_GATEWAY_DB_DIALECT", "sqlite", "store of accounts, tokens, audit, profiles and stands", "sqlite", "postgres")
	s.Secret(&c.DBDSN, "gateway.db-dsn", "CPESUITE_GATEWAY_DB_DSN", "", "store DSN; empty: <data-dir>/gateway.db (SQLite)")
	s.Duration(&c.TokenTTL, "gateway.token-ttl", "CPESUITE_GATEWAY_TOKEN_TTL", 12*time.Hour, "lifetime of a login token")
	s.String(&c.TrustedProxiesRaw, "gateway.trusted-proxies", "CPESUITE_GATEWAY_TRUSTED_PROXIES", "", "comma-separated IPs/CIDRs of reverse proxies whose X-Forwarded-For names the client (login rate limit, audit)")
	s.String(&c.AdminUsername, "gateway.admin-username", "CPESUITE_GATEWAY_ADMIN_USERNAME", "admin", "bootstrap administrator created on first start")
	s.Secret(&c.AdminPassword, "gateway.admin-password", "CPESUITE_GATEWAY_ADMIN_PASSWORD", "", "bootstrap administrator's password; empty: generated into <data-dir>/gateway-admin-password on first start")
	s.String(&c.LocalWorker, "gateway.local-worker", "CPESUITE_GATEWAY_LOCAL_WORKER", "", "base URL of a worker registered as a stand at start; cpesuite up sets it to the in-process worker")
	s.String(&c.LocalStand, "gateway.local-stand", "CPESUITE_GATEWAY_LOCAL_STAND", "local", "stand name of CPESUITE_GATEWAY_LOCAL_WORKER")
	s.Duration(&c.ProxyTimeout, "gateway.proxy-timeout", "CPESUITE_GATEWAY_PROXY_TIMEOUT", 60*time.Second, "longest proxied worker request (WebSockets are not limited)")
	s.Duration(&c.HealthTimeout, "gateway.health-timeout", "CPESUITE_GATEWAY_HEALTH_TIMEOUT", 2*time.Second, "time a worker has to answer a health or fan-out probe")
	s.String(&c.Portainer.URL, "gateway.portainer.url", "PORTAINER_URL", "", "Portainer base URL for worker and emulator stacks; empty: provisioning answers 503")
	s.String(&c.Portainer.Username, "gateway.portainer.username", "PORTAINER_USERNAME", "", "Portainer user")
	s.Secret(&c.Portainer.Password, "gateway.portainer.password", "PORTAINER_PASSWORD", "", "Portainer password")
	s.Secret(&c.Portainer.APIKey, "gateway.portainer.api-key", "PORTAINER_API_KEY", "", "Portainer access token (instead of user and password)")
	s.Int(&c.Portainer.EndpointID, "gateway.portainer.endpoint-id", "PORTAINER_ENDPOINT_ID", 0, "Portainer environment id; 0: the first one")
	s.Bool(&c.Portainer.InsecureTLS, "gateway.portainer.insecure-tls", "PORTAINER_INSECURE_TLS", false, "accept Portainer's self-signed certificate")
	s.String(&c.WorkerImage, "gateway.worker-image", "CPESUITE_GATEWAY_WORKER_IMAGE", "cpesuite:latest", "image of provisioned worker stacks (runs `cpesuite run worker`)")
	s.String(&c.EmulatorImage, "gateway.emulator-image", "CPESUITE_GATEWAY_EMULATOR_IMAGE", "cpesuite:latest", "image of provisioned emulator wrapper stacks (runs `cpesuite run tr069-emulator`)")
	s.String(&c.StackNetwork, "gateway.stack-network", "CPESUITE_GATEWAY_STACK_NETWORK", "cpesuite", "external Docker network the provisioned stacks join, shared with the gateway")
}

// Validate checks the values and parses the derived ones.
func (c *Config) Validate() error {
	if c.TokenTTL < time.Minute || c.TokenTTL > 30*24*time.Hour {
		return config.Errorf("CPESUITE_GATEWAY_TOKEN_TTL", "must be from 1m to 720h")
	}
	p, err := accounts.ParseTrustedProxies(c.TrustedProxiesRaw)
	if err != nil {
		return config.Errorf("CPESUITE_GATEWAY_TRUSTED_PROXIES", "%v", err)
	}
	c.TrustedProxies = p
	if c.LocalWorker != "" {
		if err := checkBaseURL(c.LocalWorker); err != nil {
			return config.Errorf("CPESUITE_GATEWAY_LOCAL_WORKER", "%v", err)
		}
		if err := checkName(c.LocalStand); err != nil {
			return config.Errorf("CPESUITE_GATEWAY_LOCAL_STAND", "%v", err)
		}
	}
	if c.ProxyTimeout < time.Second {
		return config.Errorf("CPESUITE_GATEWAY_PROXY_TIMEOUT", "must be at least 1s")
	}
	if c.HealthTimeout < 100*time.Millisecond {
		return config.Errorf("CPESUITE_GATEWAY_HEALTH_TIMEOUT", "must be at least 100ms")
	}
	if c.Portainer.URL != "" {
		if err := c.Portainer.Validate(); err != nil {
			return config.Errorf("PORTAINER_URL", "%v", err)
		}
	}
	if c.StackNetwork == "" || !stackNameRe.MatchString(c.StackNetwork) {
		return config.Errorf("CPESUITE_GATEWAY_STACK_NETWORK", "must be a Docker network name")
	}
	return nil
}

// checkBaseURL accepts an absolute http(s) URL without query or fragment.
func checkBaseURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errf("must be an absolute http or https URL")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return errf("must not carry a query, fragment or user info")
	}
	return nil
}
