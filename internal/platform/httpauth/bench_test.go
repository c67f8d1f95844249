package httpauth_test

import (
	"net/http"
	"testing"

	"cpesuite/internal/platform/httpauth"
)

// BenchmarkDigestVerify measures Verify on a valid Digest request: parsing,
// nonce check, credential lookup, the three hashes and the nonce-count
// record. Each request uses its own nonce so that none is a replay; when
// the prepared requests run out, a fresh Verifier with the same Key (so the
// nonces stay valid) starts with an empty replay record, outside the timer.
func BenchmarkDigestVerify(b *testing.B) {
	for _, alg := range []httpauth.Algorithm{httpauth.MD5, httpauth.SHA256} {
		b.Run(string(alg), func(b *testing.B) {
			key := []byte("benchmark key, 32 bytes long....")
			newVerifier := func() *httpauth.Verifier {
				return &httpauth.Verifier{Realm: "acs", Digest: true, Algorithms: []httpauth.Algorithm{alg}, Key: key, Creds: users}
			}
			v := newVerifier()
			const pool = 1 << 12
			reqs := make([]*http.Request, pool)
			for i := range reqs {
				h := signed(b, challenge(b, v, alg), http.MethodPost, "/acs", "cpe-0001", "s3cret", nil)
				reqs[i] = request(http.MethodPost, "/acs", h)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%pool == 0 && i > 0 {
					b.StopTimer()
					v = newVerifier()
					b.StartTimer()
				}
				if _, err := v.Verify(reqs[i%pool]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBasicVerify is the Basic baseline.
func BenchmarkBasicVerify(b *testing.B) {
	v := &httpauth.Verifier{Basic: true, Creds: users}
	r := request(http.MethodPost, "/acs", basic("acs", "pa:ss:word"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChallenge measures issuing a 401 with SHA-256 and MD5
// challenges.
func BenchmarkChallenge(b *testing.B) {
	v := &httpauth.Verifier{Digest: true, Creds: users}
	h := http.Header{}
	b.ReportAllocs()
	for b.Loop() {
		clear(h)
		v.SetChallenges(h, false)
	}
}
