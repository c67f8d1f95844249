package portainer

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// RestartContainer restarts the container name (or id) in the client's
// environment through Portainer's Docker proxy. An unknown container is
// Docker's 404, returned as ErrUpstream that also matches apperr.ErrNotFound.
func (c *Client) RestartContainer(ctx context.Context, name string) error {
	if err := validateContainerName(name); err != nil {
		return err
	}
	ep, err := c.Endpoint(ctx)
	if err != nil {
		return err
	}
	name = strings.TrimPrefix(name, "/")
	return c.do(ctx, call{op: "restart container " + name, method: http.MethodPost,
		path: "/api/endpoints/" + strconv.Itoa(ep) + "/docker/containers/" + url.PathEscape(name) + "/restart"})
}
