package browsertools

import (
	"fmt"
	"log/slog"
	"time"

	"cpesuite/internal/platform/logx"
)

// Defaults of Config.
const (
	DefaultChromiumPath = "/usr/bin/chromium"
	DefaultTimeout      = 30 * time.Second
	DefaultMaxSessions  = 4
	DefaultIdleTimeout  = 10 * time.Minute
)

// startTimeout bounds the start of the browser process. It is separate from
// the per-call timeout because a cold chromium on a busy two-core stand can
// take longer to start than a page takes to load.
const startTimeout = 90 * time.Second

// sessionTimeout ends streamable-HTTP MCP sessions nobody has used for this
// long, so that a worker that died without a DELETE does not keep a tab.
const sessionTimeout = time.Hour

// Config configures a Server. Zero fields take the defaults above.
type Config struct {
	ChromiumPath string        // default "/usr/bin/chromium"
	Timeout      time.Duration // per tool call, default 30s
	MaxSessions  int           // concurrent browser tabs (one per MCP session), default 4; beyond it a tool error
	// IdleTimeout closes a session's tab after this long without a tool
	// call; the next call opens a fresh tab. Default 10m.
	IdleTimeout time.Duration
	Log         *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.ChromiumPath == "" {
		c.ChromiumPath = DefaultChromiumPath
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxSessions == 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.Log == nil {
		c.Log = logx.Discard()
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Timeout < 0:
		return fmt.Errorf("browsertools: Timeout must not be negative, got %s", c.Timeout)
	case c.MaxSessions < 0:
		return fmt.Errorf("browsertools: MaxSessions must not be negative, got %d", c.MaxSessions)
	case c.IdleTimeout < 0:
		return fmt.Errorf("browsertools: IdleTimeout must not be negative, got %s", c.IdleTimeout)
	}
	return nil
}
