package httpauth_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cpesuite/internal/platform/httpauth"
)

var users = httpauth.StaticCredentials{
	"cpe-0001":    "s3cret",
	"acs":         "pa:ss:word", // RFC 7617: the password may contain colons
	"Jäsøn Doe":   "Secret, or not?",
	"quote\"user": `back\slash`,
}

// newServer serves v.Middleware around a handler that echoes the username
// and the request body as "user|body".
func newServer(t *testing.T, v *httpauth.Verifier) *httptest.Server {
	t.Helper()
	h := v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, ok := httpauth.UsernameFrom(r.Context())
		if !ok {
			t.Errorf("no username in the context")
		}
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s|%s", user, body)
	}))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func newClient(srv *httptest.Server, user, pass string) (*httpauth.Client, *recorder) {
	rec := &recorder{next: srv.Client().Transport}
	return &httpauth.Client{HTTP: &http.Client{Transport: rec}, Username: user, Password: pass}, rec
}

func TestClientAgainstVerifier(t *testing.T) {
	digest := func(algs ...httpauth.Algorithm) *httpauth.Verifier {
		return &httpauth.Verifier{Realm: "acs@cpesuite", Digest: true, Algorithms: algs, Creds: users}
	}
	tests := []struct {
		name         string
		verifier     *httpauth.Verifier
		user, pass   string
		preferDigest bool
		wantErr      error
		wantAuth     string // prefix of the Authorization header that succeeded
	}{
		{name: "basic", verifier: &httpauth.Verifier{Basic: true, Creds: users}, user: "acs", pass: "pa:ss:word", wantAuth: "Basic "},
		{name: "digest MD5", verifier: digest(httpauth.MD5), user: "cpe-0001", pass: "s3cret", wantAuth: "Digest "},
		{name: "digest MD5-sess", verifier: digest(httpauth.MD5Sess), user: "cpe-0001", pass: "s3cret"},
		{name: "digest SHA-256", verifier: digest(httpauth.SHA256), user: "cpe-0001", pass: "s3cret"},
		{name: "digest SHA-256-sess", verifier: digest(httpauth.SHA256Sess), user: "cpe-0001", pass: "s3cret"},
		{name: "digest SHA-512-256", verifier: digest(httpauth.SHA512_256), user: "cpe-0001", pass: "s3cret"},
		{name: "digest SHA-512-256-sess", verifier: digest(httpauth.SHA512_256Sess), user: "cpe-0001", pass: "s3cret"},
		{name: "digest non-ASCII user", verifier: digest(httpauth.SHA256), user: "Jäsøn Doe", pass: "Secret, or not?"},
		{name: "digest quote in user", verifier: digest(httpauth.MD5), user: "quote\"user", pass: `back\slash`},
		{name: "default algorithms pick SHA-256", verifier: digest(), user: "cpe-0001", pass: "s3cret", wantAuth: "algorithm=SHA-256"},
		{name: "SHA-256 over MD5", verifier: digest(httpauth.MD5, httpauth.SHA256), user: "cpe-0001", pass: "s3cret", wantAuth: "algorithm=SHA-256"},
		{name: "digest over basic", verifier: &httpauth.Verifier{Basic: true, Digest: true, Algorithms: []httpauth.Algorithm{httpauth.MD5}, Creds: users}, user: "cpe-0001", pass: "s3cret", wantAuth: "Digest "},
		{name: "basic wrong password", verifier: &httpauth.Verifier{Basic: true, Creds: users}, user: "acs", pass: "pa:ss", wantErr: httpauth.ErrUnauthorized},
		{name: "MD5 wrong password", verifier: digest(httpauth.MD5), user: "cpe-0001", pass: "S3cret", wantErr: httpauth.ErrUnauthorized},
		{name: "SHA-256 wrong password", verifier: digest(httpauth.SHA256), user: "cpe-0001", pass: "", wantErr: httpauth.ErrUnauthorized},
		{name: "MD5-sess wrong password", verifier: digest(httpauth.MD5Sess), user: "cpe-0001", pass: "x", wantErr: httpauth.ErrUnauthorized},
		{name: "digest unknown user", verifier: digest(), user: "nobody", pass: "s3cret", wantErr: httpauth.ErrUnauthorized},
		{name: "basic unknown user", verifier: &httpauth.Verifier{Basic: true, Creds: users}, user: "nobody", pass: "", wantErr: httpauth.ErrUnauthorized},
		{name: "prefer digest refuses basic", verifier: &httpauth.Verifier{Basic: true, Creds: users}, user: "acs", pass: "pa:ss:word", preferDigest: true, wantErr: httpauth.ErrNoSupportedChallenge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, tc.verifier)
			c, rec := newClient(srv, tc.user, tc.pass)
			c.PreferDigest = tc.preferDigest
			for _, method := range []string{http.MethodGet, http.MethodPost} {
				body := "<soap:Envelope/>"
				req, _ := http.NewRequest(method, srv.URL+"/acs/path?id=1&x=%2F", strings.NewReader(body))
				resp, err := c.Do(req)
				wantErr(t, err, tc.wantErr)
				if err != nil {
					if resp != nil {
						t.Fatalf("%s: got a response with error %v", method, err)
					}
					continue
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || string(got) != tc.user+"|"+body {
					t.Fatalf("%s: status %d body %q, want 200 %q", method, resp.StatusCode, got, tc.user+"|"+body)
				}
				if last := rec.authz[len(rec.authz)-1]; !strings.Contains(last, tc.wantAuth) {
					t.Fatalf("%s: Authorization %q, want it to contain %q", method, last, tc.wantAuth)
				}
			}
		})
	}
}

func TestClientStaleNonceRetriesTransparently(t *testing.T) {
	clock := newFakeClock()
	v := &httpauth.Verifier{Digest: true, NonceTTL: time.Minute, Creds: users, Now: clock.Now}
	srv := newServer(t, v)
	c, rec := newClient(srv, "cpe-0001", "s3cret")
	// The nonce of the first challenge expires before the client answers it.
	rec.after = func(n int, _ *http.Response) {
		if n == 0 {
			clock.Advance(2 * time.Minute)
		}
	}
	resp, err := c.Do(mustRequest(t, http.MethodGet, srv.URL+"/", ""))
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	resp.Body.Close()
	if want := []int{401, 401, 200}; fmt.Sprint(rec.status) != fmt.Sprint(want) {
		t.Fatalf("statuses %v, want %v", rec.status, want)
	}
	if !rec.stale[1] {
		t.Fatalf("second 401 is not stale=true")
	}
}

func TestClientGivesUpAfterOneStaleRetry(t *testing.T) {
	clock := newFakeClock()
	v := &httpauth.Verifier{Digest: true, NonceTTL: time.Minute, Creds: users, Now: clock.Now}
	srv := newServer(t, v)
	c, rec := newClient(srv, "cpe-0001", "s3cret")
	rec.after = func(int, *http.Response) { clock.Advance(2 * time.Minute) }
	_, err := c.Do(mustRequest(t, http.MethodGet, srv.URL+"/", ""))
	wantErr(t, err, httpauth.ErrUnauthorized)
	if len(rec.status) != 3 {
		t.Fatalf("%d round trips, want 3", len(rec.status))
	}
}

func TestClientNoSupportedChallenge(t *testing.T) {
	tests := map[string][]string{
		"no challenge":         nil,
		"unknown scheme":       {"Negotiate", "Bearer realm=\"x\""},
		"unknown algorithm":    {`Digest realm="r", nonce="n", qop="auth", algorithm=SHA-1`},
		"auth-int only":        {`Digest realm="r", nonce="n", qop="auth-int", algorithm=MD5`},
		"sess without qop":     {`Digest realm="r", nonce="n", algorithm=MD5-sess`},
		"digest without nonce": {`Digest realm="r", qop="auth"`},
		"unparseable":          {`Digest realm="r`},
	}
	for name, challenges := range tests {
		t.Run(name, func(t *testing.T) {
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				for _, c := range challenges {
					w.Header().Add("WWW-Authenticate", c)
				}
				w.WriteHeader(http.StatusUnauthorized)
			}))
			defer srv.Close()
			c := &httpauth.Client{HTTP: srv.Client(), Username: "u", Password: "p"}
			_, err := c.Do(mustRequest(t, http.MethodGet, srv.URL, ""))
			wantErr(t, err, httpauth.ErrNoSupportedChallenge)
			if n := hits.Load(); n != 1 {
				t.Fatalf("%d requests, want 1", n)
			}
		})
	}
}

func TestClientAnswersLegacyDigest(t *testing.T) {
	// An RFC 2069 server: no qop in the challenge, so no nc or cnonce back.
	v := &httpauth.Verifier{Digest: true, Algorithms: []httpauth.Algorithm{httpauth.MD5}, AllowNoQop: true, Creds: users}
	nonceSrc := httptest.NewRecorder()
	v.Challenge(nonceSrc)
	chs, _ := httpauth.ParseChallenges(nonceSrc.Result().Header.Values("WWW-Authenticate"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Digest realm=%q, nonce=%q, opaque=%q`,
				chs[0].Param("realm"), chs[0].Param("nonce"), chs[0].Param("opaque")))
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if strings.Contains(r.Header.Get("Authorization"), "qop") {
			t.Errorf("legacy answer carries qop: %s", r.Header.Get("Authorization"))
		}
		if _, err := v.Verify(r); err != nil {
			t.Errorf("Verify: %v", err)
		}
	}))
	defer srv.Close()
	c := &httpauth.Client{HTTP: srv.Client(), Username: "cpe-0001", Password: "s3cret"}
	resp, err := c.Do(mustRequest(t, http.MethodGet, srv.URL+"/x", ""))
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	resp.Body.Close()
}

func TestClientRefusesBodyWithoutGetBody(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL, io.NopCloser(strings.NewReader("body")))
	req.GetBody = nil
	c := &httpauth.Client{HTTP: srv.Client()}
	_, err := c.Do(req)
	wantErr(t, err, httpauth.ErrBodyNotReplayable)
	if hits.Load() != 0 {
		t.Fatalf("the request was sent anyway")
	}
}

func TestClientPassesThroughWhenNoAuthNeeded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Errorf("credentials sent unasked")
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	c := &httpauth.Client{HTTP: srv.Client(), Username: "u", Password: "p"}
	resp, err := c.Do(mustRequest(t, http.MethodGet, srv.URL, ""))
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("Do = %v, %v; want 204", resp, err)
	}
	resp.Body.Close()
}

func TestClientBasicUsernameWithColon(t *testing.T) {
	v := &httpauth.Verifier{Basic: true, Creds: users}
	srv := newServer(t, v)
	c, rec := newClient(srv, "a:b", "p")
	_, err := c.Do(mustRequest(t, http.MethodGet, srv.URL, ""))
	if err == nil || errors.Is(err, httpauth.ErrUnauthorized) {
		t.Fatalf("err = %v, want a refusal before sending", err)
	}
	if len(rec.status) != 1 {
		t.Fatalf("%d round trips, want only the unauthenticated one", len(rec.status))
	}
}

func TestClientConcurrent(t *testing.T) {
	v := &httpauth.Verifier{Basic: true, Digest: true, Creds: users}
	srv := newServer(t, v)
	c, _ := newClient(srv, "cpe-0001", "s3cret")
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 20 {
				body := fmt.Sprintf("g%d-%d", g, i)
				resp, err := c.Do(mustRequest(t, http.MethodPost, srv.URL+"/acs", body))
				if err != nil {
					t.Errorf("Do: %v", err)
					return
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(got) != "cpe-0001|"+body {
					t.Errorf("body %q", got)
				}
			}
		})
	}
	wg.Wait()
}

func mustRequest(t testing.TB, method, url, body string) *http.Request {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatalf("NewRequest: %v", err)
	}
	return req
}
