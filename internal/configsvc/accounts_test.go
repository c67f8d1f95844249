package configsvc

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/platform/sqlstore"
)

// TestAccountLifecycleOnEveryDatabase runs the account flows of the spec
// on SQLite, PostgreSQL and MariaDB, offline (no mail configured): the
// bootstrap administrator rotates its password, creates a user whose
// temporary password is returned, resets it, and deletes the account
// without a one-time password.
func TestAccountLifecycleOnEveryDatabase(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqlstore.DB) {
		h := newHarness(t, harnessOpts{db: db})

		// The bootstrap administrator must rotate its password first.
		h.want(h.do("POST", "/auth/login", "", loginBody{Username: "admin", Password: bootstrapPassword}), 403, "PASSWORD_CHANGE_REQUIRED")
		admin := h.adminToken()

		id, res := h.createUser(admin, UserInput{Username: "Operator.One", Email: "op1@example.com", Locale: "ru_RU"})
		if res["passwordDelivery"] != DeliveryReturned || res["temporaryPassword"] == nil {
			t.Fatalf("offline creation = %v, want RETURNED with the password", res)
		}
		temp := res["temporaryPassword"].(string)
		h.want(h.do("POST", "/auth/login", "", loginBody{Username: "operator.one", Password: temp}), 403, "PASSWORD_CHANGE_REQUIRED")
		h.want(h.do("POST", "/auth/first-login", "", FirstLoginInput{Username: "operator.one", CurrentPassword: temp, NewPassword: "short"}), 400, "PASSWORD_POLICY")
		userTok := h.rotate("operator.one", temp)
		me := h.want(h.do("GET", "/api/me", userTok, nil), 200, "").json(t)
		if me["username"] != "Operator.One" || me["role"] != "USER" || me["locale"] != "ru-RU" || me["mustChangePassword"] != false {
			t.Fatalf("me = %v", me)
		}
		// Usernames are unique without regard to case.
		h.want(h.do("POST", "/api/admin/users", admin, UserInput{Username: "OPERATOR.ONE"}), 409, "USERNAME_TAKEN")
		// A USER may not administer.
		h.want(h.do("POST", "/api/admin/users", userTok, UserInput{Username: "x-user"}), 403, "FORBIDDEN")

		// Reset: new temporary password returned, old sessions end.
		reset := h.want(h.do("POST", fmt.Sprintf("/api/admin/users/%d/reset-password", id), admin, nil), 200, "").json(t)
		if reset["passwordDelivery"] != DeliveryReturned || reset["temporaryPassword"] == nil || reset["temporaryPassword"] == temp {
			t.Fatalf("reset = %v", reset)
		}
		h.want(h.do("GET", "/api/me", userTok, nil), 401, "TOKEN_REVOKED")
		h.want(h.do("POST", "/auth/login", "", loginBody{Username: "operator.one", Password: userPassword}), 401, "BAD_CREDENTIALS")
		newTok := h.rotate("operator.one", reset["temporaryPassword"].(string))
		h.want(h.do("GET", "/api/me", newTok, nil), 200, "")
		h.want(h.do("POST", "/api/admin/users/9999/reset-password", admin, nil), 404, "USER_NOT_FOUND")

		// Offline deletion: no OTP, confirmed by a call without token.
		h.want(h.do("POST", fmt.Sprintf("/api/admin/users/%d/deletion/confirm", id), admin, nil), 409, "DELETION_NOT_REQUESTED")
		req := h.want(h.do("POST", fmt.Sprintf("/api/admin/users/%d/deletion/request", id), admin, nil), 200, "").json(t)
		if req["otpRequired"] != false || len(req) != 1 {
			t.Fatalf("offline deletion request = %v, want only otpRequired=false", req)
		}
		h.want(h.do("POST", fmt.Sprintf("/api/admin/users/%d/deletion/confirm", id), admin, nil), 204, "")
		h.want(h.do("GET", fmt.Sprintf("/api/admin/users/%d", id), admin, nil), 404, "USER_NOT_FOUND")
		h.want(h.do("GET", "/api/me", newTok, nil), 401, "TOKEN_REVOKED")

		list := h.want(h.do("GET", "/api/admin/users", admin, nil), 200, "").json(t)
		if list["totalElements"] != 1.0 {
			t.Fatalf("users after deletion = %v", list)
		}
		audit := h.want(h.do("GET", "/api/admin/audit-events?size=100", admin, nil), 200, "")
		for _, action := range []string{"BOOTSTRAP_ADMIN_CREATED", "FIRST_LOGIN", "USER_CREATE", "USER_PASSWORD_RESET", "USER_DELETION_REQUEST", "USER_DELETE", "LOGIN"} {
			if !strings.Contains(string(audit.body), `"`+action+`"`) {
				t.Errorf("audit has no %s event", action)
			}
		}
		for _, secret := range []string{temp, reset["temporaryPassword"].(string), userPassword, adminPassword, bootstrapPassword} {
			if strings.Contains(string(audit.body), secret) {
				t.Fatalf("audit events contain a password")
			}
		}
	})
}

// TestTemporaryPasswordEmailedOnline: in AUTO mode with a reachable mail
// server the temporary password goes to the new user by e-mail and the
// response carries none.
func TestTemporaryPasswordEmailedOnline(t *testing.T) {
	h := newHarness(t, harnessOpts{mail: true, adminEmail: "admin@example.com"})
	admin := h.adminToken()
	_, res := h.createUser(admin, UserInput{Username: "mailed", Email: "mailed@example.com"})
	if res["passwordDelivery"] != DeliveryEmail || res["temporaryPassword"] != nil {
		t.Fatalf("online creation = %v, want EMAIL and a null password", res)
	}
	if _, present := res["temporaryPassword"]; !present {
		t.Fatal("temporaryPassword must be present as null")
	}
	msgs := h.smtp.WaitMessages(t, 1)
	if len(msgs[0].To) != 1 || msgs[0].To[0] != "mailed@example.com" || !msgs[0].TLS || msgs[0].Authenticated != smtpUser {
		t.Fatalf("message envelope = to %v tls %v auth %q", msgs[0].To, msgs[0].TLS, msgs[0].Authenticated)
	}
	// The e-mailed password is the one that works.
	temp := regexp.MustCompile(`[A-Za-z2-9!#%*+\-=?@_]{16}`).FindAllString(msgs[0].Text, -1)
	var rotated bool
	for _, cand := range temp {
		r := h.do("POST", "/auth/first-login", "", FirstLoginInput{Username: "mailed", CurrentPassword: cand, NewPassword: userPassword})
		if r.status == 200 {
			rotated = true
			break
		}
	}
	if !rotated {
		t.Fatalf("no 16-character password in the e-mail worked:\n%s", msgs[0].Text)
	}
	// A user without e-mail gets the password returned even online.
	_, res = h.createUser(admin, UserInput{Username: "nomail"})
	if res["passwordDelivery"] != DeliveryReturned || res["temporaryPassword"] == nil {
		t.Fatalf("creation without e-mail = %v", res)
	}
	snap := h.want(h.do("GET", "/environment/snapshot", "", nil), 200, "").json(t)
	if snap["mailAvailable"] != true {
		t.Fatalf("snapshot = %v, want mailAvailable", snap)
	}
}

// TestTemporaryPasswordReturnedOffline: MAIL_MODE=OFFLINE never sends,
// even with a complete mail configuration.
func TestTemporaryPasswordReturnedOffline(t *testing.T) {
	h := newHarness(t, harnessOpts{mail: true, adminEmail: "admin@example.com", env: map[string]string{"MAIL_MODE": "offline"}})
	admin := h.adminToken()
	_, res := h.createUser(admin, UserInput{Username: "offline-user", Email: "o@example.com"})
	if res["passwordDelivery"] != DeliveryReturned || res["temporaryPassword"] == nil {
		t.Fatalf("offline creation = %v", res)
	}
	req := h.want(h.do("POST", "/api/admin/users/2/deletion/request", admin, nil), 200, "").json(t)
	if req["otpRequired"] != false {
		t.Fatalf("offline deletion request = %v", req)
	}
	if n := h.smtp.Connections(); n != 0 {
		t.Fatalf("OFFLINE mode opened %d SMTP connections", n)
	}
	snap := h.want(h.do("GET", "/environment/snapshot", "", nil), 200, "").json(t)
	if snap["mailAvailable"] != false || snap["version"] == "" || snap["build"] == "" {
		t.Fatalf("snapshot = %v", snap)
	}
}

// TestMailFallbackWhenServerUnreachable: online configuration, server
// down: the operation takes the offline path (password returned, deletion
// without OTP) instead of failing.
func TestMailFallbackWhenServerUnreachable(t *testing.T) {
	h := newHarness(t, harnessOpts{mailDown: true, adminEmail: "admin@example.com"})
	admin := h.adminToken()
	id, res := h.createUser(admin, UserInput{Username: "fallback", Email: "f@example.com"})
	if res["passwordDelivery"] != DeliveryReturned || res["temporaryPassword"] == nil {
		t.Fatalf("creation with the mail server down = %v, want RETURNED", res)
	}
	req := h.want(h.do("POST", fmt.Sprintf("/api/admin/users/%d/deletion/request", id), admin, nil), 200, "").json(t)
	if req["otpRequired"] != false {
		t.Fatalf("deletion request with the mail server down = %v, want the no-OTP path", req)
	}
	h.want(h.do("POST", fmt.Sprintf("/api/admin/users/%d/deletion/confirm", id), admin, nil), 204, "")
	if !strings.Contains(h.logs.String(), "failed") || strings.Contains(h.logs.String(), smtpPass) {
		t.Fatal("the fallback is not logged, or the log holds the SMTP password")
	}
}

// TestDeletionWithOTP: online, the one-time password goes to the
// initiating administrator; wrong attempts count and exhaust the request.
func TestDeletionWithOTP(t *testing.T) {
	h := newHarness(t, harnessOpts{mail: true, adminEmail: "admin@example.com"})
	admin := h.adminToken()
	id, _ := h.createUser(admin, UserInput{Username: "victim", Email: "victim@example.com"})
	h.smtp.WaitMessages(t, 1)
	path := fmt.Sprintf("/api/admin/users/%d/deletion/", id)

	req := h.want(h.do("POST", path+"request", admin, nil), 200, "").json(t)
	if req["otpRequired"] != true || req["token"] == "" || req["otpLength"] != 6.0 || req["attemptLimit"] != 5.0 {
		t.Fatalf("deletion request = %v", req)
	}
	if _, err := time.Parse(time.RFC3339, req["expiry"].(string)); err != nil {
		t.Fatalf("expiry %v: %v", req["expiry"], err)
	}
	msgs := h.smtp.WaitMessages(t, 2)
	if msgs[1].To[0] != "admin@example.com" {
		t.Fatalf("OTP went to %v, want the initiating administrator", msgs[1].To)
	}
	otp := regexp.MustCompile(`\b\d{6}\b`).FindString(msgs[1].Text)
	if otp == "" {
		t.Fatalf("no 6-digit OTP in the e-mail:\n%s", msgs[1].Text)
	}
	token := req["token"].(string)
	wrong := fmt.Sprintf("%06d", (mustAtoi(t, otp)+1)%1000000)

	h.want(h.do("POST", path+"confirm", admin, nil), 400, "OTP_REQUIRED")
	h.want(h.do("POST", path+"confirm", admin, DeletionConfirm{Token: "not-the-token", OTP: otp}), 400, "DELETION_TOKEN_INVALID")
	for i := 1; i <= 4; i++ {
		r := h.want(h.do("POST", path+"confirm", admin, DeletionConfirm{Token: token, OTP: wrong}), 400, "OTP_INVALID")
		d := r.json(t)["details"].(map[string]any)
		if d["attempts"] != float64(i) || d["attemptsRemaining"] != float64(5-i) {
			t.Fatalf("attempt %d details = %v", i, d)
		}
	}
	h.want(h.do("POST", path+"confirm", admin, DeletionConfirm{Token: token, OTP: wrong}), 409, "OTP_ATTEMPTS_EXHAUSTED")
	// The request is void: even the right OTP no longer works.
	h.want(h.do("POST", path+"confirm", admin, DeletionConfirm{Token: token, OTP: otp}), 409, "DELETION_NOT_REQUESTED")

	req = h.want(h.do("POST", path+"request", admin, nil), 200, "").json(t)
	msgs = h.smtp.WaitMessages(t, 3)
	otp = regexp.MustCompile(`\b\d{6}\b`).FindString(msgs[2].Text)
	h.want(h.do("POST", path+"confirm", admin, DeletionConfirm{Token: req["token"].(string), OTP: otp}), 204, "")
	h.want(h.do("GET", fmt.Sprintf("/api/admin/users/%d", id), admin, nil), 404, "USER_NOT_FOUND")
}

func mustAtoi(t *testing.T, s string) int {
	var n int
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDeletionEmailRequired: online, an administrator without e-mail
// cannot start a deletion.
func TestDeletionEmailRequired(t *testing.T) {
	h := newHarness(t, harnessOpts{mail: true})
	admin := h.adminToken()
	id, _ := h.createUser(admin, UserInput{Username: "target"})
	r := h.want(h.do("POST", fmt.Sprintf("/api/admin/users/%d/deletion/request", id), admin, nil), 400, "USER_DELETION_EMAIL_REQUIRED")
	if m := r.json(t)["message"].(string); m == "" {
		t.Fatal("blank message")
	}
}

// TestDeletionGuards: no self-deletion, no deletion of the last
// administrator, and an expired request cannot be confirmed.
func TestDeletionGuards(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	admin := h.adminToken()
	h.want(h.do("POST", "/api/admin/users/1/deletion/request", admin, nil), 409, "CANNOT_DELETE_SELF")
	id, res := h.createUser(admin, UserInput{Username: "second-admin", Role: RoleAdmin})
	second := h.rotate("second-admin", res["temporaryPassword"].(string))
	third, _ := h.createUser(admin, UserInput{Username: "third"})
	// Only the administrator who started a deletion can confirm it.
	h.want(h.do("POST", fmt.Sprintf("/api/admin/users/%d/deletion/request", third), second, nil), 200, "")
	h.want(h.do("POST", fmt.Sprintf("/api/admin/users/%d/deletion/confirm", third), admin, nil), 409, "DELETION_REQUESTED_BY_OTHER")
	h.want(h.do("POST", fmt.Sprintf("/api/admin/users/%d/deletion/confirm", third), second, nil), 204, "")
	h.want(h.do("POST", "/api/admin/users/abc/deletion/request", admin, nil), 400, "INVALID_ID")
	h.want(h.do("POST", "/api/admin/users/777/deletion/request", admin, nil), 404, "USER_NOT_FOUND")

	h.want(h.do("POST", fmt.Sprintf("/api/admin/users/%d/deletion/request", id), admin, nil), 200, "")
	h.s.now = func() time.Time { return time.Now().Add(h.s.cfg.OTPTTL + time.Minute) }
	h.want(h.do("POST", fmt.Sprintf("/api/admin/users/%d/deletion/confirm", id), admin, nil), 409, "DELETION_EXPIRED")
	h.want(h.do("POST", fmt.Sprintf("/api/admin/users/%d/deletion/confirm", id), admin, nil), 409, "DELETION_NOT_REQUESTED")
	h.s.now = time.Now

	// With the second administrator gone the first is the last one.
	h.want(h.do("POST", fmt.Sprintf("/api/admin/users/%d/deletion/request", id), admin, nil), 200, "")
	h.want(h.do("POST", fmt.Sprintf("/api/admin/users/%d/deletion/confirm", id), admin, nil), 204, "")
	u, err := h.s.st.userByName(context.Background(), "admin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.s.deletable(context.Background(), Principal{UserID: 999}, u.ID); err == nil || !strings.Contains(err.Error(), "last administrator") {
		t.Fatalf("deleting the last administrator: %v", err)
	}
}

// TestBootstrap: without CFG_BOOTSTRAP_ADMIN_PASSWORD no account is
// created; with it the administrator exists once, with a password to
// rotate.
func TestBootstrap(t *testing.T) {
	h := newHarness(t, harnessOpts{env: map[string]string{"CFG_BOOTSTRAP_ADMIN_PASSWORD": ""}})
	n, err := h.s.st.countUsers(context.Background(), "")
	if err != nil || n != 0 {
		t.Fatalf("users without bootstrap password = %d, %v", n, err)
	}
	if !strings.Contains(h.logs.String(), "no administrator created") {
		t.Fatal("missing warning about the absent bootstrap password")
	}
	h.s.cfg.BootstrapPassword, h.s.cfg.BootstrapLocale = bootstrapPassword, "ru"
	for range 2 {
		if err := h.s.bootstrap(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	n, _ = h.s.st.countUsers(context.Background(), RoleAdmin)
	if n != 1 {
		t.Fatalf("administrators after two bootstraps = %d, want 1", n)
	}
	u, _ := h.s.st.userByName(context.Background(), "admin")
	if !u.MustChangePassword || u.Locale != "ru" {
		t.Fatalf("bootstrap admin = %+v", u)
	}
	// first-login works once; afterwards the password is the user's own.
	h.adminToken()
	h.want(h.do("POST", "/auth/first-login", "", FirstLoginInput{Username: "admin", CurrentPassword: adminPassword, NewPassword: "Another-Passw0rd!!"}), 409, "PASSWORD_ALREADY_SET")
	h.want(h.do("POST", "/auth/first-login", "", FirstLoginInput{Username: "admin", CurrentPassword: "wrong", NewPassword: "Another-Passw0rd!!"}), 401, "BAD_CREDENTIALS")
}
