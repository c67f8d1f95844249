package results

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"cpesuite/internal/platform/health"
)

// Pinger is implemented by stores that can tell reachability without
// reading the schema version; the probe then reads the version only every
// schema-check-interval.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Probe watches the store and keeps its state for the 9503 gate and the
// health endpoint. It is a service (Start, Run, Stop): it checks every
// cache-ttl, each check bounded by query-timeout-sec; while the store is
// UNAVAILABLE it checks once per down-interval (a minute) unless Recheck
// asks for one; while the schema is behind it runs Migrate every
// migration.retry-interval and reads the version at every check. The
// store belongs to the caller, which closes it after the probe stops.
type Probe struct {
	store Store
	cfg   Config
	log   *slog.Logger
	now   func() time.Time

	recheck chan struct{}

	mu         sync.Mutex
	status     Status
	schemaRead time.Time // last successful version read
	migrated   time.Time // last Migrate attempt
	onChange   []func(Status)
}

// NewProbe returns a probe of store. Until its first check the state is
// UNAVAILABLE ("not checked yet"), so nothing is let through on a guess.
func NewProbe(store Store, cfg Config, log *slog.Logger) *Probe {
	if log == nil {
		log = slog.Default()
	}
	return &Probe{
		store:   store,
		cfg:     cfg,
		log:     log,
		now:     time.Now,
		recheck: make(chan struct{}, 1),
		status:  Status{State: StateUnavailable, Reason: "not checked yet"},
	}
}

// Status returns the last state found, without I/O: the gate calls it per
// request.
func (p *Probe) Status() Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

// OnChange registers fn, called from the probe's goroutine after every
// change of state (ingestion resumes at once when the store is back). fn
// must not block.
func (p *Probe) OnChange(fn func(Status)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onChange = append(p.onChange, fn)
}

// Recheck asks for a check now, whatever the interval; requests while one
// is pending collapse into it.
func (p *Probe) Recheck() {
	select {
	case p.recheck <- struct{}{}:
	default:
	}
}

// Start runs the first check (and pending migrations), so the state is
// known before the service takes traffic. A store that is down is a state,
// not a failure: Start never fails.
func (p *Probe) Start(ctx context.Context) error {
	p.CheckNow(ctx)
	return nil
}

// Run checks until ctx ends.
func (p *Probe) Run(ctx context.Context) error {
	t := time.NewTimer(p.interval())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-p.recheck:
			if !t.Stop() {
				select {
				case <-t.C:
				default:
				}
			}
		}
		p.CheckNow(ctx)
		t.Reset(p.interval())
	}
}

// Stop implements service.Service; the store is the caller's to close.
func (p *Probe) Stop(context.Context) error { return nil }

// interval is the wait before the next check.
func (p *Probe) interval() time.Duration {
	if p.Status().State == StateUnavailable {
		return p.cfg.DownInterval
	}
	return p.cfg.CacheTTL
}

// CheckNow runs one check synchronously and returns the new state.
func (p *Probe) CheckNow(ctx context.Context) Status {
	st := p.check(ctx)
	if st.State == StateSchemaBehind && p.migrationDue() {
		if err := p.migrate(ctx); err != nil {
			p.log.Warn("result store migration failed; retrying later",
				"retry_interval", p.cfg.MigrationRetryInterval, "error", err.Error())
			st.Reason += "; last migration attempt: " + err.Error()
		} else {
			st = p.check(ctx)
		}
	}
	p.set(st)
	return st
}

func (p *Probe) check(ctx context.Context) Status {
	cctx, cancel := context.WithTimeout(ctx, p.cfg.QueryTimeout())
	defer cancel()
	p.mu.Lock()
	prev, schemaRead := p.status, p.schemaRead
	p.mu.Unlock()
	pinger, ok := p.store.(Pinger)
	if ok && prev.State == StateUp && p.now().Sub(schemaRead) < p.cfg.SchemaCheckInterval {
		if err := pinger.Ping(cctx); err != nil {
			return Status{State: StateUnavailable, Reason: err.Error(), CheckedAt: p.now()}
		}
		prev.CheckedAt = p.now()
		return prev
	}
	st := p.store.Check(cctx)
	if st.State != StateUnavailable {
		p.mu.Lock()
		p.schemaRead = p.now()
		p.mu.Unlock()
	}
	return st
}

func (p *Probe) migrationDue() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.migrated.IsZero() || p.now().Sub(p.migrated) >= p.cfg.MigrationRetryInterval
}

// migrate gets more time than a health check: DDL on a busy server is
// slower than a version read, and a migration cut off midway only repeats.
func (p *Probe) migrate(ctx context.Context) error {
	p.mu.Lock()
	p.migrated = p.now()
	p.mu.Unlock()
	mctx, cancel := context.WithTimeout(ctx, max(10*p.cfg.QueryTimeout(), 30*time.Second))
	defer cancel()
	if err := p.store.Migrate(mctx); err != nil {
		return err
	}
	p.log.Info("result store migrated")
	return nil
}

func (p *Probe) set(st Status) {
	p.mu.Lock()
	prev := p.status
	p.status = st
	fns := p.onChange
	p.mu.Unlock()
	if prev.State == st.State {
		return
	}
	if st.State == StateUp {
		p.log.Info("result store is UP", "was", prev.State)
	} else {
		p.log.Warn("result store is not UP: activation and reports answer 503", "state", st.State, "reason", st.Reason)
	}
	for _, fn := range fns {
		fn(st)
	}
}

// Indicator is the result store's health indicator: UP when the store is
// UP, otherwise DEGRADED (CRUD keeps working, the service answers 200),
// with details.reason UNAVAILABLE or SCHEMA_BEHIND and details.error the
// reason's text. It serves the cached state.
func (p *Probe) Indicator() health.Indicator {
	return health.IndicatorFunc(func(context.Context) health.Result {
		st := p.Status()
		d := map[string]any{"state": string(st.State)}
		if !st.CheckedAt.IsZero() {
			d["checkedAt"] = st.CheckedAt.UTC().Format(time.RFC3339)
		}
		if st.State == StateUp {
			return health.Result{Status: health.StatusUp, Details: d}
		}
		d["reason"] = string(st.State)
		d["error"] = st.Reason
		return health.Result{Status: health.StatusDegraded, Details: d}
	})
}
