package caseapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/testcase"
	"cpesuite/internal/testrunner/wire"
)

// DefaultMaxUpload is Config.MaxUpload when it is 0.
const DefaultMaxUpload = 4 << 20

// Config configures the API.
type Config struct {
	Cases *testcase.Store
	// TreesDir holds the .xml data-model trees; created (0700) if missing.
	TreesDir string
	// DataDir is the worker's folder; projects are kept in
	// DataDir/projects.json.
	DataDir string
	Guard   identity.Guard
	Log     *slog.Logger
	// MaxUpload is the largest YAML or tree upload, and the largest JSON
	// case body, in bytes; 0 means DefaultMaxUpload.
	MaxUpload int64
}

// API serves the case, section, project and tree routes.
type API struct {
	cfg      Config
	cases    *testcase.Store
	trees    *trees
	projects *projects
	guard    identity.Guard
	adapter  httpx.Adapter
	log      *slog.Logger
}

// New checks cfg, creates TreesDir and DataDir when missing and loads the
// projects.
func New(cfg Config) (*API, error) {
	switch {
	case cfg.Cases == nil:
		return nil, errors.New("caseapi: no case store")
	case cfg.TreesDir == "":
		return nil, errors.New("caseapi: no tree folder")
	case cfg.DataDir == "":
		return nil, errors.New("caseapi: no data directory")
	case len(cfg.Guard.Secret) < identity.MinSecretLen:
		return nil, fmt.Errorf("caseapi: the shared secret must be at least %d bytes", identity.MinSecretLen)
	case cfg.MaxUpload < 0:
		return nil, errors.New("caseapi: MaxUpload must not be negative")
	}
	if cfg.MaxUpload == 0 {
		cfg.MaxUpload = DefaultMaxUpload
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	tr, err := openTrees(cfg.TreesDir)
	if err != nil {
		return nil, fmt.Errorf("caseapi: %w", err)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("caseapi: creating data directory: %w", err)
	}
	pr, err := loadProjects(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("caseapi: %w", err)
	}
	return &API{
		cfg:      cfg,
		cases:    cfg.Cases,
		trees:    tr,
		projects: pr,
		guard:    cfg.Guard,
		adapter:  httpx.Adapter{Errors: wire.ErrorWriter(), Log: cfg.Log},
		log:      cfg.Log,
	}, nil
}

// Routes registers every route of the package. It registers no catch-all:
// the worker's Routes answers unmatched /api/ paths.
func (a *API) Routes(mux *httpx.Mux) {
	mux.HandleFunc("GET /api/tests", a.read(a.listCases))
	mux.HandleFunc("POST /api/tests", a.write("creating a case", a.createCase))
	mux.HandleFunc("DELETE /api/tests", a.write("deleting all cases", a.deleteAllCases))
	mux.HandleFunc("POST /api/tests/upload-yaml", a.write("uploading a case", a.uploadYAML))
	mux.HandleFunc("POST /api/tests/assign-project", a.write("assigning cases to a project", a.assignProject))
	mux.HandleFunc("GET /api/tests/{filename}", a.read(a.getCase))
	mux.HandleFunc("PUT /api/tests/{filename}", a.write("replacing a case", a.putCase))
	mux.HandleFunc("DELETE /api/tests/{filename}", a.write("deleting a case", a.deleteCase))
	mux.HandleFunc("GET /api/tests/{filename}/yaml", a.read(a.getCaseYAML))
	mux.HandleFunc("POST /api/tests/{filename}/regenerate", a.write("regenerating a case's emulator setup", a.regenerate))
	mux.HandleFunc("GET /api/sections", a.read(a.listSections))

	mux.HandleFunc("GET /api/projects", a.read(a.listProjects))
	mux.HandleFunc("POST /api/projects", a.write("creating a project", a.createProject))
	mux.HandleFunc("PATCH /api/projects/{name}", a.write("changing a project", a.patchProject))
	mux.HandleFunc("DELETE /api/projects/{name}", a.write("deleting a project", a.deleteProject))

	mux.HandleFunc("GET /api/trees", a.read(a.listTrees))
	mux.HandleFunc("POST /api/trees/upload", a.write("uploading a tree", a.uploadTree))
	mux.HandleFunc("DELETE /api/trees/{filename}", a.write("deleting a tree", a.deleteTree))
}

// writeRoles may change cases, projects and trees.
var writeRoles = []string{identity.RoleAdmin, identity.RoleEditor}

// read lets any authenticated caller in.
func (a *API) read(h identity.Handler) http.HandlerFunc {
	return a.adapter.H(a.guard.H(h))
}

// write lets admins and editors in: 401 UNAUTHENTICATED without a valid
// identity, 403 FORBIDDEN for any other role.
// what names the action in the 403 message.
func (a *API) write(what string, h identity.Handler) http.HandlerFunc {
	return a.adapter.H(a.guard.H(func(w http.ResponseWriter, r *http.Request, id identity.Identity) error {
		if err := mayWrite(id, what); err != nil {
			return err
		}
		return h(w, r, id)
	}))
}

// mayWrite is the role rule of every write route.
func mayWrite(id identity.Identity, what string) error {
	return identity.RequireRole(id, what, writeRoles...)
}
