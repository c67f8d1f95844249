package httpauth_test

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/platform/httpauth"
)

func newDigestVerifier(clock *fakeClock, algs ...httpauth.Algorithm) *httpauth.Verifier {
	return &httpauth.Verifier{Realm: "acs@cpesuite", Digest: true, Algorithms: algs, Creds: users, Now: clock.Now}
}

func TestVerifyDigest(t *testing.T) {
	const uri = "/acs/cwmp?id=42"
	other := &httpauth.Verifier{Digest: true, Realm: "acs@cpesuite", Creds: users}
	otherNonce := challenge(t, other, httpauth.SHA256).Param("nonce")

	tests := []struct {
		name   string
		method string // of the request; POST, which is signed, when empty
		edit   func(*httpauth.DigestAuthorization)
		after  func(string) string // edits the signed header
		noQop  bool                // Verifier.AllowNoQop
		want   error
	}{
		{name: "valid"},
		{name: "upper-case response hex", after: func(h string) string { return upperResponse(t, h) }},
		{name: "short nc", edit: func(d *httpauth.DigestAuthorization) { d.NC = "1" }},
		{name: "username*", after: func(h string) string {
			return strings.Replace(h, `username="cpe-0001"`, `username*=utf-8'en'cpe%2D0001`, 1)
		}},
		{name: "absolute-form uri", edit: func(d *httpauth.DigestAuthorization) { d.URI = "http://acs.example" + uri }},
		{name: "wrong response", after: func(h string) string {
			return setParam(t, h, func(d *httpauth.DigestAuthorization) { d.Response = strings.Repeat("0", 64) })
		}, want: httpauth.ErrBadCredentials},
		{name: "empty response", after: func(h string) string {
			return setParam(t, h, func(d *httpauth.DigestAuthorization) { d.Response = "" })
		}, want: httpauth.ErrBadCredentials},
		{name: "unknown user", edit: func(d *httpauth.DigestAuthorization) { d.Username = "nobody" }, want: httpauth.ErrBadCredentials},
		{name: "wrong realm", edit: func(d *httpauth.DigestAuthorization) { d.Realm = "other" }, want: httpauth.ErrBadCredentials},
		{name: "tampered nonce", edit: func(d *httpauth.DigestAuthorization) { d.Nonce = flipChar(d.Nonce, 3) }, want: httpauth.ErrBadCredentials},
		{name: "tampered nonce tag", edit: func(d *httpauth.DigestAuthorization) { d.Nonce = flipChar(d.Nonce, len(d.Nonce)-2) }, want: httpauth.ErrBadCredentials},
		{name: "truncated nonce", edit: func(d *httpauth.DigestAuthorization) { d.Nonce = d.Nonce[:20] }, want: httpauth.ErrBadCredentials},
		{name: "nonce of another verifier", edit: func(d *httpauth.DigestAuthorization) { d.Nonce = otherNonce }, want: httpauth.ErrBadCredentials},
		{name: "tampered opaque", edit: func(d *httpauth.DigestAuthorization) { d.Opaque = flipChar(d.Opaque, 0) }, want: httpauth.ErrBadCredentials},
		{name: "missing opaque", edit: func(d *httpauth.DigestAuthorization) { d.Opaque = "" }, want: httpauth.ErrBadCredentials},
		{name: "uri of another resource", edit: func(d *httpauth.DigestAuthorization) { d.URI = "/acs/cwmp?id=43" }, want: httpauth.ErrBadCredentials},
		{name: "uri without query", edit: func(d *httpauth.DigestAuthorization) { d.URI = "/acs/cwmp" }, want: httpauth.ErrBadCredentials},
		{name: "absolute uri of another path", edit: func(d *httpauth.DigestAuthorization) { d.URI = "http://acs.example/x" }, want: httpauth.ErrBadCredentials},
		{name: "qop missing", edit: noQop, want: httpauth.ErrBadCredentials},
		{name: "qop missing allowed", edit: noQop, noQop: true},
		// ComputeResponse cannot sign these, so only the qop is changed.
		{name: "qop auth-int", after: func(h string) string {
			return setParam(t, h, func(d *httpauth.DigestAuthorization) { d.QOP = "auth-int" })
		}, want: httpauth.ErrBadCredentials},
		{name: "unknown qop", after: func(h string) string {
			return setParam(t, h, func(d *httpauth.DigestAuthorization) { d.QOP = "bogus" })
		}, want: httpauth.ErrBadCredentials},
		{name: "missing nc", edit: func(d *httpauth.DigestAuthorization) { d.NC = "" }, want: httpauth.ErrBadCredentials},
		{name: "zero nc", edit: func(d *httpauth.DigestAuthorization) { d.NC = "00000000" }, want: httpauth.ErrBadCredentials},
		{name: "non-hex nc", edit: func(d *httpauth.DigestAuthorization) { d.NC = "0000000g" }, want: httpauth.ErrBadCredentials},
		{name: "long nc", edit: func(d *httpauth.DigestAuthorization) { d.NC = "000000001" }, want: httpauth.ErrBadCredentials},
		{name: "missing cnonce", edit: func(d *httpauth.DigestAuthorization) { d.CNonce = "" }, want: httpauth.ErrBadCredentials},
		{name: "algorithm not offered", edit: func(d *httpauth.DigestAuthorization) { d.Algorithm = "SHA-512-256" }, want: httpauth.ErrBadCredentials},
		{name: "algorithm absent means MD5", edit: func(d *httpauth.DigestAuthorization) { d.Algorithm = "" }},
		{name: "algorithm case-insensitive", edit: func(d *httpauth.DigestAuthorization) { d.Algorithm = "sha-256" }},
		{name: "userhash", edit: func(d *httpauth.DigestAuthorization) { d.Userhash = true }, want: httpauth.ErrBadCredentials},
		{name: "missing uri", edit: func(d *httpauth.DigestAuthorization) { d.URI = "" }, want: httpauth.ErrBadCredentials},
		{name: "wrong method", method: http.MethodPut, want: httpauth.ErrBadCredentials},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := newDigestVerifier(newFakeClock(), httpauth.SHA256, httpauth.MD5)
			v.AllowNoQop = tc.noQop
			h := signed(t, challenge(t, v, httpauth.SHA256), http.MethodPost, uri, "cpe-0001", "s3cret", tc.edit)
			if tc.after != nil {
				h = tc.after(h)
			}
			user, err := v.Verify(request(cmp.Or(tc.method, http.MethodPost), uri, h))
			wantErr(t, err, tc.want)
			if err == nil && user != "cpe-0001" {
				t.Fatalf("user = %q", user)
			}
		})
	}
}

func noQop(d *httpauth.DigestAuthorization) {
	d.QOP, d.NC, d.CNonce = "", "", ""
}

func TestVerifyNonceCountReplay(t *testing.T) {
	v := newDigestVerifier(newFakeClock())
	ch := challenge(t, v, httpauth.SHA256)
	withNC := func(nc string) string {
		return signed(t, ch, http.MethodGet, "/", "cpe-0001", "s3cret", func(d *httpauth.DigestAuthorization) { d.NC = nc })
	}
	steps := []struct {
		nc   string
		want error
	}{
		{"00000001", nil},
		{"00000001", httpauth.ErrBadCredentials}, // the exact request again
		{"00000002", nil},
		{"00000005", nil},
		{"00000004", nil}, // overtaken by 5 on another connection
		{"00000004", httpauth.ErrBadCredentials},
		{"00000002", httpauth.ErrBadCredentials},
		{"00000100", nil},
		{"00000006", httpauth.ErrBadCredentials}, // too far behind to tell
	}
	for _, s := range steps {
		_, err := v.Verify(request(http.MethodGet, "/", withNC(s.nc)))
		if s.want == nil && err != nil || s.want != nil && !errors.Is(err, s.want) {
			t.Fatalf("nc=%s: err = %v, want %v", s.nc, err, s.want)
		}
	}

	// A wrong response must not consume a count, or an attacker could lock
	// an honest client out.
	bad := setParam(t, withNC("00000101"), func(d *httpauth.DigestAuthorization) { d.Response = strings.Repeat("b", 64) })
	if _, err := v.Verify(request(http.MethodGet, "/", bad)); !errors.Is(err, httpauth.ErrBadCredentials) {
		t.Fatalf("bad response: err = %v", err)
	}
	if _, err := v.Verify(request(http.MethodGet, "/", withNC("00000101"))); err != nil {
		t.Fatalf("nc=101 after a forged attempt: %v", err)
	}
}

func TestVerifyStaleNonce(t *testing.T) {
	clock := newFakeClock()
	v := newDigestVerifier(clock)
	v.NonceTTL = time.Minute
	h := signed(t, challenge(t, v, httpauth.SHA256), http.MethodGet, "/", "cpe-0001", "s3cret", nil)
	clock.Advance(time.Minute + time.Second)

	_, err := v.Verify(request(http.MethodGet, "/", h))
	wantErr(t, err, httpauth.ErrStale)

	// Stale is only for a correct response: otherwise it would tell a
	// guesser that its nonce, not its password, was the problem.
	wrong := signed(t, challenge(t, v, httpauth.SHA256), http.MethodGet, "/", "cpe-0001", "guess", nil)
	clock.Advance(2 * time.Minute)
	_, err = v.Verify(request(http.MethodGet, "/", wrong))
	wantErr(t, err, httpauth.ErrBadCredentials)

	rec := httptest.NewRecorder()
	v.Reject(rec, request(http.MethodGet, "/", h), httpauth.ErrStale)
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("Reject(ErrStale) status %d", rec.Code)
	}
	for _, c := range rec.Result().Header.Values("WWW-Authenticate") {
		if !strings.HasSuffix(c, ", stale=true") {
			t.Fatalf("challenge without stale=true: %s", c)
		}
	}
}

func TestVerifyNonceFromTheFuture(t *testing.T) {
	clock := newFakeClock()
	v := newDigestVerifier(clock)
	h := signed(t, challenge(t, v, httpauth.SHA256), http.MethodGet, "/", "cpe-0001", "s3cret", nil)
	clock.Advance(-time.Hour)
	_, err := v.Verify(request(http.MethodGet, "/", h))
	wantErr(t, err, httpauth.ErrBadCredentials)
}

func TestVerifySharedKey(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	a := &httpauth.Verifier{Digest: true, Key: key, Creds: users}
	b := &httpauth.Verifier{Digest: true, Key: key, Creds: users}
	h := signed(t, challenge(t, a, httpauth.SHA256), http.MethodGet, "/", "cpe-0001", "s3cret", nil)
	if _, err := b.Verify(request(http.MethodGet, "/", h)); err != nil {
		t.Fatalf("replica refused a nonce of its peer: %v", err)
	}
}

func TestVerifyRequestShape(t *testing.T) {
	v := &httpauth.Verifier{Basic: true, Creds: users}
	tests := []struct {
		name    string
		headers []string
		want    error
	}{
		{"none", nil, httpauth.ErrNoCredentials},
		{"two headers", []string{basic("acs", "pa:ss:word"), basic("acs", "pa:ss:word")}, httpauth.ErrBadCredentials},
		{"empty", []string{""}, httpauth.ErrBadCredentials},
		{"bearer", []string{"Bearer abc"}, httpauth.ErrBadCredentials},
		{"digest when only basic is on", []string{`Digest username="acs"`}, httpauth.ErrBadCredentials},
		{"basic", []string{basic("acs", "pa:ss:word")}, nil},
		{"basic lower-case scheme", []string{"basic " + b64("acs:pa:ss:word")}, nil},
		{"basic unpadded", []string{"Basic " + base64.RawStdEncoding.EncodeToString([]byte("acs:pa:ss:word"))}, nil},
		{"basic no colon", []string{"Basic " + b64("acs")}, httpauth.ErrBadCredentials},
		{"basic bad base64", []string{"Basic !!!"}, httpauth.ErrBadCredentials},
		{"basic nothing", []string{"Basic"}, httpauth.ErrBadCredentials},
		{"basic wrong password", []string{basic("acs", "pa:ss:wor")}, httpauth.ErrBadCredentials},
		{"basic empty password for unknown user", []string{basic("nobody", "")}, httpauth.ErrBadCredentials},
		{"basic password prefix", []string{basic("acs", "pa")}, httpauth.ErrBadCredentials},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			for _, h := range tc.headers {
				r.Header.Add("Authorization", h)
			}
			_, err := v.Verify(r)
			wantErr(t, err, tc.want)
		})
	}
}

func TestVerifyMalformedNeverPanics(t *testing.T) {
	v := &httpauth.Verifier{Basic: true, Digest: true, AllowNoQop: true, Creds: users}
	for _, h := range malformedAuthorizations {
		_, err := v.Verify(request(http.MethodGet, "/", h))
		if err == nil {
			t.Fatalf("Verify(%.60q) succeeded", h)
		}
		if !errors.Is(err, httpauth.ErrBadCredentials) && !errors.Is(err, httpauth.ErrNoCredentials) {
			t.Fatalf("Verify(%.60q) = %v, want a credentials error", h, err)
		}
	}
}

func TestChallengeHeaders(t *testing.T) {
	v := &httpauth.Verifier{Realm: `the "ACS"`, Basic: true, Digest: true,
		Algorithms: []httpauth.Algorithm{httpauth.MD5, httpauth.MD5Sess, httpauth.SHA256}, Creds: users}
	rec := httptest.NewRecorder()
	v.Challenge(rec)
	if rec.Code != http.StatusUnauthorized || rec.Body.Len() != 0 {
		t.Fatalf("status %d, body %q", rec.Code, rec.Body)
	}
	values := rec.Result().Header.Values("WWW-Authenticate")
	chs, err := httpauth.ParseChallenges(values)
	if err != nil {
		t.Fatalf("ParseChallenges(%q): %v", values, err)
	}
	var got []string
	for _, ch := range chs {
		got = append(got, ch.Scheme+" "+ch.Param("algorithm"))
		if ch.Param("realm") != `the "ACS"` {
			t.Errorf("%s realm %q", ch.Scheme, ch.Param("realm"))
		}
		if ch.Scheme == "Digest" && (ch.Param("qop") != "auth" || ch.Param("nonce") != chs[0].Param("nonce") || ch.Param("opaque") == "") {
			t.Errorf("digest challenge %v", ch.Params)
		}
	}
	if want := "Digest SHA-256,Digest MD5,Digest MD5-sess,Basic "; strings.Join(got, ",") != want {
		t.Fatalf("challenges %q, want %q", strings.Join(got, ","), want)
	}
}

func TestVerifierDefaultsToDigest(t *testing.T) {
	v := &httpauth.Verifier{Creds: users}
	rec := httptest.NewRecorder()
	v.Challenge(rec)
	values := rec.Result().Header.Values("WWW-Authenticate")
	if len(values) != 2 || !strings.HasPrefix(values[0], `Digest realm="cpesuite", qop="auth", algorithm=SHA-256, nonce="`) ||
		!strings.Contains(values[1], "algorithm=MD5,") {
		t.Fatalf("default challenges %q", values)
	}
}

func TestStoreFailureIsNotAnAuthFailure(t *testing.T) {
	storeDown := errors.New("store down")
	creds := httpauth.CredentialsFunc(func(ctx context.Context, user string) (string, bool, error) {
		return "", false, storeDown
	})
	for _, scheme := range []string{"basic", "digest"} {
		v := &httpauth.Verifier{Basic: true, Digest: true, Creds: creds}
		h := basic("acs", "x")
		if scheme == "digest" {
			h = signed(t, challenge(t, v, httpauth.SHA256), http.MethodGet, "/", "acs", "x", nil)
		}
		_, err := v.Verify(request(http.MethodGet, "/", h))
		if !errors.Is(err, storeDown) || errors.Is(err, httpauth.ErrBadCredentials) {
			t.Fatalf("%s: err = %v, want the store error", scheme, err)
		}

		// Middleware: a bare 500 by default, ErrorHandler when set.
		next := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("next called") })
		rec := httptest.NewRecorder()
		v.Middleware(next).ServeHTTP(rec, request(http.MethodGet, "/", h))
		if rec.Code != http.StatusInternalServerError || strings.Contains(rec.Body.String(), "store") {
			t.Fatalf("%s: status %d body %q", scheme, rec.Code, rec.Body)
		}
		v2 := &httpauth.Verifier{Basic: true, Creds: creds, ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			w.WriteHeader(http.StatusServiceUnavailable)
		}}
		rec = httptest.NewRecorder()
		v2.Middleware(next).ServeHTTP(rec, request(http.MethodGet, "/", basic("acs", "x")))
		if rec.Code != http.StatusServiceUnavailable {
			t.Fatalf("ErrorHandler not used: status %d", rec.Code)
		}
	}
}

func TestMiddlewareChallengesWithoutCredentials(t *testing.T) {
	v := &httpauth.Verifier{Digest: true, Creds: users}
	next := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("next called") })
	rec := httptest.NewRecorder()
	v.Middleware(next).ServeHTTP(rec, request(http.MethodGet, "/", ""))
	if rec.Code != http.StatusUnauthorized || len(rec.Result().Header.Values("WWW-Authenticate")) != 2 {
		t.Fatalf("status %d, challenges %q", rec.Code, rec.Result().Header.Values("WWW-Authenticate"))
	}
}

func TestInvalidConfiguration(t *testing.T) {
	tests := map[string]*httpauth.Verifier{
		"unknown algorithm": {Algorithms: []httpauth.Algorithm{"SHA-1"}, Creds: users},
		"short key":         {Key: []byte("short"), Creds: users},
		"no creds":          {},
		"negative TTL":      {NonceTTL: -time.Second, Creds: users},
	}
	for name, v := range tests {
		t.Run(name, func(t *testing.T) {
			if v.Validate() == nil {
				t.Fatalf("Validate accepted it")
			}
			_, err := v.Verify(request(http.MethodGet, "/", basic("acs", "pa:ss:word")))
			if err == nil || isCredentialError(err) {
				t.Fatalf("Verify err = %v, want a configuration error", err)
			}
			rec := httptest.NewRecorder()
			v.Challenge(rec) // must not panic
		})
	}
}

func TestUsernameFrom(t *testing.T) {
	if _, ok := httpauth.UsernameFrom(context.Background()); ok {
		t.Fatalf("username in an empty context")
	}
	ctx := httpauth.ContextWithUsername(context.Background(), "u")
	if u, ok := httpauth.UsernameFrom(ctx); !ok || u != "u" {
		t.Fatalf("UsernameFrom = %q, %v", u, ok)
	}
}

func isCredentialError(err error) bool {
	return errors.Is(err, httpauth.ErrNoCredentials) || errors.Is(err, httpauth.ErrBadCredentials) || errors.Is(err, httpauth.ErrStale)
}

func basic(user, pass string) string { return "Basic " + b64(user+":"+pass) }

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func flipChar(s string, i int) string {
	b := []byte(s)
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

// setParam edits a formatted Authorization header without re-signing it.
func setParam(t testing.TB, h string, edit func(*httpauth.DigestAuthorization)) string {
	t.Helper()
	d, err := httpauth.ParseDigestAuthorization(h)
	if err != nil {
		t.Fatalf("ParseDigestAuthorization(%q): %v", h, err)
	}
	edit(&d)
	return d.String()
}

func upperResponse(t testing.TB, h string) string {
	return setParam(t, h, func(d *httpauth.DigestAuthorization) { d.Response = strings.ToUpper(d.Response) })
}
