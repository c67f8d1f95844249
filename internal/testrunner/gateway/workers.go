package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/wire"
)

// systemIdentity is how the gateway acts on its own behalf (applying env
// profiles). "@" cannot start an account name, so no person can hold it.
var systemIdentity = identity.Identity{Username: "@gateway", Role: identity.RoleAdmin}

// maxWorkerBody caps what the gateway reads from a worker for fan-out
// merging; proxied bodies stream and are not capped here.
const maxWorkerBody = 32 << 20

// workerClient makes signed calls to workers.
type workerClient struct {
	secret  []byte
	hc      *http.Client
	now     func() time.Time
	timeout time.Duration
}

// answer is one worker's reply to a fan-out call.
type answer struct {
	stand  Stand
	status int
	body   []byte
	err    error
}

func (a answer) ok() bool { return a.err == nil && a.status/100 == 2 }

// call makes one request as id within the probe time-out and reads the
// whole answer.
func (c *workerClient) call(ctx context.Context, st Stand, id identity.Identity, method, path string, q url.Values, body any) answer {
	return c.callWithin(ctx, c.timeout, st, id, method, path, q, body)
}

// callWithin is call with its own time-out, for calls that do work on
// the worker (applying settings, starting a run).
func (c *workerClient) callWithin(ctx context.Context, timeout time.Duration, st Stand, id identity.Identity, method, path string, q url.Values, body any) answer {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return answer{stand: st, err: err}
		}
		rd = bytes.NewReader(b)
	}
	u := strings.TrimSuffix(st.BaseURL, "/") + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return answer{stand: st, err: err}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	identity.SignRequest(c.secret, req, id, c.now())
	resp, err := c.hc.Do(req)
	if err != nil {
		return answer{stand: st, err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxWorkerBody))
	return answer{stand: st, status: resp.StatusCode, body: b, err: err}
}

// fanOut makes the same call on every stand at once.
func (c *workerClient) fanOut(ctx context.Context, stands []Stand, id identity.Identity, method, path string, q url.Values) []answer {
	out := make([]answer, len(stands))
	var wg sync.WaitGroup
	for i, st := range stands {
		wg.Go(func() { out[i] = c.call(ctx, st, id, method, path, q, nil) })
	}
	wg.Wait()
	return out
}

// health probes a worker's open health endpoint.
func (c *workerClient) health(ctx context.Context, st Stand) (wire.WorkerHealth, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(st.BaseURL, "/")+"/health", nil)
	if err != nil {
		return wire.WorkerHealth{}, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return wire.WorkerHealth{}, err
	}
	defer resp.Body.Close()
	var h wire.WorkerHealth
	if resp.StatusCode != http.StatusOK {
		return h, fmt.Errorf("health answered HTTP %d", resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&h); err != nil {
		return h, fmt.Errorf("health answer unreadable: %w", err)
	}
	return h, nil
}

// workerDetail extracts the detail of a worker's error body.
func workerDetail(a answer) string {
	var e wire.Error
	if json.Unmarshal(a.body, &e) == nil && e.Detail != "" {
		return e.Detail
	}
	return http.StatusText(a.status)
}

// upstreamError turns a failed worker answer into the gateway's error:
// client errors the worker found in the caller's request keep their
// status; the rest is a 502 naming the stand.
func upstreamError(a answer, what string) error {
	if a.err != nil {
		return apperr.Wrap(apperr.ErrUpstream, a.err, "WORKER_UNREACHABLE",
			fmt.Sprintf("worker %s unreachable while %s", a.stand.Name, what))
	}
	detail := workerDetail(a)
	switch a.status {
	case http.StatusBadRequest:
		return apperr.Invalid("WORKER_REFUSED", "%s", detail)
	case http.StatusNotFound:
		return apperr.NotFound("NOT_FOUND", "%s", detail)
	case http.StatusForbidden:
		return apperr.New(apperr.ErrForbidden, "FORBIDDEN", "%s", detail)
	case http.StatusConflict:
		return apperr.Conflict("WORKER_CONFLICT", "%s", detail)
	case http.StatusRequestEntityTooLarge:
		return apperr.New(apperr.ErrTooLarge, "TOO_LARGE", "%s", detail)
	case http.StatusUnprocessableEntity:
		return apperr.New(apperr.ErrUnprocessable, "UNPROCESSABLE", "%s", detail)
	}
	// A 401 means the worker does not share our secret: a deployment
	// fault, not the caller's.
	return apperr.New(apperr.ErrUpstream, "WORKER_FAILED", "worker %s answered HTTP %d while %s: %s", a.stand.Name, a.status, what, detail)
}
