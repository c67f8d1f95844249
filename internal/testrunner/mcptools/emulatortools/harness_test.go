package emulatortools

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"cpesuite/internal/acs/acstest"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/logx"
	"cpesuite/internal/platform/metrics"
	"cpesuite/internal/testutil"
	"cpesuite/internal/tr069emu"
)

// rig is a real ACS, a real TR-069 emulator pointed at it, and this tool
// server in front of both.
type rig struct {
	acs    *acstest.ACS
	emuURL string
	srv    *Server
}

// startEmulator runs a TR-069 emulator on an httptest server with RPC
// delays off, informing acsURL.
func startEmulator(t *testing.T, acsURL string) string {
	t.Helper()
	cfg := tr069emu.Config{DataDir: t.TempDir(), DefaultACSURL: acsURL, ACSUsername: "cpe", ACSPassword: "s3cret",
		SerialPrefix: "EMU", MaxDevices: 100, AutoUpdate: time.Minute, MinRetry: 50 * time.Millisecond,
		DiagTimeout: testutil.MinDeadline, MaxUpload: 1 << 20}
	e, err := tr069emu.New(cfg, logx.Discard(), metrics.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.Start(ctx)
	mux := httpx.NewMux()
	tr069emu.NewAPI(e).Routes(mux)
	srv := httptest.NewServer(httpx.Chain(mux, httpx.Recover(logx.Discard(), tr069emu.ErrorWriter())))
	e.SetListenAddr(srv.Listener.Addr().String())
	t.Cleanup(func() {
		e.Shutdown()
		srv.Close()
		cancel()
	})
	p := e.Properties()
	for _, d := range []*int{&p.TaskDelayGetParameterValues, &p.TaskDelaySetParameterValues, &p.TaskDelayGetParameterNames,
		&p.TaskDelayGetParameterAttributes, &p.TaskDelaySetParameterAttributes, &p.TaskDelayAddObject, &p.TaskDelayDeleteObject,
		&p.TaskDelayDownload, &p.TaskDelayUpload, &p.TaskDelayReboot, &p.TaskDelayFactoryReset, &p.TaskDelayChangeDuState,
		&p.TaskDelayGetRPCMethods} {
		*d = 0
	}
	if err := e.SetProperties(p); err != nil {
		t.Fatal(err)
	}
	return srv.URL
}

// newRig starts the ACS, the emulator and the tool server, configured the
// way the worker's settings name them (acs_url ends in /acs).
func newRig(t *testing.T) *rig {
	t.Helper()
	a := acstest.Start(t, nil)
	emuURL := startEmulator(t, a.CWMPURL)
	srv, err := New(Config{EmulatorURL: emuURL, ACSURL: a.APIURL + "/acs", Log: logx.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	return &rig{acs: a, emuURL: emuURL, srv: srv}
}

// connectInMemory connects an MCP client to s over in-memory transports.
func connectInMemory(t *testing.T, s *Server) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-worker", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}

// connectHTTP connects an MCP client to s's streamable-HTTP handler served
// by a real HTTP server at /mcp.
func connectHTTP(t *testing.T, s *Server) *mcp.ClientSession {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/mcp", s.Handler())
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-worker", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// result is one tool answer.
type result struct {
	text    string
	isError bool
}

// call runs a tool; a protocol error fails the test, since every failure
// must come back as a tool result.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error %v", tool, args, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("%s: content %T, want text", tool, c)
		}
		b.WriteString(tc.Text)
	}
	return result{text: b.String(), isError: res.IsError}
}

// ok runs a tool that must succeed and decodes its JSON answer into out
// (when out is not nil).
func ok(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, out any) string {
	t.Helper()
	r := call(t, cs, tool, args)
	if r.isError {
		t.Fatalf("%s(%v): tool error %s", tool, args, r.text)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(r.text), out); err != nil {
			t.Fatalf("%s: answer is not the expected JSON: %v\n%s", tool, err, r.text)
		}
	}
	return r.text
}

// fails runs a tool that must fail and checks the error text holds every
// part of want.
func fails(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, want ...string) {
	t.Helper()
	r := call(t, cs, tool, args)
	if !r.isError {
		t.Fatalf("%s(%v): succeeded with %s, want an error with %q", tool, args, r.text, want)
	}
	for _, w := range want {
		if !strings.Contains(r.text, w) {
			t.Fatalf("%s(%v): error %q does not contain %q", tool, args, r.text, w)
		}
	}
}
