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

// CheckRefs fails t for every local $ref of doc that does not name a
// value of the document, and returns how many $refs it checked.
func CheckRefs(t testing.TB, doc []byte) int {
	t.Helper()
	var all any
	if err := json.Unmarshal(doc, &all); err != nil {
		t.Fatalf("OpenAPI document does not parse: %v", err)
	}
	n := 0
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["$ref"].(string); ok {
				n++
				if !resolves(all, r) {
					t.Errorf("$ref %s does not resolve", r)
				}
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(all)
	return n
}

// resolves reports whether a local JSON pointer names a value of doc.
func resolves(doc any, ref string) bool {
	p, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return false
	}
	cur := doc
	for _, part := range strings.Split(p, "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = m[part]; !ok {
			return false
		}
	}
	return true
}
