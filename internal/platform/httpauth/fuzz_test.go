package httpauth_test

import (
	"testing"

	"cpesuite/internal/platform/httpauth"
)

// FuzzParseDigestAuthorization checks that the parser never panics and that
// whatever it accepts survives a format-and-parse round trip, which is what
// the Client relies on when it sends what it built.
func FuzzParseDigestAuthorization(f *testing.F) {
	f.Add(rfcSHA256.String())
	f.Add(`Digest username="a\"b", realm=r, nonce="n", uri="/x?y", qop="auth", nc=1, cnonce=c, response="0", userhash=false, x="y,z"`)
	f.Add(`Digest username*=UTF-8''J%C3%A4s%C3%B8n, realm=""`)
	f.Add(`digest ,, USERNAME = "u" ,`)
	f.Fuzz(func(t *testing.T, value string) {
		d, err := httpauth.ParseDigestAuthorization(value)
		if err != nil {
			return
		}
		s := d.String()
		again, err := httpauth.ParseDigestAuthorization(s)
		if err != nil {
			t.Fatalf("cannot parse own output %q of %q: %v", s, value, err)
		}
		if again != d {
			t.Fatalf("round trip of %q via %q:\n got %+v\nwant %+v", value, s, again, d)
		}
	})
}

// FuzzParseChallenges checks that the challenge parser never panics and
// returns only challenges with a scheme.
func FuzzParseChallenges(f *testing.F) {
	f.Add(`Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple"`)
	f.Add(`Digest realm="r", qop="auth, auth-int", algorithm=SHA-256, nonce="n", opaque="o", stale=TRUE`)
	f.Add(`Negotiate, NTLM TlRMTVNTUAACAAAA==, Bearer`)
	f.Fuzz(func(t *testing.T, value string) {
		chs, _ := httpauth.ParseChallenges([]string{value, value})
		for _, ch := range chs {
			if ch.Scheme == "" {
				t.Fatalf("challenge without scheme from %q", value)
			}
		}
	})
}
