package acs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/platform/config"
	"cpesuite/internal/platform/grid"
	"cpesuite/internal/platform/service"
)

// ExecutorVersion is the ACS version the campaign executor announces in
// its COMMAND_ACKs. The campaign service needs 6.4.12 or later: from that
// version on, speed results carry TR-143 BOM and EOM.
const ExecutorVersion = "6.4.12"

// ExecutorConfig tunes the campaign executor (CAMPAIGN.md).
type ExecutorConfig struct {
	// Enabled runs the executor in the ACS target.
	Enabled bool
	// BatchSize is how many devices of a slot start together; 0 means the
	// ACS's max-diagnostics.
	BatchSize int
	// WANSampleInterval separates the two reads of the WAN byte counters
	// whose difference is the WAN usage.
	WANSampleInterval time.Duration
	// WANRetryInterval separates two WAN-usage checks of one measurement
	// while the WAN is busy.
	WANRetryInterval time.Duration
	// PollInterval bounds how long a change goes unnoticed: commands are
	// fetched with it as the wait, waiting transactions are re-read and the
	// outbox is retried at it.
	PollInterval time.Duration
	// ConnectRetry is how long a task waits after a connection request
	// before another is sent (requestDeviceConnect only).
	ConnectRetry time.Duration
}

// RegisterFlags registers the executor's variables.
func (c *ExecutorConfig) RegisterFlags(s *config.Set) {
	s.Bool(&c.Enabled, "acs.campaign-executor", "CPESUITE_ACS_CAMPAIGN_EXECUTOR", true, "run the campaign executor (ACTIVATE/STOP from the campaign service over the grid)")
	s.Int(&c.BatchSize, "acs.campaign-batch-size", "CPESUITE_ACS_CAMPAIGN_BATCH_SIZE", 0, "devices per batch of a campaign slot; 0: acs.max-diagnostics")
	s.Duration(&c.WANSampleInterval, "acs.campaign-wan-sample", "CPESUITE_ACS_CAMPAIGN_WAN_SAMPLE", 5*time.Second, "time between the two WAN counter reads of a WAN-usage check")
	s.Duration(&c.WANRetryInterval, "acs.campaign-wan-retry", "CPESUITE_ACS_CAMPAIGN_WAN_RETRY", time.Minute, "time between WAN-usage checks while the WAN is busy")
	s.Duration(&c.PollInterval, "acs.campaign-poll", "CPESUITE_ACS_CAMPAIGN_POLL", time.Second, "command fetch wait, transaction re-read and outbox retry interval")
	s.Duration(&c.ConnectRetry, "acs.campaign-connect-retry", "CPESUITE_ACS_CAMPAIGN_CONNECT_RETRY", 30*time.Second, "time after which a task still not started gets another connection request")
}

// Validate checks the settings.
func (c *ExecutorConfig) Validate() error {
	switch {
	case c.BatchSize < 0:
		return config.Errorf("CPESUITE_ACS_CAMPAIGN_BATCH_SIZE", "must not be negative")
	case c.WANSampleInterval <= 0:
		return config.Errorf("CPESUITE_ACS_CAMPAIGN_WAN_SAMPLE", "must be positive")
	case c.WANRetryInterval <= 0:
		return config.Errorf("CPESUITE_ACS_CAMPAIGN_WAN_RETRY", "must be positive")
	case c.PollInterval <= 0:
		return config.Errorf("CPESUITE_ACS_CAMPAIGN_POLL", "must be positive")
	case c.ConnectRetry <= 0:
		return config.Errorf("CPESUITE_ACS_CAMPAIGN_CONNECT_RETRY", "must be positive")
	}
	return nil
}

// commandFetch bounds the commands taken from the grid at once; each is
// handled before the next fetch.
const commandFetch = 16

// Executor runs the campaign service's runs on the ACS: it consumes
// ACTIVATE and STOP from the grid, measures through the ACS's own task
// engine and reports acks, device states, results and the end of each run.
// Everything it must not forget is in the ACS database first (CAMPAIGN.md).
type Executor struct {
	a     *ACS
	g     *grid.Grid
	cfg   ExecutorConfig
	log   *slog.Logger
	batch int

	cmds, acks *grid.Queue
	out        map[string]*grid.Queue // outbox targets by queue name

	// slots bounds the executor's diagnostics in flight across all runs
	// by the ACS's max-diagnostics.
	slots chan struct{}
	// outboxWake asks the outbox publisher to run now.
	outboxWake chan struct{}

	mu   sync.Mutex
	runs map[int64]*campaignRun
	ctx  context.Context // the executor's run context, set by Run
	wg   sync.WaitGroup

	m *executorMetrics
}

type executorMetrics struct {
	commands    *prometheus.CounterVec
	results     *prometheus.CounterVec
	diagnostics prometheus.Gauge
	outbox      prometheus.Counter
}

// NewExecutor builds the executor of a on grid g.
func NewExecutor(a *ACS, g *grid.Grid, cfg ExecutorConfig, reg prometheus.Registerer) (*Executor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if a == nil || g == nil {
		return nil, errors.New("campaign executor: an ACS and a grid are required")
	}
	batch := cfg.BatchSize
	if batch == 0 {
		batch = a.cfg.MaxDiagnostics
	}
	batch = max(batch, 1)
	m := &executorMetrics{
		commands: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "acs_campaign_commands_total",
			Help: "Campaign commands received, by kind and ack status."}, []string{"kind", "status"}),
		results: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "acs_campaign_results_total",
			Help: "Campaign results recorded, by status."}, []string{"status"}),
		diagnostics: prometheus.NewGauge(prometheus.GaugeOpts{Name: "acs_campaign_diagnostics_in_flight",
			Help: "Campaign diagnostics enqueued and not finished."}),
		outbox: prometheus.NewCounter(prometheus.CounterOpts{Name: "acs_campaign_published_total",
			Help: "Messages published from the campaign outbox."}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.commands, m.results, m.diagnostics, m.outbox} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("campaign executor metrics: %w", err)
			}
		}
	}
	return &Executor{a: a, g: g, cfg: cfg, log: a.log.With("component", "campaign"), batch: batch,
		slots: make(chan struct{}, max(a.cfg.MaxDiagnostics, 1)), outboxWake: make(chan struct{}, 1),
		runs: map[int64]*campaignRun{}, m: m}, nil
}

// Service returns the executor's lifecycle: Start declares the queues,
// Run consumes commands, resumes unfinished runs and publishes the outbox,
// Stop waits for the runs to let go (they stay unfinished in the tables).
func (e *Executor) Service() service.Service {
	return service.Funcs{StartFn: e.start, RunFn: e.run}
}

func (e *Executor) start(ctx context.Context) error {
	var err error
	if e.cmds, err = grid.NewQueue(ctx, e.g, fccwire.QueueCommands, grid.QueueOptions{}); err != nil {
		return err
	}
	if e.acks, err = grid.NewQueue(ctx, e.g, fccwire.QueueCommandAck, grid.QueueOptions{}); err != nil {
		return err
	}
	e.out = map[string]*grid.Queue{}
	for _, name := range []string{fccwire.QueueDeviceState, fccwire.QueueResults, fccwire.QueueActivationFinished} {
		q, err := grid.NewQueue(ctx, e.g, name, grid.QueueOptions{})
		if err != nil {
			return err
		}
		e.out[name] = q
	}
	return nil
}

func (e *Executor) run(ctx context.Context) error {
	e.mu.Lock()
	e.ctx = ctx
	e.mu.Unlock()
	e.wg.Go(func() { e.publishLoop(ctx) })
	if err := e.resume(ctx); err != nil && ctx.Err() == nil {
		e.log.Error("resuming campaign runs", "err", err)
	}
	for ctx.Err() == nil {
		ds, err := e.cmds.Fetch(ctx, commandFetch, e.cfg.PollInterval)
		if err != nil {
			if ctx.Err() == nil {
				e.log.Warn("fetching campaign commands", "err", err)
				sleep(ctx, e.cfg.PollInterval)
			}
			continue
		}
		for _, d := range ds {
			e.handleCommand(ctx, d)
		}
	}
	// Runs keep their tables as they are; a new executor resumes them.
	e.wg.Wait()
	return nil
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// handleCommand settles one delivery: recorded and acknowledged, or handed
// back for a later delivery when the database or the grid failed.
func (e *Executor) handleCommand(ctx context.Context, d *grid.Delivery) {
	ack, err := e.command(ctx, d.Data)
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("campaign command not settled; it will be delivered again", "seq", d.Seq, "err", err)
		}
		_ = d.Nak(e.cfg.PollInterval)
		return
	}
	if ack == nil {
		// Not even the command's ids could be read: nobody to answer.
		e.m.commands.WithLabelValues("UNREADABLE", string(fccwire.Rejected)).Inc()
		_ = d.Term()
		return
	}
	ack.AckedAt = fccwire.At(time.Now())
	b, err := fccwire.Encode(ack)
	if err != nil {
		e.log.Error("encoding a command ack", "commandId", ack.CommandID, "err", err)
		_ = d.Term()
		return
	}
	if err := e.acks.Publish(ctx, b, ""); err != nil {
		e.log.Warn("publishing a command ack; the command will be delivered again", "commandId", ack.CommandID, "err", err)
		_ = d.Nak(e.cfg.PollInterval)
		return
	}
	e.m.commands.WithLabelValues(string(ack.Command), string(ack.Status)).Inc()
	if err := d.Ack(ctx); err != nil {
		// The command comes again and is answered again: harmless.
		e.log.Warn("acknowledging a campaign command", "commandId", ack.CommandID, "err", err)
	}
}

// commandHead is what an ACK needs from a command the executor refuses.
type commandHead struct {
	WireVersion  string       `json:"wireVersion"`
	Kind         fccwire.Kind `json:"kind"`
	CommandID    string       `json:"commandId"`
	ActivationID int64        `json:"activationId"`
	Part         int          `json:"part"`
}

// command handles one command and returns the ack to send (nil: none can
// be sent). An error means nothing was decided; the delivery comes again.
func (e *Executor) command(ctx context.Context, data []byte) (*fccwire.CommandAck, error) {
	var head commandHead
	if err := json.Unmarshal(data, &head); err != nil || head.CommandID == "" || head.ActivationID < 1 || len(head.CommandID) > 64 ||
		(head.Kind != fccwire.KindActivate && head.Kind != fccwire.KindStop) {
		e.log.Warn("campaign command without a readable kind, commandId or activationId dropped", "bytes", len(data))
		return nil, nil
	}
	ack := &fccwire.CommandAck{CommandID: head.CommandID, Command: head.Kind, ActivationID: head.ActivationID, AcsVersion: ExecutorVersion}
	if head.Kind == fccwire.KindActivate {
		ack.Part = head.Part
		if ack.Part < 1 {
			ack.Part = 1
		}
	}
	reject := func(reason fccwire.RejectReason, msg string) (*fccwire.CommandAck, error) {
		ack.Status, ack.Reason, ack.Message = fccwire.Rejected, reason, clip(msg, 1024)
		e.log.Info("campaign command rejected", "commandId", head.CommandID, "kind", head.Kind, "reason", reason, "detail", ack.Message)
		return ack, nil
	}
	if head.WireVersion != fccwire.Version {
		return reject(fccwire.RejectUnsupportedVersion, fmt.Sprintf("this ACS speaks wire %s, not %.16q", fccwire.Version, head.WireVersion))
	}
	msg, err := fccwire.Decode(head.Kind, data)
	if err != nil {
		return reject(fccwire.RejectInvalidConfig, err.Error())
	}
	switch m := msg.(type) {
	case *fccwire.Activate:
		if err := e.checkActivate(m); err != nil {
			return reject(fccwire.RejectInvalidConfig, err.Error())
		}
		start, err := e.a.store.recordActivatePart(ctx, m, time.Now())
		if err != nil {
			return nil, err
		}
		if start {
			e.startRun(m.ActivationID)
		}
	case *fccwire.Stop:
		running, err := e.a.store.recordStop(ctx, m, time.Now())
		if err != nil {
			return nil, err
		}
		if running {
			e.stopRun(m.ActivationID)
		}
	}
	ack.Status = fccwire.Accepted
	return ack, nil
}

// checkActivate holds an ACTIVATE to what this ACS can run, beyond the
// schema: URLs a CPE's TR-143 client can use, sizes TR-143 can express.
func (e *Executor) checkActivate(m *fccwire.Activate) error {
	for _, g := range m.Config.Groups {
		switch m.Type {
		case fccwire.TypeSpeed:
			s := g.Speed
			if s == nil || g.Ping != nil {
				return fmt.Errorf("group %d: a SPEED run needs speed settings and no ping settings", g.ConfigID)
			}
			if err := checkURL("downloadUrl", s.DownloadURL, false); err != nil {
				return fmt.Errorf("group %d: %v", g.ConfigID, err)
			}
			if err := checkURL("uploadUrl", s.UploadURL, false); err != nil {
				return fmt.Errorf("group %d: %v", g.ConfigID, err)
			}
			if s.FileSizeUpload != nil && (*s.FileSizeUpload < 1 || *s.FileSizeUpload > math.MaxUint32) {
				return fmt.Errorf("group %d: fileSizeUpload %d is outside TR-143's 1 to %d bytes", g.ConfigID, *s.FileSizeUpload, uint32(math.MaxUint32))
			}
		case fccwire.TypeLatency:
			if g.Ping == nil || g.Speed != nil {
				return fmt.Errorf("group %d: a LATENCY run needs ping settings and no speed settings", g.ConfigID)
			}
		default:
			return fmt.Errorf("unknown type %.16q", m.Type)
		}
		for _, d := range g.Devices {
			if d.Serial == "" {
				return fmt.Errorf("device %d has a blank serial", d.CpeID)
			}
		}
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary.
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n]
}
