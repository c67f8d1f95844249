// Package worker is the test-runner worker's run engine: it starts one run
// or a batch of runs at a time, executes cases with a selectable executor
// (the built-in "deterministic" one, language-model executors registered
// later), keeps the last runs in memory, archives batch reports on disk,
// streams run progress over WebSocket and keeps the worker's settings.
//
// Every route but GET /health trusts only the caller identity the gateway
// signs (package identity); runs, batches and reports are visible to the
// account that started them only, admins included, except for
// GET /api/runs?all=true.
package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/testcase"
	"cpesuite/internal/testrunner/wire"
)

// Cases gives the engine the stored test cases; testcase.Store satisfies
// it. Errors carry apperr kinds (ErrNotFound for an unknown file).
type Cases interface {
	Get(file string) (*testcase.Case, error)
}

// Tools reaches tool servers other than the worker's built-in one.
type Tools interface {
	// Resolve checks that server/tool exists without side effects (dry runs).
	Resolve(ctx context.Context, server, tool string) error
	// Call runs a tool; isError is the tool's own verdict (MCP isError), err
	// a transport failure.
	Call(ctx context.Context, server, tool string, args map[string]any) (result string, isError bool, err error)
	// List returns the tools of every reachable server. A server that
	// cannot be reached is left out (and reported by the Tools' own
	// status); err is for a failure of the whole look-up.
	List(ctx context.Context) ([]ToolInfo, error)
}

// ToolInfo describes one tool for the language-model executors.
type ToolInfo struct {
	Server      string `json:"server"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema of the tool's arguments object.
	InputSchema json.RawMessage `json:"input_schema"`
}

// Config configures a Worker.
type Config struct {
	// DataDir is the worker's own folder (batch reports, settings.json).
	DataDir string
	// Secret is shared with the gateway; at least identity.MinSecretLen bytes.
	Secret  []byte
	Version string
	// Tools reaches extra tool servers; nil means built-in tools only.
	Tools Tools
	// Env looks up environment variables for settings; nil means os.LookupEnv.
	Env func(string) (string, bool)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxToolOutput is how many bytes of one tool result CallTool returns
	// to the executor (default 64 KiB); the mcpLog entry keeps up to 1 MiB.
	MaxToolOutput int

	// settingDefs replaces the setting registry in tests (secret keys).
	settingDefs []settingDef
}

// DefaultMaxToolOutput is Config.MaxToolOutput when it is 0.
const DefaultMaxToolOutput = 64 << 10

// Worker is the run engine and its HTTP surface.
type Worker struct {
	cfg      Config
	cases    Cases
	log      *slog.Logger
	adapter  httpx.Adapter
	tools    *toolbox
	settings *settings
	archive  *archive

	// baseCtx parents every run; Shutdown cancels it.
	baseCtx    context.Context
	baseCancel context.CancelCauseFunc
	// closing is closed by Shutdown once runs have ended, to release the
	// WebSocket watchers that are still attached.
	closing   chan struct{}
	closeOnce sync.Once
	runsWG    sync.WaitGroup // run and batch goroutines
	wsWG      sync.WaitGroup // WebSocket handlers (hijacked, so http.Server does not wait for them)

	mu           sync.Mutex
	executors    map[string]Executor
	runs         map[string]*run
	completed    []*run // finished runs still in memory, oldest first
	seq          uint64
	active       *run   // the run in progress, nil when none
	batch        *batch // the batch in progress, nil when none
	lastBatch    map[string]*batch
	latestBatch  *batch // the newest batch of any owner, for /health
	shuttingDown bool
}

// New returns a Worker. It loads the persisted settings and indexes the
// archived batch reports of cfg.DataDir, creating the folder when needed.
func New(cfg Config, cases Cases, log *slog.Logger) (*Worker, error) {
	if cases == nil {
		return nil, errors.New("worker: no case store")
	}
	if len(cfg.Secret) < identity.MinSecretLen {
		return nil, fmt.Errorf("worker: the shared secret must be at least %d bytes", identity.MinSecretLen)
	}
	if cfg.DataDir == "" {
		return nil, errors.New("worker: no data directory")
	}
	if cfg.MaxToolOutput < 0 {
		return nil, errors.New("worker: MaxToolOutput must not be negative")
	}
	if cfg.MaxToolOutput == 0 {
		cfg.MaxToolOutput = DefaultMaxToolOutput
	}
	if cfg.Env == nil {
		cfg.Env = os.LookupEnv
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if log == nil {
		log = slog.Default()
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("worker: creating data directory: %w", err)
	}
	defs := cfg.settingDefs
	if defs == nil {
		defs = defaultSettingDefs()
	}
	st, err := loadSettings(filepath.Join(cfg.DataDir, settingsFileName), defs, cfg.Env, log)
	if err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}
	ar, err := openArchive(filepath.Join(cfg.DataDir, archiveDirName), log)
	if err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}
	w := &Worker{
		cfg:       cfg,
		cases:     cases,
		log:       log,
		adapter:   httpx.Adapter{Errors: wire.ErrorWriter(), Log: log},
		tools:     newToolbox(cfg.Tools),
		settings:  st,
		archive:   ar,
		closing:   make(chan struct{}),
		executors: map[string]Executor{},
		runs:      map[string]*run{},
		lastBatch: map[string]*batch{},
	}
	w.baseCtx, w.baseCancel = context.WithCancelCause(context.Background())
	w.RegisterExecutor(deterministic{})
	return w, nil
}

// RegisterExecutor makes e selectable as model e.Name(), replacing an
// executor of the same name.
func (w *Worker) RegisterExecutor(e Executor) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.executors[e.Name()] = e
}

// executor returns the executor for model (an executor name, or
// "name:provider-model"), or for the default_model setting when model is
// empty, as 400 UNKNOWN_MODEL listing the known
// models when there is none of that name.
func (w *Worker) executor(model string) (Executor, string, error) {
	if model == "" {
		model = w.Setting("default_model")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if e, ok := w.executors[model]; ok {
		return e, model, nil
	}
	// "openai:gpt-4o-mini" selects executor "openai" with a model id of
	// its provider other than the setting's; the executor reads the part
	// after the colon from RunContext.Model.
	if name, variant, ok := strings.Cut(model, ":"); ok && variant != "" {
		if e, ok := w.executors[name]; ok {
			return e, model, nil
		}
	}
	known := make([]string, 0, len(w.executors))
	for name := range w.executors {
		known = append(known, name)
	}
	sort.Strings(known)
	return nil, "", apperr.Invalid("UNKNOWN_MODEL", "unknown model %q; known models: %s", model, strings.Join(known, ", ")).
		WithDetails(map[string]any{"models": known})
}

// Setting returns the effective value of a setting (UI override, then
// environment, then built-in default); "" for an unknown key.
func (w *Worker) Setting(key string) string { return w.settings.get(key) }

func (w *Worker) now() time.Time { return w.cfg.Now().UTC() }

// errShutdown is the cause of runs ended by Shutdown.
var errShutdown = errors.New("worker shutting down")

// Shutdown stops running runs and batches (status error, "worker shutting
// down"), waits for them to end, then closes the WebSockets still open. It
// returns early when ctx ends first. It is safe to call more than once.
func (w *Worker) Shutdown(ctx context.Context) {
	w.mu.Lock()
	w.shuttingDown = true
	if w.batch != nil {
		w.batch.stopped = true
	}
	w.mu.Unlock()
	w.baseCancel(errShutdown)
	waitGroup(ctx, &w.runsWG)
	w.closeOnce.Do(func() { close(w.closing) })
	waitGroup(ctx, &w.wsWG)
}

// waitGroup waits for wg or ctx, whichever ends first.
func waitGroup(ctx context.Context, wg *sync.WaitGroup) {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}
