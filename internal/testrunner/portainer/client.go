package portainer

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"cpesuite/internal/platform/apperr"
)

// Client talks to one Portainer. It is safe for concurrent use.
type Client struct {
	cfg  Config
	base string // cfg.URL without a trailing slash
	hc   *http.Client

	// authGate lets one caller at a time talk to /api/auth, so that callers
	// who all see their token expire re-authenticate once, not once each.
	authGate gate
	// discoverGate does the same for the endpoint discovery.
	discoverGate gate

	mu         sync.Mutex
	jwt        string // current token; "" until the first authentication
	staleJWT   string // the token jwt replaced, kept only to scrub it from texts
	endpointID int    // discovered endpoint, 0 until discovered
}

// New returns a client for cfg. It returns ErrNotConfigured when cfg names
// no Portainer, and an apperr.ErrInvalid error when cfg is malformed. New
// does not contact Portainer.
func New(cfg Config) (*Client, error) {
	if !cfg.Configured() {
		return nil, ErrNotConfigured
	}
	if err := cfg.Validate(); err != nil {
		return nil, apperr.Wrap(apperr.ErrInvalid, err, "", err.Error())
	}
	return &Client{
		cfg:          cfg,
		base:         strings.TrimRight(cfg.URL, "/"),
		hc:           cfg.httpClient(),
		authGate:     newGate(),
		discoverGate: newGate(),
	}, nil
}

// call is one request to Portainer.
type call struct {
	op     string     // names the operation in error messages
	method string     // HTTP method
	path   string     // escaped path under the base URL, starting with /api/
	query  url.Values // nil for none
	body   any        // JSON request body; nil for none
	out    any        // where the JSON answer goes; nil to discard it
}

// do runs k with authentication. With a JWT, a 401 re-authenticates once
// and retries once: Portainer's tokens expire (8 hours by default) and are
// invalidated when Portainer restarts.
func (c *Client) do(ctx context.Context, k call) error {
	var payload []byte
	if k.body != nil {
		var err error
		if payload, err = json.Marshal(k.body); err != nil {
			return apperr.Internal(err)
		}
	}
	retried := false
	for {
		var tok string
		if c.cfg.APIKey == "" {
			var err error
			if tok, err = c.token(ctx); err != nil {
				return err
			}
		}
		resp, err := c.send(ctx, k, payload, tok)
		if err != nil {
			return c.transportError(k.op, err)
		}
		if resp.StatusCode == http.StatusUnauthorized && tok != "" && !retried {
			discard(resp)
			retried = true
			if _, err := c.refreshToken(ctx, tok); err != nil {
				return err
			}
			continue
		}
		return c.finish(k, resp)
	}
}

// send performs one HTTP exchange. tok, when set, goes out as a bearer
// token; the API key, when configured, as X-API-Key.
func (c *Client) send(ctx context.Context, k call, payload []byte, tok string) (*http.Response, error) {
	target := c.base + k.path
	if len(k.query) > 0 {
		target += "?" + k.query.Encode()
	}
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, k.method, target, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	switch {
	case tok != "":
		req.Header.Set("Authorization", "Bearer "+tok)
	case c.cfg.APIKey != "":
		req.Header.Set("X-API-Key", c.cfg.APIKey)
	}
	return c.hc.Do(req)
}

// finish reads resp into k.out, or turns it into an error.
func (c *Client) finish(k call, resp *http.Response) error {
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return c.statusError(k.op, resp.StatusCode, body)
	}
	body, err := readCapped(resp.Body)
	if err != nil {
		return c.transportError(k.op, err)
	}
	if k.out == nil || resp.StatusCode == http.StatusNoContent || len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, k.out); err != nil {
		return c.decodeError(k.op, err)
	}
	return nil
}

// readCapped reads r whole unless it is longer than maxBody, which it
// reports as errTooLarge after reading one byte more than the cap.
func readCapped(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxBody+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxBody {
		return nil, errTooLarge
	}
	return b, nil
}

// discard drains a little of a body we do not need, so that the connection
// can be reused, and closes it.
func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
}

// gate is a mutex whose Lock gives up when the context ends.
type gate chan struct{}

func newGate() gate { return make(gate, 1) }

func (g gate) enter(ctx context.Context) error {
	select {
	case g <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g gate) leave() { <-g }
