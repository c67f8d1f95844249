package acs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"cpesuite/internal/platform/httpauth"
)

// ConnRequestConfig bounds connection requests.
type ConnRequestConfig struct {
	Timeout  time.Duration // per attempt
	Attempts int           // 1 + retries
	Backoff  time.Duration // before the second attempt; doubles
	// Username and Password are used for devices without credentials of
	// their own.
	Username string
	Password string
}

// ConnRequester asks CPEs to open a session (TR-069 3.2.2): an HTTP GET to
// the ConnectionRequestURL with Digest or Basic authentication. A failure
// never drops a task: tasks stay queued for the next session, and the
// failure is recorded on each of them.
type ConnRequester struct {
	cfg   ConnRequestConfig
	store *Store
	http  *http.Client
	log   *slog.Logger
	// observe is called with the outcome of each request (metrics).
	observe func(outcome string)
}

// Connection request outcomes, as metric labels.
const (
	CROK          = "ok"
	CRNoURL       = "no_url"
	CRUnreachable = "unreachable"
	CRRejected    = "rejected"
	CRAuthFailed  = "auth_failed"
)

// ErrNoConnectionRequestURL means the device never told its URL.
var ErrNoConnectionRequestURL = errors.New("device has no connection request URL")

func newConnRequester(cfg ConnRequestConfig, store *Store, log *slog.Logger) *ConnRequester {
	if cfg.Attempts < 1 {
		cfg.Attempts = 1
	}
	return &ConnRequester{
		cfg:   cfg,
		store: store,
		// Redirects are not followed: a CPE answering with one is broken,
		// and following it would let a device steer our requests.
		http: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		log:  log,
	}
}

// Request sends the connection request, retrying, and records the outcome
// on the device's open tasks.
func (c *ConnRequester) Request(ctx context.Context, d Device) error {
	return c.requestAndRecord(ctx, d, nil)
}

// requestAndRecord is Request; on success, online (when set) gives the
// contact time and online window to record in the same commit as the
// outcome.
func (c *ConnRequester) requestAndRecord(ctx context.Context, d Device, online func() (at, until time.Time)) error {
	err := c.request(ctx, d)
	now := time.Now()
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	var rerr error
	if err == nil && online != nil {
		at, until := online()
		rerr = c.store.recordConnectionRequestOnline(context.WithoutCancel(ctx), d.ID, now, at, until)
		if rerr != nil {
			// The device was reached but that is not stored: the caller
			// learns of it, as it did when the online mark was separate.
			c.log.Error("recording connection request", "device", d.ID, "err", rerr)
			return rerr
		}
	} else if rerr = c.store.RecordConnectionRequest(context.WithoutCancel(ctx), d.ID, now, msg); rerr != nil {
		c.log.Error("recording connection request", "device", d.ID, "err", rerr)
	}
	if err == nil {
		c.log.Debug("connection request accepted", "device", d.ID)
	} else {
		c.log.Info("connection request failed; tasks stay queued", "device", d.ID, "err", err)
	}
	return err
}

func (c *ConnRequester) request(ctx context.Context, d Device) error {
	if d.ConnReqURL == "" {
		c.outcome(CRNoURL)
		return ErrNoConnectionRequestURL
	}
	u, err := url.Parse(d.ConnReqURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		c.outcome(CRNoURL)
		return fmt.Errorf("connection request URL %q is not an http URL", d.ConnReqURL)
	}
	user, pass := d.ConnReqUsername, d.ConnReqPassword
	if user == "" {
		user, pass = c.cfg.Username, c.cfg.Password
	}
	client := &httpauth.Client{HTTP: c.http, Username: user, Password: pass}
	backoff := c.cfg.Backoff
	var last error
	for attempt := 1; attempt <= c.cfg.Attempts; attempt++ {
		if attempt > 1 {
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
			backoff *= 2
		}
		last = c.once(ctx, client, u.String())
		if last == nil {
			c.outcome(CROK)
			return nil
		}
		var perm *permanentError
		if errors.As(last, &perm) {
			return last // wrong credentials do not get better by retrying
		}
	}
	return fmt.Errorf("after %d attempts: %w", c.cfg.Attempts, last)
}

type permanentError struct{ msg string }

func (e *permanentError) Error() string { return e.msg }

func (c *ConnRequester) once(ctx context.Context, client *httpauth.Client, target string) error {
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, httpauth.ErrUnauthorized) {
			c.outcome(CRAuthFailed)
			return &permanentError{"connection request credentials rejected by the CPE"}
		}
		c.outcome(CRUnreachable)
		return fmt.Errorf("connection request: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusNoContent:
		return nil
	case resp.StatusCode == http.StatusUnauthorized:
		c.outcome(CRAuthFailed)
		return &permanentError{"connection request credentials rejected by the CPE"}
	default:
		c.outcome(CRRejected)
		return fmt.Errorf("connection request: CPE answered %s", resp.Status)
	}
}

func (c *ConnRequester) outcome(o string) {
	if c.observe != nil {
		c.observe(o)
	}
}
