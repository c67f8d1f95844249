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

func TestParseResolveUsesError(t *testing.T) {
	doc := []byte(`{"openapi":"3.0.3","paths":{"/b":{"get":{"operationId":"b","responses":{"404":{"$ref":"#/components/responses/NotFound"}}}},
"/a":{"parameters":[],"post":{"operationId":"a","responses":{}},"get":{"operationId":"ag","responses":{}}}},
"components":{"responses":{"NotFound":{"description":"gone","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Conflict"}}}}},
"schemas":{"Error":{"type":"object"},"Conflict":{"allOf":[{"$ref":"#/components/schemas/Error"},{"type":"object"}]},"Other":{"type":"object"}}}}`)
	d, ops := Parse(t, doc)
	var names []string
	for _, o := range ops {
		names = append(names, o.Method+" "+o.Path+" "+o.Op.OperationID)
	}
	if strings.Join(names, ",") != "GET /a ag,POST /a a,GET /b b" {
		t.Fatalf("operations %v", names)
	}
	r, ok := d.Resolve(ops[2].Op.Responses["404"])
	if !ok || r.Description != "gone" || !d.UsesError(r.Content["application/json"]) {
		t.Fatalf("resolved %+v %v", r, ok)
	}
	if _, ok := d.Resolve(Response{Ref: "#/components/schemas/Error"}); ok {
		t.Fatal("a schema ref resolved as a response")
	}
	if d.UsesError([]byte(`{"schema":{"$ref":"#/components/schemas/Other"}}`)) {
		t.Fatal("Other counted as an error body")
	}
}
