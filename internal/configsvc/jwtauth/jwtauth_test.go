package jwtauth_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/configsvc/jwtauth"

	"github.com/golang-jwt/jwt/v5"
)

var (
	testKey  = []byte("0123456789abcdef0123456789abcdef")
	otherKey = []byte("fedcba9876543210fedcba9876543210")
	epoch    = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
)

const (
	accessTTL  = 15 * time.Minute
	refreshTTL = 7 * 24 * time.Hour
)

// newIssuer returns an Issuer whose clock stands at *now.
func newIssuer(t testing.TB, key []byte, now *time.Time) *jwtauth.Issuer {
	t.Helper()
	iss, err := jwtauth.NewIssuer(key, accessTTL, refreshTTL)
	if err != nil {
		t.Fatalf("NewIssuer: %v", err)
	}
	iss.Now = func() time.Time { return *now }
	return iss
}

func issue(t testing.TB, iss *jwtauth.Issuer, kind jwtauth.Kind) string {
	t.Helper()
	tok, _, err := iss.Issue(kind, jwtauth.Claims{
		RegisteredClaims: jwt.RegisteredClaims{Subject: "alice"},
		UserID:           42,
		Role:             "ADMIN",
		Family:           "fam-1",
	})
	if err != nil {
		t.Fatalf("Issue(%s): %v", kind, err)
	}
	return tok
}

func TestNewIssuer(t *testing.T) {
	tests := []struct {
		name     string
		key      []byte
		acc, ref time.Duration
		ok       bool
	}{
		{"valid", testKey, time.Minute, time.Hour, true},
		{"31-byte key", testKey[:31], time.Minute, time.Hour, false},
		{"nil key", nil, time.Minute, time.Hour, false},
		{"zero access", testKey, 0, time.Hour, false},
		{"negative refresh", testKey, time.Minute, -time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			iss, err := jwtauth.NewIssuer(tt.key, tt.acc, tt.ref)
			if (err == nil) != tt.ok {
				t.Fatalf("NewIssuer: err = %v, want ok=%v", err, tt.ok)
			}
			if tt.ok && (iss.AccessTTL() != tt.acc || iss.RefreshTTL() != tt.ref) {
				t.Fatalf("TTLs = %v, %v; want %v, %v", iss.AccessTTL(), iss.RefreshTTL(), tt.acc, tt.ref)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	now := epoch.Add(123456789 * time.Microsecond) // not on a whole second
	iss := newIssuer(t, testKey, &now)
	for _, kind := range []jwtauth.Kind{jwtauth.Access, jwtauth.Refresh} {
		t.Run(string(kind), func(t *testing.T) {
			in := jwtauth.Claims{
				RegisteredClaims: jwt.RegisteredClaims{
					Subject: "alice", ID: "caller-id-is-replaced", Issuer: "caller-issuer-is-replaced",
					Audience: jwt.ClaimStrings{"ui"},
				},
				Kind: "ignored", UserID: 42, Role: "ADMIN", Family: "fam-1",
			}
			tok, issued, err := iss.Issue(kind, in)
			if err != nil {
				t.Fatalf("Issue: %v", err)
			}
			ttl := map[jwtauth.Kind]time.Duration{jwtauth.Access: accessTTL, jwtauth.Refresh: refreshTTL}[kind]
			sec := now.Truncate(time.Second)
			if issued.Kind != kind || issued.Issuer != jwtauth.DefaultIssuer || issued.Subject != "alice" ||
				issued.UserID != 42 || issued.Role != "ADMIN" || issued.Family != "fam-1" ||
				!issued.IssuedAt.Equal(sec) || !issued.NotBefore.Equal(sec) || !issued.ExpiresAt.Equal(now.Add(ttl).Truncate(time.Second)) {
				t.Fatalf("issued claims %+v are not the expected ones", issued)
			}
			id, err := base64.RawURLEncoding.DecodeString(issued.ID)
			if err != nil || len(id) != 16 {
				t.Fatalf("jti %q is not 128 bits of base64url: %v", issued.ID, err)
			}

			got, err := iss.Parse(tok, kind)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got.ID != issued.ID || got.Kind != kind || got.Subject != "alice" || got.UserID != 42 ||
				got.Role != "ADMIN" || got.Family != "fam-1" || got.Issuer != jwtauth.DefaultIssuer ||
				!got.IssuedAt.Equal(issued.IssuedAt.Time) || !got.NotBefore.Equal(issued.NotBefore.Time) ||
				!got.ExpiresAt.Equal(issued.ExpiresAt.Time) || len(got.Audience) != 1 || got.Audience[0] != "ui" {
				t.Fatalf("Parse = %+v, want %+v", got, issued)
			}

			// Still valid a second before expiry, whatever the clock skew.
			later := now.Add(ttl - time.Second)
			iss2 := newIssuer(t, testKey, &later)
			if _, err := iss2.Parse(tok, kind); err != nil {
				t.Fatalf("Parse one second before expiry: %v", err)
			}
		})
	}
}

func TestIDsAreFresh(t *testing.T) {
	now := epoch
	iss := newIssuer(t, testKey, &now)
	seen := map[string]bool{}
	for range 100 {
		_, c, err := iss.Issue(jwtauth.Access, jwtauth.Claims{})
		if err != nil {
			t.Fatal(err)
		}
		if seen[c.ID] {
			t.Fatalf("jti %q issued twice", c.ID)
		}
		seen[c.ID] = true
	}
}

func TestIssueUnknownKind(t *testing.T) {
	now := epoch
	iss := newIssuer(t, testKey, &now)
	if tok, _, err := iss.Issue("session", jwtauth.Claims{}); err == nil {
		t.Fatalf("Issue(session) = %q, want an error", tok)
	}
}

// b64 encodes one JWT segment.
func b64(v any) string {
	var b []byte
	switch v := v.(type) {
	case string:
		b = []byte(v)
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			panic(err)
		}
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// hs256 returns header.payload signed with key, built by hand so that any
// header and claims can be signed correctly.
func hs256(key []byte, header, payload string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(header + "." + payload))
	return header + "." + payload + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// validClaims returns the claims Issue would produce at epoch, as a map so
// that tests can remove or change any of them.
func validClaims(kind jwtauth.Kind) map[string]any {
	return map[string]any{
		"iss": jwtauth.DefaultIssuer, "sub": "alice", "jti": "AAAAAAAAAAAAAAAAAAAAAA",
		"iat": epoch.Unix(), "nbf": epoch.Unix(), "exp": epoch.Add(accessTTL).Unix(),
		"typ": string(kind), "uid": 42,
	}
}

func without(m map[string]any, key string) map[string]any {
	delete(m, key)
	return m
}

func with(m map[string]any, key string, v any) map[string]any {
	m[key] = v
	return m
}

func signedWith(t *testing.T, method jwt.SigningMethod, key any, claims map[string]any) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(method, jwt.MapClaims(claims)).SignedString(key)
	if err != nil {
		t.Fatalf("signing with %s: %v", method.Alg(), err)
	}
	return tok
}

func TestParseRefused(t *testing.T) {
	now := epoch.Add(time.Minute)
	iss := newIssuer(t, testKey, &now)
	access := issue(t, iss, jwtauth.Access)
	refresh := issue(t, iss, jwtauth.Refresh)
	parts := strings.Split(access, ".")
	hsHeader := b64(`{"alg":"HS256","typ":"JWT"}`)

	past := epoch.Add(-refreshTTL - time.Hour)
	oldIss := newIssuer(t, testKey, &past)
	expiredAccess := issue(t, oldIss, jwtauth.Access)
	expiredRefresh := issue(t, oldIss, jwtauth.Refresh)
	justExpired := epoch.Add(-accessTTL - 10*time.Second)
	justIss := newIssuer(t, testKey, &justExpired)

	// A payload whose uid is changed, keeping the original signature.
	var payload map[string]any
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if err := json.Unmarshal(raw, &payload); err != nil {
		t.Fatal(err)
	}
	payload["uid"] = 1
	payload["role"] = "SUPERUSER"
	tamperedPayload := parts[0] + "." + b64(payload) + "." + parts[2]
	// Changing a middle character to another base64 one keeps the
	// signature well-formed and only wrong.
	sig := []byte(parts[2])
	if sig[3] == 'A' {
		sig[3] = 'B'
	} else {
		sig[3] = 'A'
	}
	tamperedSig := parts[0] + "." + parts[1] + "." + string(sig)

	tests := []struct {
		name  string
		token string
		want  jwtauth.Kind
		err   error
	}{
		{"expired access", expiredAccess, jwtauth.Access, jwtauth.ErrExpired},
		{"expired refresh", expiredRefresh, jwtauth.Refresh, jwtauth.ErrExpired},
		{"expired beyond clock skew", issue(t, justIss, jwtauth.Access), jwtauth.Access, jwtauth.ErrExpired},
		{"refresh as access", refresh, jwtauth.Access, jwtauth.ErrWrongKind},
		{"access as refresh", access, jwtauth.Refresh, jwtauth.ErrWrongKind},
		{"expired refresh as access", expiredRefresh, jwtauth.Access, jwtauth.ErrWrongKind},
		{"tampered payload", tamperedPayload, jwtauth.Access, jwtauth.ErrInvalid},
		{"tampered signature", tamperedSig, jwtauth.Access, jwtauth.ErrInvalid},
		{"signature removed", parts[0] + "." + parts[1] + ".", jwtauth.Access, jwtauth.ErrInvalid},
		{"alg none", b64(`{"alg":"none","typ":"JWT"}`) + "." + parts[1] + ".", jwtauth.Access, jwtauth.ErrInvalid},
		{"alg None", b64(`{"alg":"None","typ":"JWT"}`) + "." + parts[1] + ".", jwtauth.Access, jwtauth.ErrInvalid},
		{"alg none via library", signedWith(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, validClaims(jwtauth.Access)), jwtauth.Access, jwtauth.ErrInvalid},
		{"HS384 same key", signedWith(t, jwt.SigningMethodHS384, testKey, validClaims(jwtauth.Access)), jwtauth.Access, jwtauth.ErrInvalid},
		{"HS512 same key", signedWith(t, jwt.SigningMethodHS512, testKey, validClaims(jwtauth.Access)), jwtauth.Access, jwtauth.ErrInvalid},
		{"RS256 header, HMAC signature", hs256(testKey, b64(`{"alg":"RS256","typ":"JWT"}`), parts[1]), jwtauth.Access, jwtauth.ErrInvalid},
		{"missing alg", hs256(testKey, b64(`{"typ":"JWT"}`), parts[1]), jwtauth.Access, jwtauth.ErrInvalid},
		{"other key", issue(t, newIssuer(t, otherKey, &now), jwtauth.Access), jwtauth.Access, jwtauth.ErrInvalid},
		{"hand-made valid", hs256(testKey, hsHeader, b64(validClaims(jwtauth.Access))), jwtauth.Access, nil},
		{"missing exp", hs256(testKey, hsHeader, b64(without(validClaims(jwtauth.Access), "exp"))), jwtauth.Access, jwtauth.ErrInvalid},
		{"missing iat", hs256(testKey, hsHeader, b64(without(validClaims(jwtauth.Access), "iat"))), jwtauth.Access, jwtauth.ErrInvalid},
		{"missing jti", hs256(testKey, hsHeader, b64(without(validClaims(jwtauth.Access), "jti"))), jwtauth.Access, jwtauth.ErrInvalid},
		{"missing iss", hs256(testKey, hsHeader, b64(without(validClaims(jwtauth.Access), "iss"))), jwtauth.Access, jwtauth.ErrInvalid},
		{"missing typ", hs256(testKey, hsHeader, b64(without(validClaims(jwtauth.Access), "typ"))), jwtauth.Access, jwtauth.ErrInvalid},
		{"missing nbf is fine", hs256(testKey, hsHeader, b64(without(validClaims(jwtauth.Access), "nbf"))), jwtauth.Access, nil},
		{"wrong issuer", hs256(testKey, hsHeader, b64(with(validClaims(jwtauth.Access), "iss", "someone-else"))), jwtauth.Access, jwtauth.ErrInvalid},
		{"wrong issuer and expired", hs256(testKey, hsHeader, b64(with(with(validClaims(jwtauth.Access), "iss", "x"), "exp", epoch.Add(-time.Hour).Unix()))), jwtauth.Access, jwtauth.ErrInvalid},
		{"unknown kind", hs256(testKey, hsHeader, b64(with(validClaims(jwtauth.Access), "typ", "session"))), jwtauth.Access, jwtauth.ErrInvalid},
		{"nbf in the future", hs256(testKey, hsHeader, b64(with(validClaims(jwtauth.Access), "nbf", epoch.Add(time.Hour).Unix()))), jwtauth.Access, jwtauth.ErrInvalid},
		{"iat in the future", hs256(testKey, hsHeader, b64(with(validClaims(jwtauth.Access), "iat", epoch.Add(time.Hour).Unix()))), jwtauth.Access, jwtauth.ErrInvalid},
		{"exp as string", hs256(testKey, hsHeader, b64(with(validClaims(jwtauth.Access), "exp", "tomorrow"))), jwtauth.Access, jwtauth.ErrInvalid},
		{"uid as string", hs256(testKey, hsHeader, b64(with(validClaims(jwtauth.Access), "uid", "42"))), jwtauth.Access, jwtauth.ErrInvalid},
		{"padded header", hs256(testKey, base64.URLEncoding.EncodeToString([]byte(`{"alg":"HS256", "typ":"JWT"}`)), b64(validClaims(jwtauth.Access))), jwtauth.Access, jwtauth.ErrInvalid},
		{"payload not JSON", hs256(testKey, hsHeader, b64("not json")), jwtauth.Access, jwtauth.ErrInvalid},
		{"payload JSON array", hs256(testKey, hsHeader, b64("[]")), jwtauth.Access, jwtauth.ErrInvalid},
		{"unknown kind requested", access, "session", jwtauth.ErrInvalid},
		{"empty", "", jwtauth.Access, jwtauth.ErrInvalid},
		{"garbage", "garbage", jwtauth.Access, jwtauth.ErrInvalid},
		{"dots", "..", jwtauth.Access, jwtauth.ErrInvalid},
		{"four segments", access + ".x", jwtauth.Access, jwtauth.ErrInvalid},
		{"bearer prefix", "Bearer " + access, jwtauth.Access, jwtauth.ErrInvalid},
		{"not base64", "!!!.???.***", jwtauth.Access, jwtauth.ErrInvalid},
		{"very long", access + strings.Repeat("A", 5000), jwtauth.Access, jwtauth.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := iss.Parse(tt.token, tt.want)
			if tt.err == nil {
				if err != nil || c == nil {
					t.Fatalf("Parse = %+v, %v; want the claims", c, err)
				}
				return
			}
			if !errors.Is(err, tt.err) || c != nil {
				t.Fatalf("Parse = %+v, %v; want nil, %v", c, err, tt.err)
			}
			for _, other := range []error{jwtauth.ErrExpired, jwtauth.ErrWrongKind, jwtauth.ErrInvalid} {
				if other != tt.err && errors.Is(err, other) {
					t.Fatalf("Parse error %v is both %v and %v", err, tt.err, other)
				}
			}
			msg := err.Error()
			for _, seg := range strings.Split(tt.token, ".") {
				if len(seg) >= 8 && strings.Contains(msg, seg) {
					t.Fatalf("Parse error %q quotes the token", msg)
				}
			}
		})
	}
}
