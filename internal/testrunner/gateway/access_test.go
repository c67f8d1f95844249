package gateway

import (
	"strings"
	"testing"

	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testutil"
)

// TestAccessLevels checks every gateway endpoint for an anonymous caller,
// an editor and an admin (spec, Authentication A 1 and 5). Rows run in
// order, anonymous first, so that writes by the admin come last.
func TestAccessLevels(t *testing.T) {
	e := newEnv(t, envOpts{workers: []string{"w1"}})
	editor := e.user("ed", "editor")
	e.profile("lab", map[string]string{"acs_url": "http://127.0.0.1:7557/acs"})
	rows := []struct {
		method, path string
		body         any
		anon, ed, ad int
	}{
		{"GET", "/", nil, 200, 200, 200},
		{"GET", "/health", nil, 200, 200, 200},
		// Not open (spec rule 1 opens only /, /health, login, logout,
		// /novnc/*): process-wide metrics are for admins (issue 18 item 10).
		{"GET", "/metrics", nil, 401, 403, 200},
		{"GET", "/api/auth/me", nil, 401, 200, 200},
		{"GET", "/api/users", nil, 401, 403, 200},
		{"POST", "/api/users", map[string]string{"username": "newbie", "password": userPW}, 401, 403, 201},
		{"POST", "/api/users/newbie/reset-password", map[string]string{"password": "An0ther-Passw0rd"}, 401, 403, 200},
		{"DELETE", "/api/users/newbie", nil, 401, 403, 204},
		{"GET", "/api/activity", nil, 401, 403, 200},
		{"GET", "/api/gateway/profiles", nil, 401, 200, 200},
		{"POST", "/api/gateway/profiles", map[string]any{"name": "p2", "settings": map[string]string{}}, 401, 403, 201},
		{"GET", "/api/gateway/profiles/p2", nil, 401, 403, 200},
		{"DELETE", "/api/gateway/profiles/p2", nil, 401, 403, 200},
		{"GET", "/api/gateway/stands", nil, 401, 403, 200},
		{"POST", "/api/gateway/stands", map[string]any{"name": "s9", "base_url": "http://127.0.0.1:9"}, 401, 403, 201},
		{"PATCH", "/api/gateway/stands/s9", map[string]any{"enabled": false}, 401, 403, 200},
		{"DELETE", "/api/gateway/stands/s9", nil, 401, 403, 200},
		{"POST", "/api/gateway/workers", map[string]any{}, 401, 403, 503},
		{"GET", "/api/live/stand", nil, 401, 200, 200},
		{"POST", "/api/gateway/run", map[string]any{"env": "lab", "test_file": "quick.yaml", "dry_run": true}, 401, 200, 200},
		{"GET", "/api/runs", nil, 401, 200, 200},
		{"GET", "/api/runs?all=true", nil, 401, 403, 200},
		{"GET", "/api/runs/active", nil, 401, 200, 200},
		{"GET", "/api/runs/r-0000000000000000", nil, 401, 404, 404},
		{"GET", "/api/run/batch", nil, 401, 200, 200},
		{"GET", "/api/run/batch/reports", nil, 401, 200, 200},
		{"POST", "/api/run/stop", nil, 401, 200, 200},
		{"GET", "/api/settings", nil, 401, 200, 200},
		{"PUT", "/api/settings", map[string]string{}, 401, 403, 200},
		{"GET", "/novnc/w1/vnc.html", nil, 404, 404, 404},
	}
	for _, r := range rows {
		for _, who := range []struct {
			name, tok string
			want      int
		}{{"anonymous", "", r.anon}, {"editor", editor, r.ed}, {"admin", e.admin, r.ad}} {
			if strings.HasPrefix(r.path, "/api/gateway/run") && who.tok != "" {
				// One dispatch at a time per env: wait for the last one.
				waitIdle(e)
			}
			got := e.do(who.tok, r.method, r.path, r.body)
			if got.status != who.want {
				t.Errorf("%s %s as %s: status %d, want %d: %s", r.method, r.path, who.name, got.status, who.want, got.body)
			}
			if got.status == 401 && got.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s: 401 without WWW-Authenticate", r.method, r.path)
			}
		}
	}
}

// waitIdle waits until no stand reports itself busy.
func waitIdle(e *tenv) {
	e.t.Helper()
	for _, w := range e.workers {
		testutil.Eventually(e.t, testutil.MinDeadline, "worker "+w.name+" idle", func() bool {
			var h struct{ Busy bool }
			r := direct(e.t, w, nil, identity.Identity{}, "GET", "/health", nil)
			r.decode(e.t, &h)
			return !h.Busy
		})
	}
}
