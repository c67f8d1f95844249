package openapitest

import (
	"net/http"
	"strings"
	"testing"

	"cpesuite/internal/platform/httpx"
)

// recorder captures failures instead of failing the test.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Errorf(f string, a ...any) { r.errs = append(r.errs, f) }
func (r *recorder) Fatal(a ...any)            { r.errs = append(r.errs, "fatal") }
func (r *recorder) Fatalf(f string, a ...any) { r.errs = append(r.errs, f) }

const doc = `{"paths": {
  "/items/{id}": {"get": {}, "delete": {}},
  "/items": {"post": {}, "parameters": []}
}}`

func TestCheck(t *testing.T) {
	nop := func(http.ResponseWriter, *http.Request) {}
	tests := []struct {
		name     string
		routes   []string
		wantErrs int
	}{
		{"exact", []string{"GET /items/{id}", "DELETE /items/{id}", "POST /items"}, 0},
		{"undocumented route", []string{"GET /items/{id}", "DELETE /items/{id}", "POST /items", "PUT /items"}, 1},
		{"documented but missing", []string{"GET /items/{id}", "POST /items"}, 1},
		{"parameter renamed", []string{"GET /items/{key}", "DELETE /items/{id}", "POST /items"}, 2}, // both directions
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mux := httpx.NewMux()
			for _, r := range tt.routes {
				mux.HandleFunc(r, nop)
			}
			rec := &recorder{}
			Check(rec, []byte(doc), mux)
			if len(rec.errs) != tt.wantErrs {
				t.Fatalf("got %d failures %q, want %d", len(rec.errs), rec.errs, tt.wantErrs)
			}
		})
	}
}

func TestOperations(t *testing.T) {
	ops, err := Operations([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ops, ","); got != "DELETE /items/{id},GET /items/{id},POST /items" {
		t.Fatalf("ops %s", got)
	}
	if _, err := Operations([]byte("{")); err == nil {
		t.Fatal("want a parse error")
	}
}

func TestCheckRefs(t *testing.T) {
	doc := []byte(`{"components":{"schemas":{"A~B":{"type":"string"},"C/D":{"type":"string"}}},
		"paths":{"/x":{"get":{"responses":{"200":{"$ref":"#/components/schemas/A~0B"},
		"201":{"$ref":"#/components/schemas/C~1D"},"400":{"$ref":"#/components/schemas/Nope"},"500":{"$ref":"other.json#/x"}}}}}}`)
	r := &recorder{}
	if n := CheckRefs(r, doc); n != 4 {
		t.Fatalf("checked %d $refs, want 4", n)
	}
	if len(r.errs) != 2 {
		t.Fatalf("failures %v, want the two unresolvable $refs", r.errs)
	}
}

func TestStringLiterals(t *testing.T) {
	lits := StringLiterals(t, ".")
	// "patch" is a literal of openapitest.go; "checked by" only of this test file, which is skipped.
	if !lits["patch"] || lits["checked by"] {
		t.Fatalf("literals: patch %v, test-file literal %v", lits["patch"], lits["checked by"])
	}
}
