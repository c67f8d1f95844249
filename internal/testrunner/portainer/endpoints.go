package portainer

import (
	"context"
	"net/http"

	"cpesuite/internal/platform/apperr"
)

// Endpoints lists Portainer's environments.
func (c *Client) Endpoints(ctx context.Context) ([]Endpoint, error) {
	var eps []Endpoint
	if err := c.do(ctx, call{op: "list endpoints", method: http.MethodGet, path: "/api/endpoints", out: &eps}); err != nil {
		return nil, err
	}
	return eps, nil
}

// Endpoint returns the id of the environment to work in: the configured one,
// or else the first one Portainer lists, looked up once and then cached.
func (c *Client) Endpoint(ctx context.Context) (int, error) {
	if c.cfg.EndpointID > 0 {
		return c.cfg.EndpointID, nil
	}
	if id := c.cachedEndpoint(); id > 0 {
		return id, nil
	}
	if err := c.discoverGate.enter(ctx); err != nil {
		return 0, c.transportError("list endpoints", err)
	}
	defer c.discoverGate.leave()
	if id := c.cachedEndpoint(); id > 0 {
		return id, nil
	}
	eps, err := c.Endpoints(ctx)
	if err != nil {
		return 0, err
	}
	if len(eps) == 0 {
		return 0, apperr.New(apperr.ErrUpstream, "", "Portainer: no environment (endpoint) is defined")
	}
	if eps[0].ID <= 0 {
		return 0, apperr.New(apperr.ErrUpstream, "", "Portainer: list endpoints: unreadable response")
	}
	c.mu.Lock()
	c.endpointID = eps[0].ID
	c.mu.Unlock()
	return eps[0].ID, nil
}

func (c *Client) cachedEndpoint() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.endpointID
}
