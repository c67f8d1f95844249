package tr069emu

import (
	"net/url"
	"time"

	"cpesuite/internal/platform/config"
	"cpesuite/internal/tr069emu/tree"
)

// Config is the emulator's start-up configuration; what operators change at
// run time lives in the properties file (Properties).
type Config struct {
	Addr    string // set by the module from the port table
	DataDir string // the emulator's own folder, set by the module

	DefaultACSURL string
	ACSUsername   string
	ACSPassword   string
	// ACSPasswordFile is read when ACSPassword is empty: in `cpesuite up` the
	// ACS writes its generated CPE password there.
	ACSPasswordFile string
	CAFile          string
	Insecure        bool

	CRHost     string
	CRUsername string
	CRPassword string

	SerialPrefix string
	MaxDevices   int
	AutoUpdate   time.Duration
	MinRetry     time.Duration
	DiagTimeout  time.Duration
	MaxUpload    int64
}

// RegisterFlags declares the variables.
func (c *Config) RegisterFlags(s *config.Set) {
	s.String(&c.DefaultACSURL, "tr069-emulator.default-acs-url", "DEFAULT_ACS_URL", "http://127.0.0.1:7547/", "ACS URL of devices started without one")
	s.String(&c.ACSUsername, "tr069-emulator.acs-username", "CPESUITE_TR069_EMULATOR_ACS_USERNAME", "cpe", "username devices authenticate with at the ACS")
	s.Secret(&c.ACSPassword, "tr069-emulator.acs-password", "CPESUITE_TR069_EMULATOR_ACS_PASSWORD", "", "password towards the ACS; empty: the ACS's generated <data-dir>/acs-cpe-password")
	s.String(&c.CAFile, "tr069-emulator.ca-file", "CPESUITE_TR069_EMULATOR_CA_FILE", "", "PEM CA bundle that signs an https ACS")
	s.Bool(&c.Insecure, "tr069-emulator.insecure", "CPESUITE_TR069_EMULATOR_INSECURE", false, "accept any certificate of an https ACS (test labs only)")
	s.String(&c.CRHost, "tr069-emulator.cr-host", "CPESUITE_TR069_EMULATOR_CR_HOST", "", "host put in ConnectionRequestURL; empty: the listen host, or 127.0.0.1 when listening on all interfaces")
	s.String(&c.CRUsername, "tr069-emulator.cr-username", "CPESUITE_TR069_EMULATOR_CR_USERNAME", "", "connection request username; empty: the ACS username")
	s.Secret(&c.CRPassword, "tr069-emulator.cr-password", "CPESUITE_TR069_EMULATOR_CR_PASSWORD", "", "connection request password; empty: the ACS password")
	s.String(&c.SerialPrefix, "tr069-emulator.serial-prefix", "CPESUITE_TR069_EMULATOR_SERIAL_PREFIX", "EMU", "prefix of the serial numbers of load-test devices")
	s.Int(&c.MaxDevices, "tr069-emulator.max-devices", "CPESUITE_TR069_EMULATOR_MAX_DEVICES", 100000, "largest groups x concurrent a load test may start")
	s.Duration(&c.AutoUpdate, "tr069-emulator.auto-update-interval", "CPESUITE_TR069_EMULATOR_AUTO_UPDATE_INTERVAL", 30*time.Second, "period of auto-updated parameters")
	s.Duration(&c.MinRetry, "tr069-emulator.min-retry", "CPESUITE_TR069_EMULATOR_MIN_RETRY", 5*time.Second, "TR-069 minimum session retry wait (the standard's m)")
	s.Duration(&c.DiagTimeout, "tr069-emulator.diag-timeout", "CPESUITE_TR069_EMULATOR_DIAG_TIMEOUT", 60*time.Second, "longest TR-143 diagnostic")
	s.Int64(&c.MaxUpload, "tr069-emulator.max-upload", "CPESUITE_TR069_EMULATOR_MAX_UPLOAD", 8<<20, "largest parameter tree upload in bytes")
}

// Validate checks the values.
func (c *Config) Validate() error {
	if err := checkACSURL(c.DefaultACSURL); err != nil {
		return config.Errorf("DEFAULT_ACS_URL", "%v", err)
	}
	if c.MaxDevices < 1 {
		return config.Errorf("CPESUITE_TR069_EMULATOR_MAX_DEVICES", "must be at least 1")
	}
	if c.MinRetry < time.Millisecond {
		return config.Errorf("CPESUITE_TR069_EMULATOR_MIN_RETRY", "must be at least 1ms")
	}
	if c.AutoUpdate < 100*time.Millisecond {
		return config.Errorf("CPESUITE_TR069_EMULATOR_AUTO_UPDATE_INTERVAL", "must be at least 100ms")
	}
	if c.DiagTimeout < time.Second {
		return config.Errorf("CPESUITE_TR069_EMULATOR_DIAG_TIMEOUT", "must be at least 1s")
	}
	if c.MaxUpload < 1024 || c.MaxUpload > tree.MaxFileBytes {
		return config.Errorf("CPESUITE_TR069_EMULATOR_MAX_UPLOAD", "must be from 1024 to %d bytes (the tree parser's limit)", tree.MaxFileBytes)
	}
	if !serialRE.MatchString(c.SerialPrefix + "0") {
		return config.Errorf("CPESUITE_TR069_EMULATOR_SERIAL_PREFIX", "may hold letters, digits, '.', '_' and '-' only")
	}
	return nil
}

// checkACSURL accepts absolute http and https URLs.
func checkACSURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return errf("acsUrl %q is not an http or https URL", raw)
	}
	return nil
}
