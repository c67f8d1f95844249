package httpx

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"
)

// Server timeouts. There is deliberately no ReadTimeout or WriteTimeout:
// they bound the whole body transfer, and the speed-test target streams
// multi-gigabyte downloads and uploads that legitimately take minutes.
// ReadHeaderTimeout defeats slow headers and BodyDeadline (installed by
// NewServer) slow bodies; handlers that need a write deadline set one per
// request with http.ResponseController.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
)

// NewServer returns an http.Server for h on addr with the default timeouts
// and the body stall guard.
func NewServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           BodyDeadline(DefaultBodyStallTimeout, DefaultBodyProgressBytes, h),
		ReadHeaderTimeout: DefaultReadHeaderTimeout,
		IdleTimeout:       DefaultIdleTimeout,
	}
}

// Listen binds a TCP listener on addr. Binding before serving lets a target
// fail at start-up, with the address in the message, when its port is taken,
// and lets tests use ":0" and read the chosen port from the listener.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("address %s is already in use: %w", addr, err)
		}
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// Serve serves srv on ln until srv is shut down. Unlike srv.Serve it returns
// nil after Shutdown or Close, so callers only see real failures.
func Serve(srv *http.Server, ln net.Listener) error {
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
