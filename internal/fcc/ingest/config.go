package ingest

import "cpesuite/internal/platform/config"

// Config holds the svc.fcc.result.*, svc.fcc.dedup.* and
// svc.fcc.dead-letter.* settings.
type Config struct {
	BatchSize       int
	ResendBatchSize int
}

// RegisterFlags declares the variables.
func (c *Config) RegisterFlags(s *config.Set) {
	s.Int(&c.BatchSize, "svc.fcc.result.batch-size", "SVC_FCC_RESULT_BATCH_SIZE", 100, "result rows per insert")
	s.Int(&c.ResendBatchSize, "svc.fcc.dead-letter.resend-batch-size", "SVC_FCC_DEAD_LETTER_RESEND_BATCH_SIZE", 500, "default and ceiling of one dead-letter resend call")
}

// Validate checks the values.
func (c *Config) Validate() error { return nil }
