package httpx_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"cpesuite/internal/platform/httpx"
)

func TestMuxRouteErrors(t *testing.T) {
	mux := httpx.NewMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("item " + r.PathValue("id"))) })
	mux.HandleFunc("POST /items/{id}", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusCreated) })
	mux.ServeMux.Handle("/dir/", http.NotFoundHandler())
	mux.RouteErrors(func(w http.ResponseWriter, _ *http.Request, status int, err error) {
		_ = httpx.WriteJSON(w, status, map[string]any{"status": status, "message": err.Error()})
	})
	tests := []struct {
		method, path string
		status       int
		body, allow  string
	}{
		{"GET", "/items/7", 200, "item 7", ""},
		{"POST", "/items/7", 201, "", ""},
		{"GET", "/nowhere", 404, `"status":404`, ""},
		{"DELETE", "/items/7", 405, `"status":405`, "GET, HEAD, POST"},
		{"GET", "/dir", 307, "", ""}, // the mux's own redirects are routes, not misses
		{"GET", "/" + strings.Repeat("a", 5000), 404, "...", ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path[:min(len(tt.path), 20)], func(t *testing.T) {
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
			if rec.Code != tt.status || !strings.Contains(rec.Body.String(), tt.body) {
				t.Fatalf("got %d %q, want %d containing %q", rec.Code, rec.Body, tt.status, tt.body)
			}
			if tt.status >= 400 {
				var v map[string]any
				if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil || rec.Body.Len() > 400 {
					t.Fatalf("miss body is not bounded JSON: %q", rec.Body)
				}
			}
			if got := rec.Header().Get("Allow"); got != tt.allow {
				t.Fatalf("Allow %q, want %q", got, tt.allow)
			}
		})
	}
}
