package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/testutil"
)

// modes are the two server shapes the worker meets: the browser server
// keeps sessions (legacy protocol, session ids), the emulator server is
// stateless (protocol 2026-07-28, no session ids).
var modes = []struct {
	name string
	opts []serverOpt
}{
	{"stateful", nil},
	{"stateless", []serverOpt{stateless}},
}

func TestCallResolveList(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			emu := newToolServer(t, "emu", m.opts...)
			c, _ := newClient(t, newSetting(pair("emulator", emu)))

			calls := []struct {
				tool    string
				args    map[string]any
				want    string
				wantErr bool
			}{
				{"echo", map[string]any{"text": "hi"}, "emu: hi", false},
				{"fail", nil, "bad thing happened", true},
				{"shot", nil, "screenshot taken\n[image/png, 5120 bytes]", false},
				{"info", nil, `{"count":3,"server":"emu"}`, false},
			}
			for _, tc := range calls {
				if err := c.Resolve(ctxFor(t), "emulator", tc.tool); err != nil {
					t.Fatalf("Resolve(%s): %v", tc.tool, err)
				}
				got, isErr := mustCall(t, c, "emulator", tc.tool, tc.args)
				if isErr != tc.wantErr {
					t.Errorf("%s: isError = %v, want %v (result %q)", tc.tool, isErr, tc.wantErr, got)
				}
				if tc.tool == "info" {
					if !sameJSON(got, []byte(tc.want)) {
						t.Errorf("info: %q is not the JSON %s", got, tc.want)
					}
					continue
				}
				if got != tc.want {
					t.Errorf("%s: result %q, want %q", tc.tool, got, tc.want)
				}
			}

			list, err := c.List(ctxFor(t))
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]json.RawMessage{}
			for _, ti := range list {
				if ti.Server != "emulator" || ti.Description == "" {
					t.Errorf("tool info %+v: want server emulator and a description", ti)
				}
				byName[ti.Name] = ti.InputSchema
			}
			if len(byName) != 5 {
				t.Fatalf("List = %d tools %v, want echo, fail, info, shot, slow", len(byName), byName)
			}
			var schema struct {
				Type       string                    `json:"type"`
				Properties map[string]map[string]any `json:"properties"`
			}
			if err := json.Unmarshal(byName["echo"], &schema); err != nil || schema.Type != "object" || schema.Properties["text"]["type"] != "string" {
				t.Errorf("echo schema %s: want an object with a string property text (%v)", byName["echo"], err)
			}
			if d := c.Diag().MCPs["emulator"]; d.SessionsOpened != 1 {
				t.Errorf("sessions opened = %d, want one reused session", d.SessionsOpened)
			}
		})
	}
}

func TestUnknownServerAndTool(t *testing.T) {
	emu := newToolServer(t, "emu")
	c, _ := newClient(t, newSetting(pair("emulator", emu), "browser=http://127.0.0.1:1/mcp"))
	tests := []struct {
		name, server, tool string
		code               string
		mentions           []string
	}{
		{"unknown server", "nosuch", "echo", "UNKNOWN_TOOL_SERVER", []string{`"nosuch"`, "emulator, browser"}},
		{"unknown tool", "emulator", "nosuch", "UNKNOWN_TOOL", []string{`"nosuch"`, "echo, fail, info, shot, slow"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for op, err := range map[string]error{
				"Resolve": c.Resolve(ctxFor(t), tc.server, tc.tool),
				"Call":    callErr(c, tc.server, tc.tool),
			} {
				e, ok := apperr.As(err)
				if !ok || e.Code != tc.code || !errors.Is(err, apperr.ErrNotFound) {
					t.Fatalf("%s: error %v, want code %s", op, err, tc.code)
				}
				for _, m := range tc.mentions {
					if !strings.Contains(err.Error(), m) {
						t.Errorf("%s: %q does not mention %s", op, err, m)
					}
				}
			}
		})
	}
}

func callErr(c *Client, server, tool string) error {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	_, _, err := c.Call(ctx, server, tool, nil)
	return err
}

func TestConcurrentCallersShareOneSession(t *testing.T) {
	emu := newToolServer(t, "emu")
	c, _ := newClient(t, newSetting(pair("emulator", emu)))
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Go(func() {
			out, _, err := c.Call(ctxFor(t), "emulator", "echo", map[string]any{"text": fmt.Sprint(i)})
			if err == nil && out != fmt.Sprintf("emu: %d", i) {
				err = fmt.Errorf("call %d answered %q", i, out)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := emu.initialized.Load(); n != 1 {
		t.Fatalf("server saw %d sessions initialized, want 1", n)
	}
}

func TestReconnect(t *testing.T) {
	cases := []struct {
		name   string
		opts   []serverOpt
		break_ func(*toolServer)
		// sessions is how many sessions the client opens in all; a
		// stateless server's restart is invisible to the client.
		sessions int
	}{
		{"stateful server restarts", nil, (*toolServer).restart, 2},
		{"stateless server restarts", []serverOpt{stateless}, (*toolServer).restart, 1},
		{"server closes the session", nil, func(ts *toolServer) {
			for ss := range ts.server().Sessions() {
				_ = ss.Close()
			}
		}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			emu := newToolServer(t, "emu", tc.opts...)
			hc := &http.Client{Transport: &http.Transport{}}
			c, _ := newClient(t, newSetting(pair("emulator", emu)), func(cfg *Config) { cfg.HTTPClient = hc })
			if out, _ := mustCall(t, c, "emulator", "echo", map[string]any{"text": "before"}); out != "emu: before" {
				t.Fatalf("before: %q", out)
			}
			tc.break_(emu)
			forgetClosedConns(hc)
			if out, _ := mustCall(t, c, "emulator", "echo", map[string]any{"text": "after"}); out != "emu: after" {
				t.Fatalf("after: %q", out)
			}
			d := c.Diag().MCPs["emulator"]
			if d.SessionsOpened != tc.sessions || !d.OK || !d.Session {
				t.Fatalf("diag %+v: want %d sessions opened, ok, a session", d, tc.sessions)
			}
		})
	}
}

func TestServerDownThenBack(t *testing.T) {
	emu := newToolServer(t, "emu")
	hc := &http.Client{Transport: &http.Transport{}}
	c, _ := newClient(t, newSetting(pair("emulator", emu)), func(cfg *Config) { cfg.HTTPClient = hc })
	mustCall(t, c, "emulator", "echo", map[string]any{"text": "1"})
	emu.stop()
	_, _, err := c.Call(ctxFor(t), "emulator", "echo", map[string]any{"text": "2"})
	if e, ok := apperr.As(err); !ok || !errors.Is(err, apperr.ErrUpstream) {
		t.Fatalf("call while down: %v (%+v), want an upstream error", err, e)
	}
	if d := c.Diag().MCPs["emulator"]; d.OK || d.LastError == "" || d.LastErrorAt == nil {
		t.Fatalf("diag while down %+v: want not ok with the error", d)
	}
	emu.start()
	forgetClosedConns(hc)
	if out, _ := mustCall(t, c, "emulator", "echo", map[string]any{"text": "3"}); out != "emu: 3" {
		t.Fatalf("after the server came back: %q", out)
	}
	if d := c.Diag().MCPs["emulator"]; !d.OK {
		t.Fatalf("diag after recovery %+v: want ok", d)
	}
}

func TestSettingChange(t *testing.T) {
	a := newToolServer(t, "a")
	b := newToolServer(t, "b")
	st := newSetting(pair("emulator", a))
	c, _ := newClient(t, st)
	if out, _ := mustCall(t, c, "emulator", "echo", map[string]any{"text": "x"}); out != "a: x" {
		t.Fatalf("first server: %q", out)
	}
	if a.sessions() != 1 {
		t.Fatalf("server a has %d sessions, want 1", a.sessions())
	}

	st.set(pair("emulator", b))
	if out, _ := mustCall(t, c, "emulator", "echo", map[string]any{"text": "x"}); out != "b: x" {
		t.Fatalf("after the URL changed: %q", out)
	}
	testutil.Eventually(t, waitFor, "the session with the old URL to be closed", func() bool { return a.sessions() == 0 })
	if d := c.Diag().MCPs["emulator"]; !strings.Contains(b.url(), d.URL) || d.SessionsOpened != 1 {
		t.Fatalf("diag %+v: want the new URL %s and its own session count", d, b.url())
	}

	st.set(pair("browser", a))
	err := callErr(c, "emulator", "echo")
	if e, ok := apperr.As(err); !ok || e.Code != "UNKNOWN_TOOL_SERVER" || !strings.Contains(err.Error(), "configured: browser") {
		t.Fatalf("removed server: %v", err)
	}
	testutil.Eventually(t, waitFor, "the removed server's session to be closed", func() bool { return b.sessions() == 0 })
	if out, _ := mustCall(t, c, "browser", "echo", map[string]any{"text": "y"}); out != "a: y" {
		t.Fatalf("new server: %q", out)
	}

	st.set("emulator=ftp://nope")
	err = callErr(c, "browser", "echo")
	if e, ok := apperr.As(err); !ok || e.Code != "INVALID_MCP_SERVERS" {
		t.Fatalf("invalid setting: %v", err)
	}
	testutil.Eventually(t, waitFor, "sessions to be closed when the setting is unreadable", func() bool { return a.sessions() == 0 })
}

func TestCancelEndsSlowCall(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			emu := newToolServer(t, "emu", m.opts...)
			c, _ := newClient(t, newSetting(pair("emulator", emu)))
			ctx, cancel := context.WithCancelCause(context.Background())
			done := make(chan error, 1)
			go func() {
				_, _, err := c.Call(ctx, "emulator", "slow", nil)
				done <- err
			}()
			within(t, emu.slowStarted, "the slow tool to start")
			stop := errors.New("run stopped by user")
			cancel(stop)
			err := within(t, done, "the call to return after cancel")
			if !errors.Is(err, stop) || !strings.Contains(err.Error(), "run stopped by user") {
				t.Fatalf("cancelled call: %v, want the cancel cause", err)
			}
			if got := within(t, emu.slowEnded, "the server's handler to see the cancellation"); !errors.Is(got, context.Canceled) {
				t.Fatalf("server handler ended with %v", got)
			}
			// Cancelling is not a failure of the session.
			if out, _ := mustCall(t, c, "emulator", "echo", map[string]any{"text": "next"}); out != "emu: next" {
				t.Fatalf("after cancel: %q", out)
			}
			if d := c.Diag().MCPs["emulator"]; d.SessionsOpened != 1 || !d.OK {
				t.Fatalf("diag %+v: want the session kept", d)
			}
		})
	}
}

func TestCallTimeout(t *testing.T) {
	emu := newToolServer(t, "emu")
	// The slow tool never returns by itself, so the time-out must end it.
	c, _ := newClient(t, newSetting(pair("emulator", emu)), func(cfg *Config) { cfg.CallTimeout = 200 * time.Millisecond })
	_, _, err := c.Call(context.Background(), "emulator", "slow", nil)
	if err == nil || !strings.Contains(err.Error(), "tool call emulator/slow timed out after 200ms") {
		t.Fatalf("timed-out call: %v", err)
	}
	within(t, emu.slowEnded, "the server's handler to see the time-out")
}

func TestToolListChangedNotification(t *testing.T) {
	emu := newToolServer(t, "emu")
	c, _ := newClient(t, newSetting(pair("emulator", emu)))
	has := func(name string) bool {
		list, err := c.List(ctxFor(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, ti := range list {
			if ti.Name == name {
				return true
			}
		}
		return false
	}
	if !has("slow") {
		t.Fatal("slow missing from the first list")
	}
	// The clock is fixed, so only the server's notification can make the
	// cached list go stale.
	emu.server().RemoveTools("slow")
	testutil.Eventually(t, waitFor, "the removed tool to leave the list", func() bool { return !has("slow") })
	if d := c.Diag().MCPs["emulator"]; d.SessionsOpened != 1 {
		t.Fatalf("diag %+v: the list must refresh on the same session", d)
	}
}

func TestCloseClosesSessions(t *testing.T) {
	a := newToolServer(t, "a")
	b := newToolServer(t, "b")
	c, _ := newClient(t, newSetting(pair("a", a), pair("b", b)))
	mustCall(t, c, "a", "echo", nil)
	mustCall(t, c, "b", "echo", nil)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// Close waits for its DELETEs, so the servers have dropped the sessions.
	if a.sessions() != 0 || b.sessions() != 0 {
		t.Fatalf("sessions left open: a %d, b %d", a.sessions(), b.sessions())
	}
}

// A call in flight ends on Close. The server is stateless, where ending
// the call's HTTP request is what cancels it (on a stateful server the
// sdk's asynchronous cancellation notice races the session's closing).
func TestCloseEndsCalls(t *testing.T) {
	emu := newToolServer(t, "emu", stateless)
	c, _ := newClient(t, newSetting(pair("emulator", emu)))
	done := make(chan error, 1)
	go func() {
		_, _, err := c.Call(context.Background(), "emulator", "slow", nil)
		done <- err
	}()
	within(t, emu.slowStarted, "the slow tool to start")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := within(t, done, "the call to end on Close"); !errors.Is(err, errClosed) {
		t.Fatalf("call during Close: %v", err)
	}
	within(t, emu.slowEnded, "the server's handler to see the call end")
	if e, ok := apperr.As(callErr(c, "emulator", "echo")); !ok || e.Code != "MCP_CLIENT_CLOSED" {
		t.Fatalf("call after Close: %v", e)
	}
	if err := c.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
}

func TestListSkipsUnreachable(t *testing.T) {
	emu := newToolServer(t, "emu")
	dead := "dead=http://" + testutil.FreeAddr(t) + "/mcp"
	c, _ := newClient(t, newSetting(dead, pair("emulator", emu)))
	list, err := c.List(ctxFor(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 5 {
		t.Fatalf("List = %+v, want the emulator's 5 tools only", list)
	}
	if d := c.Diag().MCPs["dead"]; d.OK || !strings.Contains(d.LastError, "unreachable") {
		t.Fatalf("dead server diag %+v: want the connect error", d)
	}
}

// forgetClosedConns drops the keep-alive connections to a server that was
// just stopped. net/http drops them by itself once it reads the peer's
// close, which takes moments; a test that calls at once would otherwise
// race it and get EOF on a dead connection, a failure the client must not
// paper over for tool calls (the server may have run the call).
func forgetClosedConns(hc *http.Client) { hc.CloseIdleConnections() }

// A JSON-RPC error is the server's answer, not a transport failure: the
// session and the server's health stay.
func TestServerRefusesCall(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			emu := newToolServer(t, "emu", m.opts...)
			c, _ := newClient(t, newSetting(pair("emulator", emu)))
			mustCall(t, c, "emulator", "echo", nil)
			emu.server().AddTool(&mcp.Tool{Name: "broken", InputSchema: map[string]any{"type": "object"}},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return nil, errors.New("database on fire")
				})
			_, _, err := c.Call(ctxFor(t), "emulator", "broken", nil)
			if e, ok := apperr.As(err); !ok || e.Code != "TOOL_SERVER_ERROR" || !strings.Contains(err.Error(), "database on fire") {
				t.Fatalf("refused call: %v", err)
			}
			// Arguments the tool's schema refuses are the tool's own error.
			out, isErr := mustCall(t, c, "emulator", "echo", map[string]any{"text": 5})
			if !isErr || !strings.Contains(out, "text") {
				t.Fatalf("bad arguments: %q, isError %v", out, isErr)
			}
			if d := c.Diag().MCPs["emulator"]; !d.OK || d.SessionsOpened != 1 || d.LastError != "" {
				t.Fatalf("diag %+v: want ok on the same session", d)
			}
		})
	}
}

func TestToolListCacheTTL(t *testing.T) {
	emu := newToolServer(t, "emu")
	var mu sync.Mutex
	now := fixedNow
	c, _ := newClient(t, newSetting(pair("emulator", emu)), func(cfg *Config) {
		cfg.Now = func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			return now
		}
	})
	list := func() {
		t.Helper()
		if l, err := c.List(ctxFor(t)); err != nil || len(l) != 5 {
			t.Fatalf("List = %d tools, %v", len(l), err)
		}
	}
	list()
	list()
	for _, tool := range []string{"echo", "shot"} {
		if err := c.Resolve(ctxFor(t), "emulator", tool); err != nil {
			t.Fatal(err)
		}
		mustCall(t, c, "emulator", tool, nil)
	}
	if n := emu.lists.Load(); n != 1 {
		t.Fatalf("server answered %d tools/list, want 1 (cached)", n)
	}
	mu.Lock()
	now = now.Add(ToolsTTL)
	mu.Unlock()
	list()
	if n := emu.lists.Load(); n != 2 {
		t.Fatalf("server answered %d tools/list after the TTL, want 2", n)
	}
}
