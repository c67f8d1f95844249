package ingest

import (
	"time"

	"cpesuite/internal/platform/config"
)

// Config holds the svc.fcc.result.*, svc.fcc.dedup.* and
// svc.fcc.dead-letter.* settings. The spec gives these properties no
// environment names, so they use Spring's relaxed binding of the property
// name, as the rest of the service does.
type Config struct {
	// BatchSize is the rows of one insert; a full batch flushes at once.
	BatchSize int
	// FlushInterval flushes a partial batch this long after its first row
	// arrived, so a trickle of results is not held back.
	FlushInterval time.Duration
	// QueueCapacity bounds the rows held in memory: the batch being filled
	// plus the rows waiting for a failed insert to be retried. Rows beyond
	// it are parked as BUFFER_FULL.
	QueueCapacity int
	// DedupTTL is the lifetime of an entry of the map fccResultDedup.
	DedupTTL time.Duration
	// ResendBatchSize is the default and the ceiling of one Resend call.
	ResendBatchSize int

	// Writers is how many batches are inserted at once. One writer already
	// overlaps the insert with fetching; more helped DuckDB at batch 100
	// (its grid round trips overlap) and did not help ClickHouse 18.16,
	// whose cost is per INSERT on the server: see BENCHMARKS.md.
	Writers int

	// RetryMin and RetryMax bound the back-off between insert attempts
	// while the result store fails.
	RetryMin time.Duration
	RetryMax time.Duration
	// KeepAlive is how often held deliveries are reported in progress to
	// the grid, so it does not redeliver them while an insert is retried.
	// It must be well below the queue's ack wait (30 s by default).
	KeepAlive time.Duration
}

// RegisterFlags declares the variables.
func (c *Config) RegisterFlags(s *config.Set) {
	s.Int(&c.BatchSize, "svc.fcc.result.batch-size", "SVC_FCC_RESULT_BATCH_SIZE", 100, "result rows per insert")
	s.Duration(&c.FlushInterval, "svc.fcc.result.flush-interval", "SVC_FCC_RESULT_FLUSH_INTERVAL", 5*time.Second, "longest wait before a partial batch of results is inserted")
	s.Int(&c.QueueCapacity, "svc.fcc.result.queue-capacity", "SVC_FCC_RESULT_QUEUE_CAPACITY", 10000, "result rows held in memory (batch and retry queue); beyond it rows are parked as BUFFER_FULL")
	s.Duration(&c.DedupTTL, "svc.fcc.dedup.ttl", "SVC_FCC_DEDUP_TTL", time.Hour, "lifetime of an entry of the map fccResultDedup")
	s.Int(&c.ResendBatchSize, "svc.fcc.dead-letter.resend-batch-size", "SVC_FCC_DEAD_LETTER_RESEND_BATCH_SIZE", 500, "default and ceiling of one dead-letter resend call")
	s.Int(&c.Writers, "svc.fcc.result.writers", "SVC_FCC_RESULT_WRITERS", 1, "result batches inserted at once (4 suits DuckDB at small batches; ClickHouse 18.16 did not gain from more than 1)")
	s.Duration(&c.RetryMin, "svc.fcc.result.retry-min", "SVC_FCC_RESULT_RETRY_MIN", 500*time.Millisecond, "first wait before retrying a failed result insert")
	s.Duration(&c.RetryMax, "svc.fcc.result.retry-max", "SVC_FCC_RESULT_RETRY_MAX", 30*time.Second, "longest wait between retries of a failed result insert")
	s.Duration(&c.KeepAlive, "svc.fcc.result.keep-alive", "SVC_FCC_RESULT_KEEP_ALIVE", 10*time.Second, "how often held result deliveries are reported in progress to the grid (below the queue's 30s ack wait)")
}

// DefaultConfig returns the defaults RegisterFlags declares.
func DefaultConfig() Config {
	return Config{
		BatchSize:       100,
		FlushInterval:   5 * time.Second,
		QueueCapacity:   10000,
		DedupTTL:        time.Hour,
		ResendBatchSize: 500,
		Writers:         1,
		RetryMin:        500 * time.Millisecond,
		RetryMax:        30 * time.Second,
		KeepAlive:       10 * time.Second,
	}
}

// Validate checks the values.
func (c *Config) Validate() error {
	switch {
	case c.BatchSize < 1 || c.BatchSize > 100000:
		return config.Errorf("SVC_FCC_RESULT_BATCH_SIZE", "must be from 1 to 100000")
	case c.FlushInterval <= 0:
		return config.Errorf("SVC_FCC_RESULT_FLUSH_INTERVAL", "must be positive")
	case c.QueueCapacity < c.BatchSize:
		return config.Errorf("SVC_FCC_RESULT_QUEUE_CAPACITY", "must be at least SVC_FCC_RESULT_BATCH_SIZE (%d)", c.BatchSize)
	case c.DedupTTL < time.Second:
		return config.Errorf("SVC_FCC_DEDUP_TTL", "must be at least 1s (the map counts whole seconds)")
	case c.ResendBatchSize < 1:
		return config.Errorf("SVC_FCC_DEAD_LETTER_RESEND_BATCH_SIZE", "must be at least 1")
	case c.Writers < 1 || c.Writers > 16:
		return config.Errorf("SVC_FCC_RESULT_WRITERS", "must be from 1 to 16")
	case c.RetryMin <= 0 || c.RetryMax < c.RetryMin:
		return config.Errorf("SVC_FCC_RESULT_RETRY_MAX", "needs 0 < SVC_FCC_RESULT_RETRY_MIN <= SVC_FCC_RESULT_RETRY_MAX")
	case c.KeepAlive <= 0:
		return config.Errorf("SVC_FCC_RESULT_KEEP_ALIVE", "must be positive")
	}
	return nil
}
