package accounts

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/platform/sqlstore"
)

func TestLogin(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		h := newHarness(t, db, Config{TokenTTL: time.Hour})

		t.Run("success", func(t *testing.T) {
			w := h.loginAs("ED", editorPass, "192.0.2.10:4000") // case-insensitive name
			if w.Code != http.StatusOK {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			if w.Header().Get("Cache-Control") != "no-store" {
				t.Errorf("login answer may be cached: %v", w.Header())
			}
			var resp loginResponse
			decode(t, w, &resp)
			want := sessionUser{Username: editorName, Role: "editor", Stand: "stand-1"}
			if resp.User != want || resp.TokenType != "Bearer" || !wellFormed(resp.Token) ||
				!resp.ExpiresAt.Equal(h.clock.Now().Add(time.Hour)) {
				t.Fatalf("login answer %+v", resp)
			}
			var raw map[string]any
			decode(t, w, &raw)
			for _, k := range []string{"token", "token_type", "expires_at", "user"} {
				if _, ok := raw[k]; !ok {
					t.Errorf("login answer lacks %q: %s", k, w.Body)
				}
			}
			last := h.activity(ActionLogin)[0]
			if last.Username != editorName || !last.Success || last.ClientAddr != "192.0.2.10" {
				t.Fatalf("audit %+v", last)
			}
		})

		t.Run("failures", func(t *testing.T) {
			tests := []struct {
				name, user, pass string
				body             any
				status           int
				code             string
			}{
				{"wrong password", editorName, "Wrong-Pass-1234", nil, 401, "INVALID_CREDENTIALS"},
				{"unknown user", "nobody", editorPass, nil, 401, "INVALID_CREDENTIALS"},
				{"impossible name", "../etc", editorPass, nil, 401, "INVALID_CREDENTIALS"},
				{"empty password", editorName, "", nil, 400, "CREDENTIALS_REQUIRED"},
				{"empty username", "", editorPass, nil, 400, "CREDENTIALS_REQUIRED"},
				{"malformed JSON", "", "", `{"username":`, 400, "INVALID"},
				{"wrong type", "", "", `{"username":1}`, 400, "INVALID"},
			}
			msgs := map[string]bool{}
			for i, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					body := tc.body
					if body == nil {
						body = map[string]string{"username": tc.user, "password": tc.pass}
					}
					// A fresh address per case keeps the limit out of the way.
					w := h.do(request{method: "POST", path: "/api/auth/login", body: body,
						remote: fmt.Sprintf("198.51.100.%d:1", i+1)})
					b := wantError(t, w, tc.status, tc.code)
					if tc.status == 401 {
						msgs[b["detail"].(string)] = true
					}
				})
			}
			if len(msgs) != 1 {
				t.Fatalf("wrong user and wrong password must read the same: %v", msgs)
			}
			failed := h.activity(ActionLoginFailed)
			if len(failed) != 3 || failed[0].Username != "../etc" || failed[0].Success {
				t.Fatalf("failed logins audited as %+v", failed)
			}
		})
	})
}

func TestSessions(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		h := newHarness(t, db, Config{TokenTTL: time.Hour})
		ctx := context.Background()
		me := func(token string) *http.Response {
			return h.do(request{method: "GET", path: "/api/auth/me", token: token}).Result()
		}

		t.Run("me", func(t *testing.T) {
			w := h.do(request{method: "GET", path: "/api/auth/me", token: h.editorToken})
			var got map[string]any
			decode(t, w, &got)
			u, _ := h.svc.User(ctx, editorName)
			if got["username"] != editorName || got["role"] != "editor" || got["stand"] != "stand-1" ||
				got["created_at"] != u.CreatedAt.Format(time.RFC3339Nano) ||
				got["token_expires_at"] != h.clock.Now().Add(time.Hour).Format(time.RFC3339Nano) {
				t.Fatalf("me = %s", w.Body)
			}
		})

		t.Run("logout ends the token, twice is fine", func(t *testing.T) {
			tok := h.login(editorName, editorPass)
			for i := range 2 {
				w := h.do(request{method: "POST", path: "/api/auth/logout", token: tok})
				if w.Code != 200 || strings.TrimSpace(w.Body.String()) != `{"logged_out":true}` {
					t.Fatalf("logout %d: %d %s", i, w.Code, w.Body)
				}
			}
			if me(tok).StatusCode != 401 {
				t.Fatal("token still works after logout")
			}
			if got := h.activity(ActionLogout); len(got) != 1 || got[0].Username != editorName {
				t.Fatalf("logout audited as %+v", got)
			}
			if err := h.svc.Logout(ctx, "garbage"); err != nil {
				t.Fatalf("Logout(garbage) = %v", err)
			}
		})

		t.Run("expired tokens are refused and purged", func(t *testing.T) {
			unused := h.login(editorName, editorPass)
			h.clock.Add(30 * time.Minute)
			fresh := h.login(adminName, adminPass) // expires 30 min after the others
			h.clock.Add(30 * time.Minute)          // the others expire now
			if me(h.editorToken).StatusCode != 401 {
				t.Fatal("expired token accepted")
			}
			if _, err := h.svc.Authenticate(ctx, h.adminToken); err == nil {
				t.Fatal("Authenticate accepted an expired token")
			}
			if me(fresh).StatusCode != 200 {
				t.Fatal("live token refused")
			}
			// The two presented tokens were deleted on the spot; the unused
			// one waits for the purge.
			if n := h.tokenCount(); n != 2 {
				t.Fatalf("%d tokens stored, want the fresh and the unused one", n)
			}
			n, err := h.svc.PurgeExpired(ctx)
			if err != nil || n != 1 || h.tokenCount() != 1 {
				t.Fatalf("PurgeExpired = %d, %v; %d tokens left", n, err, h.tokenCount())
			}
			if _, err := h.svc.Authenticate(ctx, unused); err == nil {
				t.Fatal("purged token accepted")
			}
		})
	})
}

func TestPasswordResetEndsSessions(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		h := newHarness(t, db, Config{})
		second := h.login(editorName, editorPass)
		const newPass = "Brand-New-Pass-99"
		w := h.do(request{method: "POST", path: "/api/users/ED/reset-password", token: h.adminToken,
			body: map[string]string{"password": newPass}})
		if w.Code != 200 || strings.TrimSpace(w.Body.String()) != `{"password_reset":true,"username":"ed"}` {
			t.Fatalf("reset: %d %s", w.Code, w.Body)
		}
		for _, tok := range []string{h.editorToken, second} {
			wantError(t, h.do(request{method: "GET", path: "/api/auth/me", token: tok}), 401, "INVALID_TOKEN")
		}
		wantError(t, h.loginAs(editorName, editorPass, ""), 401, "INVALID_CREDENTIALS")
		h.login(editorName, newPass)
		// The admin's own session is untouched.
		if w := h.do(request{method: "GET", path: "/api/auth/me", token: h.adminToken}); w.Code != 200 {
			t.Fatalf("admin session ended too: %d", w.Code)
		}
		e := h.activity(ActionUserResetPassword)
		if len(e) != 1 || e[0].Username != adminName || e[0].Target != editorName || e[0].Detail != "sessions ended: 2" {
			t.Fatalf("reset audited as %+v", e)
		}
	})
}
