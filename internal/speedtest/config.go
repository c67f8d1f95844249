package speedtest

import (
	"cpesuite/internal/platform/config"
)

// Size limits, in bytes. MB and GB are decimal, as TR-143 test files and
// operators' speed figures are.
const (
	DefaultDownloadBytes = 10_000_000
	MaxTransferBytes     = 1_000_000_000
)

// Config is the speedtest target's configuration. Addr is filled from the
// process port table.
type Config struct {
	Addr         string
	DefaultBytes int64
	MaxBytes     int64
}

// RegisterFlags registers the target's variables.
func (c *Config) RegisterFlags(s *config.Set) {
	s.Int64(&c.DefaultBytes, "speedtest.default-bytes", "CPESUITE_SPEEDTEST_DEFAULT_BYTES", DefaultDownloadBytes,
		"bytes sent by GET /download when no size is given")
	s.Int64(&c.MaxBytes, "speedtest.max-bytes", "CPESUITE_SPEEDTEST_MAX_BYTES", MaxTransferBytes,
		"largest download size and upload body accepted")
}

// Validate checks the limits against each other and the 1 GB cap.
func (c *Config) Validate() error {
	if c.MaxBytes < 1 || c.MaxBytes > MaxTransferBytes {
		return config.Errorf("CPESUITE_SPEEDTEST_MAX_BYTES", "must be from 1 to %d, got %d", MaxTransferBytes, c.MaxBytes)
	}
	if c.DefaultBytes < 0 || c.DefaultBytes > c.MaxBytes {
		return config.Errorf("CPESUITE_SPEEDTEST_DEFAULT_BYTES", "must be from 0 to the maximum %d, got %d", c.MaxBytes, c.DefaultBytes)
	}
	return nil
}
