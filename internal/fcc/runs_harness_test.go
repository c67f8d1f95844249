package fcc

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/fcc/results"
	"cpesuite/internal/platform/campaigntime"
	"cpesuite/internal/platform/grid"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/testutil"
)

// fakeGate is the result store's probe as the runs tests need it.
type fakeGate struct{ state results.State }

func (g fakeGate) Status() results.Status { return results.Status{State: g.state} }

// fastRuns is a runs configuration for tests: millisecond ticks, and
// campaign-time bounds long enough that nothing fires unless a test
// shortens it.
func fastRuns() RunsConfig {
	return RunsConfig{CommandAckTimeout: time.Hour, ActivationMaxDelay: time.Hour, StopGrace: 15 * time.Minute,
		OutboxBatchSize: 100, OutboxMaxAttempts: 10, DispatchInterval: 10 * time.Millisecond, AckTimeoutInterval: 10 * time.Millisecond,
		SchedulerInterval: 10 * time.Millisecond, SchedulerBatchSize: 100, WatchdogInterval: 10 * time.Millisecond, WatchdogBatchSize: 100,
		WatchdogFinishGrace: time.Hour, ConsumerBatchSize: 100}
}

// acsPeer plays the ACS: it reads the command queue and answers on the
// ACS-to-service queues with fccwire.Encode, like the executor does.
type acsPeer struct {
	t                                 *testing.T
	g                                 *grid.Grid
	cmds, acks, states, finishedQueue *grid.Queue
}

// command is one command as the ACS received it.
type command struct {
	kind  fccwire.Kind
	raw   []byte
	msgID string
	act   *fccwire.Activate
	stop  *fccwire.Stop
}

func startGrid(t testing.TB) *grid.Grid {
	t.Helper()
	emb, err := grid.StartEmbedded(grid.Config{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatalf("StartEmbedded: %v", err)
	}
	t.Cleanup(emb.Shutdown)
	ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
	defer cancel()
	g, err := grid.Connect(ctx, grid.Config{Name: t.Name()}, emb)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(g.Close)
	return g
}

// startEngine runs s's engine on g until the test ends.
func startEngine(t *testing.T, s *Service, g *grid.Grid) {
	t.Helper()
	eng, err := s.RunEngine(g, prometheus.NewRegistry())
	if err != nil {
		t.Fatalf("RunEngine: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := eng.Start(ctx); err != nil {
		t.Fatalf("engine start: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("engine run: %v", err)
		}
		sctx, c := context.WithTimeout(context.Background(), testutil.MinDeadline)
		defer c()
		_ = eng.Stop(sctx)
	})
}

func newPeer(t *testing.T, g *grid.Grid) *acsPeer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
	defer cancel()
	p := &acsPeer{t: t, g: g}
	for name, dst := range map[string]**grid.Queue{fccwire.QueueCommands: &p.cmds, fccwire.QueueCommandAck: &p.acks,
		fccwire.QueueDeviceState: &p.states, fccwire.QueueActivationFinished: &p.finishedQueue} {
		q, err := grid.NewQueue(ctx, g, name, grid.QueueOptions{AckWait: consumerAckWait})
		if err != nil {
			t.Fatalf("NewQueue(%s): %v", name, err)
		}
		*dst = q
	}
	return p
}

// runHarness is a campaign service with its engine on a real grid, and the
// ACS's side of the grid.
func runHarness(t *testing.T, d sqlstore.Dialect, edit func(*Config)) (*harness, *acsPeer) {
	t.Helper()
	h := newHarness(t, d, func(c *Config) {
		c.Runs = fastRuns()
		if edit != nil {
			edit(c)
		}
	})
	useGate(h.svc, fakeGate{results.StateUp})
	g := startGrid(t)
	startEngine(t, h.svc, g)
	return h, newPeer(t, g)
}

// next returns the next command, checked against its schema.
func (p *acsPeer) next() command {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
	defer cancel()
	for {
		ds, err := p.cmds.Fetch(ctx, 1, testutil.MinDeadline)
		if err != nil {
			p.t.Fatalf("waiting for a command: %v", err)
		}
		if len(ds) == 0 {
			continue
		}
		d := ds[0]
		if err := d.Ack(ctx); err != nil {
			p.t.Fatal(err)
		}
		kind, err := fccwire.PeekKind(d.Data)
		if err != nil {
			p.t.Fatalf("command of no kind: %v", err)
		}
		m, err := fccwire.Decode(kind, d.Data)
		if err != nil {
			p.t.Fatalf("the service sent a command the schema refuses: %v\n%s", err, d.Data)
		}
		c := command{kind: kind, raw: d.Data, msgID: d.MsgID}
		switch m := m.(type) {
		case *fccwire.Activate:
			c.act = m
		case *fccwire.Stop:
			c.stop = m
		}
		return c
	}
}

func (p *acsPeer) nextActivate() command {
	p.t.Helper()
	c := p.next()
	if c.act == nil {
		p.t.Fatalf("got %s, want ACTIVATE: %s", c.kind, c.raw)
	}
	return c
}

func (p *acsPeer) nextStop(want fccwire.StopReason) command {
	p.t.Helper()
	for {
		c := p.next()
		if c.stop == nil {
			continue // re-sent ACTIVATE parts may come first
		}
		if c.stop.Reason != want {
			p.t.Fatalf("STOP reason %s, want %s", c.stop.Reason, want)
		}
		return c
	}
}

func (p *acsPeer) publish(q *grid.Queue, m fccwire.Message) {
	p.t.Helper()
	b, err := fccwire.Encode(m)
	if err != nil {
		p.t.Fatalf("encoding %T: %v", m, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
	defer cancel()
	if err := q.Publish(ctx, b, ""); err != nil {
		p.t.Fatal(err)
	}
}

func (p *acsPeer) ack(a *fccwire.Activate, status fccwire.AckStatus, reason fccwire.RejectReason) {
	p.t.Helper()
	p.publish(p.acks, &fccwire.CommandAck{CommandID: a.CommandID, Command: fccwire.KindActivate, ActivationID: a.ActivationID, Part: a.Part,
		Status: status, Reason: reason, AckedAt: fccwire.At(time.Now())})
}

func (p *acsPeer) ackStop(s *fccwire.Stop) {
	p.t.Helper()
	p.publish(p.acks, &fccwire.CommandAck{CommandID: s.CommandID, Command: fccwire.KindStop, ActivationID: s.ActivationID,
		Status: fccwire.Accepted, AckedAt: fccwire.At(time.Now())})
}

func (p *acsPeer) state(run, cpe int64, serial string, st fccwire.DeviceStateValue, reason fccwire.DeviceReason, seq int64) {
	p.t.Helper()
	p.publish(p.states, &fccwire.DeviceState{ActivationID: run, CpeID: cpe, Serial: serial, State: st, Reason: reason, Seq: seq, At: fccwire.At(time.Now())})
}

func (p *acsPeer) finished(a *fccwire.Activate, reason fccwire.FinishReason) {
	p.t.Helper()
	p.publish(p.finishedQueue, &fccwire.ActivationFinished{ActivationID: a.ActivationID, FccTestID: a.FccTestID, Reason: reason,
		FinishedAt: fccwire.At(time.Now()), Devices: 2, Done: 2})
}

// immediateCampaign saves a speed campaign over A1 and A2 (domain 2) that
// starts when it is activated.
func (h *harness) immediateCampaign(edit func(*Campaign)) int64 {
	h.t.Helper()
	c := speedCampaign("runs", serialConfig("A1", "A2"))
	c.DomainID = ptr(int64(2))
	c.Activation.Type, c.Activation.Date = ActivationImmediately, nil
	if edit != nil {
		edit(&c)
	}
	return h.save(scopeAll, c)
}

func (h *harness) activate(campaign int64) ActivateResponse {
	h.t.Helper()
	var out ActivateResponse
	h.do("POST", "/FCC/activate", scopeAll, map[string]int64{"id": campaign}).want(200).decode(&out)
	return out
}

type runView struct {
	id                   int64
	state, reason        string
	inFlight             int64
	stoppedAt            sql.NullTime
	windowStart, created time.Time
}

// run reads run number n of a campaign; ok is false while it does not
// exist.
func (h *harness) run(campaign int64, n int) (runView, bool) {
	h.t.Helper()
	var r runView
	var reason sql.NullString
	err := h.svc.store.db.QueryRow(h.svc.store.q(`SELECT id, state, reason, in_flight, stopped_at, window_start_at, created_at FROM fcc_runs WHERE campaign_id = ? AND run_number = ?`), campaign, n).
		Scan(&r.id, &r.state, &reason, &r.inFlight, &r.stoppedAt, &r.windowStart, &r.created)
	if err == sql.ErrNoRows {
		return r, false
	}
	if err != nil {
		h.t.Fatal(err)
	}
	r.reason = reason.String
	return r, true
}

// waitRun waits until run n of the campaign is in state.
func (h *harness) waitRun(campaign int64, n int, state string) runView {
	h.t.Helper()
	var r runView
	testutil.Eventually(h.t, testutil.MinDeadline, "run "+itoa(n)+" "+state, func() bool {
		var ok bool
		r, ok = h.run(campaign, n)
		return ok && r.state == state
	})
	return r
}

func (h *harness) campaignState(campaign int64) string {
	h.t.Helper()
	var st string
	if err := h.svc.store.db.QueryRow(h.svc.store.q(`SELECT state FROM fcc_campaigns WHERE id = ?`), campaign).Scan(&st); err != nil {
		h.t.Fatal(err)
	}
	return st
}

func (h *harness) waitCampaign(campaign int64, state string) {
	h.t.Helper()
	testutil.Eventually(h.t, testutil.MinDeadline, "campaign "+state, func() bool { return h.campaignState(campaign) == state })
}

type outboxView struct {
	id             int64
	command, state string
	attempts       int
	payload        string
	acked          bool
	abandonReason  string
}

func (h *harness) outbox(run int64) []outboxView {
	h.t.Helper()
	rows, err := h.svc.store.db.Query(h.svc.store.q(`SELECT id, command, state, attempts, payload, acked_at IS NOT NULL, COALESCE(abandon_reason, '') FROM fcc_outbox WHERE run_id = ? ORDER BY id`), run)
	if err != nil {
		h.t.Fatal(err)
	}
	defer rows.Close()
	var out []outboxView
	for rows.Next() {
		var o outboxView
		if err := rows.Scan(&o.id, &o.command, &o.state, &o.attempts, &o.payload, &o.acked, &o.abandonReason); err != nil {
			h.t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}

func scaled(t *testing.T, f float64) campaigntime.Scale {
	t.Helper()
	s, err := campaigntime.New(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustContain(t *testing.T, got, want string) {
	t.Helper()
	if !strings.Contains(got, want) {
		t.Fatalf("%q does not contain %q", got, want)
	}
}

// useGate connects s to a result-store probe only. It sets the hook
// rather than calling UseResults, whose other parameters belong to result
// ingestion and change with it.
func useGate(s *Service, g ResultGate) { s.results = resultHooks{gate: g} }
