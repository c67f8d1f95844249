package identity

import (
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var secret = []byte("0123456789abcdef0123456789abcdef")

func TestSignVerify(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	id := Identity{Username: "alice", Role: RoleEditor, Stand: "s1"}
	good := Sign(secret, id, "GET", "/api/runs/r1", now)
	other := Sign([]byte("another-secret-another-secret-xx"), id, "GET", "/api/runs/r1", now)
	noRole := Sign(secret, Identity{Username: "x", Role: "root"}, "GET", "/", now)
	tampered := strings.Replace(good, good[4:10], "AAAAAA", 1)
	tests := []struct {
		name, value, method, path string
		at                        time.Time
		ok                        bool
	}{
		{"valid", good, "GET", "/api/runs/r1", now, true},
		{"valid within ttl", good, "GET", "/api/runs/r1", now.Add(TTL), true},
		{"expired", good, "GET", "/api/runs/r1", now.Add(TTL + Skew + time.Second), false},
		{"from the future", good, "GET", "/api/runs/r1", now.Add(-Skew - time.Second), false},
		{"other path", good, "GET", "/api/runs/r2", now, false},
		{"other method", good, "POST", "/api/runs/r1", now, false},
		{"other secret", other, "GET", "/api/runs/r1", now, false},
		{"tampered payload", tampered, "GET", "/api/runs/r1", now, false},
		{"unknown role", noRole, "GET", "/", now, false},
		{"empty", "", "GET", "/", now, false},
		{"garbage", "v1.%%%.###", "GET", "/", now, false},
		{"no version", strings.TrimPrefix(good, "v1."), "GET", "/api/runs/r1", now, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Verify(secret, tc.value, tc.method, tc.path, tc.at)
			if tc.ok {
				if err != nil || got != id {
					t.Fatalf("Verify = %+v, %v; want %+v", got, err, id)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Verify accepted %q: %+v, %v", tc.value, got, err)
			}
		})
	}
}

func TestRequestRoundTrip(t *testing.T) {
	r := httptest.NewRequest("POST", "/api/run?test_file=a.yaml", nil)
	now := time.Now()
	SignRequest(secret, r, Identity{Username: "bob", Role: RoleAdmin}, now)
	got, err := VerifyRequest(secret, r, now)
	if err != nil || got.Username != "bob" || !got.IsAdmin() {
		t.Fatalf("VerifyRequest = %+v, %v", got, err)
	}
	r.Header.Del(Header)
	if _, err := VerifyRequest(secret, r, now); !errors.Is(err, ErrInvalid) {
		t.Fatalf("missing header accepted: %v", err)
	}
}

func TestEnsureSecret(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := EnsureSecret("short", dir); err == nil {
		t.Fatal("short configured secret accepted")
	}
	s1, _, err := EnsureSecret("", dir)
	if err != nil || len(s1) < MinSecretLen {
		t.Fatalf("generate: %q %v", s1, err)
	}
	s2, _, err := EnsureSecret("", dir)
	if err != nil || string(s1) != string(s2) {
		t.Fatalf("second call gave another secret: %v", err)
	}
	st, err := os.Stat(filepath.Join(dir, SecretFileName))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("secret file mode: %v %v", st, err)
	}
	s3, src, err := EnsureSecret(string(secret), dir)
	if err != nil || string(s3) != string(secret) || src != "CPESUITE_TESTRUNNER_SECRET" {
		t.Fatalf("configured: %q %q %v", s3, src, err)
	}
}

func FuzzVerify(f *testing.F) {
	f.Add(Sign(secret, Identity{Username: "a", Role: RoleAdmin}, "GET", "/", time.Unix(0, 0)))
	f.Add("v1..")
	f.Fuzz(func(t *testing.T, v string) {
		_, _ = Verify(secret, v, "GET", "/", time.Unix(0, 0))
	})
}
