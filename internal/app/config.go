package app

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"cpesuite/internal/acs"
	"cpesuite/internal/configsvc"
	"cpesuite/internal/fcc"
	"cpesuite/internal/iotemu"
	"cpesuite/internal/platform/campaigntime"
	"cpesuite/internal/platform/config"
	"cpesuite/internal/platform/grid"
	"cpesuite/internal/speedtest"
	"cpesuite/internal/testrunner/gateway"
	"cpesuite/internal/tr069emu"
)

// Config is the process configuration: shared settings plus each
// module's own config struct.
type Config struct {
	DataDir     string
	LogLevel    string
	LogFormat   string
	StopTimeout time.Duration
	// TestrunnerSecret is shared by the gateway and its workers.
	TestrunnerSecret string

	// Addrs maps Listener.Flag() to the configured address.
	Addrs map[string]string
	// AddrsSet records which addresses the operator set explicitly.
	AddrsSet map[string]bool

	// CampaignTime is read once and handed to the campaign service and the
	// ACS, so both sides of a campaign run on the same clock.
	CampaignTime campaigntime.Scale

	Grid        grid.Config
	Speedtest   speedtest.Config
	ACS         acs.Config
	TR069Emu    tr069emu.Config
	IoTEmu      iotemu.Config
	FCC         fcc.Config
	Configs     configsvc.Config
	Gateway     gateway.Config
	Worker      WorkerConfig
	MCPEmulator MCPEmulatorConfig
	MCPBrowser  MCPBrowserConfig

	// lookupEnv is the process environment the CLI was given; the worker's
	// settings fall back to it (container environment).
	lookupEnv func(string) (string, bool)
}

// RegisterFlags registers every variable on s with its default.
func (c *Config) RegisterFlags(s *config.Set, lookupEnv func(string) (string, bool)) {
	c.lookupEnv = lookupEnv
	s.String(&c.DataDir, "data-dir", "CPESUITE_DATA_DIR", "./data", "directory for embedded databases, grid store and files; created on start")
	s.OneOf(&c.LogLevel, "log.level", "CPESUITE_LOG_LEVEL", "info", "log level", "debug", "info", "warn", "error")
	s.OneOf(&c.LogFormat, "log.format", "CPESUITE_LOG_FORMAT", "auto", "log format; auto is text on a terminal, JSON otherwise", "auto", "json", "text")
	s.Duration(&c.StopTimeout, "stop-timeout", "CPESUITE_STOP_TIMEOUT", 10*time.Second, "deadline for stopping all modules after SIGINT/SIGTERM")

	s.Secret(&c.TestrunnerSecret, "testrunner.secret", "CPESUITE_TESTRUNNER_SECRET", "", "secret (32+ bytes) the test-runner gateway and its workers share to sign caller identity; empty: generated in <data-dir>/testrunner-secret, which only a worker in the same data dir shares")
	c.Addrs = map[string]string{}
	c.AddrsSet = map[string]bool{}
	// Planned targets keep their address variables, so a malformed value
	// fails now rather than when the target lands, but help does not offer
	// what `up` cannot start.
	built := newModules(nil, nil)
	for _, l := range Listeners {
		s.Func(config.Var{Flag: l.Flag(), Env: l.Env(), Default: l.Default, Usage: "listen address of " + l.Target + " (" + l.Paths + ")", Hidden: !built.IsTarget(l.Target)},
			func(v string) error {
				if err := config.ValidateAddr(v); err != nil {
					return err
				}
				c.Addrs[l.Flag()] = v
				if v != l.Default {
					c.AddrsSet[l.Flag()] = true
				}
				return nil
			})
	}
	c.CampaignTime.RegisterFlags(s)
	c.Grid.RegisterFlags(s)
	c.Speedtest.RegisterFlags(s)
	c.ACS.RegisterFlags(s)
	c.TR069Emu.RegisterFlags(s)
	c.IoTEmu.RegisterFlags(s)
	c.FCC.RegisterFlags(s)
	c.Configs.RegisterFlags(s)
	c.Gateway.RegisterFlags(s)
	c.Worker.RegisterFlags(s)
	c.MCPEmulator.RegisterFlags(s)
	c.MCPBrowser.RegisterFlags(s)
}

// Addr returns the configured address of a target's listener.
func (c *Config) Addr(target, key string) string { return c.Addrs[target+"."+key] }

// Validate fills settings derived from others, then checks cross-field
// rules after parsing.
func (c *Config) Validate() error {
	if c.DataDir == "" {
		return config.Errorf("CPESUITE_DATA_DIR", "must not be empty")
	}
	if c.Grid.StoreDir == "" {
		c.Grid.StoreDir = filepath.Join(c.DataDir, "grid")
	}
	c.FCC.TimeScale, c.ACS.TimeScale = c.CampaignTime, c.CampaignTime
	if err := c.Grid.Validate(); err != nil {
		return err
	}
	if err := c.Speedtest.Validate(); err != nil {
		return err
	}
	if err := c.ACS.Validate(); err != nil {
		return err
	}
	if err := c.TR069Emu.Validate(); err != nil {
		return err
	}
	if err := c.IoTEmu.Validate(); err != nil {
		return err
	}
	if err := c.FCC.Validate(); err != nil {
		return err
	}
	if err := c.Configs.Validate(); err != nil {
		return err
	}
	if err := c.Worker.Validate(); err != nil {
		return err
	}
	if err := c.MCPBrowser.Validate(); err != nil {
		return err
	}
	return c.Gateway.Validate()
}

// Prepare creates the data directory and fills paths derived from it.
func (c *Config) Prepare() error {
	abs, err := filepath.Abs(c.DataDir)
	if err != nil {
		return config.Errorf("CPESUITE_DATA_DIR", "%v", err)
	}
	if err := os.MkdirAll(abs, 0o750); err != nil {
		return config.Errorf("CPESUITE_DATA_DIR", "cannot create %s: %v", abs, err)
	}
	c.DataDir = abs
	return nil
}

// String is a one-line summary for the start-up log (no secrets here).
func (c *Config) String() string {
	return fmt.Sprintf("data-dir=%s grid=%v", c.DataDir, c.Grid.Members)
}
