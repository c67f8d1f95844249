package tr069emu

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/acs/acstest"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/logx"
	"cpesuite/internal/platform/metrics"
)

// testEmu is an emulator behind an httptest server, with task delays off.
type testEmu struct {
	*Emulator
	t   *testing.T
	srv *httptest.Server
	mux *httpx.Mux
}

func testConfig(t *testing.T, acsURL string) Config {
	return Config{DataDir: t.TempDir(), DefaultACSURL: acsURL, ACSUsername: "cpe", ACSPassword: "s3cret",
		SerialPrefix: "EMU", MaxDevices: 20000, AutoUpdate: 200 * time.Millisecond, MinRetry: 50 * time.Millisecond,
		DiagTimeout: 30 * time.Second, MaxUpload: 1 << 20}
}

func startEmu(t *testing.T, cfg Config) *testEmu {
	t.Helper()
	e, err := New(cfg, logx.Discard(), metrics.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.Start(ctx)
	mux := httpx.NewMux()
	NewAPI(e).Routes(mux)
	srv := httptest.NewServer(httpx.Chain(mux, httpx.Recover(logx.Discard(), writeError)))
	e.SetListenAddr(srv.Listener.Addr().String())
	t.Cleanup(func() {
		e.Shutdown()
		srv.Close()
		cancel()
	})
	p := e.Properties()
	p.setTaskDelays(0)
	if err := e.SetProperties(p); err != nil {
		t.Fatal(err)
	}
	return &testEmu{Emulator: e, t: t, srv: srv, mux: mux}
}

// startWithACS runs a real ACS and an emulator pointed at it.
func startWithACS(t *testing.T) (*testEmu, *acstest.ACS) {
	t.Helper()
	a := acstest.Start(t, nil)
	return startEmu(t, testConfig(t, a.CWMPURL)), a
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

// errorText returns the error field of an error body, failing when the body
// is not that shape.
func (r reply) errorText(t *testing.T) string {
	t.Helper()
	var b map[string]any
	r.json(t, &b)
	s, ok := b["error"].(string)
	if !ok || s == "" {
		t.Fatalf("error body without an error text: %s", r.body)
	}
	return s
}

// do calls the API; body is JSON-encoded unless it is a string (sent raw).
func (e *testEmu) do(method, path string, body any) reply {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, body: data, header: resp.Header}
}

// upload posts a multipart form with field file named filename.
func (e *testEmu) upload(path, filename string, content []byte) reply {
	e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	h := make(map[string][]string)
	h["Content-Disposition"] = []string{`form-data; name="file"; filename="` + filename + `"`}
	h["Content-Type"] = []string{"application/xml"}
	part, err := mw.CreatePart(h)
	if err != nil {
		e.t.Fatal(err)
	}
	_, _ = part.Write(content)
	_ = mw.Close()
	resp, err := http.Post(e.srv.URL+path, mw.FormDataContentType(), &buf)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, body: data, header: resp.Header}
}

func (e *testEmu) must(status int, r reply) reply {
	e.t.Helper()
	if r.status != status {
		e.t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	return r
}
