package fcc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/platform/grid"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/service"
)

// runEngine is the activation machinery: scheduler, outbox dispatcher,
// ack and state consumers, watchdog. A nil engine (a service without a
// grid, as in handler tests) still answers the endpoints; only the loops
// are missing.
type runEngine struct {
	commands *grid.Queue
	// owner names this process's leases on outbox rows.
	owner string
	kick  chan struct{}

	transitions *prometheus.CounterVec
	sent        prometheus.Counter
	resent      prometheus.Counter
	abandoned   prometheus.Counter
}

// publishTimeout bounds one publish to the grid; the lease on a claimed
// outbox row is well above it, so a row is never offered twice while its
// first publish may still land.
const publishTimeout = 10 * time.Second

// outboxLease is how long a dispatcher holds the rows it claimed: a
// dispatcher that dies mid-tick leaves its rows to the others after it.
const outboxLease = 2 * time.Minute

// transition counts a run entering state; nil-safe.
func (e *runEngine) transition(state string) {
	if e != nil && e.transitions != nil {
		e.transitions.WithLabelValues(state).Inc()
	}
}

// nudge wakes the scheduler and the dispatcher early (an Immediately
// activation need not wait a poll interval); nil-safe and never blocks.
func (e *runEngine) nudge() {
	if e == nil {
		return
	}
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

func newOwner() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (a *API) runRoutes(mux *httpx.Mux, h func(httpx.Handler) http.Handler) {
	mux.Handle("POST /FCC/activate", h(a.activate))
	mux.Handle("POST /FCC/deactivate", h(rpc(a.s.deactivateRPC)))
}

func (a *API) activate(w http.ResponseWriter, r *http.Request) error {
	// 503 before anything but the identity filter, body checks included.
	if err := a.s.requireResultStore(); err != nil {
		return err
	}
	return rpc(a.s.activateRPC)(w, r)
}

// RunEngine returns every loop and consumer of activation as one service:
// the scheduler, the outbox dispatcher, the ack time-out poller, the
// watchdog and the consumers of fccCommandAck, fccDeviceStateQueue and
// fccActivationFinishedQueue. It declares the grid queues it uses and
// registers its counters on reg (nil: not registered).
func (s *Service) RunEngine(g *grid.Grid, reg prometheus.Registerer) (service.Service, error) {
	cfg := s.cfg.Runs.withDefaults()
	s.cfg.Runs = cfg
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	queues := map[string]*grid.Queue{}
	for _, name := range []string{fccwire.QueueCommands, fccwire.QueueCommandAck, fccwire.QueueDeviceState, fccwire.QueueActivationFinished} {
		q, err := grid.NewQueue(ctx, g, name, grid.QueueOptions{AckWait: consumerAckWait})
		if err != nil {
			return nil, fmt.Errorf("fcc: declaring queue %s: %w", name, err)
		}
		queues[name] = q
	}
	e := &runEngine{
		commands: queues[fccwire.QueueCommands],
		owner:    newOwner(),
		kick:     make(chan struct{}, 1),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fcc_run_transitions_total",
			Help: "Runs entering each state."}, []string{"state"}),
		sent:      prometheus.NewCounter(prometheus.CounterOpts{Name: "fcc_outbox_sent_total", Help: "Outbox rows sent for the first time."}),
		resent:    prometheus.NewCounter(prometheus.CounterOpts{Name: "fcc_outbox_resent_total", Help: "Outbox rows re-sent after the ack time-out."}),
		abandoned: prometheus.NewCounter(prometheus.CounterOpts{Name: "fcc_outbox_abandoned_total", Help: "Outbox rows abandoned at the attempt limit."}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{e.transitions, e.sent, e.resent, e.abandoned} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("fcc: registering run metrics: %w", err)
			}
		}
	}
	s.runs = e
	loop := func(name string, every time.Duration, fn func(ctx context.Context) error) service.Service {
		return service.Timer(every, func(ctx context.Context) error {
			if err := fn(ctx); err != nil && ctx.Err() == nil {
				// A failed tick is retried on the next one; the loop lives.
				s.log.Error("fcc: "+name+" tick failed", "err", err)
			}
			return nil
		})
	}
	return service.Group{
		// The scheduler and the dispatcher also run when an activation
		// nudges them.
		service.Funcs{RunFn: func(ctx context.Context) error {
			t := time.NewTicker(cfg.SchedulerInterval)
			d := time.NewTicker(cfg.DispatchInterval)
			defer t.Stop()
			defer d.Stop()
			for {
				var err error
				select {
				case <-ctx.Done():
					return nil
				case <-t.C:
					_, err = s.scheduleOnce(ctx, cfg.SchedulerBatchSize)
				case <-d.C:
					_, err = s.dispatchOnce(ctx)
				case <-e.kick:
					if _, err = s.scheduleOnce(ctx, cfg.SchedulerBatchSize); err == nil {
						_, err = s.dispatchOnce(ctx)
					}
				}
				if err != nil && ctx.Err() == nil {
					s.log.Error("fcc: scheduler or dispatcher tick failed", "err", err)
				}
			}
		}},
		loop("ack time-out poller", cfg.AckTimeoutInterval, func(ctx context.Context) error { _, err := s.ackTimeoutOnce(ctx); return err }),
		loop("watchdog", cfg.WatchdogInterval, func(ctx context.Context) error { _, err := s.watchdogOnce(ctx); return err }),
		s.consumer(queues[fccwire.QueueCommandAck], fccwire.KindCommandAck),
		s.consumer(queues[fccwire.QueueDeviceState], fccwire.KindDeviceState),
		s.consumer(queues[fccwire.QueueActivationFinished], fccwire.KindActivationFinished),
	}, nil
}
