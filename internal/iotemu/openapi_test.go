package iotemu

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"cpesuite/internal/platform/httpx/openapitest"
)

// TestOpenAPIMatchesRoutes holds openapi.json to (*API).Routes: every
// documented operation is routed to the same pattern and every route is
// documented. The mux is the one startEmu builds, as the module does.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	e := startEmu(t, testConfig(t))
	openapitest.Check(t, OpenAPI(), e.mux)
}

// TestOpenAPIServedWithSwaggerUI checks that /v3/api-docs serves the
// embedded document and /swagger-ui.html the UI that reads it.
func TestOpenAPIServedWithSwaggerUI(t *testing.T) {
	e := startEmu(t, testConfig(t))
	r := e.do("GET", "/v3/api-docs", nil).must(t, 200)
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("/v3/api-docs Content-Type %q, want application/json", ct)
	}
	if !bytes.Equal(r.body, OpenAPI()) {
		t.Error("/v3/api-docs does not serve the embedded openapi.json")
	}
	ui := e.do("GET", "/swagger-ui.html", nil).must(t, 200)
	if ct := ui.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("/swagger-ui.html Content-Type %q, want text/html", ct)
	}
	if !bytes.Contains(ui.body, []byte("/v3/api-docs")) {
		t.Error("/swagger-ui.html does not point at /v3/api-docs")
	}
}

// oaResponse is what the tests read of one response.
type oaResponse struct {
	Description string                     `json:"description"`
	Content     map[string]json.RawMessage `json:"content"`
	Codes       []string                   `json:"x-error-codes"`
	Undeclared  []string                   `json:"x-undeclared-codes"`
}

type oaOperation struct {
	Parameters  []map[string]any      `json:"parameters"`
	RequestBody json.RawMessage       `json:"requestBody"`
	Responses   map[string]oaResponse `json:"responses"`
}

type oaDoc struct {
	OpenAPI string `json:"openapi"`
	Info    struct {
		Description string `json:"description"`
	} `json:"info"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Parameters map[string]map[string]any  `json:"parameters"`
		Schemas    map[string]json.RawMessage `json:"schemas"`
	} `json:"components"`
}

// eachOperation calls fn for every operation of the document, sorted.
func eachOperation(t *testing.T, d oaDoc, fn func(name string, op oaOperation)) {
	t.Helper()
	var names []string
	ops := map[string]oaOperation{}
	for path, item := range d.Paths {
		for method, raw := range item {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options":
			default:
				continue
			}
			var op oaOperation
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			name := strings.ToUpper(method) + " " + path
			names = append(names, name)
			ops[name] = op
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fn(n, ops[n])
	}
}

func parseDoc(t *testing.T) oaDoc {
	t.Helper()
	var d oaDoc
	if err := json.Unmarshal(OpenAPI(), &d); err != nil {
		t.Fatalf("openapi.json does not parse: %v", err)
	}
	return d
}

// TestOpenAPIDocument checks the document's shape: version, schemas,
// resolvable references, declared path parameters, a body on every
// response but the spec's bodiless ones, and the Error body on errors.
func TestOpenAPIDocument(t *testing.T) {
	d := parseDoc(t)
	if d.OpenAPI != "3.0.3" {
		t.Errorf("openapi = %q, want 3.0.3", d.OpenAPI)
	}
	for _, name := range []string{"Status", "Version", "Settings", "RuntimeSettings", "OptionView", "Transport",
		"DeviceEntry", "DeviceDetail", "Param", "ParameterValue", "AutoupdateConfig", "History", "RuleView",
		"RuleBody", "RuleCompileError", "LogEntry", "LogBatch", "DeregisterResult", "HeartbeatResult",
		"DeviceTemplate", "Error"} {
		if _, ok := d.Components.Schemas[name]; !ok {
			t.Errorf("components.schemas.%s is missing", name)
		}
	}
	for _, want := range []string{"ALREADY_INITIALIZED", "NOT_INITIALIZED", "ALREADY_STARTED", "INIT_FAILED",
		"START_FAILED", "EMULATOR_NOT_STOPPED", "started on their own", "keep running"} {
		if !strings.Contains(d.Info.Description, want) {
			t.Errorf("info.description does not describe the session state machine: %q is missing", want)
		}
	}

	// Every $ref resolves.
	openapitest.CheckRefs(t, OpenAPI())

	// The spec's responses without a body.
	bodiless := []string{
		"POST /api/devices/{clientId}/reboot 404", "POST /api/devices/{clientId}/reboot 409",
		"POST /api/devices/{clientId}/bootstrap 404", "POST /api/devices/{clientId}/bootstrap 409",
		"POST /api/lwm2m/update 409",
	}
	pathParam := regexp.MustCompile(`\{([^}/]+)\}`)
	n := 0
	eachOperation(t, d, func(name string, op oaOperation) {
		n++
		if len(op.Responses) == 0 {
			t.Errorf("%s has no responses", name)
		}
		_, path, _ := strings.Cut(name, " ")
		declared := map[string]bool{}
		for _, p := range op.Parameters {
			if r, ok := p["$ref"].(string); ok {
				p = d.Components.Parameters[strings.TrimPrefix(r, "#/components/parameters/")]
			}
			if p["in"] == "path" {
				declared[p["name"].(string)] = true
			}
		}
		for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
			if !declared[m[1]] {
				t.Errorf("%s does not declare path parameter %s", name, m[1])
			}
		}
		for status, r := range op.Responses {
			code, err := strconv.Atoi(status)
			if err != nil {
				t.Errorf("%s: response %q is not a status code", name, status)
				continue
			}
			id := name + " " + status
			switch {
			case code == 204 || slices.Contains(bodiless, id):
				if r.Content != nil {
					t.Errorf("%s must have no body", id)
				}
				continue
			case r.Content == nil:
				t.Errorf("%s has no body schema", id)
				continue
			}
			raw, ok := r.Content["application/json"]
			if !ok {
				t.Errorf("%s is not application/json", id)
				continue
			}
			if code < 400 {
				continue
			}
			s := string(raw)
			if !strings.Contains(s, `"#/components/schemas/Error"`) {
				t.Errorf("%s does not use the Error schema", id)
			}
			if len(r.Codes)+len(r.Undeclared) == 0 {
				t.Errorf("%s lists no error codes (x-error-codes)", id)
			}
		}
	})
	if n == 0 {
		t.Fatal("no operations")
	}
	var rule oaOperation
	if err := json.Unmarshal(d.Paths["/api/rule"]["post"], &rule); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rule.Responses["400"].Content["application/json"]), `"#/components/schemas/RuleCompileError"`) {
		t.Error("POST /api/rule 400 must carry the RuleCompileError shape")
	}
}

// errorCodeToken finds code-like words (UPPER_CASE with an underscore).
var errorCodeToken = regexp.MustCompile(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b`)

// TestOpenAPIErrorCodes keeps the document from inventing error codes:
// every code it lists (x-error-codes, and any code named in an error
// response's text or in the Error schema) is a constant of errors.go. Codes
// the handlers send without an errors.go constant are listed apart
// (x-undeclared-codes) and must at least be string literals of the
// package's code; once errors.go declares one, it moves to x-error-codes.
func TestOpenAPIErrorCodes(t *testing.T) {
	declared := errorsGoCodes(t)
	literals := packageStringLiterals(t)
	d := parseDoc(t)

	documented := map[string]bool{}
	eachOperation(t, d, func(name string, op oaOperation) {
		for status, r := range op.Responses {
			id := name + " " + status
			listed := map[string]bool{}
			for _, c := range r.Codes {
				listed[c] = true
				documented[c] = true
				if !declared[c] {
					t.Errorf("%s: code %s is not a constant of errors.go", id, c)
				}
			}
			for _, c := range r.Undeclared {
				listed[c] = true
				if declared[c] {
					t.Errorf("%s: code %s is declared in errors.go now; move it to x-error-codes", id, c)
				}
				if !literals[c] {
					t.Errorf("%s: undeclared code %s appears nowhere in the package's code", id, c)
				}
			}
			if code, _ := strconv.Atoi(status); code < 400 {
				continue
			}
			for _, c := range errorCodeToken.FindAllString(r.Description, -1) {
				if !listed[c] {
					t.Errorf("%s: description names %s, which its code lists do not hold", id, c)
				}
			}
		}
	})

	var errSchema struct {
		Description string `json:"description"`
	}
	if err := json.Unmarshal(d.Components.Schemas["Error"], &errSchema); err != nil {
		t.Fatal(err)
	}
	inSchema := map[string]bool{}
	for _, c := range errorCodeToken.FindAllString(errSchema.Description, -1) {
		inSchema[c] = true
		if !declared[c] {
			t.Errorf("the Error schema names %s, which is not a constant of errors.go", c)
		}
		if !documented[c] {
			t.Errorf("the Error schema names %s, which no response lists", c)
		}
	}
	for c := range documented {
		if !inSchema[c] {
			t.Errorf("code %s is listed by a response but not by the Error schema", c)
		}
	}
}

// errorsGoCodes returns the string constants of errors.go.
func errorsGoCodes(t *testing.T) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, decl := range f.Decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			for _, v := range spec.(*ast.ValueSpec).Values {
				if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil {
						out[s] = true
					}
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("errors.go declares no string constants")
	}
	return out
}

// packageStringLiterals returns every string literal of the package's
// non-test files.
func packageStringLiterals(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					out[s] = true
				}
			}
			return true
		})
	}
	return out
}
