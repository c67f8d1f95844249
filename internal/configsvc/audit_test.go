package configsvc

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestAuditRedaction: the 18 built-in names and CFG_AUDIT_REDACTION_FIELDS
// are redacted at any depth, case-insensitively; other fields are kept.
func TestAuditRedaction(t *testing.T) {
	if len(builtinRedacted) != 18 {
		t.Fatalf("%d built-in redacted names, the spec says 18", len(builtinRedacted))
	}
	a := newAuditor(nil, []string{"pin", " serialKey "}, nil)
	in := map[string]any{
		"username": "bob", "Password": "p1", "NEWPASSWORD": "p2", "token": "t", "otp": "123456",
		"nested":    map[string]any{"clientSecret": "s", "keep": 1, "list": []any{map[string]any{"apiKey": "k", "pin": "0000"}}},
		"serialkey": "X", "Authorization": "Bearer x",
	}
	out := a.redactMap(in)
	for _, k := range []string{"Password", "NEWPASSWORD", "token", "otp", "serialkey", "Authorization"} {
		if out[k] != redactedValue {
			t.Errorf("%s = %v, want redacted", k, out[k])
		}
	}
	n := out["nested"].(map[string]any)
	l := n["list"].([]any)[0].(map[string]any)
	if n["clientSecret"] != redactedValue || n["keep"] != 1 || l["apiKey"] != redactedValue || l["pin"] != redactedValue || out["username"] != "bob" {
		t.Fatalf("redacted = %v", out)
	}
	if in["Password"] != "p1" {
		t.Fatal("redaction changed the caller's map")
	}
}

// TestAuditRetention: events older than the retention period go, newer
// stay; 0 keeps everything; the audit endpoint pages newest first.
func TestAuditRetention(t *testing.T) {
	h := newHarness(t, harnessOpts{env: map[string]string{"AUDIT_RETENTION_DAYS": "5", "CFG_AUDIT_REDACTION_FIELDS": "pin"}})
	admin := h.adminToken()
	ctx := context.Background()
	now := time.Now()
	for _, age := range []time.Duration{10 * 24 * time.Hour, 6 * 24 * time.Hour, 4 * 24 * time.Hour, time.Hour} {
		h.s.audit.now = func() time.Time { return now.Add(-age) }
		h.s.audit.record(ctx, Principal{Username: "tester"}, "TEST_EVENT", "x", "SUCCESS", map[string]any{"pin": "1234", "age": age.String()})
	}
	h.s.audit.now = time.Now
	page := h.want(h.do("GET", "/api/admin/audit-events?action=TEST_EVENT&size=3", admin, nil), 200, "").json(t)
	if page["totalElements"] != 4.0 || page["totalPages"] != 2.0 || len(page["content"].([]any)) != 3 {
		t.Fatalf("page = %v", page)
	}
	first := page["content"].([]any)[0].(map[string]any)
	if first["details"].(map[string]any)["age"] != "1h0m0s" || first["details"].(map[string]any)["pin"] != redactedValue || first["actor"] != "tester" {
		t.Fatalf("newest event = %v", first)
	}
	n, err := h.s.CleanupAudit(ctx)
	if err != nil || n < 2 {
		t.Fatalf("cleanup deleted %d: %v", n, err)
	}
	left := h.want(h.do("GET", "/api/admin/audit-events?action=TEST_EVENT", admin, nil), 200, "").json(t)
	if left["totalElements"] != 2.0 {
		t.Fatalf("after cleanup = %v", left)
	}
	from := h.want(h.do("GET", "/api/admin/audit-events?action=TEST_EVENT&from="+now.Add(-2*time.Hour).UTC().Format(time.RFC3339), admin, nil), 200, "").json(t)
	if from["totalElements"] != 1.0 {
		t.Fatalf("from filter = %v", from)
	}
	h.s.retentionDays = 0
	if n, err := h.s.CleanupAudit(ctx); err != nil || n != 0 {
		t.Fatalf("retention 0 deleted %d: %v", n, err)
	}
	h.want(h.do("GET", "/api/admin/audit-events", h.userToken(admin), nil), 403, "FORBIDDEN")
}

func (h *harness) userToken(admin string) string {
	h.t.Helper()
	_, res := h.createUser(admin, UserInput{Username: "plain-user"})
	return h.rotate("plain-user", res["temporaryPassword"].(string))
}

// TestNextCleanup: daily at 03:00 in TZ, including across DST changes.
func TestNextCleanup(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		now  string
		loc  *time.Location
		want string
	}{
		{"2026-11-21T02:59:59Z", time.UTC, "2026-11-21T03:00:00Z"},
		{"2026-11-21T03:00:00Z", time.UTC, "2026-11-22T03:00:00Z"},
		{"2026-11-21T10:00:00Z", time.UTC, "2026-11-22T03:00:00Z"},
		{"2026-11-21T01:30:00Z", berlin, "2026-11-21T02:00:00Z"},      // 03:00 CET
		{"2026-03-28T12:00:00Z", berlin, "2026-03-29T01:00:00Z"},      // spring forward: 03:00 CEST
		{"2026-10-24T12:00:00Z", berlin, "2026-10-25T02:00:00Z"},      // fall back: 03:00 CET
		{"2026-12-31T23:30:00-10:00", berlin, "2027-01-02T02:00:00Z"}, // already Jan 1 10:30 in Berlin
	} {
		now, _ := time.Parse(time.RFC3339, tc.now)
		got := nextCleanup(now, tc.loc)
		if want, _ := time.Parse(time.RFC3339, tc.want); !got.Equal(want) {
			t.Errorf("nextCleanup(%s, %s) = %s, want %s", tc.now, tc.loc, got.UTC().Format(time.RFC3339), tc.want)
		}
		if got.In(tc.loc).Hour() != 3 || !strings.HasSuffix(got.In(tc.loc).Format("15:04"), "03:00") {
			t.Errorf("nextCleanup is not 03:00 local: %s", got.In(tc.loc))
		}
	}
}
