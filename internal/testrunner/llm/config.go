package llm

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Config configures both executors.
type Config struct {
	// HTTPClient sends the provider requests; nil means a client of its
	// own. Its Timeout should be 0: every request is bounded by the
	// llm_timeout_seconds setting instead.
	HTTPClient *http.Client
	// Log receives retries and failures, never an API key; nil means
	// slog.Default().
	Log *slog.Logger
	// MaxRetries is how many times one request is retried after a 429, a
	// 5xx (529 included) or a broken connection. 0 means DefaultMaxRetries;
	// a negative value means no retries.
	MaxRetries int
	// Sleep waits d between retries and returns early with an error when
	// ctx ends; nil means a real timer. Tests inject one that records d.
	Sleep func(ctx context.Context, d time.Duration) error
}

// DefaultMaxRetries is Config.MaxRetries when it is 0.
const DefaultMaxRetries = 2

// Retry waits. A retry-after the provider asks for is honoured up to
// MaxRetryAfter; without one the wait doubles from firstBackoff.
const (
	MaxRetryAfter = 30 * time.Second
	firstBackoff  = time.Second
)

func (c Config) withDefaults() Config {
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	switch {
	case c.MaxRetries == 0:
		c.MaxRetries = DefaultMaxRetries
	case c.MaxRetries < 0:
		c.MaxRetries = 0
	}
	if c.Sleep == nil {
		c.Sleep = sleepCtx
	}
	return c
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// settingSource is what the executors read of the worker's settings;
// *worker.RunContext satisfies it.
type settingSource interface {
	Setting(key string) string
}

// providerSettings are one run's effective provider settings.
type providerSettings struct {
	endpoint string // full URL of the provider's chat endpoint
	apiKey   string
	model    string
	timeout  time.Duration
	maxTurns int
}

// loadSettings reads and checks the settings of provider p for a run of
// runModel ("openai" or "openai:gpt-4o-mini"). Environment values are not
// checked when the worker starts, so they are checked here, naming the
// setting and never echoing a key.
func loadSettings(p provider, s settingSource, runModel string) (providerSettings, error) {
	name := p.name()
	var ps providerSettings
	base := strings.TrimSpace(s.Setting(name + "_base_url"))
	u, err := url.Parse(base)
	if base == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ps, fmt.Errorf("setting %s_base_url %q is not an http or https URL", name, base)
	}
	ps.endpoint = p.endpoint(strings.TrimRight(base, "/"))

	ps.apiKey = strings.TrimSpace(s.Setting(name + "_api_key"))
	if ps.apiKey == "" {
		return ps, fmt.Errorf("no API key: set %s_api_key in the worker settings or %s in the environment", name, strings.ToUpper(name)+"_API_KEY")
	}
	if strings.ContainsAny(ps.apiKey, "\r\n\x00") {
		return ps, fmt.Errorf("setting %s_api_key contains a line break or NUL; it cannot be sent as a header", name)
	}

	ps.model = strings.TrimSpace(s.Setting(name + "_model"))
	if _, variant, ok := strings.Cut(runModel, ":"); ok && strings.TrimSpace(variant) != "" {
		ps.model = strings.TrimSpace(variant)
	}
	if ps.model == "" {
		return ps, fmt.Errorf("no model id: set %s_model or select the model as %s:<model id>", name, name)
	}

	secs, err := intSetting(s, "llm_timeout_seconds", 1, 600)
	if err != nil {
		return ps, err
	}
	ps.timeout = time.Duration(secs) * time.Second
	if ps.maxTurns, err = intSetting(s, "llm_max_turns", 1, 200); err != nil {
		return ps, err
	}
	return ps, nil
}

func intSetting(s settingSource, key string, lo, hi int) (int, error) {
	v := strings.TrimSpace(s.Setting(key))
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("setting %s %q is not a whole number from %d to %d", key, v, lo, hi)
	}
	return n, nil
}
