package configsvc

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/configsvc/jwtauth"
	"cpesuite/internal/platform/passwd"
	"cpesuite/internal/testutil"
)

// TestTokensRejected: every token that is not a current, authentic,
// unrevoked access token is refused with 401 and its own code.
func TestTokensRejected(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	admin := h.adminToken()
	pair := h.login("admin", adminPassword)
	refresh := pair["refreshToken"].(string)

	past := *h.s.jwt
	past.Now = func() time.Time { return time.Now().Add(-48 * time.Hour) }
	expired, _, err := past.Issue(jwtauth.Access, jwtauth.Claims{UserID: 1, Role: "ADMIN"})
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(admin, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	forged := strings.Replace(string(payload), `"role":"ADMIN"`, `"role":"ADMIN" `, 1)
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(forged)) + "." + parts[2]
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + "."
	other, _ := jwtauth.NewIssuer([]byte(strings.Repeat("k", 32)), time.Hour, 2*time.Hour)
	foreign, _, _ := other.Issue(jwtauth.Access, jwtauth.Claims{UserID: 1, Role: "ADMIN"})

	for _, tc := range []struct {
		name, header, code string
	}{
		{"missing", "", "TOKEN_MISSING"},
		{"not bearer", "Basic YWRtaW46eA==", "TOKEN_MISSING"},
		{"garbage", "Bearer not.a.jwt", "TOKEN_INVALID"},
		{"expired", "Bearer " + expired, "TOKEN_EXPIRED"},
		{"tampered", "Bearer " + tampered, "TOKEN_INVALID"},
		{"alg none", "Bearer " + none, "TOKEN_INVALID"},
		{"other key", "Bearer " + foreign, "TOKEN_INVALID"},
		{"refresh as access", "Bearer " + refresh, "TOKEN_INVALID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r response
			if tc.header == "" {
				r = h.do("GET", "/api/me", "", nil)
			} else {
				r = h.do("GET", "/api/me", "", nil, "Authorization", tc.header)
			}
			h.want(r, 401, tc.code)
			if r.header.Get("WWW-Authenticate") == "" {
				t.Fatal("401 without WWW-Authenticate")
			}
		})
	}
	h.want(h.do("GET", "/api/me", admin, nil), 200, "")
}

// TestLoginRefreshLogout: login opens a session with a refresh cookie;
// refresh rotates; a reused refresh token ends the family; logout revokes
// the access token in the grid.
func TestLoginRefreshLogout(t *testing.T) {
	h := newHarness(t, harnessOpts{env: map[string]string{"COOKIE_DOMAIN": "example.com"}})
	h.adminToken()
	h.want(h.do("POST", "/auth/login", "", loginBody{Username: "admin", Password: "wrong"}), 401, "BAD_CREDENTIALS")
	h.want(h.do("POST", "/auth/login", "", loginBody{Username: "nobody", Password: "wrong"}), 401, "BAD_CREDENTIALS")
	h.want(h.do("POST", "/auth/login", "", loginBody{Username: "admin"}), 400, "CREDENTIALS_REQUIRED")

	r := h.want(h.do("POST", "/auth/login", "", loginBody{Username: "admin", Password: adminPassword}), 200, "")
	pair := r.json(t)
	if pair["tokenType"] != "Bearer" || pair["expiresIn"] != 86400.0 || pair["refreshExpiresIn"] != 604800.0 {
		t.Fatalf("login = %v", pair)
	}
	cookie := r.header.Get("Set-Cookie")
	for _, want := range []string{"refresh_token=", "Path=/configs-service/auth", "Domain=example.com", "HttpOnly", "Secure", "SameSite=Strict"} {
		if !strings.Contains(cookie, want) {
			t.Fatalf("Set-Cookie %q lacks %q", cookie, want)
		}
	}
	first := pair["refreshToken"].(string)

	second := h.want(h.do("POST", "/auth/refresh", "", refreshBody{RefreshToken: first}), 200, "").json(t)
	if second["refreshToken"] == first || second["accessToken"] == pair["accessToken"] {
		t.Fatal("refresh did not rotate the tokens")
	}
	// The cookie works as well as the body.
	third := h.want(h.do("POST", "/auth/refresh", "", nil, "Cookie", "refresh_token="+second["refreshToken"].(string)), 200, "").json(t)
	// Reusing the first token ends the whole family, including the newest.
	h.want(h.do("POST", "/auth/refresh", "", refreshBody{RefreshToken: first}), 401, "REFRESH_TOKEN_REUSED")
	h.want(h.do("POST", "/auth/refresh", "", refreshBody{RefreshToken: third["refreshToken"].(string)}), 401, "REFRESH_TOKEN_INVALID")
	h.want(h.do("POST", "/auth/refresh", "", refreshBody{RefreshToken: third["accessToken"].(string)}), 401, "REFRESH_TOKEN_INVALID")
	h.want(h.do("POST", "/auth/refresh", "", nil), 400, "REFRESH_TOKEN_REQUIRED")

	// Logout: the access token is revoked in the grid for its lifetime.
	s := h.login("admin", adminPassword)
	access := s["accessToken"].(string)
	h.want(h.do("POST", "/auth/logout", access, nil), 204, "")
	h.want(h.do("GET", "/api/me", access, nil), 401, "TOKEN_REVOKED")
	h.want(h.do("POST", "/auth/refresh", "", refreshBody{RefreshToken: s["refreshToken"].(string)}), 401, "REFRESH_TOKEN_INVALID")
	c, err := h.s.jwt.Parse(access, jwtauth.Access)
	if err != nil {
		t.Fatal(err)
	}
	rev, _ := h.s.link.maps()
	if _, ok, err := rev.Get(context.Background(), c.ID); err != nil || !ok {
		t.Fatalf("revoked token not in the grid map: %v %v", ok, err)
	}
	h.want(h.do("POST", "/auth/logout", "", nil), 401, "TOKEN_MISSING")
}

// TestGridOutage stops the grid server under the service: the aggregate
// health turns DOWN and token-bearing requests are refused, while
// liveness, readiness and public endpoints stay up. After a restart with
// an empty store the client reconnects and republishes the snapshots,
// revocations included.
func TestGridOutage(t *testing.T) {
	h := newHarness(t, harnessOpts{tcpGrid: true})
	admin := h.adminToken()
	h.want(h.do("PUT", "/api/admin/product-class-groups/qoe-excluded", admin, GroupInput{ProductClasses: []string{"HG8245", "F660"}}), 201, "")
	revoked := h.login("admin", adminPassword)["accessToken"].(string)
	h.want(h.do("POST", "/auth/logout", revoked, nil), 204, "")
	health := h.want(h.do("GET", "/actuator/health", "", nil), 200, "").json(t)
	if health["status"] != "UP" {
		t.Fatalf("health before the outage = %v", health)
	}
	published := h.s.link.republishes.Load()

	h.stopGrid()
	testutil.Eventually(t, testutil.MinDeadline, "health DOWN after the grid stopped", func() bool {
		return h.do("GET", "/actuator/health", "", nil).status == http.StatusServiceUnavailable
	})
	body := h.do("GET", "/actuator/health", "", nil).json(t)
	warm := body["components"].(map[string]any)["cacheWarmup"].(map[string]any)
	d := warm["details"].(map[string]any)
	if body["status"] != "DOWN" || warm["status"] != "DOWN" || d["hazelcastConnected"] != false || d["hazelcastRunning"] != true {
		t.Fatalf("health during the outage = %v", body)
	}
	for _, p := range []string{"/actuator/health/liveness", "/actuator/health/readiness", "/environment/snapshot", "/actuator/info"} {
		h.want(h.do("GET", p, "", nil), 200, "")
	}
	h.want(h.do("GET", "/api/me", admin, nil), 503, "GRID_UNAVAILABLE")

	h.gridDir = t.TempDir() // the new server has lost everything
	h.startGrid()
	testutil.Eventually(t, testutil.MinDeadline, "reconnect, republish and health UP", func() bool {
		return h.s.link.republishes.Load() > published && h.do("GET", "/actuator/health", "", nil).status == 200
	})
	h.want(h.do("GET", "/api/me", admin, nil), 200, "")
	h.want(h.do("GET", "/api/me", revoked, nil), 401, "TOKEN_REVOKED")
	groups := h.want(h.do("GET", "/api/product-class-groups", admin, nil), 200, "")
	if !strings.Contains(string(groups.body), "HG8245") {
		t.Fatalf("groups after republish = %s", groups.body)
	}
	if !strings.Contains(h.logs.String(), "republishing cache snapshots") {
		t.Fatal("reconnect not logged")
	}
}

// TestDummyHashIsReal: the hash verified for unknown users must be a valid
// hash with the real parameters, or those logins would answer faster.
func TestDummyHashIsReal(t *testing.T) {
	if ok, err := passwd.Verify(dummyHash, "not-a-real-password"); err != nil || !ok {
		t.Fatalf("dummyHash does not verify: %v %v", ok, err)
	}
}
