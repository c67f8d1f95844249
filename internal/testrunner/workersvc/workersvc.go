// Package workersvc assembles the test-runner worker target from its
// parts: the run engine (worker), the case, project and tree API
// (caseapi), the QA notes (notes), the MCP client of the tool servers
// (mcpclient) and the language-model executors (llm). The parts share one
// caller check (identity.Guard), one error body (wire.ErrorWriter) and the
// worker's settings.
package workersvc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/caseapi"
	"cpesuite/internal/testrunner/llm"
	"cpesuite/internal/testrunner/mcpclient"
	"cpesuite/internal/testrunner/notes"
	"cpesuite/internal/testrunner/testcase"
	"cpesuite/internal/testrunner/worker"
)

// Config configures the worker target.
type Config struct {
	// DataDir is the worker's folder: tests/, trees/, notes/,
	// batch-reports/, settings.json, projects.json.
	DataDir       string
	Secret        []byte
	Version       string
	MaxToolOutput int
	// Env looks up the container environment for settings; nil means
	// os.LookupEnv.
	Env func(string) (string, bool)
	// HTTPClient reaches language-model providers and the knowledge
	// service; nil means each part's default.
	HTTPClient *http.Client
	Log        *slog.Logger
}

// Service is an assembled worker.
type Service struct {
	Worker *worker.Worker
	Cases  *testcase.Store
	MCP    *mcpclient.Client
	Notes  *notes.Store
	API    *caseapi.API
	log    *slog.Logger
}

// New builds every part; nothing listens yet.
func New(cfg Config) (*Service, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("workersvc: no data directory")
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	cases, err := testcase.OpenStore(filepath.Join(cfg.DataDir, "tests"))
	if err != nil {
		return nil, fmt.Errorf("worker case folder: %w", err)
	}
	s := &Service{Cases: cases, log: log}
	// The MCP client reads the tool-server list from the worker's
	// settings, which exist only once the worker does; it is not called
	// before then.
	s.MCP = mcpclient.New(mcpclient.Config{
		Setting: func(key string) string { return s.Worker.Setting(key) },
		// Above the emulator tool server's longest wait (acs_queue_task and
		// acs_find_device wait up to 120 s), so that such a call is not
		// cut off just as its answer comes.
		CallTimeout: 150 * time.Second,
		Log:         log.With("part", "mcp"),
	})
	s.Worker, err = worker.New(worker.Config{
		DataDir:       cfg.DataDir,
		Secret:        cfg.Secret,
		Version:       cfg.Version,
		Tools:         s.MCP,
		Env:           cfg.Env,
		MaxToolOutput: cfg.MaxToolOutput,
	}, cases, log)
	if err != nil {
		return nil, err
	}
	lc := llm.Config{HTTPClient: cfg.HTTPClient, Log: log.With("part", "llm")}
	s.Worker.RegisterExecutor(llm.NewAnthropic(lc))
	s.Worker.RegisterExecutor(llm.NewOpenAI(lc))
	guard := s.Worker.Guard()
	s.API, err = caseapi.New(caseapi.Config{
		Cases:    cases,
		TreesDir: filepath.Join(cfg.DataDir, "trees"),
		DataDir:  cfg.DataDir,
		Guard:    guard,
		Log:      log.With("part", "cases"),
	})
	if err != nil {
		return nil, err
	}
	s.Notes, err = notes.New(notes.Config{
		Dir:        filepath.Join(cfg.DataDir, "notes"),
		Guard:      guard,
		Setting:    s.Worker.Setting,
		HTTPClient: cfg.HTTPClient,
		Log:        log.With("part", "notes"),
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Routes registers every route of the worker target and its OpenAPI
// document. The parts register before the engine, whose JSON 404
// catch-alls for /api/ and /ws/ come last.
func (s *Service) Routes(mux *httpx.Mux) {
	s.API.Routes(mux)
	s.Notes.Routes(mux)
	s.MCP.Routes(mux, s.Worker.Guard())
	httpx.ServeOpenAPI(mux.ServeMux, "/openapi.json", "/docs", "cpesuite test-runner worker", OpenAPI())
	s.Worker.Routes(mux)
}

// Shutdown ends the runs, then closes the tool-server sessions.
func (s *Service) Shutdown(ctx context.Context) {
	s.Worker.Shutdown(ctx)
	if err := s.MCP.Close(); err != nil {
		s.log.Warn("closing tool-server sessions", "error", err)
	}
}
