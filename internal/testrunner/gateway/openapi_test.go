package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/httpx/openapitest"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testutil"
)

const (
	oaAdminPW  = "Oa-Adm1n-Passw0rd"
	oaEditorPW = "Oa-Ed1tor-Passw0rd"
)

// oaGateway builds a gateway as the gateway module does, without workers
// and without Portainer, and the handler chain the server puts in front of
// its routes.
func oaGateway(t *testing.T) (*Gateway, *httpx.Mux, http.Handler) {
	t.Helper()
	cfg := Config{TokenTTL: time.Hour, ProxyTimeout: testutil.MinDeadline, HealthTimeout: testutil.MinDeadline,
		WorkerImage: "cpesuite:test", EmulatorImage: "cpesuite:test", StackNetwork: "cpesuite"}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("test config: %v", err)
	}
	secret := bytes.Repeat([]byte("k"), identity.MinSecretLen)
	g, err := New(context.Background(), cfg, sqltest.Open(t, sqlstore.SQLite), secret, "test", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("gateway.New: %v", err)
	}
	t.Cleanup(g.Close)
	mux := httpx.NewMux()
	g.Routes(mux)
	return g, mux, httpx.Chain(mux, g.Middleware())
}

// oaDo sends one request through h; token may be empty.
func oaDo(t *testing.T, h http.Handler, token, method, path string, body any) *httptest.ResponseRecorder {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	r := httptest.NewRequest(method, path, rd)
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// oaLogin logs in through the handler chain and returns the token.
func oaLogin(t *testing.T, h http.Handler, user, pw string) string {
	t.Helper()
	w := oaDo(t, h, "", http.MethodPost, "/api/auth/login", map[string]string{"username": user, "password": pw})
	if w.Code != http.StatusOK {
		t.Fatalf("login %s: %d %s", user, w.Code, w.Body)
	}
	var out struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil || out.Token == "" {
		t.Fatalf("login %s: no token in %s", user, w.Body)
	}
	return out.Token
}

// oaUncheckable lists the routes openapitest.Check cannot compare with the
// document, each with the operations that document it and a request path
// that must reach it. Check matches a documented path to the route's
// pattern literally and needs a method in every pattern; these patterns
// use ServeMux syntax OpenAPI cannot spell ({$}, {path...}) or have no
// method because they serve every method (the proxy prefixes).
var oaUncheckable = []oaRoute{
	// "/{$}" is ServeMux's "exactly /"; OpenAPI writes it "/".
	{"GET /{$}", []string{"GET /"}, "/"},
	// A prefix pattern without method: every method of every path under
	// /api/ that no other route serves is proxied to one stand.
	{"/api/", []string{"GET /api/{path}", "POST /api/{path}", "PUT /api/{path}", "PATCH /api/{path}", "DELETE /api/{path}"}, "/api/oa-probe/x"},
	// The same for WebSockets; only GET can upgrade.
	{"/ws/", []string{"GET /ws/{path}"}, "/ws/oa-probe/x"},
	// {path...} takes the rest of the path, slashes included; OpenAPI has
	// no such parameter, and the route serves every method.
	{"/novnc/{stand}/{path...}", []string{"GET /novnc/{stand}/{path}"}, "/novnc/x1/oa-probe/x"},
}

// oaRoute is a route Check cannot compare and what documents it.
type oaRoute struct {
	pattern string
	ops     []string
	sample  string
}

// oaCheckedDoc is the document without the operations of oaUncheckable.
func oaCheckedDoc(t *testing.T) []byte {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(OpenAPI(), &d); err != nil {
		t.Fatalf("openapi.json does not parse: %v", err)
	}
	paths := d["paths"].(map[string]any)
	for _, u := range oaUncheckable {
		for _, op := range u.ops {
			method, path, _ := strings.Cut(op, " ")
			item, ok := paths[path].(map[string]any)
			if !ok {
				t.Errorf("%s (route %q) is not in the document", op, u.pattern)
				continue
			}
			delete(item, strings.ToLower(method))
			if !slices.ContainsFunc(slices.Collect(maps.Keys(item)), openapitest.IsMethod) {
				delete(paths, path)
			}
		}
	}
	out, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// oaCheckMux holds the patterns of mux, with those of oaUncheckable on
// the embedded ServeMux, where Check routes requests but does not list
// patterns. Check only asks which pattern serves a request, and the same
// pattern set routes every request alike, so a stub handler serves all.
// GET /metrics is added as the module's common HTTP server adds it.
func oaCheckMux(mux *httpx.Mux) *httpx.Mux {
	stub := http.NotFoundHandler()
	cm := httpx.NewMux()
	for _, p := range mux.Patterns() {
		if slices.ContainsFunc(oaUncheckable, func(u oaRoute) bool { return u.pattern == p }) {
			cm.ServeMux.Handle(p, stub)
			continue
		}
		cm.Handle(p, stub)
	}
	cm.ServeMux.Handle("GET /metrics", stub)
	return cm
}

// TestOpenAPIMatchesRoutes holds openapi.json to Routes: every documented
// operation is routed to a pattern of the same method and path and every
// route is documented (openapitest.Check), and the routes Check cannot
// compare are documented by the operations oaUncheckable names, which
// reach them.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	_, mux, _ := oaGateway(t)
	openapitest.Check(t, oaCheckedDoc(t), oaCheckMux(mux))

	ops, err := openapitest.Operations(OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range oaUncheckable {
		if !slices.Contains(mux.Patterns(), u.pattern) {
			t.Errorf("route %q is gone; remove it from oaUncheckable and its operations from the document", u.pattern)
		}
		for _, op := range u.ops {
			if !slices.Contains(ops, op) {
				t.Errorf("route %q: %s is not in the document", u.pattern, op)
			}
			method, _, _ := strings.Cut(op, " ")
			_, pattern := mux.Handler(httptest.NewRequest(method, u.sample, nil))
			if pattern != u.pattern {
				t.Errorf("%s (sample %s) is routed to %q, want %q", op, u.sample, pattern, u.pattern)
			}
		}
	}
}

var oaParam = regexp.MustCompile(`\{([^}/]+)\}`)

// oaSample is a request path for a documented path: parameters become
// x1, except the proxies' rest-of-path, which gets two segments.
func oaSample(path string) string {
	return oaParam.ReplaceAllStringFunc(path, func(p string) string {
		if p == "{path}" {
			return "oa-probe/x"
		}
		return "x1"
	})
}

// TestOpenAPIDocument checks the document's shape and its agreement with
// the code that does not go through a route: references resolve, every
// operation is described and has a success answer, error answers use the
// Error body and list codes the code can send, and an operation is open
// (security: []) exactly when the middleware lets it through without a
// token.
func TestOpenAPIDocument(t *testing.T) {
	d, ops := openapitest.Parse(t, OpenAPI())
	if d.OpenAPI != "3.0.3" {
		t.Errorf("openapi = %q, want 3.0.3", d.OpenAPI)
	}
	if s := d.Components.SecuritySchemes["bearerAuth"]; s.Type != "http" || s.Scheme != "bearer" {
		t.Errorf("components.securitySchemes.bearerAuth = %+v, want http bearer", s)
	}
	if len(d.Security) != 1 || d.Security[0]["bearerAuth"] == nil {
		t.Errorf("global security = %v, want bearerAuth", d.Security)
	}
	for _, name := range []string{"Error", "User", "Stand", "Profile", "RunDetail", "RunSummary", "BatchStatus",
		"BatchReportRow", "BatchReport", "StopResult", "WorkerHealth", "LiveStand"} {
		if _, ok := d.Components.Schemas[name]; !ok {
			t.Errorf("components.schemas.%s is missing", name)
		}
	}
	// The design choices the spec leaves open are written down.
	for _, want := range []string{"trg_", "SHA-256", "X-Testrunner-Identity", "HMAC-SHA256", "60 seconds",
		"X-Stand", "X-Unreachable-Stands", `{"stand": null`, "`given`", "`name`", "`random`",
		"provision flag", "teardown", "/metrics", `{"detail": "<message>", "code": "<CODE>"}`} {
		if !strings.Contains(d.Info.Description, want) {
			t.Errorf("info.description does not mention %s", want)
		}
	}

	oaCheckRefs(t)

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
		if want := isOpen(httptest.NewRequest(o.Method, oaSample(o.Path), nil)); open != want {
			t.Errorf("%s: documented open=%v, but the middleware's isOpen says %v", name, open, want)
		}
		if _, ok := op.Responses["401"]; !open && !ok {
			t.Errorf("%s needs a token but documents no 401", name)
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
			if err != nil && status != "default" {
				t.Errorf("%s: %q is not a status code", id, status)
				continue
			}
			if code/100 == 2 || code == http.StatusSwitchingProtocols {
				success = true
				continue
			}
			if code < 400 && status != "default" {
				continue
			}
			raw, ok := r.Content["application/json"]
			if !ok || !d.UsesError(raw) {
				t.Errorf("%s does not answer the Error schema as application/json", id)
			}
			if status == "default" {
				continue // worker answers relayed; their codes are the worker's
			}
			if len(r.Codes) == 0 {
				t.Errorf("%s lists no x-error-codes", id)
			}
			for _, c := range r.Codes {
				if !codes(c) {
					t.Errorf("%s: code %s appears nowhere in the gateway's code", id, c)
				}
			}
		}
		if !success {
			t.Errorf("%s documents no success response (2xx, or 101 for a WebSocket)", name)
		}
	}
}

// oaCheckRefs fails t for every $ref that does not name a value of the
// document.
func oaCheckRefs(t *testing.T) {
	t.Helper()
	if openapitest.CheckRefs(t, OpenAPI()) == 0 {
		t.Error("the document uses no $ref: the shared schemas are not reused")
	}
}

// oaKnownCodes returns a test for error codes the gateway can send: string
// literals of the gateway and accounts packages and of apperr (whose kinds
// give the default codes, such as INVALID for a malformed body), and codes
// built as a literal prefix plus a literal field name the way invalidField
// and boolQuery build them ("INVALID_" + "base_url" upper-cased, or
// "INVALID_" + "teardown").
func oaKnownCodes(t *testing.T) func(string) bool {
	t.Helper()
	lits := openapitest.StringLiterals(t, ".", "accounts", filepath.Join("..", "..", "platform", "apperr"))
	return func(code string) bool {
		if lits[code] {
			return true
		}
		field, ok := strings.CutPrefix(code, "INVALID_")
		return ok && lits["INVALID_"] && (lits[field] || lits[strings.ToLower(field)])
	}
}

// TestOpenAPIAccessLevels holds the documented access of every operation
// to the gateway's answers: without a token every operation that is not
// open is a 401, and an editor gets 403 ADMIN_REQUIRED exactly from the
// operations that document it. The gateway has no stands, so calls that
// reach for a worker stop at 503 without any network traffic.
func TestOpenAPIAccessLevels(t *testing.T) {
	g, _, h := oaGateway(t)
	ctx := context.Background()
	if _, err := g.Accounts().Bootstrap(ctx, "oa-admin", oaAdminPW); err != nil {
		t.Fatal(err)
	}
	admin := identity.Identity{Username: "oa-admin", Role: identity.RoleAdmin}
	if _, err := g.Accounts().CreateUser(ctx, admin, "oa-editor", oaEditorPW, identity.RoleEditor, ""); err != nil {
		t.Fatal(err)
	}
	editor := oaLogin(t, h, "oa-editor", oaEditorPW)

	d, ops := openapitest.Parse(t, OpenAPI())
	for _, o := range ops {
		name := o.Method + " " + o.Path
		if o.Op.Security != nil && len(*o.Op.Security) == 0 {
			continue
		}
		if o.Path == "/metrics" {
			continue // served by the module's server, not by Routes
		}
		path := oaSample(o.Path)
		if w := oaDo(t, h, "", o.Method, path, nil); w.Code != http.StatusUnauthorized {
			t.Errorf("%s without a token: %d, want 401", name, w.Code)
		}
		r403, adminOnly := o.Op.Responses["403"]
		if adminOnly {
			r, _ := d.Resolve(r403)
			adminOnly = slices.Contains(r.Codes, "ADMIN_REQUIRED")
		}
		w := oaDo(t, h, editor, o.Method, path, nil)
		var body struct {
			Code string `json:"code"`
		}
		_ = json.Unmarshal(w.Body.Bytes(), &body)
		isAdminRefusal := w.Code == http.StatusForbidden && body.Code == "ADMIN_REQUIRED"
		if adminOnly != isAdminRefusal {
			t.Errorf("%s as an editor: %d %s; documented admin-only: %v", name, w.Code, body.Code, adminOnly)
		}
	}
}

// TestOpenAPIServed checks that GET /openapi.json serves the embedded
// document to an authenticated caller and refuses callers without a valid
// token.
func TestOpenAPIServed(t *testing.T) {
	g, _, h := oaGateway(t)
	if _, err := g.Accounts().Bootstrap(context.Background(), "oa-admin", oaAdminPW); err != nil {
		t.Fatal(err)
	}
	token := oaLogin(t, h, "oa-admin", oaAdminPW)

	for _, tc := range []struct {
		name, token string
		status      int
		code        string
	}{
		{"with a token", token, http.StatusOK, ""},
		{"without a token", "", http.StatusUnauthorized, "AUTH_REQUIRED"},
		{"with an unknown token", "trg_" + strings.Repeat("A", 43), http.StatusUnauthorized, "INVALID_TOKEN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := oaDo(t, h, tc.token, http.MethodGet, "/openapi.json", nil)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			if tc.status == http.StatusOK {
				if !bytes.Equal(w.Body.Bytes(), OpenAPI()) {
					t.Error("GET /openapi.json does not serve the embedded document")
				}
				return
			}
			var e struct {
				Detail string `json:"detail"`
				Code   string `json:"code"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Code != tc.code || e.Detail == "" {
				t.Errorf("error body %s, want code %s with a detail", w.Body, tc.code)
			}
			if !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("WWW-Authenticate %q, want a Bearer challenge", w.Header().Get("WWW-Authenticate"))
			}
			if bytes.Contains(w.Body.Bytes(), []byte(`"openapi"`)) {
				t.Error("the refusal leaks the document")
			}
		})
	}
}
