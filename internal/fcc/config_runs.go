package fcc

import (
	"time"

	"cpesuite/internal/platform/config"
)

// maxLoopBatch caps every batch of the run machinery (the spec caps the
// scheduler's at 1000; the others share the ceiling so a misconfigured
// value cannot make one tick hold thousands of rows and their locks).
const maxLoopBatch = 1000

// RunsConfig holds the settings of activation, the scheduler, the outbox
// and the watchdog.
//
// Durations of campaign time (ack time-out, activation delay, stop grace,
// finish grace) are specification durations: the engine scales them by
// CPESUITE_CAMPAIGN_TIME_SCALE when it arms them. Poll intervals are
// machinery, not campaign time, and are used as given.
type RunsConfig struct {
	CommandAckTimeout  time.Duration
	ActivationMaxDelay time.Duration
	StopGrace          time.Duration
	OutboxBatchSize    int
	OutboxMaxAttempts  int

	DispatchInterval   time.Duration
	AckTimeoutInterval time.Duration

	SchedulerInterval  time.Duration
	SchedulerBatchSize int

	WatchdogInterval    time.Duration
	WatchdogBatchSize   int
	WatchdogFinishGrace time.Duration

	// ConsumerBatchSize bounds the grid messages one consumer takes per
	// fetch.
	ConsumerBatchSize int
}

// RegisterFlags declares the variables.
func (c *RunsConfig) RegisterFlags(s *config.Set) {
	s.Duration(&c.CommandAckTimeout, "svc.fcc.command-ack-timeout", "FCC_COMMAND_ACK_TIMEOUT", time.Minute, "wait for an ack before republishing the stored command")
	s.Duration(&c.ActivationMaxDelay, "svc.fcc.activation-max-delay", "FCC_ACTIVATION_MAX_DELAY", 30*time.Minute, "a run still PLANNED or DISPATCHING this long after its window start fails; a later ack fails the run")
	s.Duration(&c.StopGrace, "svc.fcc.stop-grace", "FCC_STOP_GRACE", 15*time.Minute, "stop drain bound, after-stop window, and the value sent to the ACS in whole seconds; a change reaches only later runs")
	// One variable feeds both spellings of the property.
	s.Int(&c.OutboxBatchSize, "svc.fcc.outbox.batch-size", "FCC_OUTBOX_BATCH_SIZE", 100, "outbox rows per dispatcher tick")
	s.Int(&c.OutboxBatchSize, "svc.fcc.outbox-batch-size", "", 100, "outbox rows per dispatcher tick (same as svc.fcc.outbox.batch-size)")
	s.Int(&c.OutboxMaxAttempts, "svc.fcc.outbox-max-attempts", "FCC_OUTBOX_MAX_ATTEMPTS", 10, "send attempts of an outbox row before it is ABANDONED")
	s.Duration(&c.DispatchInterval, "svc.fcc.outbox.dispatch-interval", "SVC_FCC_OUTBOX_DISPATCH_INTERVAL", 5*time.Second, "outbox dispatcher tick")
	s.Duration(&c.AckTimeoutInterval, "svc.fcc.outbox.ack-timeout-interval", "SVC_FCC_OUTBOX_ACK_TIMEOUT_INTERVAL", 30*time.Second, "ack time-out poller tick (it also fails stalled runs)")
	s.Duration(&c.SchedulerInterval, "svc.fcc.scheduler.poll-interval", "SVC_FCC_SCHEDULER_POLL_INTERVAL", 30*time.Second, "scheduler tick")
	s.Int(&c.SchedulerBatchSize, "svc.fcc.scheduler.batch-size", "SVC_FCC_SCHEDULER_BATCH_SIZE", 100, "due campaigns per scheduler tick (at most 1000)")
	s.Duration(&c.WatchdogInterval, "svc.fcc.watchdog.poll-interval", "SVC_FCC_WATCHDOG_POLL_INTERVAL", time.Minute, "watchdog tick")
	s.Int(&c.WatchdogBatchSize, "svc.fcc.watchdog.batch-size", "SVC_FCC_WATCHDOG_BATCH_SIZE", 100, "runs per watchdog tick (at most 1000)")
	s.Duration(&c.WatchdogFinishGrace, "svc.fcc.watchdog.finish-grace", "SVC_FCC_WATCHDOG_FINISH_GRACE", 15*time.Minute, "a RUNNING run this long past its window end is FINISHED by the watchdog (independent of stop-grace)")
	s.Int(&c.ConsumerBatchSize, "svc.fcc.consumer.batch-size", "SVC_FCC_CONSUMER_BATCH_SIZE", 100, "grid messages (acks, device states, finished) taken per fetch (at most 1000)")
}

// Validate checks the values.
func (c *RunsConfig) Validate() error {
	for _, d := range []struct {
		env string
		v   time.Duration
		min time.Duration
	}{
		{"FCC_COMMAND_ACK_TIMEOUT", c.CommandAckTimeout, time.Millisecond},
		{"FCC_ACTIVATION_MAX_DELAY", c.ActivationMaxDelay, time.Millisecond},
		{"FCC_STOP_GRACE", c.StopGrace, 0},
		{"SVC_FCC_OUTBOX_DISPATCH_INTERVAL", c.DispatchInterval, time.Millisecond},
		{"SVC_FCC_OUTBOX_ACK_TIMEOUT_INTERVAL", c.AckTimeoutInterval, time.Millisecond},
		{"SVC_FCC_SCHEDULER_POLL_INTERVAL", c.SchedulerInterval, time.Millisecond},
		{"SVC_FCC_WATCHDOG_POLL_INTERVAL", c.WatchdogInterval, time.Millisecond},
		{"SVC_FCC_WATCHDOG_FINISH_GRACE", c.WatchdogFinishGrace, 0},
	} {
		if d.v < d.min {
			return config.Errorf(d.env, "must be at least %s", d.min)
		}
	}
	for _, n := range []struct {
		env string
		v   int
		max int
	}{
		{"FCC_OUTBOX_BATCH_SIZE", c.OutboxBatchSize, maxLoopBatch},
		{"FCC_OUTBOX_MAX_ATTEMPTS", c.OutboxMaxAttempts, 1000},
		{"SVC_FCC_SCHEDULER_BATCH_SIZE", c.SchedulerBatchSize, maxLoopBatch},
		{"SVC_FCC_WATCHDOG_BATCH_SIZE", c.WatchdogBatchSize, maxLoopBatch},
		{"SVC_FCC_CONSUMER_BATCH_SIZE", c.ConsumerBatchSize, maxLoopBatch},
	} {
		if n.v < 1 || n.v > n.max {
			return config.Errorf(n.env, "must be from 1 to %d", n.max)
		}
	}
	return nil
}

// withDefaults fills zero values (a Config built in code rather than
// parsed) with the spec's defaults, so the engine never ticks at 0.
func (c RunsConfig) withDefaults() RunsConfig {
	set := func(p *time.Duration, d time.Duration) {
		if *p <= 0 {
			*p = d
		}
	}
	seti := func(p *int, d int) {
		if *p <= 0 {
			*p = d
		}
		*p = min(*p, maxLoopBatch)
	}
	set(&c.CommandAckTimeout, time.Minute)
	set(&c.ActivationMaxDelay, 30*time.Minute)
	set(&c.DispatchInterval, 5*time.Second)
	set(&c.AckTimeoutInterval, 30*time.Second)
	set(&c.SchedulerInterval, 30*time.Second)
	set(&c.WatchdogInterval, time.Minute)
	seti(&c.OutboxBatchSize, 100)
	seti(&c.SchedulerBatchSize, 100)
	seti(&c.WatchdogBatchSize, 100)
	seti(&c.ConsumerBatchSize, 100)
	if c.OutboxMaxAttempts <= 0 {
		c.OutboxMaxAttempts = 10
	}
	return c
}
