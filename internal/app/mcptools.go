package app

import (
	"context"
	"net/http"
	"time"

	"cpesuite/internal/platform/config"
	"cpesuite/internal/platform/health"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/service"
	"cpesuite/internal/testrunner/mcptools/browsertools"
	"cpesuite/internal/testrunner/mcptools/emulatortools"
	"cpesuite/internal/testrunner/wire"
)

// MCPEmulatorConfig configures the emulator tool server.
type MCPEmulatorConfig struct {
	// EmulatorURL and ACSURL default to the TR-069 emulator and the ACS
	// management API of this host's configured addresses.
	EmulatorURL string
	ACSURL      string
}

// RegisterFlags declares the variables.
func (c *MCPEmulatorConfig) RegisterFlags(s *config.Set) {
	s.String(&c.EmulatorURL, "mcp-emulator.emulator-url", "CPESUITE_MCP_EMULATOR_EMULATOR_URL", "", "TR-069 emulator the tool server drives (default: this host's tr069-emulator address)")
	s.String(&c.ACSURL, "mcp-emulator.acs-url", "CPESUITE_MCP_EMULATOR_ACS_URL", "", "ACS management API the tool server calls (default: this host's acs api-addr)")
}

// MCPBrowserConfig configures the browser tool server.
type MCPBrowserConfig struct {
	Chromium    string
	MaxSessions int
	Timeout     time.Duration
}

// RegisterFlags declares the variables.
func (c *MCPBrowserConfig) RegisterFlags(s *config.Set) {
	s.String(&c.Chromium, "mcp-browser.chromium", "CPESUITE_MCP_BROWSER_CHROMIUM", "/usr/bin/chromium", "chromium binary the browser tool server drives (started at the first tool call)")
	s.Int(&c.MaxSessions, "mcp-browser.max-sessions", "CPESUITE_MCP_BROWSER_MAX_SESSIONS", 4, "browser tabs open at once, one per MCP session")
	s.Duration(&c.Timeout, "mcp-browser.timeout", "CPESUITE_MCP_BROWSER_TIMEOUT", 30*time.Second, "time-out of one browser tool call")
}

// Validate checks the values.
func (c *MCPBrowserConfig) Validate() error {
	if c.MaxSessions < 1 || c.MaxSessions > 64 {
		return config.Errorf("CPESUITE_MCP_BROWSER_MAX_SESSIONS", "must be from 1 to 64")
	}
	if c.Timeout < time.Second || c.Timeout > 10*time.Minute {
		return config.Errorf("CPESUITE_MCP_BROWSER_TIMEOUT", "must be from 1s to 10m")
	}
	return nil
}

func (m *modules) initMCPEmulator(context.Context) (service.Service, error) {
	cfg := m.cfg.MCPEmulator
	if cfg.EmulatorURL == "" {
		cfg.EmulatorURL = "http://" + loopback(m.cfg.Addr(TR069Emu, "addr"))
	}
	if cfg.ACSURL == "" {
		cfg.ACSURL = "http://" + loopback(m.cfg.Addr(ACS, "api-addr"))
	}
	log := m.log.With("module", MCPEmulator)
	s, err := emulatortools.New(emulatortools.Config{EmulatorURL: cfg.EmulatorURL, ACSURL: cfg.ACSURL, Log: log})
	if err != nil {
		return nil, err
	}
	log.Info("emulator tool server", "emulator_url", cfg.EmulatorURL, "acs_url", cfg.ACSURL)
	return m.mcpServer(MCPEmulator, s.Handler(), nil), nil
}

func (m *modules) initMCPBrowser(context.Context) (service.Service, error) {
	cfg := m.cfg.MCPBrowser
	s, err := browsertools.New(browsertools.Config{ChromiumPath: cfg.Chromium, MaxSessions: cfg.MaxSessions, Timeout: cfg.Timeout, Log: m.log.With("module", MCPBrowser)})
	if err != nil {
		return nil, err
	}
	return m.mcpServer(MCPBrowser, s.Handler(), func(context.Context) error { return s.Close() }), nil
}

// mcpServer serves an MCP tool server's streamable-HTTP endpoint at /mcp,
// and /actuator/health so that a probe need not speak MCP to see it is up.
func (m *modules) mcpServer(name string, h http.Handler, stop func(context.Context) error) service.Service {
	mux := httpx.NewMux()
	mux.ServeMux.Handle("/mcp", h)
	srv := m.httpServer(name, m.cfg.Addr(name, "addr"), mux, health.NewRegistry(), wire.ErrorWriter())
	if stop == nil {
		return srv
	}
	return service.Group{srv, service.Funcs{StopFn: stop}}
}
