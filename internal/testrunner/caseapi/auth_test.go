package caseapi

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/identity"
)

// routes has every route of the package with a path that reaches it.
var routes = []struct {
	pattern, method, path string
	write                 bool
}{
	{"GET /api/tests", "GET", "/api/tests", false},
	{"POST /api/tests", "POST", "/api/tests", true},
	{"DELETE /api/tests", "DELETE", "/api/tests", true},
	{"POST /api/tests/upload-yaml", "POST", "/api/tests/upload-yaml", true},
	{"POST /api/tests/assign-project", "POST", "/api/tests/assign-project", true},
	{"GET /api/tests/{filename}", "GET", "/api/tests/a.yaml", false},
	{"PUT /api/tests/{filename}", "PUT", "/api/tests/a.yaml", true},
	{"DELETE /api/tests/{filename}", "DELETE", "/api/tests/a.yaml", true},
	{"GET /api/tests/{filename}/yaml", "GET", "/api/tests/a.yaml/yaml", false},
	{"POST /api/tests/{filename}/regenerate", "POST", "/api/tests/a.yaml/regenerate", true},
	{"GET /api/sections", "GET", "/api/sections", false},
	{"GET /api/projects", "GET", "/api/projects", false},
	{"POST /api/projects", "POST", "/api/projects", true},
	{"PATCH /api/projects/{name}", "PATCH", "/api/projects/p", true},
	{"DELETE /api/projects/{name}", "DELETE", "/api/projects/p", true},
	{"GET /api/trees", "GET", "/api/trees", false},
	{"POST /api/trees/upload", "POST", "/api/trees/upload", true},
	{"DELETE /api/trees/{filename}", "DELETE", "/api/trees/t.xml", true},
}

func TestRoutesAreTheListedOnes(t *testing.T) {
	e := newEnv(t)
	mux := httpx.NewMux()
	e.api.Routes(mux)
	var want []string
	for _, rt := range routes {
		want = append(want, rt.pattern)
	}
	got := mux.Patterns()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("patterns\n got %v\nwant %v", got, want)
	}
}

func TestEveryRouteNeedsAValidIdentity(t *testing.T) {
	e := newEnv(t)
	e.writeCase("a.yaml", caseYAML("a", ""))
	e.writeTree("t.xml", "<t/>")
	forged := []byte("another-secret-another-secret-xx")
	for _, rt := range routes {
		t.Run(rt.pattern, func(t *testing.T) {
			cases := map[string]func(*http.Request){
				"missing": nil,
				"forged":  func(r *http.Request) { identity.SignRequest(forged, r, admin, time.Now()) },
				"expired": func(r *http.Request) { identity.SignRequest(testSecret, r, admin, time.Now().Add(-time.Hour)) },
				"other path": func(r *http.Request) {
					r.Header.Set(identity.Header, identity.Sign(testSecret, admin, r.Method, "/api/other", time.Now()))
				},
				"unknown role": func(r *http.Request) {
					identity.SignRequest(testSecret, r, identity.Identity{Username: "v", Role: "viewer"}, time.Now())
				},
			}
			for name, sign := range cases {
				req, _ := http.NewRequest(rt.method, e.srv.URL+rt.path, nil)
				if sign != nil {
					sign(req)
				}
				resp, err := e.srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				r := reply{status: resp.StatusCode, header: resp.Header}
				r.body, _ = readAll(resp)
				if r.status != 401 || r.err(t).Code != "UNAUTHENTICATED" {
					t.Fatalf("%s identity: %d %s", name, r.status, r.body)
				}
				if resp.Header.Get("WWW-Authenticate") == "" {
					t.Fatalf("%s identity: 401 without WWW-Authenticate", name)
				}
			}
		})
	}
	// Nothing was changed by the refused writes.
	if _, err := e.cases.Get("a.yaml"); err != nil {
		t.Fatalf("case gone after refused requests: %v", err)
	}
	if names := dirNames(t, e.treesDir); !slices.Equal(names, []string{"t.xml"}) {
		t.Fatalf("tree folder after refused requests: %v", names)
	}
}

// TestWriteRoles: the gateway signs only admin and editor today (any other
// role is refused by identity.Verify, see above), and both may write. The
// rule itself refuses every other role, so a role added later reads only.
func TestWriteRoles(t *testing.T) {
	for _, tc := range []struct {
		role string
		ok   bool
	}{
		{identity.RoleAdmin, true},
		{identity.RoleEditor, true},
		{"viewer", false},
		{"", false},
		{"Admin", false},
	} {
		err := mayWrite(identity.Identity{Username: "u", Role: tc.role}, "creating a project")
		if tc.ok != (err == nil) {
			t.Fatalf("role %q: %v", tc.role, err)
		}
		if err != nil && (apperr.Status(err) != 403 || apperr.Code(err) != "FORBIDDEN") {
			t.Fatalf("role %q: %d %s", tc.role, apperr.Status(err), apperr.Code(err))
		}
	}

	e := newEnv(t)
	for i, id := range []*identity.Identity{&editor, &admin} {
		name := []string{"by-editor", "by-admin"}[i]
		expect(t, e.as(id, "POST", "/api/projects", map[string]string{"name": name}), 201, "")
		expect(t, e.as(id, "POST", "/api/tests", sampleCase(name, "t")), 201, "")
		expect(t, e.as(id, "POST", "/api/tests/assign-project", map[string]any{"project": name, "files": []string{name + ".yaml"}}), 200, "")
		var list []Project
		r := e.as(id, "GET", "/api/projects", nil)
		expect(t, r, 200, "")
		r.json(t, &list)
		if len(list) != i+1 {
			t.Fatalf("%s sees %v", id.Role, list)
		}
	}
}
