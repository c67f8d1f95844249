package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"cpesuite/internal/acs"
	"cpesuite/internal/fcc"
	"cpesuite/internal/iotemu"
	"cpesuite/internal/iotemu/mqttbroker"
	"cpesuite/internal/platform/grid"
	"cpesuite/internal/platform/health"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/metrics"
	"cpesuite/internal/platform/service"
	"cpesuite/internal/speedtest"
	"cpesuite/internal/tr069emu"
)

// Module names. Targets are what operators ask for; the rest are shared
// infrastructure that targets depend on.
const (
	Grid      = "grid"
	Speedtest = "speedtest"
	ACS       = "acs"
	TR069Emu  = "tr069-emulator"
	IoTEmu    = "iot-emulator"
	FCC       = "fcc"
	Configs   = "configs"
	Worker    = "worker"
	// The MCP tool servers the worker's cases call.
	MCPEmulator = "mcp-emulator"
	MCPBrowser  = "mcp-browser"
	Gateway     = "gateway"
)

// modules holds what module inits share: the configuration and the
// resources set up by dependencies (model: Loki's Loki struct).
type modules struct {
	*Manager
	cfg     *Config
	log     *slog.Logger
	metrics *prometheus.Registry

	grid    *grid.Grid
	gridEmb *grid.Embedded
	// runAlone is true under `cpesuite run TARGET`, where targets honour
	// the port variables their specs give (SERVER_PORT).
	runAlone bool
}

// newModules registers every implemented module. cfg and log may be nil
// when only the names are needed (`cpesuite targets`).
func newModules(cfg *Config, log *slog.Logger) *modules {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &modules{Manager: NewManager(log), cfg: cfg, log: log, metrics: metrics.NewRegistry()}
	m.Register(Module{Name: Grid, Init: m.initGrid})
	m.Register(Module{Name: ACS, Target: true, Deps: []string{Grid}, Init: m.initACS})
	m.Register(Module{Name: Speedtest, Target: true, Init: m.initSpeedtest})
	m.Register(Module{Name: TR069Emu, Target: true, Init: m.initTR069Emu})
	m.Register(Module{Name: IoTEmu, Target: true, Init: m.initIoTEmu})
	// After the ACS: in `cpesuite up` the ACS's Init creates the device
	// tables the campaign service reads.
	m.Register(Module{Name: FCC, Target: true, Deps: []string{Grid}, Init: m.initFCC})
	// The configuration service's grid client uses the process's embedded
	// member (CACHE_IS_SERVER) unless GRID_MEMBERS names a cluster.
	m.Register(Module{Name: Configs, Target: true, Deps: []string{Grid}, Init: m.initConfigs})
	m.Register(Module{Name: MCPEmulator, Target: true, Init: m.initMCPEmulator})
	m.Register(Module{Name: MCPBrowser, Target: true, Init: m.initMCPBrowser})
	// The worker first: in `cpesuite up` the gateway registers it as the
	// local stand and the two share the generated identity secret.
	m.Register(Module{Name: Worker, Target: true, Init: m.initWorker})
	m.Register(Module{Name: Gateway, Target: true, Init: m.initGateway})
	return m
}

// all is what `cpesuite up` starts without --only: every module, so that
// shared infrastructure is up and checked even before a target uses it.
func (m *modules) all() []string { return append([]string{}, m.names...) }

func (m *modules) initGrid(context.Context) (service.Service, error) {
	cfg := m.cfg.Grid
	var emb *grid.Embedded
	var stopping atomic.Bool
	return service.Funcs{
		StartFn: func(ctx context.Context) error {
			if !cfg.Embedded() {
				// Each target reaches an external grid with its own client
				// and the settings its spec gives (the configuration
				// service waits for it with a 2 s to 10 s back-off). One
				// connection attempt here would end the process before
				// that wait began (issue 18 item 11), and nothing uses it.
				m.log.Info("grid is external; targets connect to it themselves", "members", cfg.Members)
				return nil
			}
			var err error
			if emb, err = grid.StartEmbedded(cfg); err != nil {
				return fmt.Errorf("embedded grid: %w", err)
			}
			g, err := grid.Connect(ctx, cfg, emb)
			if err != nil {
				emb.Shutdown()
				return err
			}
			m.grid, m.gridEmb = g, emb
			g.OnEvent(func(ev grid.Event) {
				if stopping.Load() {
					return // our own Close, not news
				}
				m.log.Warn("grid connection", "event", ev.Kind.String(), "err", ev.Err)
			})
			m.log.Info("grid ready", "embedded", true)
			return nil
		},
		StopFn: func(context.Context) error {
			stopping.Store(true)
			if m.grid != nil {
				m.grid.Close()
			}
			if emb != nil {
				emb.Shutdown()
			}
			return nil
		},
	}, nil
}

// httpServer assembles a target's server: its routes, health and metrics
// endpoints, and the common middleware in one order for every target. A nil
// hr leaves the actuator out, for targets whose spec says it is not exposed.
// extra middleware runs inside the common chain, just before the routes.
func (m *modules) httpServer(name, addr string, mux *httpx.Mux, hr *health.Registry, ew httpx.ErrorWriter, extra ...func(http.Handler) http.Handler) *service.HTTPServer {
	if hr != nil {
		health.Mount(mux.ServeMux, "/actuator/health", hr)
	}
	mux.ServeMux.Handle("GET /metrics", metrics.Handler(m.metrics))
	h := httpx.Chain(mux, append([]func(http.Handler) http.Handler{
		httpx.RequestID,
		httpx.AccessLog(m.log.With("module", name)),
		metrics.HTTPMiddleware(m.metrics, name),
		httpx.Recover(m.log.With("module", name), ew),
	}, extra...)...)
	return service.NewHTTPServer(name, addr, h, m.log)
}

func (m *modules) initSpeedtest(context.Context) (service.Service, error) {
	cfg := m.cfg.Speedtest
	cfg.Addr = m.cfg.Addr(Speedtest, "addr")
	st, err := speedtest.New(cfg, m.log.With("module", Speedtest), m.metrics)
	if err != nil {
		return nil, err
	}
	mux := httpx.NewMux()
	st.Routes(mux)
	hr := health.NewRegistry()
	return m.httpServer(Speedtest, cfg.Addr, mux, hr, httpx.DefaultErrorWriter), nil
}

func (m *modules) initACS(ctx context.Context) (service.Service, error) {
	cfg := m.cfg.ACS
	cfg.Addr, cfg.APIAddr = m.cfg.Addr(ACS, "addr"), m.cfg.Addr(ACS, "api-addr")
	log := m.log.With("module", ACS)
	pw, source, err := acs.EnsurePassword(cfg.Password, m.cfg.DataDir)
	if err != nil {
		return nil, err
	}
	cfg.Password = pw
	// The password is kept even when unauthenticated CPEs are allowed:
	// CPEs that do authenticate use it, and so do connection requests.
	log.Info("CPE credentials", "username", cfg.Username, "password_from", source, "allow_unauthenticated", cfg.AllowUnauthenticated)
	db, err := acs.OpenDB(ctx, cfg, m.cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("acs device store: %w", err)
	}
	store, err := acs.OpenStore(ctx, db, cfg.DefaultDomain)
	if err != nil {
		db.Close()
		return nil, err
	}
	a, err := acs.New(cfg, store, log, m.metrics)
	if err != nil {
		db.Close()
		return nil, err
	}
	hr := health.NewRegistry()
	hr.Register("db", health.Ping(db.PingContext), "readiness")

	cwmpMux := httpx.NewMux()
	cwmpMux.Handle("POST "+cfg.CWMPPath, a)
	cwmpSrv := m.httpServer(ACS, cfg.Addr, cwmpMux, hr, httpx.DefaultErrorWriter)

	apiMux := httpx.NewMux()
	acs.NewAPI(a).Routes(apiMux)
	apiSrv := m.httpServer(ACS+"-api", cfg.APIAddr, apiMux, hr, httpx.DefaultErrorWriter)

	executor, closeGrid, err := m.campaignExecutor(ctx, cfg, a, log)
	if err != nil {
		db.Close()
		return nil, err
	}
	// Stopped in reverse: servers first, then the loops, the DB last.
	return service.Group{
		service.Funcs{StopFn: func(context.Context) error { closeGrid(); return db.Close() }},
		a.Services(),
		executor,
		cwmpSrv,
		apiSrv,
	}, nil
}

func (m *modules) initTR069Emu(context.Context) (service.Service, error) {
	cfg := m.cfg.TR069Emu
	cfg.Addr = m.cfg.Addr(TR069Emu, "addr")
	cfg.DataDir = filepath.Join(m.cfg.DataDir, "tr069-emulator")
	if cfg.ACSPassword == "" {
		// In `cpesuite up` the ACS generates its CPE password there.
		cfg.ACSPasswordFile = filepath.Join(m.cfg.DataDir, acs.PasswordFileName)
	}
	log := m.log.With("module", TR069Emu)
	e, err := tr069emu.New(cfg, log, m.metrics)
	if err != nil {
		return nil, err
	}
	mux := httpx.NewMux()
	tr069emu.NewAPI(e).Routes(mux)
	// No actuator: the spec's liveness check is GET /api/status.
	srv := m.httpServer(TR069Emu, cfg.Addr, mux, nil, tr069emu.ErrorWriter())
	// The server binds first so connection request URLs name the real
	// port; stopping runs in reverse, devices before the server.
	return service.Group{
		srv,
		service.Funcs{
			StartFn: func(ctx context.Context) error {
				e.SetListenAddr(srv.ListenAddr().String())
				e.Start(ctx)
				return nil
			},
			StopFn: func(context.Context) error { e.Shutdown(); return nil },
		},
	}, nil
}

func (m *modules) initIoTEmu(context.Context) (service.Service, error) {
	cfg := m.cfg.IoTEmu
	cfg.Addr = m.cfg.Addr(IoTEmu, "addr")
	cfg.DataDir = filepath.Join(m.cfg.DataDir, "iot-emulator")
	log := m.log.With("module", IoTEmu)
	e, err := iotemu.New(cfg, log, iotemu.Stacks())
	if err != nil {
		return nil, err
	}
	mux := httpx.NewMux()
	iotemu.NewAPI(e).Routes(mux)
	// No actuator: the spec's liveness check is GET /api/status.
	srv := m.httpServer(IoTEmu, cfg.Addr, mux, nil, iotemu.ErrorWriter())
	var broker *mqttbroker.Broker
	// The embedded broker starts before the API so that devices of the
	// default configuration find it; it stops after every device.
	return service.Group{
		service.Funcs{
			StartFn: func(context.Context) error {
				if cfg.BrokerAddr == "" {
					return nil
				}
				b, err := mqttbroker.Start(cfg.BrokerAddr, log.With("component", "mqtt-broker"))
				if err != nil {
					return fmt.Errorf("embedded MQTT broker (CPESUITE_IOT_EMULATOR_BROKER_ADDR): %w", err)
				}
				broker = b
				log.Info("embedded MQTT broker listening", "addr", b.Addr())
				return nil
			},
			StopFn: func(context.Context) error {
				if broker != nil {
					return broker.Close()
				}
				return nil
			},
		},
		srv,
		service.Funcs{StopFn: func(context.Context) error { e.Shutdown(); return nil }},
	}, nil
}

func (m *modules) initFCC(ctx context.Context) (service.Service, error) {
	cfg := m.cfg.FCC
	cfg.Addr, cfg.DataDir = m.cfg.Addr(FCC, "addr"), m.cfg.DataDir
	log := m.log.With("module", FCC)
	svc, closeDBs, err := fcc.Open(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	g, closeGrid, err := m.campaignGrid(ctx, "fcc", log)
	if err != nil {
		closeDBs()
		return nil, err
	}
	closeAll := func() error { closeGrid(); return closeDBs() }
	hr := health.NewRegistry()
	svc.RegisterHealth(hr)
	resultsSvc, err := m.campaignResults(ctx, cfg, svc, g, hr, log)
	if err != nil {
		closeAll()
		return nil, err
	}
	runs, err := svc.RunEngine(g, m.metrics)
	if err != nil {
		closeAll()
		return nil, err
	}
	mux := httpx.NewMux()
	fcc.NewAPI(svc).Routes(mux)
	mux.ServeMux.Handle("GET /actuator/prometheus", metrics.Handler(m.metrics))
	// The spec names the operational endpoints at the root; a front end
	// that forwards only /FCC/** reaches them under the base path too.
	health.Mount(mux.ServeMux, "/FCC/actuator/health", hr)
	mux.ServeMux.Handle("GET /FCC/actuator/prometheus", metrics.Handler(m.metrics))
	// Stopped in reverse: the server, the run loops, ingestion and the
	// result store, then the grid client and the databases.
	return service.Group{
		service.Funcs{StopFn: func(context.Context) error { return closeAll() }},
		resultsSvc,
		runs,
		m.httpServer(FCC, cfg.Addr, mux, hr, fcc.ErrorWriter()),
	}, nil
}
