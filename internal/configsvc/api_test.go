package configsvc

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestBadInput: client mistakes get 4xx with a code and a message, never
// a 500 or a silent success.
func TestBadInput(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	admin := h.adminToken()
	for _, tc := range []struct {
		name, method, path, body string
		ctype                    string
		status                   int
		code                     string
	}{
		{"malformed JSON", "POST", "/api/admin/users", `{"username":`, "", 400, "INVALID"},
		{"unknown field", "POST", "/api/admin/users", `{"username":"abc","admin":true}`, "", 400, "INVALID"},
		{"wrong type", "POST", "/api/admin/users", `{"username":5}`, "", 400, "INVALID"},
		{"trailing data", "POST", "/api/admin/users", `{"username":"abc"}{}`, "", 400, "INVALID"},
		{"empty body", "POST", "/api/admin/users", ``, "", 400, "INVALID"},
		{"not JSON", "POST", "/api/admin/users", `username=abc`, "application/x-www-form-urlencoded", 415, "UNSUPPORTED_MEDIA"},
		{"short username", "POST", "/api/admin/users", `{"username":"ab"}`, "", 400, "INVALID_USERNAME"},
		{"username with slash", "POST", "/api/admin/users", `{"username":"../etc"}`, "", 400, "INVALID_USERNAME"},
		{"username with quote", "POST", "/api/admin/users", `{"username":"a' OR '1'='1"}`, "", 400, "INVALID_USERNAME"},
		{"bad email", "POST", "/api/admin/users", `{"username":"abc","email":"Bob <b@x.org>"}`, "", 400, "INVALID_EMAIL"},
		{"bad locale", "POST", "/api/admin/users", `{"username":"abc","locale":"../../en"}`, "", 400, "INVALID_LOCALE"},
		{"bad role", "POST", "/api/admin/users", `{"username":"abc","role":"ROOT"}`, "", 400, "INVALID_ROLE"},
		{"oversized body", "POST", "/api/admin/users", `{"username":"` + strings.Repeat("a", maxBody) + `"}`, "", 413, "TOO_LARGE"},
		{"bad page", "GET", "/api/admin/users?page=-1", "", "", 400, "INVALID_PAGE"},
		{"bad size", "GET", "/api/admin/audit-events?size=100000", "", "", 400, "INVALID_PAGE"},
		{"bad time", "GET", "/api/admin/audit-events?from=yesterday", "", "", 400, "INVALID_TIME"},
		{"unknown user", "GET", "/api/admin/users/424242", "", "", 404, "USER_NOT_FOUND"},
		{"bad group name", "PUT", "/api/admin/product-class-groups/a..b", `{"productClasses":["a"]}`, "", 400, "INVALID_GROUP_NAME"},
		{"empty group", "PUT", "/api/admin/product-class-groups/g1", `{"productClasses":[]}`, "", 400, "INVALID_GROUP"},
		{"unknown group", "DELETE", "/api/admin/product-class-groups/nope", "", "", 404, "GROUP_NOT_FOUND"},
		{"unknown metric", "GET", "/actuator/metrics/nope", "", "", 404, "METRIC_NOT_FOUND"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.body != "" {
				body = tc.body
			}
			hdr := []string{}
			if tc.ctype != "" {
				hdr = append(hdr, "Content-Type", tc.ctype)
			}
			r := h.want(h.do(tc.method, tc.path, admin, body, hdr...), tc.status, tc.code)
			m := r.json(t)
			if m["message"] == "" || m["path"] == "" || m["timestamp"] == "" || m["status"] != float64(tc.status) {
				t.Fatalf("error body = %s", r.body)
			}
		})
	}
}

// TestActuatorAndSnapshot: the public endpoints answer without a token.
func TestActuatorAndSnapshot(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.adminToken()
	health := h.want(h.do("GET", "/actuator/health", "", nil), 200, "").json(t)
	comps := health["components"].(map[string]any)
	for _, c := range []string{"db", "grid", "cacheWarmup", "livenessState", "readinessState"} {
		if comps[c].(map[string]any)["status"] != "UP" {
			t.Fatalf("component %s = %v", c, comps[c])
		}
	}
	d := comps["cacheWarmup"].(map[string]any)["details"].(map[string]any)
	if d["hazelcastConnected"] != true || d["hazelcastRunning"] != true || d["warmupComplete"] != true {
		t.Fatalf("cacheWarmup details = %v", d)
	}
	for _, g := range []string{"liveness", "readiness"} {
		r := h.want(h.do("GET", "/actuator/health/"+g, "", nil), 200, "").json(t)
		if _, hasGrid := r["components"].(map[string]any)["grid"]; hasGrid || r["status"] != "UP" {
			t.Fatalf("%s = %v: must hold only the framework state", g, r)
		}
	}
	info := h.want(h.do("GET", "/actuator/info", "", nil), 200, "").json(t)
	if info["app"].(map[string]any)["name"] != "configs-service" {
		t.Fatalf("info = %v", info)
	}
	names := h.want(h.do("GET", "/actuator/metrics", "", nil), 200, "")
	if !strings.Contains(string(names.body), "configs_logins_total") {
		t.Fatalf("metrics names = %s", names.body)
	}
	m := h.want(h.do("GET", "/actuator/metrics/configs_token_checks_total", "", nil), 200, "").json(t)
	if len(m["measurements"].([]any)) == 0 {
		t.Fatalf("metric = %v", m)
	}
	prom := h.want(h.do("GET", "/actuator/prometheus", "", nil), 200, "")
	if !strings.Contains(string(prom.body), "configs_grid_snapshots_published_total 1") {
		t.Fatalf("prometheus output lacks the publication counter:\n%s", prom.body)
	}
	snap := h.want(h.do("GET", "/environment/snapshot", "", nil), 200, "").json(t)
	if len(snap) != 3 || snap["mailAvailable"] != false {
		t.Fatalf("snapshot = %v", snap)
	}
	h.want(h.do("GET", "/v3/api-docs", "", nil), 200, "")
}

// TestCORS: allowed origins get the CORS headers; the comparison is
// scheme sensitive and other origins are refused.
func TestCORS(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	ok := h.want(h.do("GET", "/environment/snapshot", "", nil, "Origin", "https://portal.example.com"), 200, "")
	if ok.header.Get("Access-Control-Allow-Origin") != "https://portal.example.com" || ok.header.Get("Access-Control-Allow-Credentials") != "true" {
		t.Fatalf("allowed origin headers = %v", ok.header)
	}
	h.want(h.do("GET", "/environment/snapshot", "", nil, "Origin", "http://portal.example.com"), 403, "CORS_ORIGIN_REJECTED")
	h.want(h.do("GET", "/environment/snapshot", "", nil, "Origin", "https://evil.example.com"), 403, "CORS_ORIGIN_REJECTED")
	pre := h.want(h.do("OPTIONS", "/api/admin/users", "", nil, "Origin", "http://localhost:9002", "Access-Control-Request-Method", "POST"), 204, "")
	if !strings.Contains(pre.header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("preflight headers = %v", pre.header)
	}
	h.want(h.do("OPTIONS", "/api/admin/users", "", nil, "Origin", "https://localhost:9002", "Access-Control-Request-Method", "POST"), 403, "CORS_ORIGIN_REJECTED")
	// No Origin: not a CORS request.
	h.want(h.do("GET", "/environment/snapshot", "", nil), 200, "")
}

// TestProductClassGroups: changes go to the database and the grid map;
// the read endpoint serves the grid copy through the 90 s near cache.
func TestProductClassGroups(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	admin := h.adminToken()
	g := h.want(h.do("PUT", "/api/admin/product-class-groups/qoe.excluded", admin, GroupInput{Description: "no QoE", ProductClasses: []string{"F660", "HG8245", "F660", " AX3000 "}}), 201, "").json(t)
	if got := g["productClasses"].([]any); len(got) != 3 || got[0] != "AX3000" {
		t.Fatalf("stored classes = %v, want sorted, trimmed, de-duplicated", got)
	}
	h.want(h.do("PUT", "/api/admin/product-class-groups/qoe.excluded", admin, GroupInput{ProductClasses: []string{"F660"}}), 200, "")

	_, m := h.s.link.maps()
	v, ok, err := m.Get(context.Background(), "qoe.excluded")
	if err != nil || !ok || !strings.Contains(string(v), `"F660"`) || strings.Contains(string(v), "HG8245") {
		t.Fatalf("grid copy = %s %v %v", v, ok, err)
	}
	clock := time.Now()
	h.s.link.now = func() time.Time { return clock }
	read := func() string {
		return string(h.want(h.do("GET", "/api/product-class-groups", admin, nil), 200, "").body)
	}
	if !strings.Contains(read(), "F660") {
		t.Fatal("cached read misses the group")
	}
	// A change made by another instance reaches this one only after the
	// near cache's TTL.
	if err := m.Put(context.Background(), "other", []byte(`{"name":"other","productClasses":["X1"]}`), 0); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(read(), "X1") {
		t.Fatal("near cache served a fresh read before its TTL")
	}
	clock = clock.Add(nearCacheTTL)
	if !strings.Contains(read(), "X1") {
		t.Fatal("near cache not refreshed after 90 s")
	}
	h.want(h.do("DELETE", "/api/admin/product-class-groups/qoe.excluded", admin, nil), 204, "")
	if _, ok, _ := m.Get(context.Background(), "qoe.excluded"); ok {
		t.Fatal("deleted group still in the grid")
	}
	user, _ := h.createUser(admin, UserInput{Username: "reader"})
	_ = user
	audit := h.want(h.do("GET", "/api/admin/audit-events?action=GROUP_PUT", admin, nil), 200, "").json(t)
	if audit["totalElements"] != 2.0 {
		t.Fatalf("GROUP_PUT events = %v", audit["totalElements"])
	}
}
