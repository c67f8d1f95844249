package grid_test

import (
	"context"
	"net/url"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/platform/grid"
	"cpesuite/internal/platform/grid/gridtest"
	"cpesuite/internal/testutil"
)

// waitFor bounds polls; passing tests return as soon as the condition holds.
// It is a safety net against a hang sized for a busy 2-core machine, never
// a measure of speed.
const waitFor = testutil.MinDeadline

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	t.Cleanup(cancel)
	return ctx
}

func startEmbedded(t *testing.T, cfg grid.Config) *grid.Embedded {
	t.Helper()
	if cfg.StoreDir == "" {
		cfg.StoreDir = t.TempDir()
	}
	emb, err := grid.StartEmbedded(cfg)
	if err != nil {
		t.Fatalf("StartEmbedded: %v", err)
	}
	t.Cleanup(emb.Shutdown)
	return emb
}

func connect(t *testing.T, cfg grid.Config, emb *grid.Embedded) *grid.Grid {
	t.Helper()
	g, err := grid.Connect(testCtx(t), cfg, emb)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(g.Close)
	return g
}

func TestEmbedded(t *testing.T) {
	t.Parallel()
	emb := startEmbedded(t, grid.Config{})
	gridtest.Run(t, func(t *testing.T) *grid.Grid {
		return connect(t, grid.Config{Name: t.Name()}, emb)
	})
}

func TestExternal(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(testutil.RequireNATS(t))
	if err != nil {
		t.Fatalf("parsing NATS URL: %v", err)
	}
	members, err := grid.ParseMembers(u.Host)
	if err != nil {
		t.Fatalf("ParseMembers(%q): %v", u.Host, err)
	}
	gridtest.Run(t, func(t *testing.T) *grid.Grid {
		return connect(t, grid.Config{Members: members, Name: t.Name()}, nil)
	})
}

func TestEmbeddedShutdownIsIdempotent(t *testing.T) {
	t.Parallel()
	emb := startEmbedded(t, grid.Config{})
	if emb.ClientURL() != "" || emb.Addr() != "" {
		t.Fatalf("in-process server reports address %q / %q, want none", emb.ClientURL(), emb.Addr())
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(emb.Shutdown)
	}
	wg.Wait()
	emb.Shutdown()
	if emb.Server().Running() {
		t.Fatal("server still running after Shutdown")
	}
}

func TestEmbeddedKeepsDataAcrossRestart(t *testing.T) {
	t.Parallel()
	cfg := grid.Config{StoreDir: t.TempDir()}
	emb := startEmbedded(t, cfg)
	g := connect(t, cfg, emb)
	q, err := grid.NewQueue(testCtx(t), g, "durable", grid.QueueOptions{})
	if err != nil {
		t.Fatalf("NewQueue: %v", err)
	}
	if err := q.Publish(testCtx(t), []byte("survives"), ""); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	g.Close()
	emb.Shutdown()

	emb = startEmbedded(t, cfg)
	g = connect(t, cfg, emb)
	q, err = grid.NewQueue(testCtx(t), g, "durable", grid.QueueOptions{})
	if err != nil {
		t.Fatalf("NewQueue after restart: %v", err)
	}
	ds, err := q.Fetch(testCtx(t), 1, waitFor)
	if err != nil || len(ds) != 1 || string(ds[0].Data) != "survives" {
		t.Fatalf("Fetch after restart = %d deliveries, %v; want the message published before", len(ds), err)
	}
}

// TestConnectionEvents drives a client over TCP through a server outage:
// shutting the server down must report Disconnected, starting it again on
// the same port Reconnected, and Close Closed.
func TestConnectionEvents(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	emb := startEmbedded(t, grid.Config{StoreDir: store, Listen: "127.0.0.1:0"})
	addr := emb.Addr()
	if addr == "" || emb.ClientURL() != "nats://"+addr {
		t.Fatalf("server on a random port reports Addr %q, ClientURL %q", addr, emb.ClientURL())
	}
	g, err := grid.Connect(testCtx(t), grid.Config{Members: []string{addr}, Name: t.Name()}, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(g.Close)

	events := make(chan grid.Event, 16)
	defer g.OnEvent(func(ev grid.Event) { events <- ev })()
	// An unregistered listener must not be called.
	g.OnEvent(func(ev grid.Event) { t.Errorf("cancelled listener got %v", ev.Kind) })()

	next := func(want grid.EventKind) grid.Event {
		t.Helper()
		timeout := time.NewTimer(waitFor)
		defer timeout.Stop()
		for {
			select {
			case ev := <-events:
				if ev.At.IsZero() {
					t.Fatalf("%v event has no time", ev.Kind)
				}
				if ev.Kind == want {
					return ev
				}
				// Closing a live connection reports the disconnection first.
				if want != grid.Closed || ev.Kind != grid.Disconnected {
					t.Fatalf("event %v (err %v), want %v", ev.Kind, ev.Err, want)
				}
			case <-timeout.C:
				t.Fatalf("no %v event within %s", want, waitFor)
			}
		}
	}
	waitStatus := func(want grid.Status) {
		t.Helper()
		eventually(t, func() bool { return g.Status() == want })
	}

	if got := g.Status(); got != grid.StatusConnected {
		t.Fatalf("Status() = %v, want connected", got)
	}
	emb.Shutdown()
	next(grid.Disconnected)
	waitStatus(grid.StatusReconnecting)
	pingCtx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := g.Ping(pingCtx); err == nil {
		t.Fatal("Ping succeeded while the server is down")
	}

	startEmbedded(t, grid.Config{StoreDir: store, Listen: addr})
	if ev := next(grid.Reconnected); ev.Server == "" {
		t.Error("Reconnected event names no server")
	}
	waitStatus(grid.StatusConnected)
	if err := g.Ping(testCtx(t)); err != nil {
		t.Fatalf("Ping after reconnect: %v", err)
	}

	g.Close()
	g.Close()
	next(grid.Closed)
	waitStatus(grid.StatusClosed)
}

func TestConnectFailures(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		cfg  grid.Config
	}{
		{"no members and no embedded server", t.Context(), grid.Config{}},
		{"invalid member", t.Context(), grid.Config{Members: []string{"host:notaport"}}},
		{"cancelled context", cancelled, grid.Config{Members: []string{"127.0.0.1:1"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if g, err := grid.Connect(tc.ctx, tc.cfg, nil); err == nil {
				g.Close()
				t.Fatal("Connect succeeded")
			}
		})
	}
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", waitFor)
		}
		<-tick.C
	}
}

// TestConnectRetryWaitsForTheServer starts the client before any server
// listens on its member address: ConnectRetry keeps trying with the
// configured back-off and returns once a server appears there.
func TestConnectRetryWaitsForTheServer(t *testing.T) {
	t.Parallel()
	addr := testutil.FreeAddr(t)
	cfg := grid.Config{Members: []string{addr}, ConnectTimeout: time.Second, ReconnectBase: 20 * time.Millisecond, ReconnectMax: 50 * time.Millisecond}
	retried := make(chan struct{})
	var once sync.Once
	var attempts int
	var mu sync.Mutex
	done := make(chan *grid.Grid, 1)
	errc := make(chan error, 1)
	go func() {
		g, err := grid.ConnectRetry(testCtx(t), cfg, nil, func(attempt int, err error, wait time.Duration) {
			mu.Lock()
			attempts = attempt
			mu.Unlock()
			// wait is the delay ConnectRetry computed from the configuration
			// and reports before sleeping, not a measured time: the back-off
			// (base, capped at max plus 20% jitter) is what is under test,
			// and no load on the machine changes it.
			if lo, hi := cfg.ReconnectBase, cfg.ReconnectMax+cfg.ReconnectMax/5; wait < lo || wait > hi {
				t.Errorf("wait %s outside the configured back-off [%s, %s]", wait, lo, hi)
			}
			once.Do(func() { close(retried) })
		})
		if err != nil {
			errc <- err
			return
		}
		done <- g
	}()
	<-retried
	startEmbedded(t, grid.Config{Listen: addr})
	select {
	case g := <-done:
		defer g.Close()
		if err := g.Ping(testCtx(t)); err != nil {
			t.Fatalf("Ping after ConnectRetry: %v", err)
		}
	case err := <-errc:
		t.Fatalf("ConnectRetry: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if attempts < 1 {
		t.Fatalf("attempts = %d, want at least one retry", attempts)
	}
}

// TestConnectRetryStopsWithContext: a cancelled start-up does not hang.
func TestConnectRetryStopsWithContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cfg := grid.Config{Members: []string{testutil.FreeAddr(t)}, ConnectTimeout: time.Second, ReconnectBase: 10 * time.Millisecond, ReconnectMax: 10 * time.Millisecond}
	_, err := grid.ConnectRetry(ctx, cfg, nil, func(int, error, time.Duration) { cancel() })
	if err == nil {
		t.Fatal("ConnectRetry returned no error after cancel")
	}
}
