// Package browsertools is the browser MCP tool server of the test runner. It
// serves the "pages" phase of a run: a case drives web pages (the provisioning
// portal, a device's web UI) through MCP tools such as navigate, click, type,
// read_text and screenshot, backed by a headless Debian chromium.
//
// The browser starts at the first tool call and each MCP session gets a tab of
// its own, in its own browser context (no shared cookies or storage). A tab
// closes when its session ends or idles.
package browsertools

import (
	"context"
	"net/http"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"cpesuite/internal/platform/apperr"
)

// ServerName is the MCP implementation name the server announces.
const ServerName = "cpesuite-browser"

var errClosed = apperr.New(apperr.ErrUnavailable, "BROWSER_CLOSED", "the browser tool server is shutting down")

// Server is the browser MCP tool server.
type Server struct {
	cfg     Config
	mcp     *mcp.Server
	handler http.Handler

	// startMu is held while the browser starts, so that concurrent first
	// calls start one browser, and Close can wait for a start in flight.
	startMu sync.Mutex

	mu      sync.Mutex
	closed  bool
	browser *browser
	tabs    map[*mcp.ServerSession]*tab

	closeOnce sync.Once
	closeErr  error
}

// New builds the server. It does not start the browser.
func New(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if _, err := os.Stat(cfg.ChromiumPath); err != nil {
		// Not fatal: the tools answer with a clear error until it is there.
		cfg.Log.Warn("chromium is not installed; browser tools will fail", "path", cfg.ChromiumPath, "err", err)
	}
	s := &Server{cfg: cfg, tabs: make(map[*mcp.ServerSession]*tab)}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: ServerName, Title: "cpesuite browser tools", Version: "1"},
		&mcp.ServerOptions{
			Instructions: "Drive a headless browser: navigate to an http(s) URL, then click, type, read_text and screenshot " +
				"with CSS selectors. Each MCP session has its own tab and cookies.",
			Logger: cfg.Log,
		})
	s.registerTools()
	s.handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{SessionTimeout: sessionTimeout, Logger: cfg.Log})
	return s, nil
}

// Handler is the streamable-HTTP MCP endpoint; the app mounts it at /mcp.
func (s *Server) Handler() http.Handler { return s.handler }

// MCP is the MCP server, for in-process transports.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Close ends the browser and removes its profile. Tool calls fail afterwards.
// It is idempotent.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.shutdown() })
	return s.closeErr
}

func (s *Server) shutdown() error {
	s.mu.Lock()
	s.closed = true
	tabs := make([]*tab, 0, len(s.tabs))
	for _, t := range s.tabs {
		tabs = append(tabs, t)
	}
	s.mu.Unlock()

	// A start in flight sees closed when it ends; waiting for it here means
	// that no chromium outlives Close.
	s.startMu.Lock()
	s.mu.Lock()
	b := s.browser
	s.browser = nil
	s.mu.Unlock()
	s.startMu.Unlock()

	var err error
	if b != nil {
		err = b.shutdown()
	}
	// The tabs died with the browser; this only releases their contexts.
	for _, t := range tabs {
		select {
		case <-t.ready:
			s.closeTab(t, "server closed")
		default: // its opener sees closed and cleans up
		}
	}
	return err
}

// ensureBrowser returns the running browser, starting it (again, after a
// crash) when needed.
func (s *Server) ensureBrowser(ctx context.Context) (*browser, error) {
	s.startMu.Lock()
	defer s.startMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errClosed
	}
	old := s.browser
	s.mu.Unlock()
	if old != nil && old.alive() {
		return old, nil
	}
	if old != nil {
		s.cfg.Log.Warn("browser went away; starting a new one", "last_output", old.output.tail(2<<10))
		if err := old.shutdown(); err != nil {
			s.cfg.Log.Warn("cleaning up the old browser", "err", err)
		}
	}

	b, err := startBrowser(ctx, s.cfg)
	if err != nil {
		s.cfg.Log.Error("browser start failed", "err", err)
		return nil, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = b.shutdown()
		return nil, errClosed
	}
	s.browser = b
	s.mu.Unlock()
	s.cfg.Log.Info("browser started", "path", s.cfg.ChromiumPath, "profile", b.dir)
	return b, nil
}
