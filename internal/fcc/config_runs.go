package fcc

import (
	"time"

	"cpesuite/internal/platform/config"
)

// RunsConfig holds the settings of activation, the scheduler, the outbox
// and the watchdog.
type RunsConfig struct {
	CommandAckTimeout time.Duration
}

// RegisterFlags declares the variables.
func (c *RunsConfig) RegisterFlags(s *config.Set) {
	s.Duration(&c.CommandAckTimeout, "svc.fcc.command-ack-timeout", "FCC_COMMAND_ACK_TIMEOUT", time.Minute, "wait for an ack before republishing")
}

// Validate checks the values.
func (c *RunsConfig) Validate() error { return nil }
