package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// HTTPServer runs an http.Server as a Service. The listener is bound in
// Start so that a port already in use fails start-up, before any other
// module is told the platform is ready.
type HTTPServer struct {
	Name   string
	Addr   string
	Server *http.Server
	Log    *slog.Logger

	mu sync.Mutex
	ln net.Listener
}

// NewHTTPServer wraps handler in a server with timeouts suited to our
// services. There is no WriteTimeout: the speed-test target streams bodies
// of up to 1 GB and long polls exist elsewhere; slow clients are bounded
// by the read and idle timeouts instead.
func NewHTTPServer(name, addr string, handler http.Handler, log *slog.Logger) *HTTPServer {
	return &HTTPServer{
		Name: name,
		Addr: addr,
		Log:  log,
		Server: &http.Server{
			Handler:           handler,
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       120 * time.Second,
			MaxHeaderBytes:    64 << 10,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		},
	}
}

// Start binds the listener.
func (h *HTTPServer) Start(ctx context.Context) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", h.Addr)
	if err != nil {
		return fmt.Errorf("%s: listen on %s: %w", h.Name, h.Addr, err)
	}
	h.mu.Lock()
	h.ln = ln
	h.mu.Unlock()
	h.Log.Info("listening", "module", h.Name, "addr", ln.Addr().String())
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
	go func() { errc <- h.Server.Serve(h.ln) }()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
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
