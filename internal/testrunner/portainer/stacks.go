package portainer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"cpesuite/internal/platform/apperr"
)

// endpointQuery is the endpointId parameter that stack writes require.
func endpointQuery(id int) url.Values {
	return url.Values{"endpointId": {strconv.Itoa(id)}}
}

// Stacks lists the stacks of the environment the client works in.
func (c *Client) Stacks(ctx context.Context) ([]Stack, error) {
	ep, err := c.Endpoint(ctx)
	if err != nil {
		return nil, err
	}
	q := url.Values{"filters": {fmt.Sprintf(`{"EndpointID":%d}`, ep)}}
	var stacks []Stack
	if err := c.do(ctx, call{op: "list stacks", method: http.MethodGet, path: "/api/stacks", query: q, out: &stacks}); err != nil {
		return nil, err
	}
	// Portainer filters server-side; filtering again keeps a Portainer that
	// ignores the parameter from handing us another environment's stack.
	mine := make([]Stack, 0, len(stacks))
	for _, st := range stacks {
		if st.EndpointID == ep {
			mine = append(mine, st)
		}
	}
	return mine, nil
}

// StackByName returns the stack called name in the client's environment,
// or an apperr.ErrNotFound error when there is none.
func (c *Client) StackByName(ctx context.Context, name string) (*Stack, error) {
	if err := ValidateStackName(name); err != nil {
		return nil, err
	}
	stacks, err := c.Stacks(ctx)
	if err != nil {
		return nil, err
	}
	for i := range stacks {
		if stacks[i].Name == name {
			return &stacks[i], nil
		}
	}
	return nil, apperr.NotFound("", "Portainer stack %s not found", name)
}

// CreateStack deploys a standalone (docker compose) stack from compose with
// env as its variables. Portainer answers a name already in use with 409,
// which comes back as ErrUpstream that also matches apperr.ErrConflict.
func (c *Client) CreateStack(ctx context.Context, name, compose string, env []EnvVar) (*Stack, error) {
	if err := ValidateStackName(name); err != nil {
		return nil, err
	}
	if err := validateCompose(compose); err != nil {
		return nil, err
	}
	if err := validateEnv(env); err != nil {
		return nil, err
	}
	ep, err := c.Endpoint(ctx)
	if err != nil {
		return nil, err
	}
	body := struct {
		Name             string   `json:"name"`
		StackFileContent string   `json:"stackFileContent"`
		Env              []EnvVar `json:"env"`
	}{name, compose, nonNil(env)}
	var st Stack
	err = c.do(ctx, call{op: "create stack " + name, method: http.MethodPost, path: "/api/stacks/create/standalone/string",
		query: endpointQuery(ep), body: body, out: &st})
	if err != nil {
		return nil, err
	}
	return &st, nil
}

// UpdateStack replaces the compose file and the variables of stack id and
// redeploys it; prune removes services the new file no longer names.
// Images are not re-pulled.
func (c *Client) UpdateStack(ctx context.Context, id int, compose string, env []EnvVar, prune bool) (*Stack, error) {
	if err := validateID(id); err != nil {
		return nil, err
	}
	if err := validateCompose(compose); err != nil {
		return nil, err
	}
	if err := validateEnv(env); err != nil {
		return nil, err
	}
	ep, err := c.Endpoint(ctx)
	if err != nil {
		return nil, err
	}
	body := struct {
		StackFileContent string   `json:"stackFileContent"`
		Env              []EnvVar `json:"env"`
		Prune            bool     `json:"prune"`
		PullImage        bool     `json:"pullImage"`
	}{compose, nonNil(env), prune, false}
	var st Stack
	err = c.do(ctx, call{op: fmt.Sprintf("update stack %d", id), method: http.MethodPut, path: "/api/stacks/" + strconv.Itoa(id),
		query: endpointQuery(ep), body: body, out: &st})
	if err != nil {
		return nil, err
	}
	return &st, nil
}

// StackFile returns the compose file of stack id.
func (c *Client) StackFile(ctx context.Context, id int) (string, error) {
	if err := validateID(id); err != nil {
		return "", err
	}
	var out struct {
		StackFileContent string `json:"StackFileContent"`
	}
	err := c.do(ctx, call{op: fmt.Sprintf("read stack file %d", id), method: http.MethodGet,
		path: "/api/stacks/" + strconv.Itoa(id) + "/file", out: &out})
	if err != nil {
		return "", err
	}
	return out.StackFileContent, nil
}

// DeleteStack stops and removes stack id.
func (c *Client) DeleteStack(ctx context.Context, id int) error {
	if err := validateID(id); err != nil {
		return err
	}
	ep, err := c.Endpoint(ctx)
	if err != nil {
		return err
	}
	return c.do(ctx, call{op: fmt.Sprintf("delete stack %d", id), method: http.MethodDelete,
		path: "/api/stacks/" + strconv.Itoa(id), query: endpointQuery(ep)})
}

// DeleteStackByName removes the stack called name. It reports false and no
// error when there is no such stack, which makes teardown idempotent.
func (c *Client) DeleteStackByName(ctx context.Context, name string) (bool, error) {
	st, err := c.StackByName(ctx, name)
	if err != nil {
		if isLocalNotFound(err) {
			return false, nil
		}
		return false, err
	}
	if err := c.DeleteStack(ctx, st.ID); err != nil {
		// Someone else removed it between the listing and the delete.
		if errors.Is(err, apperr.ErrNotFound) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// isLocalNotFound reports our own "no such stack", as opposed to an
// upstream error that merely wraps a 404.
func isLocalNotFound(err error) bool {
	e, ok := apperr.As(err)
	return ok && e.Kind == apperr.ErrNotFound
}

// nonNil makes an absent env go out as [], which every Portainer version
// reads as "no variables".
func nonNil(env []EnvVar) []EnvVar {
	if env == nil {
		return []EnvVar{}
	}
	return env
}
