package fcc

import (
	"strings"
	"testing"
	"time"
)

// TestRunsConfig holds the runs variables to the spec's defaults and
// environment names, FCC_OUTBOX_BATCH_SIZE feeding both property
// spellings, and the bounds Validate enforces.
func TestRunsConfig(t *testing.T) {
	c, err := parseConfig(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := RunsConfig{CommandAckTimeout: time.Minute, ActivationMaxDelay: 30 * time.Minute, StopGrace: 15 * time.Minute,
		OutboxBatchSize: 100, OutboxMaxAttempts: 10, DispatchInterval: 5 * time.Second, AckTimeoutInterval: 30 * time.Second,
		SchedulerInterval: 30 * time.Second, SchedulerBatchSize: 100, WatchdogInterval: time.Minute, WatchdogBatchSize: 100,
		WatchdogFinishGrace: 15 * time.Minute, ConsumerBatchSize: 100}
	if c.Runs != want {
		t.Fatalf("defaults %+v, want %+v", c.Runs, want)
	}
	c, err = parseConfig(t, map[string]string{"FCC_COMMAND_ACK_TIMEOUT": "2m", "FCC_ACTIVATION_MAX_DELAY": "1h", "FCC_STOP_GRACE": "10m",
		"FCC_OUTBOX_BATCH_SIZE": "50", "FCC_OUTBOX_MAX_ATTEMPTS": "3", "SVC_FCC_OUTBOX_DISPATCH_INTERVAL": "1s",
		"SVC_FCC_OUTBOX_ACK_TIMEOUT_INTERVAL": "2s", "SVC_FCC_SCHEDULER_POLL_INTERVAL": "3s", "SVC_FCC_SCHEDULER_BATCH_SIZE": "1000",
		"SVC_FCC_WATCHDOG_POLL_INTERVAL": "4s", "SVC_FCC_WATCHDOG_BATCH_SIZE": "7", "SVC_FCC_WATCHDOG_FINISH_GRACE": "20m"})
	if err != nil {
		t.Fatal(err)
	}
	want = RunsConfig{CommandAckTimeout: 2 * time.Minute, ActivationMaxDelay: time.Hour, StopGrace: 10 * time.Minute,
		OutboxBatchSize: 50, OutboxMaxAttempts: 3, DispatchInterval: time.Second, AckTimeoutInterval: 2 * time.Second,
		SchedulerInterval: 3 * time.Second, SchedulerBatchSize: 1000, WatchdogInterval: 4 * time.Second, WatchdogBatchSize: 7,
		WatchdogFinishGrace: 20 * time.Minute, ConsumerBatchSize: 100}
	if c.Runs != want {
		t.Fatalf("from environment %+v, want %+v", c.Runs, want)
	}
	for env, val := range map[string]string{"SVC_FCC_SCHEDULER_BATCH_SIZE": "1001", "FCC_OUTBOX_BATCH_SIZE": "0", "FCC_OUTBOX_MAX_ATTEMPTS": "0",
		"SVC_FCC_OUTBOX_DISPATCH_INTERVAL": "0s", "FCC_COMMAND_ACK_TIMEOUT": "0s", "SVC_FCC_WATCHDOG_BATCH_SIZE": "5000"} {
		if _, err := parseConfig(t, map[string]string{env: val}); err == nil || !strings.Contains(err.Error(), env) {
			t.Fatalf("%s=%s: %v", env, val, err)
		}
	}
}
