package httpx_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"cpesuite/internal/platform/httpx"
)

func TestRequestID(t *testing.T) {
	tests := []struct {
		name     string
		incoming string
		keep     bool
	}{
		{"generated when absent", "", false},
		{"uuid honoured", "3f2b8c1e-5a4d-4e6f-9b7a-1c2d3e4f5a6b", true},
		{"trace-like honoured", "svc.a:01HZX_y", true},
		{"max length honoured", strings.Repeat("a", 128), true},
		{"too long replaced", strings.Repeat("a", 129), false},
		{"log injection replaced", "abc\nlevel=ERROR msg=forged", false},
		{"spaces replaced", "a b", false},
		{"non-ascii replaced", "idé", false},
		{"html replaced", "<script>", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var inCtx string
			h := httpx.RequestID(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				inCtx = httpx.RequestIDFrom(r.Context())
			}))
			req := httptest.NewRequest("GET", "/", nil)
			if tt.incoming != "" {
				req.Header[httpx.RequestIDHeader] = []string{tt.incoming}
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)

			got := rec.Header().Get(httpx.RequestIDHeader)
			if got == "" || got != inCtx {
				t.Fatalf("response id %q, context id %q: want equal and non-empty", got, inCtx)
			}
			if tt.keep && got != tt.incoming {
				t.Fatalf("id = %q, want incoming %q", got, tt.incoming)
			}
			if !tt.keep && got == tt.incoming {
				t.Fatalf("hostile id %q was kept", got)
			}
			if !tt.keep && len(got) < 16 {
				t.Fatalf("generated id %q is too short to be unique", got)
			}
		})
	}
}

func TestRequestIDGeneratesDistinctIDs(t *testing.T) {
	h := httpx.RequestID(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	seen := map[string]bool{}
	for range 100 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		id := rec.Header().Get(httpx.RequestIDHeader)
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
	}
}

func TestRequestIDFromEmptyContext(t *testing.T) {
	if id := httpx.RequestIDFrom(httptest.NewRequest("GET", "/", nil).Context()); id != "" {
		t.Fatalf("id = %q, want empty", id)
	}
}

func TestRequestIDPassesRoutePatternOutward(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(http.ResponseWriter, *http.Request) {})
	var pattern string
	outer := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r)
			pattern = r.Pattern
		})
	}
	httpx.Chain(mux, outer, httpx.RequestID).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/items/42", nil))
	if pattern != "GET /items/{id}" {
		t.Fatalf("outer middleware saw pattern %q", pattern)
	}
}

func TestAccessLog(t *testing.T) {
	log, logs := newLogger()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /items/{id}", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("hello"))
	})
	mux.HandleFunc("GET /quiet", func(http.ResponseWriter, *http.Request) {})
	// AccessLog outside RequestID is the harder order: the id is not in its
	// context and the route is set on RequestID's copy of the request.
	h := httpx.Chain(mux, httpx.AccessLog(log), httpx.RequestID)

	req := httptest.NewRequest("POST", "/items/7?token=s3cr3t", nil)
	req.Header.Set(httpx.RequestIDHeader, "rid-1")
	req.RemoteAddr = "192.0.2.1:4242"
	h.ServeHTTP(httptest.NewRecorder(), req)
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/quiet", nil))

	if strings.Contains(logs.String(), "s3cr3t") {
		t.Fatalf("access log contains the query string: %s", logs.String())
	}
	recs := logs.records(t)
	if len(recs) != 2 {
		t.Fatalf("want 2 log lines, got %d", len(recs))
	}
	want := map[string]any{
		"msg": "http request", "method": "POST", "path": "/items/7", "route": "POST /items/{id}",
		"status": float64(201), "bytes": float64(5), "request_id": "rid-1", "remote_addr": "192.0.2.1:4242",
	}
	for k, v := range want {
		if recs[0][k] != v {
			t.Errorf("%s = %v, want %v", k, recs[0][k], v)
		}
	}
	if _, ok := recs[0]["duration"]; !ok {
		t.Error("duration missing")
	}
	if recs[1]["status"] != float64(200) {
		t.Errorf("implicit status = %v, want 200", recs[1]["status"])
	}
}

func TestRecover(t *testing.T) {
	log, logs := newLogger()
	var gotStatus int
	custom := func(w http.ResponseWriter, _ *http.Request, status int, err error) {
		gotStatus = status
		w.WriteHeader(status)
		_, _ = fmt.Fprintf(w, `{"error":%q}`, err.Error())
	}
	h := httpx.Chain(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("nil map in handler at /secret/path.go")
	}), httpx.RequestID, httpx.Recover(log, custom))

	req := httptest.NewRequest("GET", "/boom", nil)
	req.Header.Set(httpx.RequestIDHeader, "rid-panic")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)

	if rec.Code != 500 || gotStatus != 500 {
		t.Fatalf("status = %d (writer saw %d), want 500", rec.Code, gotStatus)
	}
	if strings.Contains(rec.Body.String(), "nil map") || strings.Contains(rec.Body.String(), "secret") {
		t.Fatalf("body leaks the panic: %s", rec.Body.String())
	}
	if rec.Body.String() != `{"error":"internal server error"}` {
		t.Fatalf("body = %s", rec.Body.String())
	}
	recs := logs.records(t)
	if len(recs) != 1 {
		t.Fatalf("want 1 log line, got %v", recs)
	}
	if recs[0]["request_id"] != "rid-panic" || !strings.Contains(fmt.Sprint(recs[0]["panic"]), "nil map") ||
		!strings.Contains(fmt.Sprint(recs[0]["stack"]), "middleware_test.go") {
		t.Fatalf("log lacks request id, panic or stack: %v", recs[0])
	}
}

func TestRecoverDefaultWriter(t *testing.T) {
	log, _ := newLogger()
	h := httpx.Recover(log, nil)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(errors.New("x")) }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if body := decodeBody(t, rec); rec.Code != 500 || body["code"] != "INTERNAL" {
		t.Fatalf("got %d %v", rec.Code, body)
	}
}

func TestRecoverRepanics(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"ErrAbortHandler", func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }},
		{"after response started", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte("half a bo"))
			panic("late")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, _ := newLogger()
			h := httpx.Recover(log, nil)(tt.handler)
			defer func() {
				if v := recover(); v != http.ErrAbortHandler {
					t.Fatalf("recovered %v, want http.ErrAbortHandler", v)
				}
			}()
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
			t.Fatal("no panic")
		})
	}
}

func TestRecoverOverRealServerKeepsServing(t *testing.T) {
	log, _ := newLogger()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /panic", func(http.ResponseWriter, *http.Request) { panic("boom") })
	mux.HandleFunc("GET /ok", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	srv := httptest.NewServer(httpx.Chain(mux, httpx.RequestID, httpx.Recover(log, nil)))
	defer srv.Close()

	for path, want := range map[string]int{"/panic": 500, "/ok": 200} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%s: status %d, want %d", path, resp.StatusCode, want)
		}
	}
}

func TestChainOrder(t *testing.T) {
	var order []string
	mw := func(name string) httpx.Middleware {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				order = append(order, name)
				next.ServeHTTP(w, r)
			})
		}
	}
	h := httpx.Chain(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { order = append(order, "h") }),
		mw("a"), mw("b"))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	if got := strings.Join(order, ","); got != "a,b,h" {
		t.Fatalf("order = %s, want a,b,h", got)
	}
}
