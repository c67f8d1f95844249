package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"cpesuite/internal/buildinfo"
	"cpesuite/internal/platform/config"
	"cpesuite/internal/platform/fsx"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/passwd"
	"cpesuite/internal/platform/service"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/testrunner/gateway"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/wire"
	"cpesuite/internal/testrunner/worker"
	"cpesuite/internal/testrunner/workersvc"
)

// AdminPasswordFile holds the generated bootstrap password of the
// gateway's first administrator.
const AdminPasswordFile = "gateway-admin-password"

func (m *modules) initGateway(ctx context.Context) (service.Service, error) {
	cfg := m.cfg.Gateway
	cfg.Addr, cfg.DataDir = m.cfg.Addr(Gateway, "addr"), m.cfg.DataDir
	log := m.log.With("module", Gateway)
	secret, source, err := identity.EnsureSecret(m.cfg.TestrunnerSecret, m.cfg.DataDir)
	if err != nil {
		return nil, err
	}
	log.Info("worker identity secret", "from", source)
	if cfg.LocalWorker == "" && m.Running(Worker) {
		cfg.LocalWorker = "http://" + loopback(m.cfg.Addr(Worker, "addr"))
	}
	db, err := sqlstore.OpenService(ctx, cfg.DBDialect, cfg.DBDSN, filepath.Join(m.cfg.DataDir, "gateway.db"))
	if err != nil {
		return nil, fmt.Errorf("gateway store: %w", err)
	}
	g, err := gateway.New(ctx, cfg, db, secret, buildinfo.Get().Version, log)
	if err != nil {
		db.Close()
		return nil, err
	}
	if err := m.bootstrapAdmin(ctx, g, cfg, log); err != nil {
		db.Close()
		return nil, err
	}
	mux := httpx.NewMux()
	g.Routes(mux)
	srv := m.httpServer(Gateway, cfg.Addr, mux, nil, wire.ErrorWriter(), g.Middleware())
	return service.Group{
		service.Funcs{StopFn: func(context.Context) error { g.Close(); return db.Close() }},
		srv,
	}, nil
}

// bootstrapAdmin creates the first administrator on an empty account
// table. Without CPESUITE_GATEWAY_ADMIN_PASSWORD a password is generated
// into <data-dir>/gateway-admin-password (0600) so that `make run` on a
// fresh machine yields a usable login; the log names the file, never the
// password.
func (m *modules) bootstrapAdmin(ctx context.Context, g *gateway.Gateway, cfg gateway.Config, log interface {
	Info(string, ...any)
}) error {
	pw, from := cfg.AdminPassword, "CPESUITE_GATEWAY_ADMIN_PASSWORD"
	path := filepath.Join(m.cfg.DataDir, AdminPasswordFile)
	if pw == "" {
		b, err := os.ReadFile(path)
		switch {
		case err == nil:
			pw, from = strings.TrimSpace(string(b)), path
		case errors.Is(err, fs.ErrNotExist):
			gen, err := passwd.Temporary()
			if err != nil {
				return err
			}
			pw, from = gen, path+" (generated)"
		default:
			return fmt.Errorf("reading %s: %w", AdminPasswordFile, err)
		}
	}
	created, err := g.Accounts().Bootstrap(ctx, cfg.AdminUsername, pw)
	if err != nil {
		return fmt.Errorf("gateway bootstrap admin: %w", err)
	}
	if created {
		if cfg.AdminPassword == "" {
			if err := fsx.WriteFileAtomic(path, []byte(pw+"\n")); err != nil {
				return fmt.Errorf("writing %s: %w", AdminPasswordFile, err)
			}
		}
		log.Info("bootstrap administrator created", "username", cfg.AdminUsername, "password_from", from)
	}
	return nil
}

// loopback turns a listen address (":8083") into one to dial.
func loopback(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// WorkerConfig is the worker target's start-up configuration; what
// operators change at run time is the worker's settings resource.
type WorkerConfig struct {
	MaxToolOutput int
}

// RegisterFlags declares the variables.
func (c *WorkerConfig) RegisterFlags(s *config.Set) {
	s.Int(&c.MaxToolOutput, "worker.max-tool-output", "CPESUITE_WORKER_MAX_TOOL_OUTPUT", worker.DefaultMaxToolOutput, "bytes of one tool result an executor sees (the run's tool log keeps up to 1 MiB)")
}

// Validate checks the values.
func (c *WorkerConfig) Validate() error {
	if c.MaxToolOutput < 1024 || c.MaxToolOutput > 1<<20 {
		return config.Errorf("CPESUITE_WORKER_MAX_TOOL_OUTPUT", "must be from 1024 to 1048576")
	}
	return nil
}

func (m *modules) initWorker(context.Context) (service.Service, error) {
	addr := m.cfg.Addr(Worker, "addr")
	log := m.log.With("module", Worker)
	secret, source, err := identity.EnsureSecret(m.cfg.TestrunnerSecret, m.cfg.DataDir)
	if err != nil {
		return nil, err
	}
	log.Info("worker identity secret", "from", source)
	s, err := workersvc.New(workersvc.Config{
		DataDir:       filepath.Join(m.cfg.DataDir, "worker"),
		Secret:        secret,
		Version:       buildinfo.Get().Version,
		MaxToolOutput: m.cfg.Worker.MaxToolOutput,
		Env:           m.workerEnv(),
		Log:           log,
	})
	if err != nil {
		return nil, err
	}
	mux := httpx.NewMux()
	s.Routes(mux)
	// No actuator: the worker's GET /health is what the gateway probes.
	srv := m.httpServer(Worker, addr, mux, nil, wire.ErrorWriter())
	// Runs stop before the server: their last WebSocket messages go out.
	return service.Group{
		srv,
		service.Funcs{StopFn: func(ctx context.Context) error { s.Shutdown(ctx); return nil }},
	}, nil
}

// workerEnv is the container environment the worker's settings fall back
// to. In one process with the emulator, the ACS or the tool servers, the
// variables the operator did not set point at those targets' configured
// addresses, so that `cpesuite up` on any ports runs cases without setup.
func (m *modules) workerEnv() func(string) (string, bool) {
	local := map[string]string{}
	if m.Running(TR069Emu) {
		local["EMULATOR_URL"] = "http://" + loopback(m.cfg.Addr(TR069Emu, "addr"))
	}
	if m.Running(ACS) {
		local["ACS_URL"] = "http://" + loopback(m.cfg.Addr(ACS, "api-addr")) + "/acs"
	}
	var servers []string
	if m.Running(MCPEmulator) {
		servers = append(servers, "emulator=http://"+loopback(m.cfg.Addr(MCPEmulator, "addr"))+"/mcp")
	}
	if m.Running(MCPBrowser) {
		servers = append(servers, "browser=http://"+loopback(m.cfg.Addr(MCPBrowser, "addr"))+"/mcp")
	}
	if len(servers) > 0 {
		local["MCP_SERVERS"] = strings.Join(servers, ",")
	}
	lookup := m.cfg.lookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	return func(key string) (string, bool) {
		if v, ok := lookup(key); ok && v != "" {
			return v, true
		}
		v, ok := local[key]
		return v, ok
	}
}
