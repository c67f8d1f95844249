package portainer

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"cpesuite/internal/platform/apperr"
)

const opAuth = "authenticate"

// token returns the cached JWT, authenticating first if there is none.
func (c *Client) token(ctx context.Context) (string, error) {
	c.mu.Lock()
	tok := c.jwt
	c.mu.Unlock()
	if tok != "" {
		return tok, nil
	}
	return c.refreshToken(ctx, "")
}

// refreshToken replaces the token stale. When another caller has already
// replaced it while this one waited for the gate, that caller's token is
// used: a burst of 401s costs one /api/auth, not one per caller.
func (c *Client) refreshToken(ctx context.Context, stale string) (string, error) {
	if err := c.authGate.enter(ctx); err != nil {
		return "", c.transportError(opAuth, err)
	}
	defer c.authGate.leave()
	c.mu.Lock()
	cur := c.jwt
	c.mu.Unlock()
	if cur != "" && cur != stale {
		return cur, nil
	}
	tok, err := c.authenticate(ctx)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	if c.jwt != "" {
		c.staleJWT = c.jwt
	}
	c.jwt = tok
	c.mu.Unlock()
	return tok, nil
}

// authenticate trades the username and password for a JWT.
func (c *Client) authenticate(ctx context.Context) (string, error) {
	k := call{op: opAuth, method: http.MethodPost, path: "/api/auth"}
	payload, err := json.Marshal(struct {
		Username string `json:"username"`
		Password string `json:"password"`
	}{c.cfg.Username, c.cfg.Password})
	if err != nil {
		return "", apperr.Internal(errors.New("encoding the credentials failed"))
	}
	resp, err := c.send(ctx, k, payload, "")
	if err != nil {
		return "", c.transportError(opAuth, err)
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusUnprocessableEntity {
		err := c.finish(k, resp)
		var ae *apperr.Error
		if errors.As(err, &ae) {
			return "", apperr.Wrap(apperr.ErrUpstream, ae.Err, "", "Portainer: authentication failed")
		}
		return "", err
	}
	var out struct {
		JWT string `json:"jwt"`
	}
	k.out = &out
	if err := c.finish(k, resp); err != nil {
		return "", err
	}
	if out.JWT == "" {
		return "", c.decodeError(opAuth, errors.New("the answer carries no jwt"))
	}
	return out.JWT, nil
}
