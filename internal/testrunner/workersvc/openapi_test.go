package workersvc

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/httpx/openapitest"
	"cpesuite/internal/platform/logx"
	"cpesuite/internal/testrunner/caseapi"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/mcpclient"
	"cpesuite/internal/testrunner/notes"
	"cpesuite/internal/testrunner/testcase"
	"cpesuite/internal/testrunner/wire"
	"cpesuite/internal/testutil"
)

var oaSecret = bytes.Repeat([]byte("w"), identity.MinSecretLen)

var (
	oaEditor = identity.Identity{Username: "oa-editor", Role: identity.RoleEditor}
	oaAdmin  = identity.Identity{Username: "oa-admin", Role: identity.RoleAdmin}
)

// oaService builds the worker target as the worker module does, on a
// fresh data folder, and returns its routes. env is the container
// environment its settings see; nil means none at all.
func oaService(t *testing.T, env map[string]string) *httpx.Mux {
	t.Helper()
	s, err := New(Config{
		DataDir: t.TempDir(),
		Secret:  oaSecret,
		Version: "test",
		Env: func(k string) (string, bool) {
			v, ok := env[k]
			return v, ok
		},
		Log: logx.Discard(),
	})
	if err != nil {
		t.Fatalf("workersvc.New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
		defer cancel()
		s.Shutdown(ctx)
	})
	mux := httpx.NewMux()
	s.Routes(mux)
	return mux
}

// oaUnreachableTools points the tool servers at a port nothing listens
// on, so that GET /api/mcp-status fails at once instead of probing
// whatever runs on the default ports of the machine.
var oaUnreachableTools = map[string]string{"MCP_SERVERS": "emulator=http://127.0.0.1:1/mcp"}

// oaDo sends one request to h as id (nil: without identity header).
func oaDo(t *testing.T, h http.Handler, id *identity.Identity, method, target string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	if id != nil {
		identity.SignRequest(oaSecret, r, *id, time.Now())
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func oaCode(w *httptest.ResponseRecorder) string {
	var body struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(w.Body.Bytes(), &body)
	return body.Code
}

// oaCheckMux adds GET /metrics to mux as the module's common HTTP server
// adds it (the worker's Routes does not), so that the documented
// operation is routed as in production. Only the pattern matters to
// Check.
func oaCheckMux(mux *httpx.Mux) *httpx.Mux {
	mux.ServeMux.Handle("GET /metrics", http.NotFoundHandler())
	return mux
}

// TestOpenAPIMatchesRoutes holds openapi.json to Routes: every documented
// operation is routed to a pattern of the same method and path, and every
// API route is documented.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	mux := oaService(t, oaUnreachableTools)
	if n := len(mux.Patterns()); n < 40 {
		t.Fatalf("only %d API routes registered; the parts are not all wired", n)
	}
	openapitest.Check(t, OpenAPI(), oaCheckMux(mux))
}

// oaFlatten merges a schema and its allOf parts into one property and
// required set.
func oaFlatten(d openapitest.Doc, s openapitest.Schema) (props map[string]openapitest.Schema, required []string) {
	s = d.Schema(s)
	props = map[string]openapitest.Schema{}
	for k, v := range s.Properties {
		props[k] = v
	}
	required = slices.Clone(s.Required)
	for _, part := range s.AllOf {
		p, r := oaFlatten(d, part)
		for k, v := range p {
			props[k] = v
		}
		required = append(required, r...)
	}
	slices.Sort(required)
	return props, slices.Compact(required)
}

var oaParam = regexp.MustCompile(`\{([^}/]+)\}`)

// oaSample is a request path for a documented path.
func oaSample(path string) string { return oaParam.ReplaceAllString(path, "x1") }

// oaOpen are the operations served without identity.
var oaOpen = []string{"GET /health", "GET /metrics", "GET /openapi.json"}

var oaAccess = map[string]string{
	"open":   "open (no identity header)",
	"any":    "any authenticated caller",
	"writer": "admin or editor",
	"admin":  "admin",
}

// TestOpenAPIDocument checks the document's shape and its agreement with
// the code that does not go through a route: references resolve, every
// operation is described with its access level, has a success answer and
// declares its path parameters, error answers use the Error body and list
// codes the code can send, and exactly the open endpoints need no
// identity.
func TestOpenAPIDocument(t *testing.T) {
	d, ops := openapitest.Parse(t, OpenAPI())
	if d.OpenAPI != "3.0.3" {
		t.Errorf("openapi = %q, want 3.0.3", d.OpenAPI)
	}
	if s := d.Components.SecuritySchemes["testrunnerIdentity"]; s.Type != "apiKey" || s.In != "header" || s.Name != identity.Header {
		t.Errorf("securitySchemes.testrunnerIdentity = %+v, want apiKey in header %s", s, identity.Header)
	}
	if len(d.Security) != 1 || d.Security[0]["testrunnerIdentity"] == nil {
		t.Errorf("global security = %v, want testrunnerIdentity", d.Security)
	}
	for _, name := range []string{"Error", "InvalidCaseError", "VersionConflictError", "RunDetail", "RunSummary",
		"BatchStatus", "BatchReport", "BatchReportRow", "Summary", "Case", "CaseSummary", "Project", "Tree", "Note",
		"NoteScope", "NoteRow", "NoteOptions", "McpStatus", "McpDiag", "Settings", "SettingsView", "WorkerHealth"} {
		if _, ok := d.Components.Schemas[name]; !ok {
			t.Errorf("components.schemas.%s is missing", name)
		}
	}
	// The choices the spec leaves open are written down.
	for _, want := range []string{identity.Header, "HMAC-SHA256", "60 seconds", `{"detail": "<message>", "code": "<CODE>"}`,
		"X-Case-Errors", "with_errors", `"problems"`, "422", "**307**", "%2e%2e", "NO_ROUTE", "`openai:gpt-4o-mini`",
		"UNKNOWN_MODEL", "**UI override > environment variable > built-in default**", `"********"`, "admin or editor",
		"Owner isolation", "wifi_interference", "dual_wan", "last 100 finished runs", "a later issue"} {
		if !strings.Contains(d.Info.Description, want) {
			t.Errorf("info.description does not mention %s", want)
		}
	}
	if openapitest.CheckRefs(t, OpenAPI()) == 0 {
		t.Error("the document uses no $ref: the shared schemas are not reused")
	}

	codes := oaKnownCodes(t)
	ids := map[string]string{}
	for _, o := range ops {
		name := o.Method + " " + o.Path
		op := o.Op
		if op.Summary == "" || op.Description == "" {
			t.Errorf("%s needs a summary and a description", name)
		}
		if prev, dup := ids[op.OperationID]; op.OperationID == "" || dup {
			t.Errorf("%s: operationId %q missing or also used by %s", name, op.OperationID, prev)
		}
		ids[op.OperationID] = name
		if text, ok := oaAccess[op.Access]; !ok || !strings.HasPrefix(op.Description, "**Access: "+text) {
			t.Errorf("%s: x-access %q and a description starting with its access level are required", name, op.Access)
		}

		declared := map[string]bool{}
		for _, p := range op.Parameters {
			if p["in"] == "path" {
				declared[p["name"].(string)] = true
			}
		}
		for _, m := range oaParam.FindAllStringSubmatch(o.Path, -1) {
			if !declared[m[1]] {
				t.Errorf("%s does not declare path parameter %s", name, m[1])
			}
		}

		open := op.Security != nil && len(*op.Security) == 0
		if want := slices.Contains(oaOpen, name); open != want || (op.Access == "open") != want {
			t.Errorf("%s: documented open=%v (x-access %s), want %v", name, open, op.Access, want)
		}
		if r, ok := op.Responses["401"]; !open && (!ok || r.Ref != "#/components/responses/Unauthenticated") {
			t.Errorf("%s needs an identity but does not document the 401", name)
		}

		success := false
		for status, ref := range op.Responses {
			id := name + " " + status
			r, ok := d.Resolve(ref)
			if !ok {
				t.Errorf("%s: response $ref %s does not resolve", id, ref.Ref)
				continue
			}
			if r.Description == "" {
				t.Errorf("%s has no description", id)
			}
			code, err := strconv.Atoi(status)
			if err != nil {
				t.Errorf("%s: %q is not a status code", id, status)
				continue
			}
			if code/100 == 2 || code == http.StatusSwitchingProtocols {
				success = true
				continue
			}
			if code < 400 {
				continue
			}
			raw, isJSON := r.Content["application/json"]
			if !isJSON {
				// A refusal that is not ours (the WebSocket library's) is
				// documented as plain text without codes.
				if _, text := r.Content["text/plain"]; !text || len(r.Codes) != 0 {
					t.Errorf("%s is neither the Error body nor a documented plain-text refusal", id)
				}
				continue
			}
			if !d.UsesError(raw) {
				t.Errorf("%s does not answer the Error schema", id)
			}
			if len(r.Codes) == 0 {
				t.Errorf("%s lists no x-error-codes", id)
			}
			for _, c := range r.Codes {
				if !codes(c) {
					t.Errorf("%s: code %s appears nowhere in the worker's code", id, c)
				}
				if !strings.Contains(r.Description, c) {
					t.Errorf("%s: the description does not name code %s", id, c)
				}
			}
		}
		if !success {
			t.Errorf("%s documents no success response", name)
		}
	}
}

// oaKnownCodes returns a test for error codes the worker can send: string
// literals of its parts and of the packages whose errors they pass on
// (apperr's kinds give the default codes, such as INVALID for a malformed
// body), and codes built from two literals, as "TREE" + "_TOO_LARGE".
func oaKnownCodes(t *testing.T) func(string) bool {
	t.Helper()
	lits := openapitest.StringLiterals(t, ".", "../worker", "../caseapi", "../notes", "../mcpclient", "../testcase", "../identity", "../wire",
		"../../platform/apperr", "../../platform/httpx")
	return func(code string) bool {
		if lits[code] {
			return true
		}
		for i := 1; i < len(code); i++ {
			if lits[code[:i]] && lits[code[i:]] {
				return true
			}
		}
		return false
	}
}

func oaEnum(s openapitest.Schema) []string {
	var out []string
	for _, v := range s.Enum {
		out = append(out, v.(string))
	}
	slices.Sort(out)
	return out
}

func oaSorted(v ...string) []string {
	out := slices.Clone(v)
	slices.Sort(out)
	return out
}

// TestOpenAPIValueSets holds the documented enums to the spec's value sets
// (run status, run phase, batch status) and to the code's constants and
// note allowlists.
func TestOpenAPIValueSets(t *testing.T) {
	d, _ := openapitest.Parse(t, OpenAPI())
	prop := func(schema, field string) openapitest.Schema {
		props, _ := oaFlatten(d, openapitest.Schema{Ref: "#/components/schemas/" + schema})
		p, ok := props[field]
		if !ok {
			t.Fatalf("%s.%s is not documented", schema, field)
		}
		return d.Schema(p)
	}
	// The spec's sets, spelled out here rather than taken from the code.
	runStatus := oaSorted("passed", "failed", "error", "running")
	phases := oaSorted("loading", "pages", "executing", "parsing", "done")
	batchStatus := oaSorted("running", "idle", "done", "none")
	if got := oaSorted(wire.StatusPassed, wire.StatusFailed, wire.StatusError, wire.StatusRunning); !slices.Equal(got, runStatus) {
		t.Errorf("wire run statuses %v, spec %v", got, runStatus)
	}
	if got := oaSorted(wire.PhaseLoading, wire.PhasePages, wire.PhaseExecuting, wire.PhaseParsing, wire.PhaseDone); !slices.Equal(got, phases) {
		t.Errorf("wire phases %v, spec %v", got, phases)
	}
	if got := oaSorted(wire.BatchRunning, wire.BatchIdle, wire.BatchDone, wire.BatchNone); !slices.Equal(got, batchStatus) {
		t.Errorf("wire batch statuses %v, spec %v", got, batchStatus)
	}
	opts := notes.DefaultOptions()
	for _, tc := range []struct {
		schema, field string
		items         bool
		want          []string
	}{
		{"RunDetail", "status", false, runStatus},
		{"RunSummary", "status", false, runStatus},
		{"Report", "status", false, runStatus},
		{"BatchResult", "status", false, runStatus},
		{"RunDetail", "phase", false, phases},
		{"RunSummary", "phase", false, phases},
		{"BatchStatus", "status", false, batchStatus},
		{"WorkerHealth", "batch", false, batchStatus},
		{"Step", "status", false, oaSorted(wire.StepPending, wire.StepRunning, wire.StepPassed, wire.StepFailed, wire.StepError, wire.StepSkipped)},
		{"Note", "severity", false, oaSorted(opts.Severity...)},
		{"Note", "status", false, oaSorted(opts.Status...)},
		{"NoteRow", "severity", false, oaSorted(opts.Severity...)},
		{"NoteRow", "status", false, oaSorted(opts.Status...)},
		{"NoteScope", "kpi_types", true, oaSorted(opts.KPITypes...)},
		{"NoteScope", "topologies", true, oaSorted(opts.Topologies...)},
	} {
		s := prop(tc.schema, tc.field)
		if tc.items {
			if s.Items == nil {
				t.Fatalf("%s.%s has no items", tc.schema, tc.field)
			}
			s = d.Schema(*s.Items)
		}
		if got := oaEnum(s); !slices.Equal(got, tc.want) {
			t.Errorf("%s.%s enum %v, want %v", tc.schema, tc.field, got, tc.want)
		}
	}
}

// oaJSONFields lists the JSON names of t's fields (embedded structs
// flattened as encoding/json does) and whether each is omitempty.
func oaJSONFields(t reflect.Type) map[string]bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	out := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			for k, v := range oaJSONFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = strings.Contains(opts, "omitempty")
	}
	return out
}

// TestOpenAPISchemasMatchTheWireTypes holds each documented schema to the
// Go type the worker encodes or decodes: the same property names, and for
// answers, required exactly for the fields that are never left out.
func TestOpenAPISchemasMatchTheWireTypes(t *testing.T) {
	d, _ := openapitest.Parse(t, OpenAPI())
	for _, tc := range []struct {
		schema string
		typ    any
		// answer: required must list exactly the fields without omitempty.
		answer bool
	}{
		{"Error", wire.Error{}, true},
		{"WorkerHealth", wire.WorkerHealth{}, true},
		{"StartRun", wire.StartRun{}, true},
		{"StartBatchRequest", wire.StartBatchRequest{}, true},
		{"StartBatch", wire.StartBatch{}, true},
		{"StopResult", wire.StopResult{}, true},
		{"Step", wire.Step{}, true},
		{"Report", wire.Report{}, true},
		{"ToolCall", wire.ToolCall{}, true},
		{"RunDetail", wire.RunDetail{}, true},
		{"RunSummary", wire.RunSummary{}, true},
		{"BatchStatus", wire.BatchStatus{}, true},
		{"Summary", wire.Summary{}, true},
		{"BatchReportRow", wire.BatchReportRow{}, true},
		{"BatchResult", wire.BatchResult{}, true},
		{"BatchReport", wire.BatchReport{}, true},
		// Case is a request body too, where project and emulator_setup
		// are optional; answers always carry them.
		{"Case", testcase.Case{}, false},
		{"CaseView", caseapi.CaseView{Case: &testcase.Case{}}, false},
		{"EmulatorSetup", testcase.EmulatorSetup{}, true},
		{"CaseStep", testcase.Step{}, true},
		{"CaseToolCall", testcase.ToolCall{}, true},
		{"CaseExpectation", testcase.Expectation{}, true},
		{"CaseSummary", testcase.Summary{}, true},
		{"CaseFileError", testcase.FileError{}, true},
		{"Problem", testcase.Problem{}, true},
		{"CaseList", caseapi.CaseList{}, true},
		{"Uploaded", caseapi.Uploaded{}, true},
		{"Regenerated", caseapi.Regenerated{}, true},
		{"Project", caseapi.Project{}, true},
		{"ProjectDeleted", caseapi.DeletedProject{}, true},
		{"Tree", caseapi.Tree{}, true},
		{"SavedTree", caseapi.SavedTree{}, true},
		{"Note", notes.Note{}, true},
		{"NoteScope", notes.Scope{}, true},
		{"NoteRow", notes.Row{}, true},
		{"NoteOptions", notes.Options{}, true},
		{"McpStatus", mcpclient.Status{}, true},
		{"McpServerStatus", mcpclient.ServerStatus{}, true},
		{"McpDiag", mcpclient.Diag{}, true},
		{"McpServerDiag", mcpclient.ServerDiag{}, true},
	} {
		t.Run(tc.schema, func(t *testing.T) {
			if _, ok := d.Components.Schemas[tc.schema]; !ok {
				t.Fatalf("components.schemas.%s is missing", tc.schema)
			}
			props, required := oaFlatten(d, openapitest.Schema{Ref: "#/components/schemas/" + tc.schema})
			fields := oaJSONFields(reflect.TypeOf(tc.typ))
			var documented, encoded, always []string
			for k := range props {
				documented = append(documented, k)
			}
			for k, omit := range fields {
				encoded = append(encoded, k)
				if !omit {
					always = append(always, k)
				}
			}
			slices.Sort(documented)
			slices.Sort(encoded)
			slices.Sort(always)
			if !slices.Equal(documented, encoded) {
				t.Errorf("documented properties %v, the type has %v", documented, encoded)
			}
			if tc.answer && !slices.Equal(required, always) {
				t.Errorf("required %v, fields never left out %v", required, always)
			}
		})
	}
}

// TestOpenAPISettings holds the documented settings to GET /api/settings:
// the same keys in the view, the sources and the PUT body, and each
// documented default is the value a worker without environment shows.
func TestOpenAPISettings(t *testing.T) {
	d, _ := openapitest.Parse(t, OpenAPI())
	mux := oaService(t, nil)
	w := oaDo(t, mux, &oaEditor, http.MethodGet, "/api/settings")
	if w.Code != http.StatusOK {
		t.Fatalf("GET /api/settings: %d %s", w.Code, w.Body)
	}
	var view struct {
		Settings map[string]string `json:"settings"`
		Sources  map[string]string `json:"sources"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &view); err != nil {
		t.Fatal(err)
	}
	var served []string
	for k := range view.Settings {
		served = append(served, k)
	}
	slices.Sort(served)
	for _, name := range []string{"Settings", "SettingSources", "SettingsUpdate"} {
		props, _ := oaFlatten(d, openapitest.Schema{Ref: "#/components/schemas/" + name})
		var keys []string
		for k := range props {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, served) {
			t.Errorf("%s documents %v, GET /api/settings serves %v", name, keys, served)
		}
	}
	props, _ := oaFlatten(d, openapitest.Schema{Ref: "#/components/schemas/Settings"})
	for k, v := range view.Settings {
		want := "built-in default empty"
		if v != "" {
			want = "built-in default " + strconv.Quote(v)
		}
		if view.Sources[k] != "default" || !strings.Contains(props[k].Description, want) {
			t.Errorf("setting %s: served %q from %s; its description %q does not say %s", k, v, view.Sources[k], props[k].Description, want)
		}
		if !strings.Contains(d.Info.Description, "| "+k+" |") {
			t.Errorf("the settings table of info.description has no row for %s", k)
		}
	}
}

// TestOpenAPIAccessLevels holds every operation's documented access to the
// worker's answers: without identity everything but the open endpoints
// is 401 UNAUTHENTICATED, and an editor gets 403 FORBIDDEN exactly from
// the admin operations.
func TestOpenAPIAccessLevels(t *testing.T) {
	mux := oaService(t, oaUnreachableTools)
	_, ops := openapitest.Parse(t, OpenAPI())
	for _, o := range ops {
		name := o.Method + " " + o.Path
		if o.Path == "/metrics" {
			continue // served by the module's server, not by Routes
		}
		path := oaSample(o.Path)
		w := oaDo(t, mux, nil, o.Method, path)
		if o.Op.Access == "open" {
			if w.Code != http.StatusOK {
				t.Errorf("%s without identity: %d, want 200", name, w.Code)
			}
			continue
		}
		if w.Code != http.StatusUnauthorized || oaCode(w) != "UNAUTHENTICATED" || w.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("%s without identity: %d %s, want 401 UNAUTHENTICATED with WWW-Authenticate", name, w.Code, w.Body)
		}
		w = oaDo(t, mux, &oaEditor, o.Method, path)
		refused := w.Code == http.StatusForbidden && oaCode(w) == "FORBIDDEN"
		if refused != (o.Op.Access == "admin") {
			t.Errorf("%s as an editor: %d %s; documented access %s", name, w.Code, w.Body, o.Op.Access)
		}
		if w.Code == http.StatusUnauthorized {
			t.Errorf("%s refused the editor's valid identity: %s", name, w.Body)
		}
	}
	// The one query-level rule: all=true needs an admin.
	if w := oaDo(t, mux, &oaEditor, http.MethodGet, "/api/runs?all=true"); w.Code != http.StatusForbidden || oaCode(w) != "FORBIDDEN" {
		t.Errorf("GET /api/runs?all=true as an editor: %d %s", w.Code, w.Body)
	}
	if w := oaDo(t, mux, &oaAdmin, http.MethodGet, "/api/runs?all=true"); w.Code != http.StatusOK {
		t.Errorf("GET /api/runs?all=true as an admin: %d %s", w.Code, w.Body)
	}
}

// TestOpenAPIServedWithoutIdentity: the document and its UI are open,
// while an API route next to them is not.
func TestOpenAPIServedWithoutIdentity(t *testing.T) {
	mux := oaService(t, oaUnreachableTools)
	w := oaDo(t, mux, nil, http.MethodGet, "/openapi.json")
	if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("GET /openapi.json: %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	if !bytes.Equal(w.Body.Bytes(), OpenAPI()) {
		t.Error("GET /openapi.json does not serve the embedded document")
	}
	if w := oaDo(t, mux, nil, http.MethodGet, "/docs/"); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "/openapi.json") {
		t.Errorf("GET /docs/: %d, or the UI does not load /openapi.json", w.Code)
	}
	if w := oaDo(t, mux, nil, http.MethodGet, "/api/tests"); w.Code != http.StatusUnauthorized {
		t.Errorf("GET /api/tests without identity: %d, want 401", w.Code)
	}
}

// TestOpenAPIDocumentedRouting holds the routing rules info.description
// states to the assembled mux: JSON 404 NO_ROUTE for unknown paths and
// methods, a 307 for literal dot segments before any identity check, and
// the X-Case-Errors header.
func TestOpenAPIDocumentedRouting(t *testing.T) {
	mux := oaService(t, oaUnreachableTools)
	for _, rt := range []struct{ method, path string }{
		{http.MethodGet, "/api/testrail/status"},
		{http.MethodPost, "/api/parse-xml"},
		{http.MethodGet, "/api/admin/credentials-status"},
		{http.MethodPatch, "/api/tests"},
		{http.MethodPost, "/ws/run/x1"},
	} {
		w := oaDo(t, mux, &oaEditor, rt.method, rt.path)
		if w.Code != http.StatusNotFound || oaCode(w) != "NO_ROUTE" {
			t.Errorf("%s %s: %d %s, want 404 NO_ROUTE", rt.method, rt.path, w.Code, w.Body)
		}
	}
	for _, path := range []string{"/api/trees/../x.xml", "/api/tests/./a.yaml", "/api//runs"} {
		w := oaDo(t, mux, nil, http.MethodDelete, path)
		if w.Code != http.StatusTemporaryRedirect {
			t.Errorf("DELETE %s: %d, want 307", path, w.Code)
		}
	}
	w := oaDo(t, mux, &oaEditor, http.MethodGet, "/api/tests")
	if w.Code != http.StatusOK || w.Header().Get(caseapi.ErrorCountHeader) != "0" {
		t.Errorf("GET /api/tests: %d, X-Case-Errors %q", w.Code, w.Header().Get(caseapi.ErrorCountHeader))
	}
}
