package accounts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
)

func TestActivity(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		h := newHarness(t, db, Config{})
		ctx := context.Background()
		base := h.clock.Now().Add(time.Hour)
		// Entries an hour after the harness's own, the timestamps given
		// out of order: the list is ordered by time, not by insertion.
		for i, at := range []int{3, 1, 4, 0, 2} {
			user := "alice"
			if i%2 == 1 {
				user = "bob"
			}
			h.svc.Record(ctx, Entry{At: base.Add(time.Duration(at) * time.Second), Username: user,
				Action: "run_dispatch", Target: fmt.Sprintf("run-%d", at), Success: true})
		}
		list := func(query string) (activityPage, int) {
			w := h.do(request{method: "GET", path: "/api/activity" + query, token: h.adminToken})
			var p activityPage
			if w.Code == 200 {
				decode(t, w, &p)
			}
			return p, w.Code
		}
		targets := func(p activityPage) string {
			var s []string
			for _, e := range p.Items {
				s = append(s, e.Target)
			}
			return strings.Join(s, ",")
		}
		tests := []struct {
			query       string
			want        string
			limit, offs int
		}{
			{"?action=run_dispatch", "run-4,run-3,run-2,run-1,run-0", 200, 0},
			{"?action=run_dispatch&username=alice", "run-4,run-3,run-2", 200, 0},
			{"?username=bob", "run-1,run-0", 200, 0},
			{"?username=BOB", "", 200, 0},
			{"?action=run_dispatch&limit=2", "run-4,run-3", 2, 0},
			{"?action=run_dispatch&limit=2&offset=2", "run-2,run-1", 2, 2},
			{"?action=run_dispatch&offset=5", "", 200, 5},
			{"?action=nothing", "", 200, 0},
			{"?limit=1", "run-4", 1, 0},
			{"?action=run_dispatch&limit=&offset=", "run-4,run-3,run-2,run-1,run-0", 200, 0},
		}
		for _, tc := range tests {
			t.Run(tc.query, func(t *testing.T) {
				p, code := list(tc.query)
				if code != 200 || targets(p) != tc.want || p.Limit != tc.limit || p.Offset != tc.offs {
					t.Fatalf("%d items=%q limit=%d offset=%d; want %q %d %d", code, targets(p), p.Limit, p.Offset, tc.want, tc.limit, tc.offs)
				}
			})
		}

		t.Run("shape", func(t *testing.T) {
			w := h.do(request{method: "GET", path: "/api/activity?action=nothing", token: h.adminToken})
			if got := strings.TrimSpace(w.Body.String()); got != `{"items":[],"limit":200,"offset":0}` {
				t.Fatalf("empty page = %s", got)
			}
			w = h.do(request{method: "GET", path: "/api/activity?limit=1&username=alice", token: h.adminToken})
			var raw struct{ Items []map[string]any }
			decode(t, w, &raw)
			for _, k := range []string{"id", "at", "username", "action", "target", "detail", "client_addr", "success"} {
				if _, ok := raw.Items[0][k]; !ok {
					t.Errorf("entry lacks %q: %s", k, w.Body)
				}
			}
			if raw.Items[0]["at"] != base.Add(4*time.Second).Format(time.RFC3339Nano) {
				t.Errorf("at = %v, want UTC %s", raw.Items[0]["at"], base.Add(4*time.Second))
			}
		})

		t.Run("bad paging", func(t *testing.T) {
			for _, q := range []string{"limit=0", "limit=1001", "limit=-1", "limit=x", "limit=1.5"} {
				wantError(t, h.do(request{method: "GET", path: "/api/activity?" + q, token: h.adminToken}), 400, "INVALID_LIMIT")
			}
			for _, q := range []string{"offset=-1", "offset=x"} {
				wantError(t, h.do(request{method: "GET", path: "/api/activity?" + q, token: h.adminToken}), 400, "INVALID_OFFSET")
			}
			for _, f := range []Filter{{Limit: -1}, {Limit: MaxActivityLimit + 1}, {Offset: -1}} {
				if _, err := h.svc.Activity(ctx, f); err == nil {
					t.Errorf("Activity(%+v) accepted", f)
				}
			}
		})

		t.Run("default limit is 200", func(t *testing.T) {
			for i := range 205 {
				h.svc.Record(ctx, Entry{Username: "bulk", Action: "bulk", Target: fmt.Sprint(i)})
			}
			p, _ := list("?action=bulk")
			if len(p.Items) != DefaultActivityLimit || p.Limit != DefaultActivityLimit {
				t.Fatalf("%d items, limit %d", len(p.Items), p.Limit)
			}
			if p, _ := list("?action=bulk&limit=1000"); len(p.Items) != 205 {
				t.Fatalf("%d items with limit 1000", len(p.Items))
			}
		})
	})
}

func TestRecordCleansFields(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		svc, _, logs := openTest(t, db, Config{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // A gone client must not lose the entry.
		svc.Record(ctx, Entry{
			Username: strings.Repeat("u", 100), Action: "x\x00y", Target: strings.Repeat("é", 2000),
			Detail: "bad \xff utf8", ClientAddr: "192.0.2.1",
		})
		es, err := svc.Activity(context.Background(), Filter{})
		if err != nil || len(es) != 1 {
			t.Fatalf("Activity = %+v, %v; log %s", es, err, logs)
		}
		e := es[0]
		if len(e.Username) != 64 || e.Action != "xy" || len([]rune(e.Target)) != 1024 || e.Detail != "bad \uFFFD utf8" {
			t.Fatalf("stored %+v", e)
		}
	})
}

// TestNoSecretsStored runs every flow that handles a password or a token
// and then searches the audit table, the token table and the logs for
// them.
func TestNoSecretsStored(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		h := newHarness(t, db, Config{})
		secrets := []string{adminPass, editorPass, h.adminToken, h.editorToken}
		const created, reset, wrong = "Created-Pass-123", "Reset-Pass-45678", "Wrong-Guess-9876"
		secrets = append(secrets, created, reset, wrong)
		h.do(request{method: "POST", path: "/api/users", token: h.adminToken,
			body: map[string]string{"username": "carol", "password": created}})
		h.do(request{method: "POST", path: "/api/users", token: h.adminToken,
			body: map[string]string{"username": "dave", "password": "weakling"}})
		secrets = append(secrets, "weakling")
		h.do(request{method: "POST", path: "/api/users/carol/reset-password", token: h.adminToken,
			body: map[string]string{"password": reset}})
		for range MaxFailures + 1 {
			h.loginAs("carol", wrong, "192.0.2.9:1")
		}
		h.loginAs("ghost", wrong, "192.0.2.8:1")
		h.do(request{method: "POST", path: "/api/auth/login", body: `{"username":"carol","password":"` + wrong})
		tok := h.login("carol", reset)
		secrets = append(secrets, tok)
		h.do(request{method: "GET", path: "/api/auth/me", token: tok + "x"})
		h.do(request{method: "POST", path: "/api/auth/logout", token: tok})

		var hashes []string
		for _, s := range []string{h.adminToken, h.editorToken, tok} {
			sum := sha256.Sum256([]byte(s))
			hashes = append(hashes, hex.EncodeToString(sum[:]))
		}
		audit := dumpTable(t, db, "SELECT username, action, target, detail, client_addr FROM gw_activity")
		if !strings.Contains(audit, "login_rate_limited") || !strings.Contains(audit, "user_reset_password") {
			t.Fatalf("flows missing from the audit log:\n%s", audit)
		}
		logText := h.logs.String()
		for _, s := range append(secrets, hashes...) {
			if strings.Contains(audit, s) {
				t.Errorf("audit log contains secret %q", s)
			}
			if strings.Contains(logText, s) {
				t.Errorf("logs contain secret %q", s)
			}
		}
		tokens := dumpTable(t, db, "SELECT token_hash, username_key FROM gw_tokens")
		for _, s := range secrets {
			if strings.Contains(tokens, s) {
				t.Errorf("token table contains secret %q", s)
			}
		}
		users := dumpTable(t, db, "SELECT password_hash FROM gw_users")
		for _, s := range secrets {
			if strings.Contains(users, s) {
				t.Errorf("users table contains %q in clear", s)
			}
		}
	})
}

func dumpTable(t *testing.T, db *sqlstore.DB, query string) string {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var b strings.Builder
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			fmt.Fprintf(&b, "%s\t", v)
		}
		b.WriteString("\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestOpen(t *testing.T) {
	ctx := context.Background()
	db := sqltest.Open(t, sqlstore.SQLite)
	if _, err := Open(ctx, db, Config{TokenTTL: -time.Second}, nil); err == nil {
		t.Fatal("negative token lifetime accepted")
	}
	if _, err := Open(ctx, nil, Config{}, nil); err == nil {
		t.Fatal("nil database accepted")
	}
	svc, err := Open(ctx, db, Config{}, nil)
	if err != nil || svc.ttl != DefaultTokenTTL {
		t.Fatalf("Open = %v; ttl %v", err, svc)
	}
	// A second Open on the same database finds the schema in place.
	if _, err := Open(ctx, db, Config{}, nil); err != nil {
		t.Fatalf("second Open: %v", err)
	}
	t.Run("mysql is refused", func(t *testing.T) {
		my := sqltest.Open(t, sqlstore.MySQL)
		if _, err := Open(ctx, my, Config{}, nil); err == nil || !strings.Contains(err.Error(), "not supported") {
			t.Fatalf("Open(mysql) = %v", err)
		}
	})
}
