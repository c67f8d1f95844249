package portainer_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/testrunner/portainer"
	"cpesuite/internal/testrunner/portainer/portainertest"
)

const composeV1 = "services:\n  worker:\n    image: cpesuite:1\n"
const composeV2 = "services:\n  worker:\n    image: cpesuite:2\n"

func newClient(t *testing.T, cfg portainer.Config) *portainer.Client {
	t.Helper()
	c, err := portainer.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// count returns how many logged requests start with prefix ("POST /api/auth").
func count(s *portainertest.Server, prefix string) int {
	n := 0
	for _, r := range s.Requests() {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

// requireUpstream checks err is a 502 whose public message is want and
// whose full text carries none of the secrets.
func requireUpstream(t *testing.T, err error, want string, secrets ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want upstream error %q", want)
	}
	if !errors.Is(err, apperr.ErrUpstream) || apperr.Status(err) != http.StatusBadGateway {
		t.Fatalf("err = %v (status %d), want ErrUpstream/502", err, apperr.Status(err))
	}
	if got := apperr.PublicMessage(err); got != want {
		t.Fatalf("public message = %q, want %q", got, want)
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(err.Error(), s) {
			t.Fatalf("error text leaks a secret: %q", err.Error())
		}
	}
}

func TestStackRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		cfg  func(*portainertest.Server) portainer.Config
	}{
		{"jwt, discovered endpoint", func(s *portainertest.Server) portainer.Config { return s.Config() }},
		{"api key, configured endpoint", func(s *portainertest.Server) portainer.Config {
			return portainer.Config{URL: s.URL, APIKey: portainertest.APIKey, EndpointID: 1}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := portainertest.New(t)
			c := newClient(t, tt.cfg(srv))
			ctx := context.Background()

			env := []portainer.EnvVar{{Name: "WORKER_NAME", Value: "w1"}, {Name: "TOKEN", Value: "a=b c"}}
			st, err := c.CreateStack(ctx, "tr-worker-w1", composeV1, env)
			if err != nil {
				t.Fatalf("CreateStack: %v", err)
			}
			if st.ID <= 0 || st.Name != "tr-worker-w1" || st.EndpointID != 1 || st.Type != portainer.StackTypeCompose {
				t.Fatalf("created stack = %+v", st)
			}
			if f, _ := srv.StackFile("tr-worker-w1"); f != composeV1 {
				t.Fatalf("double holds file %q", f)
			}

			got, err := c.StackByName(ctx, "tr-worker-w1")
			if err != nil || got.ID != st.ID || fmt.Sprint(got.Env) != fmt.Sprint(env) {
				t.Fatalf("StackByName = %+v, %v; want id %d env %v", got, err, st.ID, env)
			}
			if file, err := c.StackFile(ctx, st.ID); err != nil || file != composeV1 {
				t.Fatalf("StackFile = %q, %v", file, err)
			}

			env2 := []portainer.EnvVar{{Name: "WORKER_NAME", Value: "w1"}, {Name: "MODEL", Value: "m2"}}
			up, err := c.UpdateStack(ctx, st.ID, composeV2, env2, true)
			if err != nil || up.ID != st.ID || fmt.Sprint(up.Env) != fmt.Sprint(env2) {
				t.Fatalf("UpdateStack = %+v, %v", up, err)
			}
			if file, err := c.StackFile(ctx, st.ID); err != nil || file != composeV2 {
				t.Fatalf("StackFile after update = %q, %v", file, err)
			}

			stacks, err := c.Stacks(ctx)
			if err != nil || len(stacks) != 1 {
				t.Fatalf("Stacks = %+v, %v", stacks, err)
			}
			if err := c.DeleteStack(ctx, st.ID); err != nil {
				t.Fatalf("DeleteStack: %v", err)
			}
			if n := len(srv.Stacks()); n != 0 {
				t.Fatalf("double still holds %d stacks", n)
			}
			_, err = c.StackByName(ctx, "tr-worker-w1")
			if apperr.Status(err) != http.StatusNotFound {
				t.Fatalf("StackByName after delete = %v, want 404", err)
			}
			stacks, err = c.Stacks(ctx)
			if err != nil || stacks == nil || len(stacks) != 0 {
				t.Fatalf("Stacks after delete = %#v, %v; want an empty, non-nil list", stacks, err)
			}
		})
	}
}

func TestDeleteStackByName(t *testing.T) {
	srv := portainertest.New(t)
	c := newClient(t, srv.Config())
	ctx := context.Background()
	if _, err := c.CreateStack(ctx, "mcp-tr-emul-lab", composeV1, nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		stack       string
		wantDeleted bool
	}{
		{"present", "mcp-tr-emul-lab", true},
		{"gone after the first delete", "mcp-tr-emul-lab", false},
		{"never existed", "tr-worker-nope", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			deleted, err := c.DeleteStackByName(ctx, tt.stack)
			if err != nil || deleted != tt.wantDeleted {
				t.Fatalf("DeleteStackByName(%q) = %v, %v; want %v, nil", tt.stack, deleted, err, tt.wantDeleted)
			}
		})
	}
	if n := len(srv.Stacks()); n != 0 {
		t.Fatalf("double still holds %d stacks", n)
	}
}

func TestDeleteStackByNameUpstreamFailure(t *testing.T) {
	srv := portainertest.New(t)
	c := newClient(t, srv.Config())
	srv.FailNext(http.MethodGet, "/api/stacks", http.StatusInternalServerError)
	deleted, err := c.DeleteStackByName(context.Background(), "tr-worker-w1")
	if deleted {
		t.Fatal("deleted = true on a failed listing")
	}
	requireUpstream(t, err, "Portainer: list stacks: HTTP 500")
}

func TestEndpointDiscovery(t *testing.T) {
	tests := []struct {
		name          string
		endpoints     []portainer.Endpoint
		configured    int
		want          int
		wantListCalls int
		wantErr       string
	}{
		{"first listed wins", []portainer.Endpoint{{ID: 7, Name: "b"}, {ID: 3, Name: "a"}}, 0, 7, 1, ""},
		{"configured needs no lookup", []portainer.Endpoint{{ID: 7}, {ID: 3}}, 3, 3, 0, ""},
		{"none defined", []portainer.Endpoint{}, 0, 0, 1, "Portainer: no environment (endpoint) is defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := portainertest.New(t, portainertest.WithEndpoints(tt.endpoints...))
			cfg := srv.Config()
			cfg.EndpointID = tt.configured
			c := newClient(t, cfg)
			for range 3 { // cached after the first success
				id, err := c.Endpoint(context.Background())
				if tt.wantErr != "" {
					requireUpstream(t, err, tt.wantErr)
					break
				}
				if err != nil || id != tt.want {
					t.Fatalf("Endpoint = %d, %v; want %d", id, err, tt.want)
				}
			}
			if n := count(srv, "GET /api/endpoints"); n != tt.wantListCalls {
				t.Fatalf("GET /api/endpoints called %d times, want %d", n, tt.wantListCalls)
			}
		})
	}
}

func TestConcurrentDiscoveryListsEndpointsOnce(t *testing.T) {
	srv := portainertest.New(t)
	c := newClient(t, srv.Config())
	concurrently(t, 16, func() error {
		id, err := c.Endpoint(context.Background())
		if err == nil && id != 1 {
			err = fmt.Errorf("Endpoint = %d, want 1", id)
		}
		return err
	})
	if n := count(srv, "GET /api/endpoints"); n != 1 {
		t.Fatalf("GET /api/endpoints called %d times, want 1", n)
	}
}

func TestStacksAreScopedToTheEndpoint(t *testing.T) {
	srv := portainertest.New(t, portainertest.WithEndpoints(portainer.Endpoint{ID: 1}, portainer.Endpoint{ID: 2}))
	ctx := context.Background()
	c1 := newClient(t, srv.Config())
	cfg2 := srv.Config()
	cfg2.EndpointID = 2
	c2 := newClient(t, cfg2)
	if _, err := c1.CreateStack(ctx, "tr-worker-w1", composeV1, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.StackByName(ctx, "tr-worker-w1"); apperr.Status(err) != http.StatusNotFound {
		t.Fatalf("StackByName on the other endpoint = %v, want 404", err)
	}
	if deleted, err := c2.DeleteStackByName(ctx, "tr-worker-w1"); err != nil || deleted {
		t.Fatalf("DeleteStackByName on the other endpoint = %v, %v; want false, nil", deleted, err)
	}
	if len(srv.Stacks()) != 1 {
		t.Fatal("a client of endpoint 2 removed a stack of endpoint 1")
	}
}

func TestAPIKeyAuth(t *testing.T) {
	srv := portainertest.New(t)
	c := newClient(t, portainer.Config{URL: srv.URL, APIKey: portainertest.APIKey})
	if _, err := c.Stacks(context.Background()); err != nil {
		t.Fatalf("Stacks with API key: %v", err)
	}
	if n := count(srv, "POST /api/auth"); n != 0 {
		t.Fatalf("API key client called /api/auth %d times", n)
	}

	const wrongKey = "ptr_wrong-key-0123456789"
	bad := newClient(t, portainer.Config{URL: srv.URL, APIKey: wrongKey, EndpointID: 1})
	before := len(srv.Requests())
	_, err := bad.Stacks(context.Background())
	requireUpstream(t, err, "Portainer: list stacks: HTTP 401", wrongKey)
	if n := len(srv.Requests()) - before; n != 1 {
		t.Fatalf("a rejected API key caused %d requests, want 1 (no retry)", n)
	}
}

func TestReauthenticatesOnceAfterExpiry(t *testing.T) {
	srv := portainertest.New(t)
	c := newClient(t, srv.Config())
	ctx := context.Background()
	if _, err := c.Stacks(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(srv, "POST /api/auth"); n != 1 {
		t.Fatalf("first call authenticated %d times, want 1", n)
	}
	if _, err := c.Stacks(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(srv, "POST /api/auth"); n != 1 {
		t.Fatalf("the JWT is not cached: %d authentications", n)
	}
	srv.ExpireTokens()
	if _, err := c.CreateStack(ctx, "tr-worker-w1", composeV1, nil); err != nil {
		t.Fatalf("CreateStack after expiry: %v", err)
	}
	if n := count(srv, "POST /api/auth"); n != 2 {
		t.Fatalf("after expiry: %d authentications, want exactly 2", n)
	}
	if len(srv.Stacks()) != 1 {
		t.Fatal("the retried create did not reach the double")
	}
}

// concurrently runs f from n goroutines released at once and fails the test
// on any error.
func concurrently(t *testing.T, n int, f func() error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			if err := f(); err != nil {
				errs <- err
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent call: %v", err)
	}
}

func TestConcurrentCallersAuthenticateOnce(t *testing.T) {
	srv := portainertest.New(t)
	cfg := srv.Config()
	cfg.EndpointID = 1 // so that endpoint discovery does not serialise the cold start
	c := newClient(t, cfg)
	ctx := context.Background()
	const callers = 16
	run := func() {
		concurrently(t, callers, func() error { _, err := c.Stacks(ctx); return err })
	}
	run() // cold start: nobody has a token yet
	if n := count(srv, "POST /api/auth"); n != 1 {
		t.Fatalf("cold start: %d authentications, want 1", n)
	}
	srv.ExpireTokens()
	run()
	if n := count(srv, "POST /api/auth"); n != 2 {
		t.Fatalf("after expiry: %d authentications, want 2", n)
	}
}

func TestAuthenticationFailures(t *testing.T) {
	tests := []struct {
		name     string
		password string
		fail     int // status injected on /api/auth, 0 for none
		want     string
	}{
		{"wrong password is 422", "not-the-password", 0, "Portainer: authentication failed"},
		{"401 from /api/auth", portainertest.Password, http.StatusUnauthorized, "Portainer: authentication failed"},
		{"500 from /api/auth", portainertest.Password, http.StatusInternalServerError, "Portainer: authenticate: HTTP 500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := portainertest.New(t)
			if tt.fail != 0 {
				srv.FailNext(http.MethodPost, "/api/auth", tt.fail)
			}
			c := newClient(t, portainer.Config{URL: srv.URL, Username: portainertest.Username, Password: tt.password})
			_, err := c.Stacks(context.Background())
			requireUpstream(t, err, tt.want, tt.password)
		})
	}
}

func TestUpstreamErrors(t *testing.T) {
	tests := []struct {
		name   string
		method string
		prefix string
		status int
		call   func(context.Context, *portainer.Client) error
		want   string
	}{
		{"create", http.MethodPost, "/api/stacks/create", 500, func(ctx context.Context, c *portainer.Client) error {
			_, err := c.CreateStack(ctx, "tr-worker-w1", composeV1, nil)
			return err
		}, "Portainer: create stack tr-worker-w1: HTTP 500"},
		{"list", http.MethodGet, "/api/stacks", 503, func(ctx context.Context, c *portainer.Client) error {
			_, err := c.Stacks(ctx)
			return err
		}, "Portainer: list stacks: HTTP 503"},
		{"endpoints", http.MethodGet, "/api/endpoints", 500, func(ctx context.Context, c *portainer.Client) error {
			_, err := c.Endpoint(ctx)
			return err
		}, "Portainer: list endpoints: HTTP 500"},
		{"restart", http.MethodPost, "/api/endpoints/1/docker", 500, func(ctx context.Context, c *portainer.Client) error {
			return c.RestartContainer(ctx, "mcp-emul")
		}, "Portainer: restart container mcp-emul: HTTP 500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := portainertest.New(t)
			c := newClient(t, srv.Config())
			srv.FailNext(tt.method, tt.prefix, tt.status)
			err := tt.call(context.Background(), c)
			requireUpstream(t, err, tt.want, append(srv.Tokens(), portainertest.Password)...)
			var se *portainer.StatusError
			if !errors.As(err, &se) || se.Status != tt.status || !strings.Contains(err.Error(), "Injected failure") {
				t.Fatalf("cause = %v, want a StatusError %d carrying Portainer's details", err, tt.status)
			}
		})
	}
}

func TestNotFoundAndConflictStayRecognisable(t *testing.T) {
	srv := portainertest.New(t, portainertest.WithContainers("mcp-emul"))
	c := newClient(t, srv.Config())
	ctx := context.Background()
	if _, err := c.CreateStack(ctx, "tr-worker-w1", composeV1, nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		call func() error
		kind error
		want string
	}{
		{"duplicate name", func() error { _, err := c.CreateStack(ctx, "tr-worker-w1", composeV1, nil); return err },
			apperr.ErrConflict, "Portainer: create stack tr-worker-w1: HTTP 409"},
		{"unknown stack file", func() error { _, err := c.StackFile(ctx, 999); return err },
			apperr.ErrNotFound, "Portainer: read stack file 999: HTTP 404"},
		{"unknown stack update", func() error { _, err := c.UpdateStack(ctx, 999, composeV1, nil, false); return err },
			apperr.ErrNotFound, "Portainer: update stack 999: HTTP 404"},
		{"unknown stack delete", func() error { return c.DeleteStack(ctx, 999) },
			apperr.ErrNotFound, "Portainer: delete stack 999: HTTP 404"},
		{"unknown container", func() error { return c.RestartContainer(ctx, "ghost") },
			apperr.ErrNotFound, "Portainer: restart container ghost: HTTP 404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			requireUpstream(t, err, tt.want)
			if !errors.Is(err, tt.kind) {
				t.Fatalf("errors.Is(%v, %v) = false", err, tt.kind)
			}
		})
	}
}

func TestUnknownConfiguredEndpoint(t *testing.T) {
	srv := portainertest.New(t)
	cfg := srv.Config()
	cfg.EndpointID = 42
	c := newClient(t, cfg)
	_, err := c.CreateStack(context.Background(), "tr-worker-w1", composeV1, nil)
	requireUpstream(t, err, "Portainer: create stack tr-worker-w1: HTTP 404")
}

func TestRestartContainer(t *testing.T) {
	srv := portainertest.New(t)
	c := newClient(t, srv.Config())
	for _, name := range []string{"mcp-emul", "/cpesuite_worker_1"} {
		if err := c.RestartContainer(context.Background(), name); err != nil {
			t.Fatalf("RestartContainer(%q): %v", name, err)
		}
	}
	if got := fmt.Sprint(srv.Restarts()); got != "[mcp-emul cpesuite_worker_1]" {
		t.Fatalf("restarts = %s", got)
	}
}

func TestInvalidInputIsRejectedLocally(t *testing.T) {
	srv := portainertest.New(t)
	c := newClient(t, srv.Config())
	ctx := context.Background()
	long := strings.Repeat("a", portainer.MaxStackNameLen+1)
	tests := []struct {
		name string
		call func() error
	}{
		{"empty name", func() error { _, err := c.CreateStack(ctx, "", composeV1, nil); return err }},
		{"upper case", func() error { _, err := c.CreateStack(ctx, "TR-worker", composeV1, nil); return err }},
		{"leading dash", func() error { _, err := c.CreateStack(ctx, "-tr", composeV1, nil); return err }},
		{"leading underscore", func() error { _, err := c.CreateStack(ctx, "_tr", composeV1, nil); return err }},
		{"space", func() error { _, err := c.CreateStack(ctx, "tr worker", composeV1, nil); return err }},
		{"slash", func() error { _, err := c.CreateStack(ctx, "tr/../x", composeV1, nil); return err }},
		{"dot", func() error { _, err := c.CreateStack(ctx, "tr.worker", composeV1, nil); return err }},
		{"non-ascii", func() error { _, err := c.CreateStack(ctx, "trä", composeV1, nil); return err }},
		{"too long", func() error { _, err := c.CreateStack(ctx, long, composeV1, nil); return err }},
		{"empty compose", func() error { _, err := c.CreateStack(ctx, "tr-worker-w1", " \n", nil); return err }},
		{"bad env name", func() error {
			_, err := c.CreateStack(ctx, "tr-worker-w1", composeV1, []portainer.EnvVar{{Name: "A=B", Value: "x"}})
			return err
		}},
		{"env value with newline", func() error {
			_, err := c.CreateStack(ctx, "tr-worker-w1", composeV1, []portainer.EnvVar{{Name: "A", Value: "x\nADMIN=1"}})
			return err
		}},
		{"duplicate env", func() error {
			_, err := c.CreateStack(ctx, "tr-worker-w1", composeV1, []portainer.EnvVar{{Name: "A"}, {Name: "A"}})
			return err
		}},
		{"lookup bad name", func() error { _, err := c.StackByName(ctx, "Bad Name"); return err }},
		{"delete by bad name", func() error { _, err := c.DeleteStackByName(ctx, "x;y"); return err }},
		{"zero id", func() error { _, err := c.StackFile(ctx, 0); return err }},
		{"negative id", func() error { return c.DeleteStack(ctx, -1) }},
		{"update zero id", func() error { _, err := c.UpdateStack(ctx, 0, composeV1, nil, false); return err }},
		{"container with slash", func() error { return c.RestartContainer(ctx, "a/../../x") }},
		{"empty container", func() error { return c.RestartContainer(ctx, "") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); apperr.Status(err) != http.StatusBadRequest {
				t.Fatalf("err = %v (status %d), want 400", err, apperr.Status(err))
			}
		})
	}
	if reqs := srv.Requests(); len(reqs) != 0 {
		t.Fatalf("invalid input reached Portainer: %v", reqs)
	}
}

func TestConnectionRefused(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	c := newClient(t, portainer.Config{URL: url, Username: "admin", Password: portainertest.Password})
	_, err := c.Stacks(context.Background())
	requireUpstream(t, err, "Portainer: authenticate: unreachable", portainertest.Password)
}

func TestTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers
	}))
	t.Cleanup(srv.Close)
	const key = "ptr_timeout-test-key"
	c := newClient(t, portainer.Config{URL: srv.URL, APIKey: key, EndpointID: 1, Timeout: 50 * time.Millisecond})
	_, err := c.Stacks(context.Background())
	requireUpstream(t, err, "Portainer: list stacks: timed out", key)
}

func TestOversizedBodyIsCapped(t *testing.T) {
	chunk := []byte(strings.Repeat(" ", 64<<10))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// An endless answer: without the cap the client would read forever.
		_, _ = w.Write([]byte("["))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, portainer.Config{URL: srv.URL, APIKey: "k"})
	_, err := c.Endpoints(context.Background())
	requireUpstream(t, err, "Portainer: list endpoints: response too large")
}

func TestUnreadableJSON(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`<html>login</html>`))
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, portainer.Config{URL: srv.URL, APIKey: "k"})
	_, err := c.Endpoints(context.Background())
	requireUpstream(t, err, "Portainer: list endpoints: unreadable response")
}

func TestSecretsEchoedByUpstreamAreRedacted(t *testing.T) {
	const pw = "echoed-password-123"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/auth" {
			_, _ = w.Write([]byte(`{"jwt":"eyJ-echoed-token-abc"}`))
			return
		}
		// A misbehaving proxy that quotes the request back.
		w.WriteHeader(http.StatusBadGateway)
		_, _ = fmt.Fprintf(w, `{"message":"bad %s","details":"password %s"}`, r.Header.Get("Authorization"), pw)
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, portainer.Config{URL: srv.URL, Username: "admin", Password: pw, EndpointID: 1})
	_, err := c.Stacks(context.Background())
	requireUpstream(t, err, "Portainer: list stacks: HTTP 502", pw, "eyJ-echoed-token-abc")
	if !strings.Contains(err.Error(), "[redacted]") {
		t.Fatalf("expected the cause to keep the redacted text: %v", err)
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	const key = "ptr_redirect-test-key"
	var leaked sync.Map
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store("hit", r.Header.Get("X-API-Key"))
		_, _ = w.Write([]byte(`[]`))
	}))
	t.Cleanup(elsewhere.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.RequestURI(), http.StatusFound)
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, portainer.Config{URL: srv.URL, APIKey: key, EndpointID: 1})
	_, err := c.Stacks(context.Background())
	requireUpstream(t, err, "Portainer: list stacks: HTTP 302", key)
	if v, ok := leaked.Load("hit"); ok {
		t.Fatalf("the client followed the redirect (X-API-Key sent on: %q)", v)
	}
}

func TestCallerCancellation(t *testing.T) {
	srv := portainertest.New(t)
	c := newClient(t, srv.Config())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Stacks(ctx)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, apperr.ErrUpstream) {
		t.Fatalf("err = %v, want ErrUpstream wrapping context.Canceled", err)
	}
}

func TestInsecureTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`[{"Id":4,"Name":"local"}]`))
	}))
	t.Cleanup(srv.Close)
	tests := []struct {
		name     string
		insecure bool
		wantErr  string
	}{
		{"self-signed certificate refused by default", false, "Portainer: list endpoints: unreachable"},
		{"accepted when opted in", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, portainer.Config{URL: srv.URL, APIKey: "ptr_tls-test", InsecureTLS: tt.insecure})
			id, err := c.Endpoint(context.Background())
			if tt.wantErr != "" {
				requireUpstream(t, err, tt.wantErr)
				return
			}
			if err != nil || id != 4 {
				t.Fatalf("Endpoint = %d, %v; want 4", id, err)
			}
		})
	}
}
