package accounts

import (
	"context"
	"net/http"
	"testing"

	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/testrunner/identity"
)

// TestAccessMatrix calls every route as admin, editor and anonymous. The
// rows run in order: admin's successful calls target users made for them,
// and logout comes last because it ends the tokens used above.
func TestAccessMatrix(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		h := newHarness(t, db, Config{})
		ctx := context.Background()
		for _, name := range []string{"victim-reset", "victim-delete"} {
			if _, err := h.svc.CreateUser(ctx, system, name, "Victim-Pass-1234", "", ""); err != nil {
				t.Fatal(err)
			}
		}
		type want struct{ admin, editor, anon int }
		tests := []struct {
			name         string
			method, path string
			body         any
			want         want
		}{
			{"login", "POST", "/api/auth/login", map[string]string{"username": editorName, "password": editorPass},
				want{200, 200, 200}},
			{"me", "GET", "/api/auth/me", nil, want{200, 200, 401}},
			{"list users", "GET", "/api/users", nil, want{200, 403, 401}},
			{"create user", "POST", "/api/users", map[string]string{"username": "newbie", "password": "Fresh-Pass-12345"},
				want{201, 403, 401}},
			{"reset password", "POST", "/api/users/victim-reset/reset-password", map[string]string{"password": "Reset-Pass-12345"},
				want{200, 403, 401}},
			{"delete user", "DELETE", "/api/users/victim-delete", nil, want{204, 403, 401}},
			{"activity", "GET", "/api/activity", nil, want{200, 403, 401}},
			{"logout", "POST", "/api/auth/logout", nil, want{200, 200, 200}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				for _, who := range []struct {
					role   string
					token  string
					status int
				}{
					{"anonymous", "", tc.want.anon},
					{"editor", h.editorToken, tc.want.editor},
					{"admin", h.adminToken, tc.want.admin},
				} {
					w := h.do(request{method: tc.method, path: tc.path, token: who.token, body: tc.body})
					switch {
					case w.Code != who.status:
						t.Errorf("%s: status %d, want %d; body %s", who.role, w.Code, who.status, w.Body)
					case who.status == http.StatusUnauthorized:
						wantError(t, w, who.status, "AUTH_REQUIRED")
					case who.status == http.StatusForbidden:
						wantError(t, w, who.status, "ADMIN_REQUIRED")
					}
				}
			})
		}
		// Logout ended both sessions.
		for _, tok := range []string{h.adminToken, h.editorToken} {
			wantError(t, h.do(request{method: "GET", path: "/api/auth/me", token: tok}), 401, "INVALID_TOKEN")
		}
	})
}

func TestMiddleware(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		h := newHarness(t, db, Config{})
		tests := []struct {
			name   string
			auth   string
			status int
			code   string
		}{
			{"no header", "", 401, "AUTH_REQUIRED"},
			{"basic scheme", "Basic cm9vdDpwdw==", 401, "AUTH_REQUIRED"},
			{"bearer without token", "Bearer ", 401, "AUTH_REQUIRED"},
			{"unknown token", "Bearer trg_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 401, "INVALID_TOKEN"},
			{"malformed token", "Bearer not-a-token", 401, "INVALID_TOKEN"},
			{"lower-case scheme", "bearer " + h.adminToken, 200, ""},
			{"valid", "Bearer " + h.adminToken, 200, ""},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				hdr := http.Header{}
				if tc.auth != "" {
					hdr.Set("Authorization", tc.auth)
				}
				w := h.do(request{method: "GET", path: "/api/auth/me", header: hdr})
				if tc.status != 200 {
					wantError(t, w, tc.status, tc.code)
				} else if w.Code != 200 {
					t.Fatalf("status %d: %s", w.Code, w.Body)
				}
			})
		}

		t.Run("identity in context, forged header dropped", func(t *testing.T) {
			var (
				got    identity.Identity
				ok     bool
				forged string
			)
			next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got, ok = Caller(r)
				forged = r.Header.Get(identity.Header)
			})
			hdr := http.Header{identity.Header: {"v1.forged.sig"}}
			h2 := &harness{t: t, handler: h.svc.Middleware(nil)(next)}
			h2.do(request{method: "GET", path: "/anything", token: h.editorToken, header: hdr})
			want := identity.Identity{Username: editorName, Role: identity.RoleEditor, Stand: "stand-1"}
			if !ok || got != want {
				t.Fatalf("Caller = %+v, %v; want %+v", got, ok, want)
			}
			if forged != "" {
				t.Fatalf("client identity header reached the handler: %q", forged)
			}
		})

		t.Run("RequireAdmin without middleware fails closed", func(t *testing.T) {
			r, _ := http.NewRequest("GET", "/", nil)
			wantCode(t, RequireAdmin(r), 401, "AUTH_REQUIRED")
			r = r.WithContext(identity.NewContext(r.Context(), identity.Identity{Username: "x", Role: identity.RoleEditor}))
			wantCode(t, RequireAdmin(r), 403, "ADMIN_REQUIRED")
			r = r.WithContext(identity.NewContext(r.Context(), identity.Identity{Username: "x", Role: identity.RoleAdmin}))
			if err := RequireAdmin(r); err != nil {
				t.Fatal(err)
			}
		})
	})
}
