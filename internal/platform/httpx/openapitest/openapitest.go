// Package openapitest holds a service's OpenAPI document and its routes
// against each other, so the document cannot drift from the code.
package openapitest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"cpesuite/internal/platform/httpx"
)

var methods = []string{"get", "put", "post", "delete", "patch", "head", "options"}

var param = regexp.MustCompile(`\{[^}/]+\}`)

// Operations lists the document's operations as ServeMux patterns
// ("GET /items/{id}"), sorted.
func Operations(doc []byte) ([]string, error) {
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	var ops []string
	for path, item := range d.Paths {
		for _, m := range methods {
			if _, ok := item[m]; ok {
				ops = append(ops, strings.ToUpper(m)+" "+path)
			}
		}
	}
	sort.Strings(ops)
	return ops, nil
}

// Check fails t unless every documented operation is routed by mux to a
// pattern of the same method and path, and every API route recorded on mux
// is documented. Path parameters must carry the same names in both.
func Check(t testing.TB, doc []byte, mux *httpx.Mux) {
	t.Helper()
	ops, err := Operations(doc)
	if err != nil {
		t.Fatalf("OpenAPI document does not parse: %v", err)
	}
	if len(ops) == 0 {
		t.Fatal("OpenAPI document has no operations")
	}
	for _, op := range ops {
		method, path, _ := strings.Cut(op, " ")
		req := httptest.NewRequest(method, param.ReplaceAllString(path, "x1"), nil)
		_, pattern := mux.Handler(req)
		if pattern == "" {
			t.Errorf("documented %s is not routed", op)
			continue
		}
		// A GET pattern also serves HEAD; a pattern may carry a host.
		pm, pp, hasMethod := strings.Cut(pattern, " ")
		if !hasMethod {
			pm, pp = "", pattern
		}
		if (pm != method && !(method == http.MethodHead && pm == http.MethodGet)) || pp != path {
			t.Errorf("documented %s is routed to pattern %q", op, pattern)
		}
	}
	for _, p := range mux.Patterns() {
		if !slices.Contains(ops, p) {
			t.Errorf("route %q is not in the OpenAPI document", p)
		}
	}
}
