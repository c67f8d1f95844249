package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/wire"
)

// envLock records that an env's emulator is in use: pending while the
// dispatch applies settings and starts the run, then the run or batch it
// started, which the next dispatch checks with the worker.
type envLock struct {
	stand   string
	owner   identity.Identity
	pending bool
	runID   string
	batchID string
}

// dispatcher decides where runs go. Its rule: one run per env at a time
// (409) and one run per worker (503 when none is free). Workers are
// probed without the lock; the choice and the reservation happen under
// it, so two dispatches can never take one worker or one env.
type dispatcher struct {
	slow  time.Duration // limit of applying settings
	mu    sync.Mutex
	envs  map[string]*envLock
	wc    *workerClient
	fleet *fleet
}

func newDispatcher(wc *workerClient, f *fleet) *dispatcher {
	return &dispatcher{envs: map[string]*envLock{}, wc: wc, fleet: f}
}

// probe is what the dispatcher learned about the workers just now.
type probe struct {
	stands []Stand
	free   map[string]bool // reachable, enabled, not running anything
	// live reports, per env with a started run, whether it still runs.
	live map[string]bool
}

func (d *dispatcher) probe(ctx context.Context) (probe, error) {
	stands, err := d.fleet.stands(ctx)
	if err != nil {
		return probe{}, err
	}
	p := probe{stands: stands, free: map[string]bool{}, live: map[string]bool{}}
	d.mu.Lock()
	held := map[string]envLock{}
	for env, l := range d.envs {
		if !l.pending {
			held[env] = *l
		}
	}
	d.mu.Unlock()

	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, st := range stands {
		if !st.Enabled {
			continue
		}
		wg.Go(func() {
			h, err := d.wc.health(ctx, st)
			if err == nil && !h.Busy {
				mu.Lock()
				p.free[st.Name] = true
				mu.Unlock()
			}
		})
	}
	for env, l := range held {
		wg.Go(func() {
			alive := d.stillRunning(ctx, l, stands)
			mu.Lock()
			p.live[env] = alive
			mu.Unlock()
		})
	}
	wg.Wait()
	return p, nil
}

// stillRunning asks the worker holding an env whether its run or batch is
// still running. An unreachable worker keeps the env: releasing it could
// put two runs on one emulator.
func (d *dispatcher) stillRunning(ctx context.Context, l envLock, stands []Stand) bool {
	var st *Stand
	for i := range stands {
		if stands[i].Name == l.stand {
			st = &stands[i]
		}
	}
	if st == nil {
		return false // the stand was deregistered
	}
	if l.batchID != "" {
		a := d.wc.call(ctx, *st, l.owner, http.MethodGet, "/api/run/batch", nil, nil)
		if a.err != nil || a.status/100 == 5 {
			return true
		}
		var b wire.BatchStatus
		if a.status != http.StatusOK || json.Unmarshal(a.body, &b) != nil {
			return false
		}
		return b.ID == l.batchID && b.Status == wire.BatchRunning
	}
	a := d.wc.call(ctx, *st, l.owner, http.MethodGet, "/api/runs/"+url.PathEscape(l.runID), nil, nil)
	if a.err != nil || a.status/100 == 5 {
		return true
	}
	var r wire.RunDetail
	if a.status != http.StatusOK || json.Unmarshal(a.body, &r) != nil {
		return false
	}
	return r.Status == wire.StatusRunning
}

// reserve takes env and a free worker for caller, or says why not.
func (d *dispatcher) reserve(env string, caller identity.Identity, p probe) (Stand, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	// Runs seen finished release their env and worker. A lock that
	// started after the probe was not checked and stays.
	for e, l := range d.envs {
		if alive, checked := p.live[e]; checked && !alive && !l.pending {
			delete(d.envs, e)
		}
	}
	if l := d.envs[env]; l != nil {
		return Stand{}, apperr.Conflict("ENV_BUSY", "the emulator of env %q is busy with a run on stand %s", env, l.stand).
			WithDetails(map[string]any{"env": env, "stand": l.stand})
	}
	taken := map[string]bool{}
	for _, l := range d.envs {
		taken[l.stand] = true
	}
	enabled := 0
	for _, st := range p.stands {
		if !st.Enabled {
			continue
		}
		enabled++
		if p.free[st.Name] && !taken[st.Name] {
			d.envs[env] = &envLock{stand: st.Name, owner: caller, pending: true}
			return st, nil
		}
	}
	if enabled == 0 {
		return Stand{}, apperr.New(apperr.ErrUnavailable, "NO_WORKERS", "no enabled worker stand is registered")
	}
	return Stand{}, apperr.New(apperr.ErrUnavailable, "ALL_WORKERS_BUSY", "all %d enabled workers are busy or unreachable", enabled)
}

// started records what the reservation became.
func (d *dispatcher) started(env, runID, batchID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if l := d.envs[env]; l != nil {
		l.pending, l.runID, l.batchID = false, runID, batchID
	}
}

// release drops a reservation whose dispatch failed.
func (d *dispatcher) release(env string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.envs, env)
}

// dispatchRequest is the common part of a run and a batch dispatch.
type dispatchRequest struct {
	Env    string
	Model  string
	DryRun bool
}

// dispatch reserves a worker for the env, applies the env profile's
// settings onto it and calls start, which starts the run or batch there.
func (d *dispatcher) dispatch(ctx context.Context, caller identity.Identity, req dispatchRequest,
	start func(Stand) (runID, batchID string, a answer)) (Stand, answer, error) {
	prof, err := d.fleet.profile(ctx, req.Env)
	if err != nil {
		return Stand{}, answer{}, err
	}
	p, err := d.probe(ctx)
	if err != nil {
		return Stand{}, answer{}, err
	}
	st, err := d.reserve(req.Env, caller, p)
	if err != nil {
		return Stand{}, answer{}, err
	}
	if err := d.apply(ctx, st, req.Env, prof); err != nil {
		d.release(req.Env)
		return st, answer{}, err
	}
	runID, batchID, a := start(st)
	if !a.ok() {
		d.release(req.Env)
		if a.status == http.StatusConflict {
			// Someone started a run on the worker directly meanwhile.
			return st, a, apperr.New(apperr.ErrUnavailable, "ALL_WORKERS_BUSY", "worker %s became busy; try again", st.Name)
		}
		return st, a, upstreamError(a, "starting the run")
	}
	d.started(req.Env, runID, batchID)
	return st, a, nil
}

// apply puts the env profile onto the worker. The worker's settings PUT
// replaces every UI override, so the overrides the worker has (secrets
// come back masked, and a masked value keeps the stored one) are sent
// back with the profile laid over them: an API key set on the worker
// survives a dispatch.
func (d *dispatcher) apply(ctx context.Context, st Stand, env string, prof Profile) error {
	fail := func(a answer) error {
		return apperr.New(apperr.ErrUpstream, "PROFILE_APPLY_FAILED",
			"applying env profile %q onto worker %s failed: %s", env, st.Name, answerText(a))
	}
	a := d.wc.call(ctx, st, systemIdentity, http.MethodGet, "/api/settings", nil, nil)
	var cur struct {
		Settings map[string]string `json:"settings"`
		Sources  map[string]string `json:"sources"`
	}
	if !a.ok() || json.Unmarshal(a.body, &cur) != nil {
		return fail(a)
	}
	settings := map[string]string{}
	for k, src := range cur.Sources {
		if src == "ui" {
			settings[k] = cur.Settings[k]
		}
	}
	for k, v := range prof.Settings {
		settings[k] = v
	}
	settings["env_name"] = env
	if a := d.wc.callWithin(ctx, d.slow, st, systemIdentity, http.MethodPut, "/api/settings", nil, settings); !a.ok() {
		return fail(a)
	}
	return nil
}

func answerText(a answer) string {
	if a.err != nil {
		return "unreachable"
	}
	return "HTTP " + strconv.Itoa(a.status) + ": " + workerDetail(a)
}
