// Package portainertest is an in-memory Portainer for tests: an
// httptest.Server that speaks the paths and payloads of Portainer CE 2.19+
// that package portainer uses, and checks what Portainer checks on them
// (authentication, the endpointId parameter, unique stack names, unknown
// stacks and environments), answering with Portainer's status codes and its
// {"message","details"} error bodies.
//
// It deploys nothing: stacks are records, a container restart is a line in
// a log.
package portainertest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"cpesuite/internal/testrunner/portainer"
)

// Credentials the double accepts.
const (
	Username = "admin"
	Password = "Pt-d0uble-s3cret!pw"
	APIKey   = "ptr_d0ubleAPIkey0123456789abcdefXYZ="
)

// maxRequestBody caps request bodies, as a real server would.
const maxRequestBody = 10 << 20

// Option configures a Server.
type Option func(*Server)

// WithEndpoints replaces the default environment (Id 1, "local").
func WithEndpoints(eps ...portainer.Endpoint) Option {
	return func(s *Server) { s.endpoints = append([]portainer.Endpoint(nil), eps...) }
}

// WithContainers makes only the named containers exist, in every
// environment; restarting another one answers Docker's 404. Without it,
// every container name exists.
func WithContainers(names ...string) Option {
	return func(s *Server) {
		s.containers = make(map[string]bool, len(names))
		for _, n := range names {
			s.containers[n] = true
		}
	}
}

// Server is a running double.
type Server struct {
	// URL is the base URL, as Config.URL takes it.
	URL string

	srv *httptest.Server

	mu         sync.Mutex
	endpoints  []portainer.Endpoint
	containers map[string]bool // nil: any name exists
	stacks     map[int]*stack
	nextID     int
	tokens     map[string]bool // valid JWTs
	issued     []string        // every JWT handed out
	restarts   []string
	requests   []string
	fails      []failure
}

// stack is a stored stack with the fields Portainer returns.
type stack struct {
	ID          int                   `json:"Id"`
	Name        string                `json:"Name"`
	Type        int                   `json:"Type"`
	EndpointID  int                   `json:"EndpointId"`
	SwarmID     string                `json:"SwarmId"`
	EntryPoint  string                `json:"EntryPoint"`
	Env         []portainer.EnvVar    `json:"Env"`
	Status      int                   `json:"Status"`
	ProjectPath string                `json:"ProjectPath"`
	CreatedBy   string                `json:"CreatedBy"`
	Option      *struct{ Prune bool } `json:"Option"`
	file        string
}

type failure struct {
	method, prefix string
	status         int
}

// New starts a double that is closed when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{
		endpoints: []portainer.Endpoint{{ID: 1, Name: "local", Type: 1, URL: "unix:///var/run/docker.sock", Status: 1}},
		stacks:    map[int]*stack{},
		nextID:    1,
		tokens:    map[string]bool{},
	}
	for _, o := range opts {
		o(s)
	}
	s.srv = httptest.NewServer(s.handler())
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Config returns a client configuration for the double that authenticates
// with username and password and discovers the environment.
func (s *Server) Config() portainer.Config {
	return portainer.Config{URL: s.URL, Username: Username, Password: Password}
}

// Stacks returns a snapshot of the stacks, ordered by id.
func (s *Server) Stacks() []portainer.Stack {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]portainer.Stack, 0, len(s.stacks))
	for _, st := range s.sortedStacks() {
		out = append(out, st.public())
	}
	return out
}

// StackFile returns the compose file of the stack called name.
func (s *Server) StackFile(name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.stacks {
		if st.Name == name {
			return st.file, true
		}
	}
	return "", false
}

// Restarts returns the names of the containers restarted, in order.
func (s *Server) Restarts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.restarts...)
}

// Requests returns every request received as "METHOD /path?query".
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// Tokens returns every JWT the double has issued, so that tests can check
// none of them leaks into an error.
func (s *Server) Tokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.issued...)
}

// FailNext makes the next request whose method is method (any method when
// empty) and whose path starts with pathPrefix answer status with a
// Portainer error body, before authentication is checked. Calls queue up.
func (s *Server) FailNext(method, pathPrefix string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fails = append(s.fails, failure{method, pathPrefix, status})
}

// ExpireTokens invalidates every JWT issued so far, as Portainer does when
// tokens time out or it restarts.
func (s *Server) ExpireTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens = map[string]bool{}
}

func (s *Server) sortedStacks() []*stack {
	out := make([]*stack, 0, len(s.stacks))
	for _, st := range s.stacks {
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (st *stack) public() portainer.Stack {
	return portainer.Stack{ID: st.ID, Name: st.Name, Type: st.Type, EndpointID: st.EndpointID, Status: st.Status,
		Env: append([]portainer.EnvVar(nil), st.Env...)}
}

func (s *Server) endpoint(id int) (portainer.Endpoint, bool) {
	for _, ep := range s.endpoints {
		if ep.ID == id {
			return ep, true
		}
	}
	return portainer.Endpoint{}, false
}

// handler logs, injects failures, authenticates and routes.
func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/auth", s.authenticate)
	mux.HandleFunc("GET /api/endpoints", s.listEndpoints)
	mux.HandleFunc("GET /api/stacks", s.listStacks)
	mux.HandleFunc("POST /api/stacks/create/{type}/{method}", s.createStack)
	mux.HandleFunc("PUT /api/stacks/{id}", s.updateStack)
	mux.HandleFunc("DELETE /api/stacks/{id}", s.deleteStack)
	mux.HandleFunc("GET /api/stacks/{id}/file", s.stackFile)
	mux.HandleFunc("POST /api/endpoints/{id}/docker/containers/{name}/restart", s.restartContainer)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxRequestBody)
		if status, ok := s.record(r); ok {
			writeError(w, status, http.StatusText(status), "Injected failure")
			return
		}
		if r.URL.Path != "/api/auth" && strings.HasPrefix(r.URL.Path, "/api/") && !s.authorized(r) {
			// Portainer's bouncer, api/http/security/bouncer.go.
			writeError(w, http.StatusUnauthorized, "A valid authorisation token is missing", "Unauthorized")
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// record logs r and pops the first queued failure it matches.
func (s *Server) record(r *http.Request) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Method+" "+r.URL.RequestURI())
	for i, f := range s.fails {
		if (f.method == "" || f.method == r.Method) && strings.HasPrefix(r.URL.Path, f.prefix) {
			s.fails = append(s.fails[:i], s.fails[i+1:]...)
			return f.status, true
		}
	}
	return 0, false
}

// authorized accepts a JWT the double issued and has not expired, or the
// API key. Like Portainer, a bearer token wins over the API key header.
func (s *Server) authorized(r *http.Request) bool {
	if h := r.Header.Get("Authorization"); h != "" {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.tokens[strings.TrimPrefix(h, "Bearer ")]
	}
	return r.Header.Get("X-API-Key") == APIKey
}

func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) {
	var p struct{ Username, Password string }
	if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
		writeError(w, http.StatusBadRequest, "Invalid request payload", "Invalid JSON")
		return
	}
	switch {
	case p.Username == "":
		writeError(w, http.StatusBadRequest, "Invalid request payload", "Invalid username")
		return
	case p.Password == "":
		writeError(w, http.StatusBadRequest, "Invalid request payload", "Invalid password")
		return
	case p.Username != Username || p.Password != Password:
		writeError(w, http.StatusUnprocessableEntity, "Invalid credentials", "Unauthorized")
		return
	}
	tok := newToken()
	s.mu.Lock()
	s.tokens[tok] = true
	s.issued = append(s.issued, tok)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]string{"jwt": tok})
}

func (s *Server) listEndpoints(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	eps := append([]portainer.Endpoint(nil), s.endpoints...)
	s.mu.Unlock()
	if eps == nil {
		eps = []portainer.Endpoint{}
	}
	writeJSON(w, http.StatusOK, eps)
}

func (s *Server) restartContainer(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id", "Invalid environment identifier route variable")
	if !ok {
		return
	}
	name := r.PathValue("name")
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.endpoint(id); !ok {
		writeError(w, http.StatusNotFound, "Unable to find an environment with the specified identifier inside the database", "Object not found inside the database")
		return
	}
	if s.containers != nil && !s.containers[name] {
		// Docker's own answer, passed through by Portainer's proxy.
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "No such container: " + name})
		return
	}
	s.restarts = append(s.restarts, name)
	w.WriteHeader(http.StatusNoContent)
}

func newToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return "eyJ" + hex.EncodeToString(b)
}

// writeError writes Portainer's error body (pkg/libhttp/error).
func writeError(w http.ResponseWriter, status int, message, details string) {
	writeJSON(w, status, map[string]string{"message": message, "details": details})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
