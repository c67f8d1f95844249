package metrics_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/metrics"
)

// scrape returns the text exposition of reg.
func scrape(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	rec := httptest.NewRecorder()
	metrics.Handler(reg).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body.String())
	}
	return rec.Body.String()
}

func mustContain(t *testing.T, text string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(text, l) {
			t.Errorf("exposition lacks %q", l)
		}
	}
	if t.Failed() {
		t.Logf("exposition:\n%s", text)
	}
}

func newMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("POST /items", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusCreated) })
	return mux
}

func TestNewRegistryHasRuntimeCollectors(t *testing.T) {
	text := scrape(t, metrics.NewRegistry())
	mustContain(t, text, "go_goroutines ", "process_")
}

func TestHTTPMiddlewareLabelsByRoutePattern(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := metrics.HTTPMiddleware(reg, "fcc")(newMux())
	for _, req := range []*http.Request{
		httptest.NewRequest("GET", "/items/1", nil),
		httptest.NewRequest("GET", "/items/2", nil),
		httptest.NewRequest("POST", "/items", nil),
		httptest.NewRequest("GET", "/nope/123", nil),
		httptest.NewRequest("GET", "/nope/456", nil),
		httptest.NewRequest("BREW", "/items/1", nil),
	} {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	text := scrape(t, reg)
	mustContain(t, text,
		`http_requests_total{code="200",method="GET",route="GET /items/{id}",service="fcc"} 2`,
		`http_requests_total{code="201",method="POST",route="POST /items",service="fcc"} 1`,
		`http_requests_total{code="404",method="GET",route="unmatched",service="fcc"} 2`,
		`http_requests_total{code="405",method="OTHER",route="unmatched",service="fcc"} 1`,
		`http_request_duration_seconds_count{method="GET",route="GET /items/{id}",service="fcc"} 2`,
		`http_requests_in_flight{service="fcc"} 0`,
	)
	for _, raw := range []string{"/items/1", "/nope/123", "BREW"} {
		if strings.Contains(text, raw) {
			t.Errorf("raw request data %q became a label value", raw)
		}
	}
}

func TestHTTPMiddlewareOutsideRequestID(t *testing.T) {
	// RequestID hands the mux a copy of the request; the route must still
	// reach the metrics middleware outside it.
	reg := prometheus.NewRegistry()
	h := httpx.Chain(newMux(), metrics.HTTPMiddleware(reg, "fcc"), httpx.RequestID, httpx.Recover(nil, nil))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/items/9", nil))
	mustContain(t, scrape(t, reg), `http_requests_total{code="200",method="GET",route="GET /items/{id}",service="fcc"} 1`)
}

func TestHTTPMiddlewareSeveralServicesOneRegistry(t *testing.T) {
	reg := metrics.NewRegistry()
	a := metrics.HTTPMiddleware(reg, "acs")(newMux())
	b := metrics.HTTPMiddleware(reg, "nbi")(newMux())
	again := metrics.HTTPMiddleware(reg, "acs")(newMux()) // same service twice is fine too
	a.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/items/1", nil))
	b.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/items/1", nil))
	again.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/items/1", nil))
	mustContain(t, scrape(t, reg),
		`http_requests_total{code="200",method="GET",route="GET /items/{id}",service="acs"} 2`,
		`http_requests_total{code="200",method="GET",route="GET /items/{id}",service="nbi"} 1`,
	)
}

func TestHTTPMiddlewareInFlight(t *testing.T) {
	reg := prometheus.NewRegistry()
	var during string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /slow", func(http.ResponseWriter, *http.Request) { during = scrape(t, reg) })
	metrics.HTTPMiddleware(reg, "speedtest")(mux).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/slow", nil))
	mustContain(t, during, `http_requests_in_flight{service="speedtest"} 1`)
	mustContain(t, scrape(t, reg), `http_requests_in_flight{service="speedtest"} 0`)
}

func TestHTTPMiddlewareInFlightDecrementsOnPanic(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := metrics.HTTPMiddleware(reg, "svc")(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic(http.ErrAbortHandler)
	}))
	func() {
		defer func() { _ = recover() }()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	}()
	mustContain(t, scrape(t, reg), `http_requests_in_flight{service="svc"} 0`)
}

func TestHTTPMiddlewarePanicsOnConflictingCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{Name: "http_requests_total", Help: "other"}, []string{"path"}))
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a conflicting collector")
		}
	}()
	metrics.HTTPMiddleware(reg, "svc")
}

func TestHandlerOverRealServer(t *testing.T) {
	reg := metrics.NewRegistry()
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics.Handler(reg))
	srv := httptest.NewServer(metrics.HTTPMiddleware(reg, "svc")(mux))
	defer srv.Close()
	for range 2 {
		resp, err := http.Get(srv.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") ||
			!strings.Contains(string(body), "go_goroutines") {
			t.Fatalf("%d %q %.200s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
	mustContain(t, scrape(t, reg), `http_requests_total{code="200",method="GET",route="GET /metrics",service="svc"} 2`)
}
