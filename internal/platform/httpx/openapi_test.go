package httpx_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"cpesuite/internal/platform/httpx"
)

func TestServeOpenAPI(t *testing.T) {
	jsonDoc := []byte(`{"openapi":"3.0.3","info":{"title":"FCC","version":"1"},"paths":{}}`)
	yamlDoc := []byte("openapi: 3.0.3\ninfo:\n  title: FCC\n  version: '1'\npaths: {}\n")
	tests := []struct {
		name    string
		docPath string
		uiPath  string
		doc     []byte
		wantCT  string
	}{
		{"json by extension", "/FCC/v3/api-docs.json", "/FCC/swagger-ui", jsonDoc, "application/json"},
		{"yaml by extension", "/api/openapi.yaml", "/api/docs/", yamlDoc, "application/yaml"},
		{"json by content", "/FCC/v3/api-docs", "/FCC/swagger-ui", jsonDoc, "application/json"},
		{"yaml by content", "/api/openapi", "/api/docs", yamlDoc, "application/yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mux := http.NewServeMux()
			httpx.ServeOpenAPI(mux, tt.docPath, tt.uiPath, "FCC API", tt.doc)
			srv := httptest.NewServer(mux)
			defer srv.Close()

			body, resp := get(t, srv.URL+tt.docPath)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != tt.wantCT || body != string(tt.doc) {
				t.Fatalf("doc: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}

			base := strings.TrimSuffix(tt.uiPath, "/")
			for _, p := range []string{base, base + "/"} {
				page, resp := get(t, srv.URL+p)
				if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
					t.Fatalf("ui %s: %d %q", p, resp.StatusCode, resp.Header.Get("Content-Type"))
				}
				if !strings.Contains(page, "FCC API") || !strings.Contains(page, tt.docPath) ||
					!strings.Contains(page, "swagger-ui") {
					t.Fatalf("ui %s: page lacks title, doc url or swagger-ui:\n%s", p, page)
				}
			}

			// The assets come embedded from the swgui module.
			js, resp := get(t, srv.URL+base+"/swagger-ui-bundle.js")
			if resp.StatusCode != 200 || len(js) < 1000 {
				t.Fatalf("asset: %d, %d bytes", resp.StatusCode, len(js))
			}
		})
	}
}

func get(t *testing.T, url string) (string, *http.Response) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), resp
}
