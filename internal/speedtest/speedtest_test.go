package speedtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"cpesuite/internal/platform/health"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/httpx/openapitest"
	"cpesuite/internal/platform/logx"
)

func newTestServer(t *testing.T, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(cfg, logx.Discard(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	mux := httpx.NewMux()
	s.Routes(mux)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return s, ts
}

func TestDownload(t *testing.T) {
	s, ts := newTestServer(t, Config{DefaultBytes: 300_000, MaxBytes: 5_000_000})
	tests := []struct {
		query      string
		wantStatus int
		wantBytes  int64
		wantCode   string
	}{
		{"?size=1000", 200, 1000, ""},
		{"?size=0", 200, 0, ""},
		{"", 200, 300_000, ""},                      // default
		{"?size=262145", 200, 262145, ""},           // one byte over a chunk
		{"?size=5000000", 200, 5_000_000, ""},       // exactly the cap
		{"?size=5000001", 400, 0, "SIZE_TOO_LARGE"}, // over the cap
		{"?size=abc", 400, 0, "INVALID_SIZE"},       //
		{"?size=-1", 400, 0, "INVALID_SIZE"},        //
		{"?size=+5", 400, 0, "INVALID_SIZE"},        //
		{"?size=1e3", 400, 0, "INVALID_SIZE"},       //
		{"?size=", 400, 0, "INVALID_SIZE"},          // present but empty
		{"?size=99999999999999999999", 400, 0, "INVALID_SIZE"},
	}
	var total int64
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			resp, err := http.Get(ts.URL + "/download" + tt.query)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.wantStatus, body)
			}
			if tt.wantCode != "" {
				var e struct{ Code, Message string }
				if err := json.Unmarshal(body, &e); err != nil || e.Code != tt.wantCode || e.Message == "" {
					t.Fatalf("error body %s, want code %s", body, tt.wantCode)
				}
				return
			}
			if int64(len(body)) != tt.wantBytes {
				t.Fatalf("got %d bytes, want %d", len(body), tt.wantBytes)
			}
			if cl := resp.Header.Get("Content-Length"); cl != strconv.FormatInt(tt.wantBytes, 10) {
				t.Errorf("Content-Length %q", cl)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/octet-stream" {
				t.Errorf("Content-Type %q", ct)
			}
			if tt.wantBytes > 0 && !bytes.Equal(body[:min(len(body), 64)], payload[:min(len(body), 64)]) {
				t.Error("body is not the payload")
			}
			total += tt.wantBytes
		})
	}
	if got := testutil.ToFloat64(s.down); got != float64(total) {
		t.Errorf("download metric %v, want %d", got, total)
	}
}

func TestPayloadIsNotCompressible(t *testing.T) {
	// A run of equal bytes would let a compressing proxy fake throughput.
	counts := map[byte]int{}
	for _, b := range payload {
		counts[b]++
	}
	if len(counts) < 250 {
		t.Fatalf("payload uses only %d distinct byte values", len(counts))
	}
}

func TestUpload(t *testing.T) {
	s, ts := newTestServer(t, Config{DefaultBytes: 10, MaxBytes: 1_000_000})
	tests := []struct {
		name       string
		size       int
		chunked    bool
		wantStatus int
		wantCode   string
	}{
		{"empty", 0, false, 200, ""},
		{"small", 1234, false, 200, ""},
		{"chunked", 700_000, true, 200, ""},
		{"at cap", 1_000_000, false, 200, ""},
		{"declared over cap", 1_000_001, false, 413, "BODY_TOO_LARGE"},
		{"chunked over cap", 1_500_000, true, 413, "BODY_TOO_LARGE"},
	}
	var okBytes int64
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader = bytes.NewReader(make([]byte, tt.size))
			if tt.chunked {
				body = io.MultiReader(body) // hides the length: chunked encoding
			}
			req, _ := http.NewRequest(http.MethodPost, ts.URL+"/upload", body)
			req.Header.Set("Content-Type", "application/octet-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.wantStatus, raw)
			}
			if tt.wantCode != "" {
				if !strings.Contains(string(raw), `"code":"`+tt.wantCode+`"`) {
					t.Fatalf("body %s lacks code %s", raw, tt.wantCode)
				}
				return
			}
			var res UploadResult
			if err := json.Unmarshal(raw, &res); err != nil {
				t.Fatalf("body %s: %v", raw, err)
			}
			if res.Bytes != int64(tt.size) || res.DurationMs < 0 {
				t.Fatalf("result %+v, want %d bytes", res, tt.size)
			}
			okBytes += int64(tt.size)
		})
	}
	// Rejected chunked bodies are counted up to where they were cut off.
	if got := testutil.ToFloat64(s.up); got < float64(okBytes) {
		t.Errorf("upload metric %v, want at least %d", got, okBytes)
	}
}

func TestMethods(t *testing.T) {
	_, ts := newTestServer(t, Config{DefaultBytes: 10, MaxBytes: 100})
	tests := []struct {
		method, path string
		want         int
	}{
		{http.MethodPost, "/download", 405},
		{http.MethodGet, "/upload", 405},
		{http.MethodHead, "/download?size=50", 200},
		{http.MethodGet, "/openapi.json", 200},
		{http.MethodGet, "/docs/", 200},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, ts.URL+tt.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.path, resp.StatusCode, tt.want)
		}
		if tt.method == http.MethodHead && resp.ContentLength != 50 {
			t.Errorf("HEAD Content-Length %d", resp.ContentLength)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		cfg     Config
		wantVar string
	}{
		{Config{DefaultBytes: DefaultDownloadBytes, MaxBytes: MaxTransferBytes}, ""},
		{Config{DefaultBytes: 0, MaxBytes: 1}, ""},
		{Config{DefaultBytes: 10, MaxBytes: 0}, "CPESUITE_SPEEDTEST_MAX_BYTES"},
		{Config{DefaultBytes: 10, MaxBytes: MaxTransferBytes + 1}, "CPESUITE_SPEEDTEST_MAX_BYTES"},
		{Config{DefaultBytes: 11, MaxBytes: 10}, "CPESUITE_SPEEDTEST_DEFAULT_BYTES"},
		{Config{DefaultBytes: -1, MaxBytes: 10}, "CPESUITE_SPEEDTEST_DEFAULT_BYTES"},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		if tt.wantVar == "" {
			if err != nil {
				t.Errorf("%+v: %v", tt.cfg, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), tt.wantVar+":") {
			t.Errorf("%+v: err %v, want it to name %s", tt.cfg, err, tt.wantVar)
		}
	}
}

// BenchmarkDownload measures the server side of a loopback download
// (1 MB per op); b.SetBytes makes the tool print MB/s.
func BenchmarkDownload(b *testing.B) {
	s, err := New(Config{DefaultBytes: 1_000_000, MaxBytes: MaxTransferBytes}, logx.Discard(), prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	mux := httpx.NewMux()
	s.Routes(mux)
	ts := httptest.NewServer(mux)
	defer ts.Close()
	buf := make([]byte, 256<<10)
	b.SetBytes(1_000_000)
	b.ResetTimer()
	for b.Loop() {
		resp, err := http.Get(ts.URL + "/download?size=1000000")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.CopyBuffer(io.Discard, resp.Body, buf); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
}

// TestOpenAPIMatchesRoutes holds openapi.json against the routes, with the
// health and metrics endpoints mounted as the app mounts them.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	s, err := New(Config{DefaultBytes: 1, MaxBytes: 1}, logx.Discard(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	mux := httpx.NewMux()
	s.Routes(mux)
	health.Mount(mux.ServeMux, "/actuator/health", health.NewRegistry())
	mux.ServeMux.Handle("GET /metrics", http.NotFoundHandler())
	openapitest.Check(t, OpenAPI(), mux)
}
