package jwtauth_test

import (
	"strings"
	"testing"
	"time"

	"cpesuite/internal/configsvc/jwtauth"
)

// FuzzParse checks that no token string makes Parse panic, that every
// refusal is one of the three sentinels, and that anything accepted has the
// requested kind. The seeds include a valid token, so the fuzzer also
// mutates authentic-looking input.
func FuzzParse(f *testing.F) {
	now := epoch
	iss := newIssuer(f, testKey, &now)
	access := issue(f, iss, jwtauth.Access)
	f.Add(access, false)
	f.Add(issue(f, iss, jwtauth.Refresh), true)
	f.Add(b64(`{"alg":"none","typ":"JWT"}`)+"."+strings.Split(access, ".")[1]+".", false)
	f.Add(hs256(testKey, b64(`{"alg":"HS256"}`), b64(`{"exp":1e400,"iat":-1e400}`)), false)
	f.Add("a.b.c", false)
	f.Add("", true)
	f.Fuzz(func(t *testing.T, token string, refresh bool) {
		want := jwtauth.Access
		if refresh {
			want = jwtauth.Refresh
		}
		c, err := iss.Parse(token, want)
		if err != nil {
			if c != nil || !(isSentinel(err)) {
				t.Fatalf("Parse(%q) = %+v, %v", token, c, err)
			}
			return
		}
		if c.Kind != want || c.Issuer != jwtauth.DefaultIssuer || c.ExpiresAt == nil || !c.ExpiresAt.After(now.Add(-time.Minute)) {
			t.Fatalf("Parse(%q) accepted %+v", token, c)
		}
	})
}
