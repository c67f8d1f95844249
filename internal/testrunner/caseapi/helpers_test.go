package caseapi

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/testcase"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef")

var (
	editor = identity.Identity{Username: "erin", Role: identity.RoleEditor}
	admin  = identity.Identity{Username: "root", Role: identity.RoleAdmin}
)

// env is an API on real folders of t.TempDir behind a real HTTP server.
type env struct {
	t        *testing.T
	api      *API
	srv      *httptest.Server
	mux      *httpx.Mux
	cases    *testcase.Store
	casesDir string
	treesDir string
	dataDir  string
}

type envOption func(*Config)

func newEnv(t *testing.T, opts ...envOption) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{
		t:        t,
		casesDir: filepath.Join(root, "worker", "tests"),
		treesDir: filepath.Join(root, "worker", "trees"),
		dataDir:  filepath.Join(root, "worker"),
	}
	st, err := testcase.OpenStore(e.casesDir)
	if err != nil {
		t.Fatal(err)
	}
	e.cases = st
	cfg := Config{
		Cases:    st,
		TreesDir: e.treesDir,
		DataDir:  e.dataDir,
		Guard:    identity.Guard{Secret: testSecret},
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	for _, o := range opts {
		o(&cfg)
	}
	e.api, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.mux = httpx.NewMux()
	e.api.Routes(e.mux)
	e.serve(e.mux)
	return e
}

// serve makes h the server the requests of e go to.
func (e *env) serve(h http.Handler) {
	e.srv = httptest.NewServer(h)
	e.t.Cleanup(e.srv.Close)
}

// reply is an answer read whole.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("answer %d is not JSON: %v: %s", r.status, err, r.body)
	}
}

// errBody is the test runner's error body with the fields this package adds.
type errBody struct {
	Detail   string             `json:"detail"`
	Code     string             `json:"code"`
	Problems []testcase.Problem `json:"problems"`
}

func (r reply) err(t *testing.T) errBody {
	t.Helper()
	var b errBody
	r.json(t, &b)
	if b.Code == "" || b.Detail == "" {
		t.Fatalf("error answer without code or detail: %d %s", r.status, r.body)
	}
	return b
}

// send makes a request as id (nil: without identity). path may hold
// escapes, which reach the server as written.
func (e *env) send(id *identity.Identity, method, path, contentType string, body []byte) reply {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if id != nil {
		identity.SignRequest(testSecret, req, *id, time.Now())
	}
	client := *e.srv.Client()
	// A redirect is an answer of its own here: the mux's redirects of
	// unclean paths are part of what the tests check.
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: data}
}

// do sends v as JSON (nil: no body) as the editor.
func (e *env) do(method, path string, v any) reply {
	e.t.Helper()
	return e.as(&editor, method, path, v)
}

func (e *env) as(id *identity.Identity, method, path string, v any) reply {
	e.t.Helper()
	if v == nil {
		return e.send(id, method, path, "", nil)
	}
	var data []byte
	switch v := v.(type) {
	case string:
		data = []byte(v)
	case []byte:
		data = v
	default:
		var err error
		if data, err = json.Marshal(v); err != nil {
			e.t.Fatal(err)
		}
	}
	return e.send(id, method, path, "application/json", data)
}

// expect fails t unless r has status and, for errors, code.
func expect(t *testing.T, r reply, status int, code string) errBody {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if code == "" {
		return errBody{}
	}
	b := r.err(t)
	if b.Code != code {
		t.Fatalf("code %s, want %s: %s", b.Code, code, r.body)
	}
	return b
}

// multipartBody builds a form whose field carries a file with the name
// exactly as given (quotes and backslashes escaped as browsers do).
func multipartBody(t *testing.T, field, filename string, data []byte) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	h := textproto.MIMEHeader{}
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace
	h.Set("Content-Disposition", `form-data; name="`+esc(field)+`"; filename="`+esc(filename)+`"`)
	h.Set("Content-Type", "application/octet-stream")
	pw, err := mw.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), mw.FormDataContentType()
}

func (e *env) upload(path, filename string, data []byte) reply {
	e.t.Helper()
	body, ct := multipartBody(e.t, "file", filename, data)
	return e.send(&editor, "POST", path, ct, body)
}

// sampleCase is a valid case in JSON form.
func sampleCase(id, title string) map[string]any {
	return map[string]any{
		"id":    id,
		"title": title,
		"steps": []map[string]any{{"action": "open the page", "expected": "it opens"}},
	}
}

// writeCase stores a case file directly, as a person copying files would.
func (e *env) writeCase(file, yaml string) {
	e.t.Helper()
	if err := os.WriteFile(filepath.Join(e.casesDir, file), []byte(yaml), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

func caseYAML(id, project string) string {
	s := "id: " + id + "\ntitle: Case " + id + "\n"
	if project != "" {
		s += "project: " + project + "\n"
	}
	return s + "steps:\n  - action: do it\n"
}

// project reads the project field of a stored case.
func (e *env) project(file string) string {
	e.t.Helper()
	c, err := e.cases.Get(file)
	if err != nil {
		e.t.Fatalf("reading %s: %v", file, err)
	}
	return c.Project
}

func (e *env) writeTree(name, content string) {
	e.t.Helper()
	if err := os.WriteFile(filepath.Join(e.treesDir, name), []byte(content), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// dirNames lists a folder, hidden files included.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	return out
}

func readAll(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
