package acs

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"cpesuite/internal/cwmp"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
)

// liveSession returns the open session of a device, or nil.
func liveSession(a *testACS, key DeviceKey) *session {
	a.sessions.mu.Lock()
	defer a.sessions.mu.Unlock()
	return a.sessions.byDevice[key]
}

// TestRebootMidSessionStartsNewSession: a CPE that reboots while the ACS
// waits for its answer comes back with 1 BOOT and without its cookie. It
// used to get 503 until the old session timed out (30 s); now the old
// session ends and the task in flight is sent again in the new one. Only a
// session busy with a message, or an Inform that names another live session
// and no BOOT, is still refused.
func TestRebootMidSessionStartsNewSession(t *testing.T) {
	tests := []struct {
		name     string
		events   []string
		cookie   string // "", "expired" or "other-live": the cookie the new Inform carries
		busy     bool   // the old session is handling a message
		wantCode int
	}{
		{"1 BOOT without a cookie", []string{cwmp.EventBoot}, "", false, http.StatusOK},
		{"0 BOOTSTRAP 1 BOOT without a cookie", []string{cwmp.EventBootstrap, cwmp.EventBoot}, "", false, http.StatusOK},
		{"periodic without a cookie", []string{cwmp.EventPeriodic}, "", false, http.StatusOK},
		{"1 BOOT with an expired cookie", []string{cwmp.EventBoot}, "expired", false, http.StatusOK},
		{"periodic with an expired cookie", []string{cwmp.EventPeriodic}, "expired", false, http.StatusOK},
		{"1 BOOT naming another live session", []string{cwmp.EventBoot}, "other-live", false, http.StatusOK},
		{"periodic naming another live session", []string{cwmp.EventPeriodic}, "other-live", false, http.StatusServiceUnavailable},
		{"1 BOOT while the old session handles a message", []string{cwmp.EventBoot}, "", true, http.StatusServiceUnavailable},
	}
	db := sqltest.Open(t, sqlstore.SQLite)
	a := startACS(t, db, testConfig())
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			serial := "RB" + string(rune('A'+i))
			old := newCPE(t, a.srv.URL, serial, DataModelTR098)
			old.session(cwmp.EventBootstrap)
			dev := deviceID(t, a, old)
			txn := enqueue(t, a, dev, KindGetParameterValues, `{"names":["InternetGatewayDevice.DeviceInfo.UpTime"]}`)
			// The session reaches the GPV; then the CPE goes away.
			if resp, _ := old.post(old.inform(cwmp.EventPeriodic)); resp.StatusCode != http.StatusOK {
				t.Fatalf("Inform: %d", resp.StatusCode)
			}
			if resp, body := old.post(nil); resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "GetParameterValues") {
				t.Fatalf("want the GPV: %d %s", resp.StatusCode, body)
			}

			back := newCPE(t, a.srv.URL, serial, DataModelTR098) // a fresh cookie jar: the device restarted
			u, _ := url.Parse(a.srv.URL)
			switch tt.cookie {
			case "expired":
				back.client.Jar.SetCookies(u, []*http.Cookie{{Name: sessionCookie, Value: "no-such-session", Path: "/"}})
			case "other-live":
				other := newCPE(t, a.srv.URL, serial+"-OTHER", DataModelTR098)
				if resp, _ := other.post(other.inform(cwmp.EventPeriodic)); resp.StatusCode != http.StatusOK {
					t.Fatalf("other Inform: %d", resp.StatusCode)
				}
				back.client.Jar.SetCookies(u, other.client.Jar.Cookies(u))
			}
			oldSess := liveSession(a, old.key)
			if tt.busy {
				oldSess.mu.Lock()
			}
			resp, body := back.post(back.inform(tt.events...))
			if tt.busy {
				oldSess.mu.Unlock()
			}
			if resp.StatusCode != tt.wantCode {
				t.Fatalf("Inform after the reboot: %d, want %d: %s", resp.StatusCode, tt.wantCode, body)
			}
			if tt.wantCode != http.StatusOK {
				if resp.Header.Get("Retry-After") == "" {
					t.Error("503 without Retry-After")
				}
				// The old session is untouched and finishes normally.
				resp, _ := old.post(cwmp.NewEnvelope(old.version, "x", old.answer(&cwmp.GetParameterValues{ParameterNames: []string{"InternetGatewayDevice.DeviceInfo.UpTime"}})))
				if resp.StatusCode != http.StatusNoContent {
					t.Fatalf("old session after a refused takeover: %d", resp.StatusCode)
				}
				if s := txnState(t, a, txn.ID); s.State != TaskDone {
					t.Fatalf("task %+v", s.Tasks[0])
				}
				return
			}
			// The new session gets the task that was in flight again.
			resp, body = back.post(nil)
			env, err := cwmp.Decode(body)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("new session: %d %s: %v", resp.StatusCode, body, err)
			}
			if _, ok := env.Body.(*cwmp.GetParameterValues); !ok {
				t.Fatalf("new session got %s, want the GPV again", env.Body.Method())
			}
			if resp, _ := back.post(env.Reply(back.answer(env.Body))); resp.StatusCode != http.StatusNoContent {
				t.Fatalf("end of the new session: %d", resp.StatusCode)
			}
			if s := txnState(t, a, txn.ID); s.State != TaskDone || s.Tasks[0].Attempts != 2 {
				t.Fatalf("task after the reboot: %+v", s.Tasks[0])
			}
			// The old session's cookie names nothing any more.
			if resp, _ := old.post(nil); resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("old session still answers: %d", resp.StatusCode)
			}
		})
	}
}
