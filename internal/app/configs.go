package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"cpesuite/internal/configsvc"
	"cpesuite/internal/platform/fsx"
	"cpesuite/internal/platform/grid"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/logx"
	"cpesuite/internal/platform/passwd"
	"cpesuite/internal/platform/service"
)

func (m *modules) initConfigs(ctx context.Context) (service.Service, error) {
	cfg := m.cfg.Configs
	cfg.DataDir = m.cfg.DataDir
	cfg.Addr = m.cfg.Addr(Configs, "addr")
	// Run alone, the service honours its spec's SERVER_PORT; an explicit
	// CPESUITE_CONFIGS_ADDR still wins, as the more specific setting.
	if m.runAlone && cfg.ServerPort != "" && !m.cfg.AddrsSet[Configs+".addr"] {
		cfg.Addr = net.JoinHostPort("", cfg.ServerPort)
	}
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(cfg.LogLevel))
	log := logx.AtLeast(m.log.With("module", Configs), lv)

	// Under up, a fresh data dir gets a usable first administrator, as the
	// gateway does; `run configs` keeps the spec's rule (no password, no
	// account).
	adminFile, generated := "", false
	if !m.runAlone && cfg.BootstrapPassword == "" {
		var err error
		if cfg.BootstrapPassword, adminFile, generated, err = configsAdminPassword(m.cfg.DataDir); err != nil {
			return nil, err
		}
	}

	g, err := m.configsGrid(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	svc, err := configsvc.Open(ctx, cfg, configsvc.Deps{Grid: g, Metrics: m.metrics}, log)
	if err != nil {
		g.Close()
		return nil, err
	}

	if adminFile != "" && svc.CreatedBootstrapAdmin() {
		if generated {
			if err := fsx.WriteFileAtomic(adminFile, []byte(cfg.BootstrapPassword+"\n")); err != nil {
				svc.Close()
				g.Close()
				return nil, fmt.Errorf("writing %s: %w", ConfigsAdminPasswordFile, err)
			}
		}
		log.Info("first administrator's temporary password", "username", cfg.BootstrapUsername, "password_file", adminFile)
	}

	mux := httpx.NewMux()
	svc.Mount(mux, m.metrics)
	main := m.httpServer(Configs, cfg.Addr, mux, nil, configsvc.ErrorWriter(), configsvc.CORS(cfg.CORSOrigins, configsvc.ErrorWriter()))
	servers := service.Group{main}
	if cfg.SSLEnabled {
		cert, err := tls.LoadX509KeyPair(cfg.SSLCertFile, cfg.SSLKeyFile)
		if err != nil {
			svc.Close()
			g.Close()
			return nil, fmt.Errorf("SERVER_SSL_CERTIFICATE / SERVER_SSL_CERTIFICATE_PRIVATE_KEY: %w", err)
		}
		main.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		if cfg.ServerHTTPPort != "" {
			// Dual mode: the same routes in plain HTTP beside HTTPS.
			servers = append(servers, service.NewHTTPServer(Configs+"-http", net.JoinHostPort("", cfg.ServerHTTPPort), main.Server.Handler, m.log))
		}
	}
	cleanup := service.Funcs{RunFn: svc.RunCleanup}
	// Stopped in reverse: servers, the clean-up loop, then the service and
	// its grid connection.
	return service.Group{
		service.Funcs{StopFn: func(context.Context) error {
			err := svc.Close()
			g.Close()
			return err
		}},
		cleanup,
		servers,
	}, nil
}

// configsGrid opens the service's own grid connection with the spec's
// client settings: back-off from 2 s to 10 s, and a start-up that waits
// for the grid as long as it takes (until the process is stopped).
func (m *modules) configsGrid(ctx context.Context, cfg configsvc.Config, log *slog.Logger) (*grid.Grid, error) {
	members, err := cfg.GridMembers(m.cfg.Grid.Members)
	if err != nil {
		return nil, err
	}
	gcfg := grid.Config{Members: members, Name: "configs-service", ConnectTimeout: 5 * time.Second, ReconnectBase: 2 * time.Second, ReconnectMax: 10 * time.Second}
	var emb *grid.Embedded
	if len(members) == 0 {
		if !cfg.CacheIsServer {
			return nil, fmt.Errorf("configs: GRID_MEMBERS is empty and CACHE_IS_SERVER is false: no grid to connect to")
		}
		if m.gridEmb == nil {
			return nil, fmt.Errorf("configs: CACHE_IS_SERVER needs the embedded grid, but the process grid is external")
		}
		emb = m.gridEmb
	}
	return grid.ConnectRetry(ctx, gcfg, emb, func(attempt int, err error, wait time.Duration) {
		log.Warn("grid not reachable; start-up waits for it", "attempt", attempt, "retry_in", wait.String(), "err", err)
	})
}

// ConfigsAdminPasswordFile holds the configuration service's first
// administrator password that `cpesuite up` generates when
// CFG_BOOTSTRAP_ADMIN_PASSWORD is unset.
const ConfigsAdminPasswordFile = "configs-admin-password"

// configsAdminPassword reads the stored first-administrator password, or
// generates one (written only once the account exists, so the file never
// names a password that is not in force).
func configsAdminPassword(dataDir string) (pw, path string, generated bool, err error) {
	path = filepath.Join(dataDir, ConfigsAdminPasswordFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if pw = strings.TrimSpace(string(b)); pw == "" {
			return "", "", false, fmt.Errorf("%s is empty; delete it to generate a new password", path)
		}
		return pw, path, false, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", "", false, fmt.Errorf("reading %s: %w", ConfigsAdminPasswordFile, err)
	}
	if pw, err = passwd.Temporary(); err != nil {
		return "", "", false, err
	}
	return pw, path, true, nil
}
