package mcpclient

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"cpesuite/internal/testutil"
)

// waitFor bounds every wait: a safety net against a hang sized for a busy
// 2-core machine, never a measure of speed.
const waitFor = testutil.MinDeadline

// pngBytes stands for a screenshot: only its size reaches the text.
var pngBytes = make([]byte, 5120)

// toolServer is a real go-sdk MCP server behind streamable HTTP, on a
// loopback port it keeps across restarts.
type toolServer struct {
	t         *testing.T
	name      string
	stateless bool
	user      string // with pass: HTTP Basic authentication required
	pass      string

	mu          sync.Mutex
	addr        string
	mcp         *mcp.Server
	http        *http.Server
	initialized atomic.Int64 // initialize handshakes (stateful sessions) of all runs
	lists       atomic.Int64 // tools/list requests answered
	slowStarted chan struct{}
	slowEnded   chan error // the slow tool's context error when it returns
}

type serverOpt func(*toolServer)

func stateless(ts *toolServer) { ts.stateless = true }
func basicAuth(user, pass string) serverOpt {
	return func(ts *toolServer) { ts.user, ts.pass = user, pass }
}

func newToolServer(t *testing.T, name string, opts ...serverOpt) *toolServer {
	t.Helper()
	ts := &toolServer{t: t, name: name, addr: "127.0.0.1:0", slowStarted: make(chan struct{}, 16), slowEnded: make(chan error, 16)}
	for _, o := range opts {
		o(ts)
	}
	ts.start()
	t.Cleanup(ts.stop)
	return ts
}

type textArgs struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type infoOut struct {
	Server string `json:"server"`
	Count  int    `json:"count"`
}

func (ts *toolServer) newMCP() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test-" + ts.name, Version: "1.2.3"}, &mcp.ServerOptions{
		InitializedHandler: func(context.Context, *mcp.InitializedRequest) { ts.initialized.Add(1) },
	})
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				ts.lists.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo text, prefixed with the server name."},
		func(_ context.Context, _ *mcp.CallToolRequest, in textArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: ts.name + ": " + in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always reports a tool error."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "bad thing happened"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "shot", Description: "Returns a screenshot."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "screenshot taken"},
				&mcp.ImageContent{Data: pngBytes, MIMEType: "image/png"},
			}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Blocks until its call is cancelled."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			ts.slowStarted <- struct{}{}
			<-ctx.Done()
			ts.slowEnded <- ctx.Err()
			return nil, nil, ctx.Err()
		})
	mcp.AddTool(s, &mcp.Tool{Name: "info", Description: "Structured output."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, infoOut, error) {
			return nil, infoOut{Server: ts.name, Count: 3}, nil
		})
	return s
}

// start serves a fresh MCP server (no sessions) on the server's address.
func (ts *toolServer) start() {
	ts.t.Helper()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ln, err := net.Listen("tcp", ts.addr)
	if err != nil {
		ts.t.Fatalf("listening on %s: %v", ts.addr, err)
	}
	ts.addr = ln.Addr().String()
	ts.mcp = ts.newMCP()
	m := ts.mcp
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return m },
		// As the emulator tool server does: on a stateless server only
		// the end of the HTTP request can cancel a call.
		&mcp.StreamableHTTPOptions{Stateless: ts.stateless, PropagateRequestCancellation: true})
	if ts.user != "" {
		inner := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, p, ok := r.BasicAuth()
			if !ok || u != ts.user || p != ts.pass {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ts.http = &http.Server{Handler: mux}
	go func() { _ = ts.http.Serve(ln) }()
}

// stop closes the listener and every connection, as a crash would.
func (ts *toolServer) stop() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.http != nil {
		_ = ts.http.Close()
		ts.http = nil
	}
}

func (ts *toolServer) restart() {
	ts.stop()
	ts.start()
}

func (ts *toolServer) server() *mcp.Server {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.mcp
}

// sessions counts the MCP server's open sessions.
func (ts *toolServer) sessions() int {
	n := 0
	for range ts.server().Sessions() {
		n++
	}
	return n
}

func (ts *toolServer) url() string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.user != "" {
		return "http://" + ts.user + ":" + ts.pass + "@" + ts.addr + "/mcp"
	}
	return "http://" + ts.addr + "/mcp"
}

// setting is a mutable mcp_servers value.
type setting struct{ v atomic.Value }

func newSetting(pairs ...string) *setting {
	s := &setting{}
	s.set(pairs...)
	return s
}

func (s *setting) set(pairs ...string) { s.v.Store(strings.Join(pairs, ",")) }

func (s *setting) get(key string) string {
	if key != SettingKey {
		return ""
	}
	return s.v.Load().(string)
}

func pair(name string, ts *toolServer) string { return name + "=" + ts.url() }

// fixedClock keeps the tool-list TTL from expiring during a test, so a
// refreshed list proves a notification arrived.
var fixedNow = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func fixedClock() time.Time { return fixedNow }

func newClient(t *testing.T, st *setting, tweak ...func(*Config)) (*Client, *testutil.SyncBuffer) {
	t.Helper()
	logs := &testutil.SyncBuffer{}
	cfg := Config{
		Setting: st.get,
		Now:     fixedClock,
		Log:     slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	for _, f := range tweak {
		f(&cfg)
	}
	c := New(cfg)
	t.Cleanup(func() { _ = c.Close() })
	return c, logs
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	t.Cleanup(cancel)
	return ctx
}

func mustCall(t *testing.T, c *Client, server, tool string, args map[string]any) (string, bool) {
	t.Helper()
	out, isErr, err := c.Call(ctxFor(t), server, tool, args)
	if err != nil {
		t.Fatalf("Call(%s/%s): %v", server, tool, err)
	}
	return out, isErr
}

// within fails the test when ch does not deliver in time.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitFor):
		t.Fatalf("timed out waiting for %s", what)
	}
	panic("unreachable")
}
