package results

import "cpesuite/internal/platform/config"

// Config holds the svc.fcc.resultstore.* settings.
type Config struct {
	Enabled bool
}

// RegisterFlags declares the variables.
func (c *Config) RegisterFlags(s *config.Set) {
	s.Bool(&c.Enabled, "svc.fcc.resultstore.enabled", "SVC_FCC_RESULTSTORE_ENABLED", true, "use the result store (false: activation and reports answer 503)")
}

// Validate checks the values.
func (c *Config) Validate() error { return nil }
