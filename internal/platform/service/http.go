package service

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"

	"cpesuite/internal/platform/httpx"
)

// HTTPServer runs an http.Server as a Service. The listener is bound in
// Start so that a port already in use fails start-up, before any other
// module is told the platform is ready.
type HTTPServer struct {
	Name   string
	Addr   string
	Server *http.Server
	Log    *slog.Logger
	// TLS, when set before Start, makes the server speak HTTPS.
	TLS *tls.Config

	mu sync.Mutex
	ln net.Listener
}

// NewHTTPServer wraps handler in a server with the platform's timeouts
// (httpx.NewServer).
func NewHTTPServer(name, addr string, handler http.Handler, log *slog.Logger) *HTTPServer {
	srv := httpx.NewServer(addr, handler)
	srv.MaxHeaderBytes = 64 << 10
	srv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	return &HTTPServer{Name: name, Addr: addr, Log: log, Server: srv}
}

// Start binds the listener.
func (h *HTTPServer) Start(context.Context) error {
	ln, err := httpx.Listen(h.Addr)
	if err != nil {
		return fmt.Errorf("%s: %w", h.Name, err)
	}
	if h.TLS != nil {
		ln = tls.NewListener(ln, h.TLS)
	}
	h.mu.Lock()
	h.ln = ln
	h.mu.Unlock()
	h.Log.Info("listening", "module", h.Name, "addr", ln.Addr().String(), "tls", h.TLS != nil)
	return nil
}

// ListenAddr returns the bound address (useful with port 0 in tests), or
// nil before Start.
func (h *HTTPServer) ListenAddr() net.Addr {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ln == nil {
		return nil
	}
	return h.ln.Addr()
}

// Run serves until ctx ends or the server fails.
func (h *HTTPServer) Run(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- httpx.Serve(h.Server, h.ln) }()
	select {
	case err := <-errc:
		if err == nil {
			return nil
		}
		return fmt.Errorf("%s: serve: %w", h.Name, err)
	case <-ctx.Done():
		return nil
	}
}

// Stop shuts the server down gracefully, then forcibly when the deadline
// passes so that a stuck client cannot hold the process.
func (h *HTTPServer) Stop(ctx context.Context) error {
	err := h.Server.Shutdown(ctx)
	// Shutdown only closes listeners that Serve has seen; when another
	// module failed before Run, ours is still open.
	h.mu.Lock()
	if h.ln != nil {
		_ = h.ln.Close()
	}
	h.mu.Unlock()
	if err != nil {
		_ = h.Server.Close()
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%s: graceful shutdown timed out; connections closed", h.Name)
		}
		return fmt.Errorf("%s: shutdown: %w", h.Name, err)
	}
	return nil
}

var _ Service = (*HTTPServer)(nil)
var _ Service = Funcs{}
var _ Service = Group(nil)
