package mcpclient

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testutil"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef")

// routes serves the client's routes behind the worker's identity check.
func routes(t *testing.T, c *Client) *httptest.Server {
	t.Helper()
	mux := httpx.NewMux()
	c.Routes(mux, identity.Guard{Secret: testSecret})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	if got := mux.Patterns(); !slices.Equal(got, []string{"GET /api/mcp-status", "GET /api/mcp-diag"}) {
		t.Fatalf("patterns %v", got)
	}
	return srv
}

// get sends a GET signed for id (unsigned when id is nil).
func get(t *testing.T, srv *httptest.Server, path string, id *identity.Identity) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if id != nil {
		identity.SignRequest(testSecret, req, *id, time.Now())
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func TestStatusAndDiag(t *testing.T) {
	emu := newToolServer(t, "emu", basicAuth("alice", "s3cret-pw"))
	deadAddr := testutil.FreeAddr(t)
	st := newSetting(pair("emulator", emu), "dead=http://bob:hunter22@"+deadAddr+"/mcp")
	c, logs := newClient(t, st)
	srv := routes(t, c)
	editor := &identity.Identity{Username: "ed", Role: identity.RoleEditor}

	// Before any use, diag knows the servers but nothing about them.
	code, body := get(t, srv, "/api/mcp-diag", editor)
	if code != http.StatusOK {
		t.Fatalf("diag: %d %s", code, body)
	}
	var d0 Diag
	mustJSON(t, body, &d0)
	if e := d0.MCPs["emulator"]; e.OK || e.Session || e.LastToolsAt != nil || e.LastErrorAt != nil || e.CheckedAt != nil {
		t.Fatalf("diag before use %+v: want nothing known", e)
	}

	code, body = get(t, srv, "/api/mcp-status", editor)
	if code != http.StatusOK {
		t.Fatalf("status: %d %s", code, body)
	}
	// The wire shape, key by key.
	var raw struct {
		MCPs      map[string]map[string]any `json:"mcps"`
		Connected *bool                     `json:"connected"`
	}
	mustJSON(t, body, &raw)
	for name, m := range raw.MCPs {
		for _, k := range []string{"ok", "url", "tools", "checked_at", "error"} {
			if _, ok := m[k]; !ok {
				t.Errorf("status of %s lacks %q: %s", name, k, body)
			}
		}
	}
	if raw.Connected == nil {
		t.Fatalf("status lacks connected: %s", body)
	}
	var s Status
	mustJSON(t, body, &s)
	good, dead := s.MCPs["emulator"], s.MCPs["dead"]
	if !good.OK || good.Tools != 5 || good.Error != "" || good.URL != "http://"+emu.addr+"/mcp" || !good.CheckedAt.Equal(fixedNow) {
		t.Errorf("emulator status %+v: want ok with 5 tools at the URL without credentials", good)
	}
	if dead.OK || dead.Tools != 0 || !strings.Contains(dead.Error, "unreachable") || dead.URL != "http://"+deadAddr+"/mcp" {
		t.Errorf("dead status %+v: want not ok with the connect error", dead)
	}
	if s.Connected {
		t.Error("connected with one server down")
	}

	code, body = get(t, srv, "/api/mcp-diag", editor)
	if code != http.StatusOK {
		t.Fatalf("diag: %d %s", code, body)
	}
	var d Diag
	mustJSON(t, body, &d)
	e := d.MCPs["emulator"]
	if !e.OK || !e.Session || e.SessionsOpened != 1 || e.ServerName != "test-emu" || e.ProtocolVersion == "" ||
		!slices.Equal(e.LastTools, []string{"echo", "fail", "info", "shot", "slow"}) || e.LastToolsAt == nil || e.CheckedAt == nil || e.LastError != "" {
		t.Errorf("emulator diag %+v", e)
	}
	x := d.MCPs["dead"]
	if x.OK || x.Session || x.LastError == "" || x.LastErrorAt == nil || len(x.LastTools) != 0 || x.LastOKAt != nil {
		t.Errorf("dead diag %+v", x)
	}

	for _, secret := range []string{"s3cret-pw", "hunter22", "alice", "bob"} {
		for what, text := range map[string]string{"status": mustGetText(t, srv, "/api/mcp-status", editor), "diag": string(body), "logs": logs.String()} {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows the credential %q: %s", what, secret, text)
			}
		}
	}

	// Every server ok: connected.
	st.set(pair("emulator", emu))
	if s := c.Status(ctxFor(t)); !s.Connected || len(s.MCPs) != 1 {
		t.Errorf("status with the dead server removed: %+v", s)
	}
}

func mustGetText(t *testing.T, srv *httptest.Server, path string, id *identity.Identity) string {
	t.Helper()
	code, b := get(t, srv, path, id)
	if code != http.StatusOK {
		t.Fatalf("%s: %d %s", path, code, b)
	}
	return string(b)
}

func mustJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("body %s: %v", b, err)
	}
}

func TestStatusWithoutServers(t *testing.T) {
	tests := []struct {
		name, setting string
		wantError     bool
	}{
		{"none configured", "", false},
		{"invalid setting", "emulator=http://alice:pw123@[::1", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newClient(t, newSetting(tc.setting))
			s := c.Status(ctxFor(t))
			if s.Connected || len(s.MCPs) != 0 || (s.Error != "") != tc.wantError {
				t.Fatalf("status %+v", s)
			}
			if strings.Contains(s.Error, "pw123") || strings.Contains(s.Error, "alice") {
				t.Fatalf("status error shows credentials: %s", s.Error)
			}
			if d := c.Diag(); len(d.MCPs) != 0 || d.Error != s.Error {
				t.Fatalf("diag %+v", d)
			}
			b, _ := json.Marshal(s)
			if !strings.Contains(string(b), `"mcps":{}`) {
				t.Fatalf("empty status must still carry an mcps object: %s", b)
			}
		})
	}
}

func TestRoutesNeedIdentity(t *testing.T) {
	c, _ := newClient(t, newSetting(""))
	srv := routes(t, c)
	forged := &identity.Identity{Username: "x", Role: "root"}
	for _, path := range []string{"/api/mcp-status", "/api/mcp-diag"} {
		for _, id := range []*identity.Identity{nil, forged} {
			code, body := get(t, srv, path, id)
			var eb struct{ Detail, Code string }
			if code != http.StatusUnauthorized || json.Unmarshal(body, &eb) != nil || eb.Code != "UNAUTHENTICATED" || eb.Detail == "" {
				t.Errorf("%s with %v: %d %s, want 401 {detail, code}", path, id, code, body)
			}
		}
		for _, role := range []string{identity.RoleAdmin, identity.RoleEditor} {
			if code, body := get(t, srv, path, &identity.Identity{Username: "u", Role: role}); code != http.StatusOK {
				t.Errorf("%s as %s: %d %s", path, role, code, body)
			}
		}
	}
}
