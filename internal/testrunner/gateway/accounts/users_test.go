package accounts

import (
	"context"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
	"cpesuite/internal/testrunner/identity"
)

func TestCreateUserValidation(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		h := newHarness(t, db, Config{})
		long := strings.Repeat("a", 65)
		tests := []struct {
			name   string
			body   any
			status int
			code   string
			detail string
		}{
			{"empty password", map[string]string{"username": "alice"}, 400, "PASSWORD_REQUIRED", ""},
			{"short password", map[string]string{"username": "alice", "password": "Sh0rt!"}, 400, "WEAK_PASSWORD", "at least 12"},
			{"two classes", map[string]string{"username": "alice", "password": "alllowercase123"}, 400, "WEAK_PASSWORD", "three"},
			{"contains username", map[string]string{"username": "alice", "password": "Xx-ALICE-12345"}, 400, "WEAK_PASSWORD", "username"},
			{"empty username", map[string]string{"password": "Fine-Pass-12345"}, 400, "INVALID_USERNAME", ""},
			{"username with slash", map[string]string{"username": "a/b", "password": "Fine-Pass-12345"}, 400, "INVALID_USERNAME", ""},
			{"username starting with dot", map[string]string{"username": ".a", "password": "Fine-Pass-12345"}, 400, "INVALID_USERNAME", ""},
			{"username too long", map[string]string{"username": long, "password": "Fine-Pass-12345"}, 400, "INVALID_USERNAME", ""},
			{"unknown role", map[string]string{"username": "alice", "password": "Fine-Pass-12345", "role": "root"}, 400, "INVALID_ROLE", ""},
			{"bad stand", map[string]string{"username": "alice", "password": "Fine-Pass-12345", "stand": "a b"}, 400, "INVALID_STAND", ""},
			{"stand too long", map[string]string{"username": "alice", "password": "Fine-Pass-12345", "stand": long}, 400, "INVALID_STAND", ""},
			{"malformed JSON", `{"username":"alice",`, 400, "INVALID", ""},
			{"duplicate of the bootstrap admin", map[string]string{"username": "ROOT", "password": "Fine-Pass-12345"}, 409, "USER_EXISTS", ""},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				w := h.do(request{method: "POST", path: "/api/users", token: h.adminToken, body: tc.body})
				b := wantError(t, w, tc.status, tc.code)
				if !strings.Contains(b["detail"].(string), tc.detail) {
					t.Fatalf("detail %q does not mention %q", b["detail"], tc.detail)
				}
			})
		}
		if users, _ := h.svc.Users(context.Background()); len(users) != 2 {
			t.Fatalf("refused creations left users behind: %+v", users)
		}

		t.Run("created with defaults, unique regardless of case", func(t *testing.T) {
			w := h.do(request{method: "POST", path: "/api/users", token: h.adminToken,
				body: map[string]string{"username": "Alice", "password": "Fine-Pass-12345"}})
			var u User
			decode(t, w, &u)
			if w.Code != 201 || u.Username != "Alice" || u.Role != "editor" || u.Stand != "" || u.CreatedAt.IsZero() {
				t.Fatalf("create: %d %s", w.Code, w.Body)
			}
			w = h.do(request{method: "POST", path: "/api/users", token: h.adminToken,
				body: map[string]string{"username": "alice", "password": "Fine-Pass-12345", "role": "admin"}})
			wantError(t, w, 409, "USER_EXISTS")
			if got := h.login("aLiCe", "Fine-Pass-12345"); got == "" {
				t.Fatal("no token")
			}
			w = h.do(request{method: "GET", path: "/api/users", token: h.adminToken})
			var users []User
			decode(t, w, &users)
			var names []string
			for _, u := range users {
				names = append(names, u.Username+"/"+u.Role)
			}
			if strings.Join(names, ",") != "Alice/editor,ed/editor,root/admin" {
				t.Fatalf("users = %v", names)
			}
			e := h.activity(ActionUserCreate)[0]
			if e.Username != adminName || e.Target != "Alice" || e.Detail != "role=editor" || !e.Success {
				t.Fatalf("create audited as %+v", e)
			}
		})

		t.Run("reset with a weak or empty password", func(t *testing.T) {
			for pass, code := range map[string]string{"": "PASSWORD_REQUIRED", "weak": "WEAK_PASSWORD", "alllowercase123": "WEAK_PASSWORD"} {
				w := h.do(request{method: "POST", path: "/api/users/ed/reset-password", token: h.adminToken,
					body: map[string]string{"password": pass}})
				wantError(t, w, 400, code)
			}
			if w := h.do(request{method: "GET", path: "/api/auth/me", token: h.editorToken}); w.Code != 200 {
				t.Fatal("a refused reset ended the user's session")
			}
		})
	})
}

func TestServiceRequiresAdminActor(t *testing.T) {
	svc, _, _ := openTest(t, sqltest.Open(t, sqlstore.SQLite), Config{})
	ctx := context.Background()
	editor := identity.Identity{Username: "e", Role: identity.RoleEditor}
	_, err := svc.CreateUser(ctx, editor, "alice", "Fine-Pass-12345", "", "")
	wantCode(t, err, 403, "ADMIN_REQUIRED")
	wantCode(t, svc.ResetPassword(ctx, editor, "alice", "Fine-Pass-12345"), 403, "ADMIN_REQUIRED")
	wantCode(t, svc.DeleteUser(ctx, editor, "alice"), 403, "ADMIN_REQUIRED")
}

func TestUnknownUsers(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		h := newHarness(t, db, Config{})
		// "bad%20name" reaches the handler as "bad name", which no account
		// can have.
		for _, name := range []string{"ghost", "GHOST", "bad%20name"} {
			w := h.do(request{method: "POST", path: "/api/users/" + name + "/reset-password", token: h.adminToken,
				body: map[string]string{"password": "Fine-Pass-12345"}})
			wantError(t, w, 404, "USER_NOT_FOUND")
			w = h.do(request{method: "DELETE", path: "/api/users/" + name, token: h.adminToken})
			wantError(t, w, 404, "USER_NOT_FOUND")
		}
		if _, err := h.svc.User(context.Background(), "ghost"); apperr.Status(err) != 404 {
			t.Fatalf("User(ghost) = %v", err)
		}
	})
}

func TestDeleteUser(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		h := newHarness(t, db, Config{})
		ctx := context.Background()

		t.Run("not yourself, in any spelling", func(t *testing.T) {
			for _, name := range []string{adminName, "ROOT"} {
				w := h.do(request{method: "DELETE", path: "/api/users/" + name, token: h.adminToken})
				wantError(t, w, 409, "CANNOT_DELETE_SELF")
			}
		})

		t.Run("not the last admin", func(t *testing.T) {
			// Only reachable with an identity whose account is gone or was
			// never stored, so through the service.
			err := h.svc.DeleteUser(ctx, system, adminName)
			wantCode(t, err, 409, "LAST_ADMIN")
		})

		t.Run("deleting ends the sessions", func(t *testing.T) {
			w := h.do(request{method: "DELETE", path: "/api/users/ED", token: h.adminToken})
			if w.Code != 204 || w.Body.Len() != 0 {
				t.Fatalf("delete: %d %s", w.Code, w.Body)
			}
			wantError(t, h.do(request{method: "GET", path: "/api/auth/me", token: h.editorToken}), 401, "INVALID_TOKEN")
			wantError(t, h.loginAs(editorName, editorPass, ""), 401, "INVALID_CREDENTIALS")
			e := h.activity(ActionUserDelete)
			if len(e) != 1 || e[0].Target != editorName || e[0].Username != adminName {
				t.Fatalf("delete audited as %+v", e)
			}
		})

		t.Run("two admins deleting each other at once leave one", func(t *testing.T) {
			if _, err := h.svc.CreateUser(ctx, system, "second", "Zweite-Pass-123", identity.RoleAdmin, ""); err != nil {
				t.Fatal(err)
			}
			root := identity.Identity{Username: adminName, Role: identity.RoleAdmin}
			second := identity.Identity{Username: "second", Role: identity.RoleAdmin}
			var (
				wg   sync.WaitGroup
				errs [2]error
			)
			wg.Go(func() { errs[0] = h.svc.DeleteUser(ctx, root, "second") })
			wg.Go(func() { errs[1] = h.svc.DeleteUser(ctx, second, adminName) })
			wg.Wait()
			ok, last := 0, 0
			for _, err := range errs {
				switch {
				case err == nil:
					ok++
				case apperr.Code(err) == "LAST_ADMIN":
					last++
				default:
					t.Fatalf("unexpected error %v", err)
				}
			}
			users, _ := h.svc.Users(ctx)
			if ok != 1 || last != 1 || len(users) != 1 || users[0].Role != identity.RoleAdmin {
				t.Fatalf("ok=%d last=%d users=%+v", ok, last, users)
			}
		})
	})
}

func TestBootstrap(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		svc, _, _ := openTest(t, db, Config{})
		ctx := context.Background()
		if _, err := svc.Bootstrap(ctx, "admin", "weak"); apperr.Code(err) != "WEAK_PASSWORD" {
			t.Fatalf("weak bootstrap password: %v", err)
		}
		if _, err := svc.Bootstrap(ctx, "admin", ""); apperr.Code(err) != "PASSWORD_REQUIRED" {
			t.Fatalf("empty bootstrap password: %v", err)
		}
		if _, err := svc.Bootstrap(ctx, "bad name", adminPass); apperr.Code(err) != "INVALID_USERNAME" {
			t.Fatalf("bad bootstrap name: %v", err)
		}
		if users, _ := svc.Users(ctx); len(users) != 0 {
			t.Fatalf("refused bootstraps created %+v", users)
		}
		created, err := svc.Bootstrap(ctx, "admin", adminPass)
		if err != nil || !created {
			t.Fatalf("first Bootstrap = %v, %v", created, err)
		}
		for _, name := range []string{"admin", "other"} {
			created, err := svc.Bootstrap(ctx, name, "Andere-Pass-123")
			if err != nil || created {
				t.Fatalf("Bootstrap(%s) on a non-empty table = %v, %v", name, created, err)
			}
		}
		users, _ := svc.Users(ctx)
		if len(users) != 1 || users[0].Username != "admin" || users[0].Role != identity.RoleAdmin {
			t.Fatalf("users = %+v", users)
		}
		e, _ := svc.Activity(ctx, Filter{Action: ActionUserCreate})
		if len(e) != 1 || e[0].Username != bootstrapActor || e[0].Target != "admin" {
			t.Fatalf("bootstrap audited as %+v", e)
		}
		// The first password is still the one that works.
		if _, _, _, err := svc.Login(ctx, "admin", adminPass, netip.Addr{}); err != nil {
			t.Fatalf("login with the bootstrap password: %v", err)
		}
	})

	t.Run("an editor alone also counts as accounts present", func(t *testing.T) {
		svc, _, _ := openTest(t, sqltest.Open(t, sqlstore.SQLite), Config{})
		ctx := context.Background()
		if _, err := svc.CreateUser(ctx, system, "someone", "Jemand-Pass-123", "", ""); err != nil {
			t.Fatal(err)
		}
		if created, err := svc.Bootstrap(ctx, "admin", adminPass); err != nil || created {
			t.Fatalf("Bootstrap = %v, %v", created, err)
		}
	})
}
