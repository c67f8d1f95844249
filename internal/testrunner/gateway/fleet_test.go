package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"

	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
	"cpesuite/internal/testutil"
)

// TestStandsAndProfiles covers the CRUD rules and bad input of stands and
// env profiles on SQLite and PostgreSQL.
func TestStandsAndProfiles(t *testing.T) {
	sqltest.ForDialects(t, []sqlstore.Dialect{sqlstore.SQLite, sqlstore.Postgres}, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, envOpts{db: db})
		ad := e.admin
		var st Stand
		e.must(e.do(ad, "POST", "/api/gateway/stands", map[string]any{"name": "s1", "base_url": "http://10.0.0.1:8083", "display": "Lab 1", "novnc_url": "http://10.0.0.1:6080"}), 201).decode(t, &st)
		if !st.Enabled || st.Display != "Lab 1" {
			t.Fatalf("created stand %+v", st)
		}
		e.must(e.do(ad, "POST", "/api/gateway/stands", map[string]any{"name": "s1", "base_url": "http://10.0.0.2:8083"}), 200).decode(t, &st)
		if st.BaseURL != "http://10.0.0.2:8083" {
			t.Fatalf("upsert kept %s", st.BaseURL)
		}
		e.must(e.do(ad, "PATCH", "/api/gateway/stands/s1", map[string]any{"enabled": false}), 200).decode(t, &st)
		if st.Enabled || st.BaseURL != "http://10.0.0.2:8083" {
			t.Fatalf("patched stand %+v", st)
		}
		e.must(e.do(ad, "PATCH", "/api/gateway/stands/s1", map[string]any{"enabled": true}), 200).decode(t, &st)
		if !st.Enabled {
			t.Fatal("stand not re-enabled")
		}
		var list []Stand
		e.must(e.do(ad, "GET", "/api/gateway/stands", nil), 200).decode(t, &list)
		if len(list) != 1 || list[0].Name != "s1" {
			t.Fatalf("stands %+v", list)
		}

		e.must(e.do(ad, "POST", "/api/gateway/profiles", map[string]any{"name": "lab", "settings": map[string]string{"acs_url": "http://acs:7557/acs"}}), 201)
		e.must(e.do(ad, "POST", "/api/gateway/profiles", map[string]any{"name": "lab", "settings": map[string]string{"acs_url": "http://acs2:7557/acs"}}), 200)
		var p Profile
		e.must(e.do(ad, "GET", "/api/gateway/profiles/lab", nil), 200).decode(t, &p)
		if p.Settings["acs_url"] != "http://acs2:7557/acs" {
			t.Fatalf("profile %+v", p)
		}
		var rows []struct {
			Name string
			Keys []string
		}
		e.must(e.do(ad, "GET", "/api/gateway/profiles", nil), 200).decode(t, &rows)
		if len(rows) != 1 || rows[0].Keys[0] != "acs_url" || strings.Contains(string(e.do(ad, "GET", "/api/gateway/profiles", nil).body), "acs2") {
			t.Fatalf("profile list %+v shows values", rows)
		}

		bad := []struct {
			method, path string
			body         any
			want         int
		}{
			{"POST", "/api/gateway/stands", `{"name": "s2",`, 400},
			{"POST", "/api/gateway/stands", map[string]any{"name": "../x", "base_url": "http://a"}, 400},
			{"POST", "/api/gateway/stands", map[string]any{"name": "s2", "base_url": "ftp://a"}, 400},
			{"POST", "/api/gateway/stands", map[string]any{"name": "s2", "base_url": "http://u:p@a"}, 400},
			{"POST", "/api/gateway/stands", map[string]any{"name": "s2", "base_url": "http://a", "novnc_url": "javascript:x"}, 400},
			{"POST", "/api/gateway/stands", map[string]any{"name": "s2", "base_url": "http://a", "colour": "red"}, 400},
			{"POST", "/api/gateway/stands", map[string]any{"name": "S2", "base_url": "http://a"}, 400},
			{"PATCH", "/api/gateway/stands/nope", map[string]any{"enabled": false}, 404},
			{"PATCH", "/api/gateway/stands/s1", map[string]any{}, 400},
			{"PATCH", "/api/gateway/stands/s1", map[string]any{"base_url": "not a url"}, 400},
			{"DELETE", "/api/gateway/stands/nope", nil, 404},
			{"DELETE", "/api/gateway/stands/s1?teardown=maybe", nil, 400},
			{"DELETE", "/api/gateway/stands/s1?teardown=true", nil, 503},
			{"GET", "/api/gateway/profiles/nope", nil, 404},
			{"DELETE", "/api/gateway/profiles/nope", nil, 404},
			{"POST", "/api/gateway/profiles", map[string]any{"name": "p"}, 400},
			{"POST", "/api/gateway/profiles", map[string]any{"name": "p", "settings": map[string]any{"Bad-Key": "x"}}, 400},
			{"POST", "/api/gateway/profiles", map[string]any{"name": "p", "settings": map[string]any{"n": 1}}, 400},
			{"POST", "/api/gateway/profiles", map[string]any{"name": "p", "settings": map[string]string{}, "provision": true}, 503},
			{"POST", "/api/gateway/workers", map[string]any{"name": "w9"}, 503},
			{"POST", "/api/users", map[string]any{"username": "weak", "password": "password"}, 400},
			{"POST", "/api/users", map[string]any{"username": "empty", "password": ""}, 400},
			{"POST", "/api/users", map[string]any{"username": "ADMIN", "password": userPW}, 409},
			{"POST", "/api/users/ghost/reset-password", map[string]any{"password": userPW}, 404},
			{"DELETE", "/api/users/ghost", nil, 404},
		}
		for _, c := range bad {
			if r := e.do(ad, c.method, c.path, c.body); r.status != c.want {
				t.Errorf("%s %s %v: %d, want %d: %s", c.method, c.path, c.body, r.status, c.want, r.body)
			}
		}
		e.must(e.do(ad, "DELETE", "/api/gateway/profiles/lab", nil), 200)
		e.must(e.do(ad, "DELETE", "/api/gateway/stands/s1", nil), 200)
		e.must(e.do(ad, "GET", "/api/gateway/profiles/lab", nil), 404)

		// The audit log saw the admin's changes.
		var act struct {
			Items []struct{ Action, Target string }
		}
		e.must(e.do(ad, "GET", "/api/activity?username=admin", nil), 200).decode(t, &act)
		seen := map[string]bool{}
		for _, it := range act.Items {
			seen[it.Action] = true
		}
		for _, a := range []string{"stand_upsert", "stand_update", "stand_delete", "profile_upsert", "profile_delete", "login"} {
			if !seen[a] {
				t.Errorf("activity lacks %s: %+v", a, act.Items)
			}
		}
	})
}

// TestLogoutAndRateLimitThroughGateway checks the token and login rules
// on the gateway's own listener.
func TestLogoutAndRateLimitThroughGateway(t *testing.T) {
	e := newEnv(t, envOpts{})
	tok := e.login("admin", adminPW)
	e.must(e.do(tok, "GET", "/api/auth/me", nil), 200)
	e.must(e.do(tok, "POST", "/api/auth/logout", nil), 200)
	e.must(e.do(tok, "GET", "/api/auth/me", nil), 401)
	e.must(e.do(tok, "GET", "/api/gateway/profiles", nil), 401)
	for range 5 {
		e.must(e.do("", "POST", "/api/auth/login", map[string]string{"username": "admin", "password": "wrong"}), 401)
	}
	r := e.must(e.do("", "POST", "/api/auth/login", map[string]string{"username": "admin", "password": adminPW}), 429)
	if r.header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	// Another user from the same address is not limited.
	e.user("carol", "editor")
}

// TestPortainerFlows provisions and tears down worker and emulator stacks
// through the Portainer double, including its failures.
func TestPortainerFlows(t *testing.T) {
	e := newEnv(t, envOpts{portainer: true})
	ad := e.admin
	var w struct {
		Name  string
		Stand Stand
		Stack provisioned
	}
	e.must(e.do(ad, "POST", "/api/gateway/workers", nil), 201).decode(t, &w)
	if w.Name != "w1" || w.Stand.BaseURL != "http://tr-worker-w1:8083" || w.Stack.Stack != "tr-worker-w1" {
		t.Fatalf("provisioned worker %+v", w)
	}
	file, ok := e.pt.StackFile("tr-worker-w1")
	if !ok || !strings.Contains(file, "cpesuite:test") || strings.Contains(file, string(testSecret)) {
		t.Fatalf("worker stack file (the secret must travel as env, not in the file):\n%s", file)
	}
	var envOK bool
	for _, s := range e.pt.Stacks() {
		for _, v := range s.Env {
			envOK = envOK || (s.Name == "tr-worker-w1" && v.Name == "CPESUITE_TESTRUNNER_SECRET" && v.Value == string(testSecret))
		}
	}
	if !envOK {
		t.Fatal("worker stack lacks the shared secret in its environment")
	}
	e.must(e.do(ad, "POST", "/api/gateway/workers", map[string]any{"name": "w1"}), 409)
	e.must(e.do(ad, "POST", "/api/gateway/workers", map[string]any{}), 201).decode(t, &w)
	if w.Name != "w2" {
		t.Fatalf("second auto name %q", w.Name)
	}

	// A new profile gets its emulator wrapper stack and its URL.
	var p struct {
		Settings    map[string]string
		Provisioned *provisioned
	}
	e.must(e.do(ad, "POST", "/api/gateway/profiles", map[string]any{"name": "lab", "settings": map[string]string{}}), 201).decode(t, &p)
	if p.Provisioned == nil || p.Provisioned.Stack != "mcp-tr-emul-lab" || p.Settings["emulator_url"] != "http://mcp-tr-emul-lab:8555" ||
		p.Settings["mcp_servers"] != "emulator=http://mcp-tr-emul-lab-tools:8558/mcp" {
		t.Fatalf("provisioned profile %+v", p)
	}
	// The stack runs the emulator and its MCP tool server; the profile's
	// acs_url reaches the tool server, and only as a plain URL.
	if f, _ := e.pt.StackFile("mcp-tr-emul-lab"); !strings.Contains(f, `command: ["run", "mcp-emulator"]`) ||
		!strings.Contains(f, `CPESUITE_MCP_EMULATOR_EMULATOR_URL: "http://mcp-tr-emul-lab:8555"`) || strings.Contains(f, "CPESUITE_MCP_EMULATOR_ACS_URL") {
		t.Fatalf("emulator stack file:\n%s", f)
	}
	e.must(e.do(ad, "POST", "/api/gateway/profiles", map[string]any{"name": "lab3", "settings": map[string]string{"acs_url": "http://acs.lab3:7557/acs"}}), 201)
	if f, _ := e.pt.StackFile("mcp-tr-emul-lab3"); !strings.Contains(f, `CPESUITE_MCP_EMULATOR_ACS_URL: "http://acs.lab3:7557/acs"`) {
		t.Fatalf("lab3 stack file:\n%s", f)
	}
	for _, bad := range []string{"http://acs\"\n  evil: x", "http://acs/${SECRET}", "ftp://acs/"} {
		e.must(e.do(ad, "POST", "/api/gateway/profiles", map[string]any{"name": "lab4", "settings": map[string]string{"acs_url": bad}}), 400)
	}
	if _, ok := e.pt.StackFile("mcp-tr-emul-lab4"); ok {
		t.Fatal("a stack was created for a refused acs_url")
	}
	// Asking again reuses the existing stack instead of failing.
	e.must(e.do(ad, "POST", "/api/gateway/profiles", map[string]any{"name": "lab", "settings": map[string]string{}, "provision": true}), 200).decode(t, &p)
	if p.Provisioned == nil || p.Provisioned.Stack != "mcp-tr-emul-lab" {
		t.Fatalf("provision again: %+v", p)
	}
	// Replacing it does not provision again.
	e.must(e.do(ad, "POST", "/api/gateway/profiles", map[string]any{"name": "lab", "settings": map[string]string{"acs_url": "http://acs:7557/acs"}}), 200).decode(t, &p)
	if p.Provisioned != nil {
		t.Fatalf("replace provisioned again: %+v", p.Provisioned)
	}
	// Upstream failure: 502 and nothing stored.
	e.pt.FailNext("POST", "/api/stacks", 500)
	e.must(e.do(ad, "POST", "/api/gateway/profiles", map[string]any{"name": "lab2", "settings": map[string]string{}}), 502)
	e.must(e.do(ad, "GET", "/api/gateway/profiles/lab2", nil), 404)
	e.pt.FailNext("POST", "/api/stacks", 500)
	e.must(e.do(ad, "POST", "/api/gateway/workers", map[string]any{"name": "w5"}), 502)
	e.must(e.do(ad, "PATCH", "/api/gateway/stands/w5", map[string]any{"enabled": false}), 404)

	// Teardown: a Portainer failure keeps the record; a retry removes both.
	e.pt.FailNext("DELETE", "/api/stacks/", 500)
	e.must(e.do(ad, "DELETE", "/api/gateway/stands/w1?teardown=true", nil), 502)
	e.must(e.do(ad, "PATCH", "/api/gateway/stands/w1", map[string]any{"enabled": true}), 200)
	var del struct {
		Teardown teardownResult
	}
	e.must(e.do(ad, "DELETE", "/api/gateway/stands/w1?teardown=true", nil), 200).decode(t, &del)
	if !del.Teardown.Removed || del.Teardown.Stack != "tr-worker-w1" {
		t.Fatalf("stand teardown %+v", del)
	}
	e.must(e.do(ad, "DELETE", "/api/gateway/profiles/lab?teardown=true", nil), 200).decode(t, &del)
	if !del.Teardown.Removed {
		t.Fatalf("profile teardown %+v", del)
	}
	// An absent stack is fine (best effort).
	e.must(e.do(ad, "POST", "/api/gateway/stands", map[string]any{"name": "bare", "base_url": "http://bare:8083"}), 201)
	e.must(e.do(ad, "DELETE", "/api/gateway/stands/bare?teardown=true", nil), 200).decode(t, &del)
	if del.Teardown.Removed || !del.Teardown.Requested {
		t.Fatalf("teardown of a stand without stack %+v", del)
	}
	for _, s := range e.pt.Stacks() {
		if s.Name == "tr-worker-w1" || s.Name == "mcp-tr-emul-lab" {
			t.Errorf("stack %s survived teardown", s.Name)
		}
	}
}

// TestNoVNCProxy proxies HTTP and WebSocket to the stand's noVNC without
// a token and without forwarding credentials.
func TestNoVNCProxy(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+" auth="+r.Header.Get("Authorization"))
		mu.Unlock()
		if r.URL.Path == "/vnc/websockify" {
			c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
			if err != nil {
				return
			}
			defer c.CloseNow()
			typ, msg, err := c.Read(r.Context())
			if err == nil {
				_ = c.Write(r.Context(), typ, append([]byte("echo:"), msg...))
			}
			return
		}
		_, _ = w.Write([]byte("<html>noVNC</html>"))
	}))
	defer up.Close()
	e := newEnv(t, envOpts{})
	e.must(e.do(e.admin, "POST", "/api/gateway/stands", map[string]any{"name": "s1", "base_url": "http://127.0.0.1:9", "novnc_url": up.URL + "/vnc"}), 201)
	e.must(e.do(e.admin, "POST", "/api/gateway/stands", map[string]any{"name": "s2", "base_url": "http://127.0.0.1:9"}), 201)
	r := e.must(e.do(e.admin, "GET", "/novnc/s1/vnc.html", nil), 200)
	if string(r.body) != "<html>noVNC</html>" {
		t.Fatalf("noVNC page %q", r.body)
	}
	e.must(e.do("", "GET", "/novnc/s1/vnc.html", nil), 200)
	e.must(e.do("", "GET", "/novnc/s2/vnc.html", nil), 404)
	e.must(e.do("", "GET", "/novnc/nope/vnc.html", nil), 404)
	mu.Lock()
	for _, s := range seen {
		if !strings.HasPrefix(s, "/vnc/vnc.html auth=") || !strings.HasSuffix(s, "auth=") {
			t.Errorf("upstream saw %q (path or a forwarded token)", s)
		}
	}
	mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.url, "http")+"/novnc/s1/websockify", nil)
	if err != nil {
		t.Fatalf("noVNC WebSocket: %v", err)
	}
	defer c.CloseNow()
	if err := c.Write(ctx, websocket.MessageBinary, []byte("RFB")); err != nil {
		t.Fatal(err)
	}
	if _, msg, err := c.Read(ctx); err != nil || string(msg) != "echo:RFB" {
		t.Fatalf("noVNC WebSocket echo %q %v", msg, err)
	}
}

// TestHealthAndRouting: /health reports each worker's reachability; a
// routed worker endpoint follows X-Stand; fanned-out reads name stands
// they could not reach.
func TestHealthAndRouting(t *testing.T) {
	e := newEnv(t, envOpts{workers: []string{"w1", "w2"}})
	e.must(e.do(e.admin, "POST", "/api/gateway/stands", map[string]any{"name": "gone", "base_url": "http://127.0.0.1:9"}), 201)
	var h struct {
		Status  string
		Workers []workerHealth
	}
	e.must(e.do("", "GET", "/health", nil), 200).decode(t, &h)
	reach := map[string]bool{}
	for _, w := range h.Workers {
		reach[w.Name] = w.Reachable
	}
	if h.Status != "degraded" || !reach["w1"] || !reach["w2"] || reach["gone"] {
		t.Fatalf("health %+v", h)
	}
	if strings.Contains(string(e.do("", "GET", "/health", nil).body), "127.0.0.1") {
		t.Error("the open /health shows stand addresses")
	}
	if r := e.must(e.do(e.admin, "GET", "/api/settings", nil, "X-Stand", "w2"), 200); r.header.Get("X-Stand") != "w2" {
		t.Errorf("X-Stand w2 answered by %q", r.header.Get("X-Stand"))
	}
	// Without X-Stand or an own stand the first enabled stand by name
	// serves: here the unreachable one, which is a 502 naming it.
	if r := e.do(e.admin, "GET", "/api/settings", nil); r.status != 502 || !strings.Contains(string(r.body), "gone") {
		t.Errorf("routed without X-Stand: %d %s", r.status, r.body)
	}
	e.must(e.do(e.admin, "GET", "/api/settings", nil, "X-Stand", "nope"), 404)
	e.must(e.do(e.admin, "GET", "/api/settings", nil, "X-Stand", "gone"), 502)
	e.must(e.do(e.admin, "PATCH", "/api/gateway/stands/w2", map[string]any{"enabled": false}), 200)
	e.must(e.do(e.admin, "GET", "/api/settings", nil, "X-Stand", "w2"), 503)
	r := e.must(e.do(e.admin, "GET", "/api/runs", nil), 200)
	if r.header.Get(UnreachableHeader) != "gone" {
		t.Errorf("%s = %q, want gone", UnreachableHeader, r.header.Get(UnreachableHeader))
	}
	// Gateway-owned paths never reach a worker.
	e.must(e.do(e.admin, "PUT", "/api/users", nil), 404, 405)
	var idx map[string]any
	e.must(e.do("", "GET", "/", nil), 200).decode(t, &idx)
	if idx["login"] != "/api/auth/login" {
		t.Errorf("index %v", idx)
	}
}
