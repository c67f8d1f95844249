package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"cpesuite/internal/acs"
	"cpesuite/internal/fcc"
	"cpesuite/internal/fcc/ingest"
	"cpesuite/internal/fcc/legacy"
	"cpesuite/internal/fcc/results"
	"cpesuite/internal/platform/grid"
	"cpesuite/internal/platform/health"
	"cpesuite/internal/platform/service"
	"cpesuite/internal/platform/sqlstore"
)

// campaignGrid is the grid the campaign service and the ACS campaign
// executor talk through: the process's embedded member under `up` (and
// under `run` without GRID_MEMBERS), otherwise a client of its own to the
// external cluster that waits for it as long as the process runs.
func (m *modules) campaignGrid(ctx context.Context, name string, log *slog.Logger) (*grid.Grid, func(), error) {
	if m.grid != nil {
		return m.grid, func() {}, nil
	}
	cfg := m.cfg.Grid
	cfg.Name = name
	g, err := grid.ConnectRetry(ctx, cfg, nil, func(attempt int, err error, wait time.Duration) {
		log.Warn("grid not reachable yet; retrying", "attempt", attempt, "err", err, "wait", wait)
	})
	if err != nil {
		return nil, nil, err
	}
	return g, g.Close, nil
}

// campaignResults opens the result store, its probe and result ingestion,
// connects them to svc and registers their health indicators. With the
// store disabled, activation and the reports answer 503 and nothing is
// ingested (results stay on the grid).
func (m *modules) campaignResults(ctx context.Context, cfg fcc.Config, svc *fcc.Service, g *grid.Grid, hr *health.Registry, log *slog.Logger) (service.Service, error) {
	if !cfg.ResultStore.Enabled {
		log.Warn("the result store is disabled (SVC_FCC_RESULTSTORE_ENABLED=false): activation and reports answer 503, results wait on the grid")
		hr.Register("resultStore", health.IndicatorFunc(func(context.Context) health.Result {
			return health.Result{Status: health.StatusDegraded, Details: map[string]any{"state": "UNAVAILABLE", "reason": "UNAVAILABLE", "error": "disabled"}}
		}))
		return service.Group{}, nil
	}
	store, err := results.Open(ctx, cfg.ResultStore, cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("fcc result store: %w", err)
	}
	probe := results.NewProbe(store, cfg.ResultStore, log.With("component", "result-store-probe"))
	hr.Register("resultStore", probe.Indicator())
	dl, err := ingest.OpenDeadLetters(ctx, svc.DB())
	if err != nil {
		store.Close()
		return nil, err
	}
	q, err := ingest.OpenQueue(ctx, g)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("fcc: declaring the result queue: %w", err)
	}
	dedup, err := ingest.OpenDedup(ctx, g, cfg.Ingest.DedupTTL)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("fcc: declaring the result dedup map: %w", err)
	}
	in := ingest.New(cfg.Ingest, ingest.Deps{Queue: q, Dedup: dedup, Store: store, Gate: probe, DeadLetters: dl,
		Runs: svc, Metrics: m.metrics, Log: log})
	hr.Register("resultBuffer", in)
	svc.UseResults(probe, in)
	svc.UseResultStore(store)
	closeLegacy, err := m.legacyImporter(ctx, cfg, svc, store, probe, log)
	if err != nil {
		store.Close()
		return nil, err
	}
	// Stopped in reverse: the legacy pass and ingestion hand their work
	// back before the store closes.
	return service.Group{
		service.Funcs{StopFn: func(context.Context) error { return store.Close() }},
		probe,
		in,
		service.Funcs{StopFn: func(context.Context) error { return closeLegacy() }},
	}, nil
}

// legacyImporter opens the legacy result tables (CPESUITE_FCC_LEGACY_DB_*;
// by default <data-dir>/legacy.db, created with the documented empty
// tables so that an operator can load them) and the importer over them. It
// is built even with the import disabled so that status answers.
func (m *modules) legacyImporter(ctx context.Context, cfg fcc.Config, svc *fcc.Service, store results.Store, gate *results.Probe, log *slog.Logger) (func() error, error) {
	src, err := sqlstore.OpenService(ctx, cfg.Legacy.SourceDialect, cfg.Legacy.SourceDSN, filepath.Join(cfg.DataDir, "legacy.db"))
	if err != nil {
		return nil, fmt.Errorf("fcc legacy source (CPESUITE_FCC_LEGACY_DB_DSN): %w", err)
	}
	if cfg.Legacy.SourceDSN == "" {
		if rows, err := src.QueryContext(ctx, `SELECT 1 FROM legacy_user_groups WHERE 1 = 0`); err == nil {
			rows.Close()
		} else if err := legacy.CreateSource(ctx, src); err != nil {
			src.Close()
			return nil, fmt.Errorf("creating the empty legacy source: %w", err)
		}
	}
	var devices legacy.DeviceLookup
	if db := svc.ACSDB(); db != nil {
		devices = legacy.ACSDevices(db)
	}
	imp, err := legacy.New(ctx, cfg.Legacy, legacy.Deps{FCC: svc.DB(), Source: src, Store: store, Gate: gate,
		Devices: devices, Registerer: m.metrics, Log: log.With("component", "legacy-import")})
	if err != nil {
		src.Close()
		return nil, err
	}
	svc.UseLegacy(imp)
	return func() error { return errors.Join(imp.Close(), src.Close()) }, nil
}

// campaignExecutor is the ACS's campaign executor on the campaign grid;
// disabled (CPESUITE_ACS_CAMPAIGN_EXECUTOR=false) it needs no grid at all.
func (m *modules) campaignExecutor(ctx context.Context, cfg acs.Config, a *acs.ACS, log *slog.Logger) (service.Service, func(), error) {
	if !cfg.Executor.Enabled {
		log.Info("campaign executor disabled (CPESUITE_ACS_CAMPAIGN_EXECUTOR=false)")
		return service.Group{}, func() {}, nil
	}
	g, closeGrid, err := m.campaignGrid(ctx, "acs", log)
	if err != nil {
		return nil, nil, err
	}
	ex, err := acs.NewExecutor(a, g, cfg.Executor, m.metrics)
	if err != nil {
		closeGrid()
		return nil, nil, err
	}
	return ex.Service(), closeGrid, nil
}
