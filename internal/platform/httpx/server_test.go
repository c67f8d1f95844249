package httpx_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"cpesuite/internal/platform/httpx"
)

func TestNewServerTimeouts(t *testing.T) {
	srv := httpx.NewServer(":0", http.NotFoundHandler())
	if srv.ReadHeaderTimeout == 0 || srv.IdleTimeout == 0 {
		t.Fatalf("ReadHeaderTimeout %v, IdleTimeout %v: want both set", srv.ReadHeaderTimeout, srv.IdleTimeout)
	}
	if srv.WriteTimeout != 0 || srv.ReadTimeout != 0 {
		t.Fatal("body timeouts would cut long speed-test transfers")
	}
}

func TestListenPortInUseNamesAddress(t *testing.T) {
	ln, err := httpx.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	_, err = httpx.Listen(addr)
	if err == nil || !strings.Contains(err.Error(), addr) || !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("err = %v, want EADDRINUSE naming %s", err, addr)
	}
}

func TestListenBadAddress(t *testing.T) {
	if _, err := httpx.Listen("not-an-address"); err == nil || !strings.Contains(err.Error(), "not-an-address") {
		t.Fatalf("err = %v", err)
	}
}

func TestServeReturnsNilAfterShutdown(t *testing.T) {
	ln, err := httpx.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ok", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	srv := httpx.NewServer(ln.Addr().String(), mux)
	done := make(chan error, 1)
	go func() { done <- httpx.Serve(srv, ln) }()

	// The listener is bound before Serve runs, so the request cannot race it.
	body, resp := get(t, "http://"+ln.Addr().String()+"/ok")
	if resp.StatusCode != 200 || body != "ok" {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve = %v, want nil after Shutdown", err)
	}
}

func TestServeReportsRealFailures(t *testing.T) {
	ln, err := httpx.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_ = ln.Close()
	if err := httpx.Serve(httpx.NewServer("", http.NotFoundHandler()), ln); err == nil {
		t.Fatal("Serve on a closed listener returned nil")
	}
}
