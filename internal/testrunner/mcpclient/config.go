package mcpclient

import (
	"log/slog"
	"net/http"
	"time"
)

// Config configures a Client.
type Config struct {
	// Setting reads a worker setting; the client reads "mcp_servers" on
	// every use, so a settings change takes effect without a restart.
	Setting func(key string) string
	// HTTPClient carries the MCP traffic; nil: a client of its own on a
	// clone of http.DefaultTransport. Its Timeout is ignored (a copy without
	// it is used): it would cut the long-lived event streams of a session.
	// Time-outs come from the contexts of the calls.
	HTTPClient *http.Client
	// CallTimeout bounds one tool call whose context has no deadline;
	// 0 means DefaultCallTimeout.
	CallTimeout time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Log receives session and failure events; nil means slog.Default().
	Log *slog.Logger
}

// SettingKey is the worker setting naming the tool servers.
const SettingKey = "mcp_servers"

const (
	// DefaultCallTimeout is Config.CallTimeout when it is 0.
	DefaultCallTimeout = 120 * time.Second
	// ProbeTimeout bounds the probe of one server by GET /api/mcp-status.
	ProbeTimeout = 5 * time.Second
	// ListTimeout bounds a tool-list look-up whose context has no deadline.
	ListTimeout = 30 * time.Second
	// ToolsTTL is how long a session's tool list is trusted without a
	// tools/list_changed notification.
	ToolsTTL = time.Minute
	// connectTimeout bounds opening a session, so that a server that
	// accepts connections but never answers cannot hold the callers queued
	// behind the opening for a whole call time-out.
	connectTimeout = 15 * time.Second
)

func (cfg *Config) defaults() {
	if cfg.Setting == nil {
		cfg.Setting = func(string) string { return "" }
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	} else if cfg.HTTPClient.Timeout != 0 {
		hc := *cfg.HTTPClient
		hc.Timeout = 0
		cfg.HTTPClient = &hc
	}
}
