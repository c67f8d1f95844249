package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// maxResponseBytes bounds one provider answer.
const maxResponseBytes = 16 << 20

// caller posts one run's requests to a provider: it authenticates them,
// bounds each attempt by the llm_timeout_seconds setting, retries 429,
// 5xx and broken connections, and turns everything else into an error a
// QA engineer can act on. It never lets the API key into a message.
type caller struct {
	cfg     Config
	p       provider
	apiKey  string
	timeout time.Duration
	// printf reports retries in the run's output.
	printf func(format string, args ...any)
	runID  string
}

// callError is a failed attempt; retry says whether another may succeed.
type callError struct {
	msg      string
	retry    bool
	after    time.Duration // the provider's retry-after, when hasAfter
	hasAfter bool
}

func (e *callError) Error() string { return e.msg }

// post sends body and returns the provider's 2xx answer.
func (c *caller) post(ctx context.Context, url string, body []byte) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		data, err := c.once(ctx, url, body)
		if err == nil {
			return data, nil
		}
		var ce *callError
		if !errors.As(err, &ce) || !ce.retry {
			return nil, err
		}
		if attempt >= c.cfg.MaxRetries {
			if c.cfg.MaxRetries == 0 {
				return nil, err
			}
			return nil, fmt.Errorf("%s (gave up after %d attempts)", ce.msg, attempt+1)
		}
		wait := backoff(attempt)
		if ce.hasAfter {
			wait = min(ce.after, MaxRetryAfter)
		}
		c.printf("%s; retry %d of %d in %s\n", ce.msg, attempt+1, c.cfg.MaxRetries, wait)
		c.cfg.Log.Warn("language-model request failed, retrying", "run_id", c.runID, "provider", c.p.name(), "error", ce.msg, "wait", wait)
		if err := c.cfg.Sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// errTimeout is the cause of an attempt cut by llm_timeout_seconds.
var errTimeout = errors.New("llm_timeout_seconds elapsed")

func (c *caller) once(ctx context.Context, url string, body []byte) ([]byte, error) {
	tctx, cancel := context.WithTimeoutCause(ctx, c.timeout, errTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(tctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s: the request cannot be built: %v", c.p.name(), err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	c.p.setHeaders(req.Header, c.apiKey)

	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, tctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, c.transportError(ctx, tctx, err)
	}
	if len(data) > maxResponseBytes {
		return nil, fmt.Errorf("%s: the answer is larger than %d MiB", c.p.name(), maxResponseBytes>>20)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return data, nil
	}
	ce := &callError{msg: c.statusMessage(resp.StatusCode, data)}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		ce.retry = true
		ce.after, ce.hasAfter = retryAfter(resp.Header, time.Now())
	}
	return nil, ce
}

// transportError explains a request that got no (whole) answer. The
// run's own end wins over the time-out, which wins over the network.
func (c *caller) transportError(ctx, tctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if errors.Is(context.Cause(tctx), errTimeout) {
		return fmt.Errorf("%s: no answer within %s (setting llm_timeout_seconds)", c.p.name(), c.timeout)
	}
	return &callError{msg: fmt.Sprintf("%s: request failed: %s", c.p.name(), c.clean(err.Error())), retry: true}
}

// statusMessage names the status and the provider's own message.
func (c *caller) statusMessage(status int, body []byte) string {
	msg := fmt.Sprintf("%s answered HTTP %d", c.p.name(), status)
	if typ, text, ok := c.p.errorText(body); ok {
		if typ != "" {
			msg += " " + c.clean(typ)
		}
		if text != "" {
			msg += ": " + c.clean(text)
		}
		return msg
	}
	if s := strings.TrimSpace(string(body)); s != "" {
		msg += ": " + c.clean(s)
	}
	return msg
}

// clean makes provider text fit for the run's output: no API key (some
// providers quote part of a bad key; a misconfigured proxy may echo it
// whole), no control characters, and a bounded length.
func (c *caller) clean(s string) string {
	if c.apiKey != "" {
		s = strings.ReplaceAll(s, c.apiKey, "[api key]")
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return excerpt(s, 500)
}

// retryAfter reads retry-after-ms (OpenAI) or retry-after (seconds or an
// HTTP date).
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 && s < 1e9 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// backoff is the wait before retry attempt+1 when the provider names none.
func backoff(attempt int) time.Duration {
	d := firstBackoff
	for i := 0; i < attempt && d < MaxRetryAfter; i++ {
		d *= 2
	}
	return min(d, MaxRetryAfter)
}

// excerpt cuts s to at most n bytes without splitting a UTF-8 sequence.
func excerpt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
