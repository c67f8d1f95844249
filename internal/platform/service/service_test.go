package service

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cpesuite/internal/platform/logx"
)

func TestHTTPServerLifecycle(t *testing.T) {
	h := NewHTTPServer("t", "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}), logx.Discard())
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	resp, err := http.Get("http://" + h.ListenAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "ok" {
		t.Fatalf("body %q", b)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	if err := h.Stop(context.Background()); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if _, err := http.Get("http://" + h.ListenAddr().String()); err == nil {
		t.Fatal("still serving after Stop")
	}
}

func TestHTTPServerPortInUse(t *testing.T) {
	a := NewHTTPServer("a", "127.0.0.1:0", http.NotFoundHandler(), logx.Discard())
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer a.Stop(context.Background())
	b := NewHTTPServer("b", a.ListenAddr().String(), http.NotFoundHandler(), logx.Discard())
	err := b.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "already in use") || !strings.HasPrefix(err.Error(), "b: ") {
		t.Fatalf("err=%v", err)
	}
}

func TestStopWithoutRunReleasesPort(t *testing.T) {
	// Another module failed before Run: Stop must still free the port.
	a := NewHTTPServer("a", "127.0.0.1:0", http.NotFoundHandler(), logx.Discard())
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	addr := a.ListenAddr().String()
	if err := a.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	b := NewHTTPServer("b", addr, http.NotFoundHandler(), logx.Discard())
	if err := b.Start(context.Background()); err != nil {
		t.Fatalf("port not released: %v", err)
	}
	b.Stop(context.Background())
}

func TestGroup(t *testing.T) {
	var log []string
	mk := func(name string, startErr, runErr error) Service {
		return Funcs{
			StartFn: func(context.Context) error { log = append(log, "start:"+name); return startErr },
			RunFn: func(ctx context.Context) error {
				if runErr != nil {
					return runErr
				}
				<-ctx.Done()
				return nil
			},
			StopFn: func(context.Context) error { log = append(log, "stop:"+name); return nil },
		}
	}
	// A failed member rolls back the ones started before it.
	g := Group{mk("a", nil, nil), mk("b", nil, nil), mk("c", errors.New("boom"), nil)}
	if err := g.Start(context.Background()); err == nil {
		t.Fatal("want start error")
	}
	if got := strings.Join(log, " "); got != "start:a start:b start:c stop:b stop:a" {
		t.Fatalf("rollback: %s", got)
	}
	// The first member to fail fails the group and the others return.
	log = nil
	g = Group{mk("a", nil, nil), mk("b", nil, errors.New("lost"))}
	if err := g.Run(context.Background()); err == nil || err.Error() != "lost" {
		t.Fatalf("run: %v", err)
	}
	if err := g.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(log, " "); got != "stop:b stop:a" {
		t.Fatalf("stop order: %s", got)
	}
}

func TestTimer(t *testing.T) {
	var n atomic.Int32
	s := Timer(time.Millisecond, func(context.Context) error {
		if n.Add(1) == 3 {
			return errors.New("third tick fails")
		}
		return nil
	})
	if err := s.Run(context.Background()); err == nil || n.Load() != 3 {
		t.Fatalf("err=%v ticks=%d", err, n.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Timer(time.Hour, nil).Run(ctx); err != nil {
		t.Fatalf("cancelled timer: %v", err)
	}
}
