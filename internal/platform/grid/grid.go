// Package grid is the product's data grid: named work queues, maps whose
// entries expire, and connection events, all on NATS with JetStream.
//
// By default the grid is an embedded NATS server inside the process
// (StartEmbedded) reached without a socket; at scale it is an external NATS
// cluster named by GRID_MEMBERS. Code above this package sees the same
// Queue and Map either way.
package grid

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Reconnect backoff for external members: fast enough that a restarted
// server is found within a fraction of a second, capped so that many clients
// do not hammer a cluster that is down for longer.
const (
	reconnectBase = 100 * time.Millisecond
	reconnectMax  = 5 * time.Second
	// pingInterval detects half-open TCP connections that never report an
	// error; two missed pings mark the connection as lost.
	pingInterval = 20 * time.Second
)

// Grid is a client connection to the grid.
type Grid struct {
	nc        *nats.Conn
	js        jetstream.JetStream
	events    *dispatcher
	timeout   time.Duration
	closeOnce sync.Once
}

// Connect opens a client connection. With emb it connects to that embedded
// server in-process; otherwise it connects to cfg.Members and, once
// connected, reconnects forever with backoff when the connection drops.
func Connect(ctx context.Context, cfg Config, emb *Embedded) (*Grid, error) {
	if emb == nil && len(cfg.Members) == 0 {
		return nil, fmt.Errorf("connecting to grid: %s is empty and no embedded server was given", EnvMembers)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("connecting to grid: %w", err)
	}
	// With an in-process server the URL is not dialled; nats.go only wants
	// one to be there.
	dial, target := nats.DefaultURL, "in-process server"
	if emb == nil {
		urls := make([]string, 0, len(cfg.Members))
		for _, m := range cfg.Members {
			hp, err := normalizeMember(m)
			if err != nil {
				return nil, fmt.Errorf("connecting to grid: %s: %w", EnvMembers, err)
			}
			urls = append(urls, "nats://"+hp)
		}
		dial = strings.Join(urls, ",")
		target = dial
	}
	timeout := cfg.ConnectTimeout
	if timeout <= 0 {
		timeout = DefaultConfig().ConnectTimeout
	}

	g := &Grid{events: newDispatcher(), timeout: timeout}
	opts := []nats.Option{
		nats.Name(cfg.Name),
		nats.Timeout(timeout),
		nats.MaxReconnects(-1),
		nats.CustomReconnectDelay(cfg.backoff()),
		nats.PingInterval(pingInterval),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			g.events.push(Event{Kind: Disconnected, Err: err, At: time.Now()})
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			g.events.push(Event{Kind: Reconnected, At: time.Now(), Server: nc.ConnectedUrlRedacted()})
		}),
		nats.ClosedHandler(func(nc *nats.Conn) {
			g.events.push(Event{Kind: Closed, Err: nc.LastError(), At: time.Now()})
			g.events.finish()
		}),
	}
	if emb != nil {
		opts = append(opts, nats.InProcessServer(emb.Server()))
	}
	nc, err := connect(ctx, dial, opts)
	if err != nil {
		g.events.finish()
		return nil, fmt.Errorf("connecting to grid at %s: %w", target, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("opening jetstream: %w", err)
	}
	g.nc, g.js = nc, js
	return g, nil
}

// connect runs nats.Connect, which knows no context, so that ctx can still
// abandon a slow attempt.
func connect(ctx context.Context, url string, opts []nats.Option) (*nats.Conn, error) {
	type result struct {
		nc  *nats.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		nc, err := nats.Connect(url, opts...)
		ch <- result{nc, err}
	}()
	select {
	case r := <-ch:
		return r.nc, r.err
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.nc != nil {
				r.nc.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// reconnectDelay is the default back-off, called by the client after each
// round over all known servers.
func reconnectDelay(attempts int) time.Duration {
	return backoffDelay(reconnectBase, reconnectMax, attempts)
}

// backoff returns the configured reconnect back-off.
func (c Config) backoff() func(int) time.Duration {
	base, top := c.ReconnectBase, c.ReconnectMax
	if base <= 0 {
		base = reconnectBase
	}
	if top <= 0 {
		top = max(base, reconnectMax)
	}
	return func(attempts int) time.Duration { return backoffDelay(base, top, attempts) }
}

// backoffDelay doubles from base up to top, with jitter.
func backoffDelay(base, top time.Duration, attempts int) time.Duration {
	d := top
	if attempts < 16 {
		d = min(base<<max(attempts-1, 0), top)
	}
	// Up to 20% jitter spreads the reconnects of many clients.
	return d + rand.N(d/5+1)
}

// ConnectRetry is Connect for services whose start-up must block until the
// grid is reachable: it retries a failed first connection with the
// configured back-off until it succeeds or ctx ends. onRetry, when not nil,
// hears of each failure and the wait before the next attempt.
func ConnectRetry(ctx context.Context, cfg Config, emb *Embedded, onRetry func(attempt int, err error, wait time.Duration)) (*Grid, error) {
	delay := cfg.backoff()
	for attempt := 1; ; attempt++ {
		g, err := Connect(ctx, cfg, emb)
		if err == nil {
			return g, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		wait := delay(attempt)
		if onRetry != nil {
			onRetry(attempt, err, wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("connecting to grid: %w (last error: %v)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// Conn returns the underlying NATS connection.
func (g *Grid) Conn() *nats.Conn { return g.nc }

// JetStream returns the JetStream context of the connection.
func (g *Grid) JetStream() jetstream.JetStream { return g.js }

// OnEvent registers fn to be called for each connection event and returns a
// function that unregisters it. Listeners run one at a time, in order, on a
// goroutine of the grid, never on the NATS client's; a slow listener delays
// other listeners but not the connection. Listeners must not call Close.
func (g *Grid) OnEvent(fn func(Event)) (cancel func()) {
	return g.events.subscribe(fn)
}

// Status is the state of the grid connection.
type Status int

// Connection states.
const (
	// StatusConnected means requests reach the server.
	StatusConnected Status = iota + 1
	// StatusReconnecting means the connection is lost (or not yet made) and
	// the client is trying to restore it.
	StatusReconnecting
	// StatusClosed means the connection is closed or closing for good.
	StatusClosed
)

var _ fmt.Stringer = Status(0)

// String returns the state's name.
func (s Status) String() string {
	switch s {
	case StatusConnected:
		return "connected"
	case StatusReconnecting:
		return "reconnecting"
	case StatusClosed:
		return "closed"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Status returns the current state of the connection.
func (g *Grid) Status() Status {
	switch g.nc.Status() {
	case nats.CONNECTED:
		return StatusConnected
	case nats.CONNECTING, nats.DISCONNECTED, nats.RECONNECTING:
		return StatusReconnecting
	default:
		return StatusClosed
	}
}

// Ping makes a round trip to the server, for health checks. Without a
// deadline in ctx it waits at most the connect timeout.
func (g *Grid) Ping(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.timeout)
		defer cancel()
	}
	if err := g.nc.FlushWithContext(ctx); err != nil {
		return fmt.Errorf("pinging grid: %w", err)
	}
	return nil
}

// Close closes the connection. Listeners receive a Closed event. It is safe
// to call more than once.
func (g *Grid) Close() {
	g.closeOnce.Do(g.nc.Close)
}
