package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/testrunner/worker"
)

// Client reaches the worker's MCP tool servers; it implements
// worker.Tools. It is safe for concurrent use.
type Client struct {
	cfg       Config
	log       *slog.Logger
	ownsHTTP  bool
	base      context.Context // ended by Close, which ends calls in flight
	endBase   context.CancelCauseFunc
	wg        sync.WaitGroup // session watchers and closers
	ops       sync.WaitGroup // Resolve, Call, List and Status in progress
	closeOnce sync.Once

	mu       sync.Mutex
	parsed   bool   // raw has been parsed
	raw      string // the mcp_servers value servers reflect
	parseErr error  // raw's parse error, nil when valid
	servers  []*server
	closed   bool
	waited   bool // Close is waiting for wg; no more Adds
}

var errClosed = apperr.New(apperr.ErrUnavailable, "MCP_CLIENT_CLOSED", "the MCP client is closed")

// New returns a Client for cfg; sessions are opened on first use.
func New(cfg Config) *Client {
	owns := cfg.HTTPClient == nil
	cfg.defaults()
	c := &Client{cfg: cfg, log: cfg.Log.With("component", "mcp-client"), ownsHTTP: owns}
	c.base, c.endBase = context.WithCancelCause(context.Background())
	return c
}

// Resolve checks that server has tool, without calling it (dry runs).
func (c *Client) Resolve(ctx context.Context, server, tool string) error {
	s, err := c.server(server)
	if err != nil {
		return err
	}
	ctx, end, err := c.begin(ctx, ListTimeout, "looking up "+server+"/"+tool)
	if err != nil {
		return err
	}
	defer end()
	_, err = s.find(ctx, tool)
	return err
}

// Call runs server/tool with args and returns its content as text and its
// isError verdict; err is a transport or protocol failure, or an unknown
// server or tool. Without a deadline in ctx the call gets CallTimeout.
func (c *Client) Call(ctx context.Context, server, tool string, args map[string]any) (string, bool, error) {
	s, err := c.server(server)
	if err != nil {
		return "", false, err
	}
	arguments, err := jsonArgs(args)
	if err != nil {
		return "", false, apperr.Invalid("INVALID_TOOL_ARGUMENTS", "arguments of %s/%s: %v", server, tool, err)
	}
	ctx, end, err := c.begin(ctx, c.cfg.CallTimeout, "tool call "+server+"/"+tool)
	if err != nil {
		return "", false, err
	}
	defer end()
	if _, err := s.find(ctx, tool); err != nil {
		return "", false, err
	}
	var res *mcp.CallToolResult
	err = s.do(ctx, opCall, func(ctx context.Context, sess *session) error {
		// Fresh params per attempt: the sdk adds request metadata to them.
		r, err := sess.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: arguments})
		res = r
		return err
	})
	if err != nil {
		return "", false, err
	}
	return resultText(res), res.IsError, nil
}

// List returns the tools of every configured server that can be reached,
// in setting order. Unreachable servers are left out; their errors are in
// the status. err is only for an invalid mcp_servers setting or a closed
// client.
func (c *Client) List(ctx context.Context) ([]worker.ToolInfo, error) {
	servers, err := c.current()
	if err != nil {
		return nil, err
	}
	ctx, end, err := c.begin(ctx, ListTimeout, "listing tools")
	if err != nil {
		return nil, err
	}
	defer end()
	lists := make([][]*mcp.Tool, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() {
			list, err := s.tools(ctx, false)
			if err != nil {
				c.log.Debug("tool server left out of the tool list", "server", s.name, "error", err.Error())
				return
			}
			lists[i] = list
		})
	}
	wg.Wait()
	var out []worker.ToolInfo
	for i, s := range servers {
		for _, t := range lists[i] {
			out = append(out, worker.ToolInfo{Server: s.name, Name: t.Name, Description: t.Description, InputSchema: inputSchema(t)})
		}
	}
	return out, nil
}

// inputSchema is the tool's argument schema as JSON; a server that gives
// none gets the schema of any object.
func inputSchema(t *mcp.Tool) json.RawMessage {
	if t.InputSchema != nil {
		if b, err := json.Marshal(t.InputSchema); err == nil && string(b) != "null" {
			return b
		}
	}
	return json.RawMessage(`{"type":"object"}`)
}

// Close ends the calls in flight, closes every session and waits for the
// sessions' closing. Later calls fail with MCP_CLIENT_CLOSED. It is safe
// to call more than once. Shut the worker's runs down first: the sdk tells
// a server of a cancelled call asynchronously, and a notice that loses the
// race with the session's closing leaves the tool running on the server
// (and the session's DELETE waiting up to 5 s for it).
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		servers := c.servers
		c.servers = nil
		c.mu.Unlock()
		c.endBase(errClosed)
		// Closing a session waits for its requests, so the cancelled
		// calls go first.
		c.ops.Wait()
		for _, s := range servers {
			s.retire()
		}
		c.mu.Lock()
		c.waited = true
		c.mu.Unlock()
		c.wg.Wait()
		if c.ownsHTTP {
			c.cfg.HTTPClient.CloseIdleConnections()
		}
	})
	return nil
}

// current returns the configured servers, reconciling them with the
// setting: a server whose URL changed or that was removed is retired (its
// session closed), new ones are added without a session.
func (c *Client) current() ([]*server, error) {
	servers, retired, err := c.reconcile(c.cfg.Setting(SettingKey))
	// Retiring takes the server's lock and spawns closers, which take c.mu.
	for _, s := range retired {
		s.retire()
	}
	return servers, err
}

func (c *Client) reconcile(raw string) (servers, retired []*server, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil, errClosed
	}
	if c.parsed && raw == c.raw {
		return c.servers, nil, c.parseErr
	}
	c.parsed, c.raw = true, raw
	list, perr := worker.ParseToolServers(raw)
	if perr != nil {
		// A value that cannot be read names no server that can be trusted.
		c.parseErr = apperr.New(apperr.ErrUnavailable, "INVALID_MCP_SERVERS", "setting %s is invalid: %s",
			SettingKey, redactor{}.text(perr.Error()))
		c.log.Error("invalid tool-server setting", "setting", SettingKey, "error", c.parseErr.Error())
		retired, c.servers = c.servers, nil
		return nil, retired, c.parseErr
	}
	c.parseErr = nil
	old := make(map[string]*server, len(c.servers))
	for _, s := range c.servers {
		old[s.name] = s
	}
	next := make([]*server, 0, len(list))
	for _, ts := range list {
		if s, ok := old[ts.Name]; ok && s.rawURL == ts.URL {
			next = append(next, s)
			delete(old, ts.Name)
			continue
		}
		next = append(next, newServer(c, ts.Name, ts.URL))
	}
	for _, s := range old {
		c.log.Info("tool server removed or moved; closing its session", "server", s.name, "url", s.url)
		retired = append(retired, s)
	}
	c.servers = next
	return next, retired, nil
}

// server returns the configured server called name.
func (c *Client) server(name string) (*server, error) {
	servers, err := c.current()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(servers))
	for _, s := range servers {
		if s.name == name {
			return s, nil
		}
		names = append(names, s.name)
	}
	known := strings.Join(names, ", ")
	if known == "" {
		known = "none"
	}
	return nil, apperr.NotFound("UNKNOWN_TOOL_SERVER", "tool server %q is not configured (configured: %s)", name, known).
		WithDetails(map[string]any{"servers": names})
}

// begin starts one operation: its context ends on Close, and after d
// when ctx has no deadline of its own. end must be called when it is done.
func (c *Client) begin(ctx context.Context, d time.Duration, what string) (_ context.Context, end func(), _ error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, nil, errClosed
	}
	c.ops.Add(1)
	c.mu.Unlock()
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(c.base, func() { cancel(errClosed) })
	cancelTimeout := context.CancelFunc(func() {})
	if _, ok := ctx.Deadline(); !ok {
		ctx, cancelTimeout = context.WithTimeoutCause(ctx, d, fmt.Errorf("%s timed out after %s", what, d))
	}
	return ctx, func() {
		cancelTimeout()
		stop()
		cancel(nil)
		c.ops.Done()
	}, nil
}

// spawn runs f in a goroutine that Close waits for, unless Close is
// already waiting (a session opened during Close is closed untracked).
func (c *Client) spawn(f func()) {
	c.mu.Lock()
	if c.waited {
		c.mu.Unlock()
		go f()
		return
	}
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		f()
	}()
}

// closeLater closes sess without making the caller wait: the sdk's Close
// waits for the session's requests in flight.
func (c *Client) closeLater(sess *session) {
	c.spawn(func() { _ = sess.cs.Close() })
}

func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

func (c *Client) now() time.Time { return c.cfg.Now().UTC() }

var _ worker.Tools = (*Client)(nil)
