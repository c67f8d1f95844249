// Package app assembles cpesuite: the module manager (this file), the
// concrete modules and their dependency map (modules.go) and the process
// configuration (config.go). Model: Grafana Loki pkg/loki/modules.go.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"cpesuite/internal/platform/service"
)

// Module is a named unit of the process with explicit dependencies.
type Module struct {
	Name string
	// Deps are initialised and started before this module and stopped
	// after it.
	Deps []string
	// Target marks modules an operator can ask for by name; the others
	// (the grid, for instance) exist only as dependencies.
	Target bool
	// Init builds the module's service. Inits run one after the other in
	// dependency order, so an Init may use what its dependencies' Inits
	// set up.
	Init func(ctx context.Context) (service.Service, error)
}

// Manager starts modules in dependency order, watches them, and stops them
// in reverse order when the context ends or one of them fails.
type Manager struct {
	Log          *slog.Logger
	StartTimeout time.Duration
	StopTimeout  time.Duration

	modules map[string]Module
	names   []string // registration order, for deterministic resolution
	// order is what Run resolved, set before the first Init runs.
	order []string
	ready chan struct{}
	// OnReady, when set, is called once every module has started.
	OnReady func(order []string, took time.Duration)
}

// NewManager returns an empty manager with the default timeouts.
func NewManager(log *slog.Logger) *Manager {
	return &Manager{
		Log:          log,
		StartTimeout: 30 * time.Second,
		StopTimeout:  10 * time.Second,
		modules:      map[string]Module{},
		ready:        make(chan struct{}),
	}
}

// Register adds a module. Registering a name twice is a programming error.
func (m *Manager) Register(mod Module) {
	if _, dup := m.modules[mod.Name]; dup {
		panic("app: module registered twice: " + mod.Name)
	}
	m.modules[mod.Name] = mod
	m.names = append(m.names, mod.Name)
}

// Targets lists the registered target names in registration order.
func (m *Manager) Targets() []string {
	var out []string
	for _, n := range m.names {
		if m.modules[n].Target {
			out = append(out, n)
		}
	}
	return out
}

// Running reports whether Run starts module name in this process; Inits
// use it to wire modules that may run together or apart.
func (m *Manager) Running(name string) bool { return slices.Contains(m.order, name) }

// IsTarget reports whether name is a registered target.
func (m *Manager) IsTarget(name string) bool { return m.modules[name].Target }

// Ready is closed once every requested module has started.
func (m *Manager) Ready() <-chan struct{} { return m.ready }

// Resolve returns the requested modules and all their dependencies, each
// after everything it depends on. It fails on unknown names and cycles.
func (m *Manager) Resolve(targets []string) ([]string, error) {
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	var order []string
	var visit func(name string, path []string) error
	visit = func(name string, path []string) error {
		mod, ok := m.modules[name]
		if !ok {
			if len(path) == 0 {
				return fmt.Errorf("unknown target %q (implemented: %s)", name, fmtList(m.Targets()))
			}
			return fmt.Errorf("module %q depends on unknown module %q", path[len(path)-1], name)
		}
		switch state[name] {
		case done:
			return nil
		case visiting:
			return fmt.Errorf("dependency cycle: %s", fmtCycle(append(path, name)))
		}
		state[name] = visiting
		for _, d := range mod.Deps {
			if err := visit(d, append(path, name)); err != nil {
				return err
			}
		}
		state[name] = done
		order = append(order, name)
		return nil
	}
	for _, t := range targets {
		if err := visit(t, nil); err != nil {
			return nil, err
		}
	}
	return order, nil
}

type running struct {
	name   string
	svc    service.Service
	cancel context.CancelFunc
	done   chan struct{}
	err    error // set before done is closed
}

// Run initialises and starts the modules behind targets, then blocks until
// ctx ends (a clean stop, nil error) or a module fails. Either way every
// started module is stopped in reverse order within StopTimeout. The error
// joins the failure and any stop errors.
func (m *Manager) Run(ctx context.Context, targets []string) error {
	order, err := m.Resolve(targets)
	if err != nil {
		return err
	}
	m.order = order
	began := time.Now()
	var started []*running
	failed := make(chan *running, len(order))
	var failure error

	for _, name := range order {
		if ctx.Err() != nil {
			break // stopped during start-up: not a failure
		}
		r, err := m.start(ctx, name, failed)
		if err != nil && ctx.Err() != nil {
			// A signal during a module's init or start cancels what it
			// was doing; that is the stop the operator asked for.
			m.Log.Info("stopped during start-up", "module", name, "err", err)
			break
		}
		if err != nil {
			failure = err
			break
		}
		started = append(started, r)
	}

	if failure == nil && ctx.Err() == nil {
		took := time.Since(began)
		m.Log.Info("all modules ready", "modules", order, "took_ms", float64(took.Microseconds())/1000)
		close(m.ready)
		if m.OnReady != nil {
			m.OnReady(order, took)
		}
		select {
		case <-ctx.Done():
			m.Log.Info("stopping", "reason", context.Cause(ctx))
		case r := <-failed:
			failure = fmt.Errorf("module %s failed: %w", r.name, r.err)
			m.Log.Error("module failed; stopping all", "module", r.name, "err", r.err)
		}
	}
	return errors.Join(failure, m.stopAll(ctx, started))
}

func (m *Manager) start(ctx context.Context, name string, failed chan<- *running) (*running, error) {
	mod := m.modules[name]
	svc, err := mod.Init(ctx)
	if err != nil {
		return nil, fmt.Errorf("module %s: init: %w", name, err)
	}
	startCtx, cancelStart := context.WithTimeout(ctx, m.StartTimeout)
	err = svc.Start(startCtx)
	cancelStart()
	if err != nil {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.StopTimeout)
		defer cancel()
		return nil, errors.Join(fmt.Errorf("module %s: start: %w", name, err), svc.Stop(stopCtx))
	}
	// Each module gets its own run context so that stopping can go one
	// module at a time, dependents first.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r := &running{name: name, svc: svc, cancel: cancel, done: make(chan struct{})}
	go func() {
		err := svc.Run(runCtx)
		unasked := runCtx.Err() == nil
		if err == nil && unasked {
			err = errors.New("stopped unexpectedly")
		}
		r.err = err
		if unasked {
			failed <- r
		}
		close(r.done)
	}()
	m.Log.Debug("module started", "module", name)
	return r, nil
}

// stopAll stops the modules in reverse start order, sharing one deadline.
func (m *Manager) stopAll(ctx context.Context, started []*running) error {
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.StopTimeout)
	defer cancel()
	var errs []error
	for _, r := range slices.Backward(started) {
		r.cancel()
		select {
		case <-r.done:
		case <-stopCtx.Done():
			errs = append(errs, fmt.Errorf("module %s: run did not return before the stop deadline", r.name))
		}
		if err := r.svc.Stop(stopCtx); err != nil {
			errs = append(errs, fmt.Errorf("module %s: stop: %w", r.name, err))
		}
		m.Log.Debug("module stopped", "module", r.name)
	}
	return errors.Join(errs...)
}

func fmtList(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return fmt.Sprint(xs)
}

func fmtCycle(path []string) string {
	out := ""
	for i, p := range path {
		if i > 0 {
			out += " -> "
		}
		out += p
	}
	return out
}
