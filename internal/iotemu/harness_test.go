package iotemu

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/iotemu/proto"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/logx"
	"cpesuite/internal/testutil"
)

// testEmu is an emulator behind an httptest server.
type testEmu struct {
	*Emulator
	t   *testing.T
	srv *httptest.Server
	mux *httpx.Mux
	dir string
}

// testConfig gives rules the largest budget the configuration allows and
// stop a safety net's wait: a loaded 2-core machine can stall a goroutine
// for seconds, and a test that expects a rule to finish or a device to
// deregister must not fail then. Tests of the budget itself set a tiny one.
func testConfig(t *testing.T) Config {
	return Config{DataDir: t.TempDir(), MaxDevices: 20000, RuleBudget: 10 * time.Second, StopWait: testutil.MinDeadline}
}

func startEmu(t *testing.T, cfg Config, stacks ...proto.Protocol) *testEmu {
	t.Helper()
	if len(stacks) == 0 {
		stacks = Stacks()
	}
	e, err := New(cfg, logx.Discard(), stacks)
	if err != nil {
		t.Fatal(err)
	}
	mux := httpx.NewMux()
	NewAPI(e).Routes(mux)
	srv := httptest.NewServer(httpx.Chain(mux, httpx.Recover(logx.Discard(), writeError)))
	t.Cleanup(func() {
		e.Shutdown()
		srv.Close()
	})
	return &testEmu{Emulator: e, t: t, srv: srv, mux: mux, dir: cfg.DataDir}
}

type reply struct {
	status int
	body   []byte
	header http.Header
}

func (r reply) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
}

// errBody checks that r is the emulator's error body with code and
// returns it.
func (r reply) errBody(t *testing.T, status int, code string) errorBody {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q, want application/json; body %s", ct, r.body)
	}
	var raw map[string]json.RawMessage
	r.json(t, &raw)
	for _, k := range []string{"code", "message", "details"} {
		if _, ok := raw[k]; !ok {
			t.Fatalf("error body %s lacks %q", r.body, k)
		}
	}
	var b errorBody
	r.json(t, &b)
	if b.Code != code {
		t.Fatalf("code %q, want %q; body %s", b.Code, code, r.body)
	}
	if strings.TrimSpace(b.Message) == "" {
		t.Fatalf("blank message in %s", r.body)
	}
	return b
}

func (e *testEmu) do(method, path string, body any) reply {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return reply{status: res.StatusCode, body: b, header: res.Header}
}

// must fails unless r has status want.
func (r reply) must(t *testing.T, want int) reply {
	t.Helper()
	if r.status != want {
		t.Fatalf("status %d, want %d; body %s", r.status, want, r.body)
	}
	return r
}

// useCoAP configures n CoAP devices (no server needed: CoAP devices are
// servers themselves).
func (e *testEmu) useCoAP(n int) {
	e.t.Helper()
	e.do("POST", "/api/protocol/COAP", nil).must(e.t, 204)
	e.do("POST", "/api/config", map[string]any{"clientsCount": n, "clientId": "coap", "serialNumber": "SN", "serverIp": "127.0.0.1", "serverPort": 5683}).must(e.t, 200)
}

func protoEntry(i int) proto.Entry {
	return proto.Entry{Direction: "OUT", Event: "TEST", Payload: string(rune('a' + i))}
}
