package acs

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"cpesuite/internal/platform/config"
	"cpesuite/internal/platform/httpauth"
	"cpesuite/internal/platform/service"
)

// ACS is the auto-configuration server: the CWMP endpoint CPEs talk to,
// the task engine behind it, and what the management API calls.
type ACS struct {
	cfg      Config
	log      *slog.Logger
	store    *Store
	batcher  *informBatcher
	sessions *sessionTable
	cr       *ConnRequester
	notify   *notifier
	metrics  *metrics
	auth     *httpauth.Verifier
	diagMu   sync.Mutex // serialises the diagnostics in-flight check
	now      func() time.Time
	// waitDeadline starts the timer of an API call's waitSeconds; tests
	// replace it to end the wait at a moment they choose.
	waitDeadline func(time.Duration) (<-chan time.Time, func())
}

// New assembles the ACS on an opened store.
func New(cfg Config, store *Store, log *slog.Logger, reg prometheus.Registerer) (*ACS, error) {
	a := &ACS{
		cfg:      cfg,
		log:      log,
		store:    store,
		sessions: newSessionTable(cfg.MaxSessions, cfg.SessionTimeout),
		notify:   newNotifier(),
		now:      time.Now,
		waitDeadline: func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTimer(d)
			return t.C, func() { t.Stop() }
		},
	}
	m, err := newMetrics(reg, func() float64 { return float64(a.sessions.active()) })
	if err != nil {
		return nil, err
	}
	a.metrics = m
	a.batcher = newInformBatcher(store, cfg.InformBatch, cfg.InformWriters, log)
	a.batcher.onFlush = func(n int, _ time.Duration, _ error) { m.informBatch.Observe(float64(n)) }
	crCfg := cfg.ConnReq
	if crCfg.Username == "" {
		// One credential pair both ways unless configured otherwise, so
		// that devices of our emulator (which do the same) accept our
		// connection requests out of the box.
		crCfg.Username, crCfg.Password = cfg.Username, cfg.Password
	}
	a.cr = newConnRequester(crCfg, store, log)
	a.cr.observe = func(o string) { m.connRequests.WithLabelValues(o).Inc() }
	// The verifier exists even when unauthenticated CPEs are allowed: the
	// credentials a CPE does present are still checked (see authenticated).
	schemes := config.SplitList(cfg.Auth)
	a.auth = &httpauth.Verifier{
		Realm:  "cpesuite-acs",
		Basic:  slices.Contains(schemes, "basic"),
		Digest: slices.Contains(schemes, "digest"),
		Creds:  httpauth.CredentialsFunc(a.lookupPassword),
	}
	if err := a.auth.Validate(); err != nil {
		return nil, fmt.Errorf("acs authentication: %w", err)
	}
	return a, nil
}

// lookupPassword resolves CPE credentials: the global account first, then
// per-device accounts from the registry.
func (a *ACS) lookupPassword(ctx context.Context, username string) (string, bool, error) {
	if username == a.cfg.Username && a.cfg.Password != "" {
		return a.cfg.Password, true, nil
	}
	return a.store.AuthPassword(ctx, username)
}

// Store returns the registry (for the management API and tests).
func (a *ACS) Store() *Store { return a.store }

// Services are the ACS's background loops: the Inform writer, the
// session janitor, the online sweeper and the waiting-task time-out.
func (a *ACS) Services() service.Service {
	return service.Group{
		service.Funcs{RunFn: a.batcher.Run},
		service.Timer(time.Second, func(ctx context.Context) error {
			for _, s := range a.sessions.expire() {
				a.metrics.sessionsFinished.WithLabelValues("expired").Inc()
				a.log.Debug("session expired", "device", s.deviceID)
			}
			return nil
		}),
		service.Timer(10*time.Second, func(ctx context.Context) error {
			if n, err := a.store.SweepOffline(ctx, a.now()); err != nil {
				a.log.Warn("online sweep failed", "err", err)
			} else if n > 0 {
				a.log.Debug("devices went offline", "count", n)
			}
			a.expireWaiting(ctx)
			a.observeQueue(ctx)
			return nil
		}),
	}
}

func (a *ACS) expireWaiting(ctx context.Context) {
	tasks, err := a.store.ExpireWaiting(ctx, a.now().Add(-a.cfg.DiagnosticsTimeout))
	if err != nil {
		a.log.Warn("expiring waiting tasks failed", "err", err)
		return
	}
	for _, t := range tasks {
		a.log.Info("task timed out waiting for the CPE", "task", t.ID, "device", t.DeviceID, "kind", t.Kind)
		a.notify.notify(t.TransactionID)
	}
}

func (a *ACS) observeQueue(ctx context.Context) {
	pending, running, err := a.store.QueueDepth(ctx)
	if err != nil {
		return
	}
	a.metrics.queueDepth.WithLabelValues(string(TaskPending)).Set(float64(pending))
	a.metrics.queueDepth.WithLabelValues(string(TaskRunning)).Set(float64(running))
}

// onlineUntil is how long a contact keeps a device online.
func (a *ACS) onlineUntil(at time.Time, interval int) time.Time {
	if interval <= 0 {
		return at.Add(a.cfg.DefaultOnlineWindow)
	}
	return at.Add(time.Duration(float64(interval) * a.cfg.OnlineGrace * float64(time.Second)))
}

// finish persists a task that reached an end state and wakes its waiters.
func (a *ACS) finish(ctx context.Context, t *Task) error {
	if err := a.store.SaveTask(ctx, t); err != nil {
		return err
	}
	if !t.Open() {
		a.notify.notify(t.TransactionID)
	}
	return nil
}

// ConnectionRequest asks device id to open a session now. Success proves
// the device reachable, so it counts as online.
func (a *ACS) ConnectionRequest(ctx context.Context, id int64) error {
	d, err := a.store.Device(ctx, id)
	if err != nil {
		return err
	}
	// The outcome on the tasks and the online mark go in one commit.
	return a.cr.requestAndRecord(ctx, d, func() (time.Time, time.Time) {
		now := a.now()
		return now, a.onlineUntil(now, d.PeriodicInterval)
	})
}
