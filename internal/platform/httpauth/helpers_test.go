package httpauth_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/platform/httpauth"
)

// fakeClock is a settable clock so that nonces expire without sleeping.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// challenge fetches the Digest challenge for alg from v.
func challenge(t testing.TB, v *httpauth.Verifier, alg httpauth.Algorithm) httpauth.Challenge {
	t.Helper()
	rec := httptest.NewRecorder()
	v.Challenge(rec)
	chs, err := httpauth.ParseChallenges(rec.Result().Header.Values("WWW-Authenticate"))
	if err != nil {
		t.Fatalf("parsing our own challenges: %v", err)
	}
	for _, ch := range chs {
		if strings.EqualFold(ch.Scheme, "Digest") && ch.Param("algorithm") == string(alg) {
			return ch
		}
	}
	t.Fatalf("no Digest %s challenge in %v", alg, rec.Result().Header.Values("WWW-Authenticate"))
	return httpauth.Challenge{}
}

// signed answers ch like an honest client would for method and uri, after
// letting edit change the parameters: edits are then signed with the right
// password, which is what a tampering test needs to show that the check
// itself, not the response mismatch, refuses the request.
func signed(t testing.TB, ch httpauth.Challenge, method, uri, user, pass string, edit func(*httpauth.DigestAuthorization)) string {
	t.Helper()
	d := httpauth.DigestAuthorization{
		Username:  user,
		Realm:     ch.Param("realm"),
		URI:       uri,
		Algorithm: ch.Param("algorithm"),
		Nonce:     ch.Param("nonce"),
		NC:        "00000001",
		CNonce:    "0a4f113b",
		QOP:       "auth",
		Opaque:    ch.Param("opaque"),
	}
	if edit != nil {
		edit(&d)
	}
	resp, err := d.ComputeResponse(method, pass)
	if err != nil {
		t.Fatalf("ComputeResponse: %v", err)
	}
	d.Response = resp
	return d.String()
}

func request(method, target, authz string) *http.Request {
	r := httptest.NewRequest(method, target, nil)
	if authz != "" {
		r.Header.Set("Authorization", authz)
	}
	return r
}

// wantErr checks err against a sentinel; nil want means success.
func wantErr(t testing.TB, err, want error) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Fatalf("err = %v, want success", err)
	case want != nil && !errors.Is(err, want):
		t.Fatalf("err = %v, want %v", err, want)
	}
}

// recorder is a RoundTripper that records what was sent and received and
// can act between round trips.
type recorder struct {
	mu     sync.Mutex
	next   http.RoundTripper
	authz  []string
	status []int
	stale  []bool
	after  func(n int, resp *http.Response) // called after round trip n (0-based)
}

func (rt *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := rt.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	rt.mu.Lock()
	n := len(rt.status)
	rt.authz = append(rt.authz, req.Header.Get("Authorization"))
	rt.status = append(rt.status, resp.StatusCode)
	rt.stale = append(rt.stale, strings.Contains(strings.Join(resp.Header.Values("WWW-Authenticate"), " "), "stale=true"))
	after := rt.after
	rt.mu.Unlock()
	if after != nil {
		after(n, resp)
	}
	return resp, nil
}
