package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"cpesuite/internal/buildinfo"
	"cpesuite/internal/platform/apperr"
)

// server is one configured tool server and its current session.
type server struct {
	c      *Client
	name   string
	rawURL string // with credentials, for the transport only
	url    string // without credentials, for everything shown
	red    redactor
	// opening holds a token while a session is being opened, so that
	// concurrent callers wait for that session instead of opening another.
	opening chan struct{}

	mu      sync.Mutex
	sess    *session
	retired bool // removed from the setting, its URL changed, or the client closed
	health  health
}

// health is what diag shows of a server.
type health struct {
	ok             bool
	lastErr        string
	lastErrAt      time.Time
	lastOKAt       time.Time
	lastTools      []string
	lastToolsAt    time.Time
	checkedAt      time.Time
	sessionsOpened int
	protocol       string
	serverName     string
	serverVersion  string
}

// session is one MCP session with its cached tool list.
type session struct {
	cs   *mcp.ClientSession
	dead chan struct{} // closed when the sdk reports the connection ended

	mu       sync.Mutex
	tools    []*mcp.Tool
	toolsAt  time.Time
	changes  uint64 // tools/list_changed notifications received
	listedAt uint64 // changes when tools was fetched
}

func (s *session) broken() bool {
	select {
	case <-s.dead:
		return true
	default:
		return false
	}
}

func (s *session) toolsChanged() {
	s.mu.Lock()
	s.changes++
	s.mu.Unlock()
}

func newServer(c *Client, name, raw string) *server {
	return &server{c: c, name: name, rawURL: raw, url: shownURL(raw), red: newRedactor(raw), opening: make(chan struct{}, 1)}
}

// acquire returns the server's session, opening one when there is none or
// the current one is broken.
func (s *server) acquire(ctx context.Context) (*session, error) {
	if sess, err := s.current(); sess != nil || err != nil {
		return sess, err
	}
	select {
	case s.opening <- struct{}{}:
	case <-ctx.Done():
		return nil, s.ctxError(ctx, "waiting for the session")
	}
	defer func() { <-s.opening }()
	// Another caller may have opened it while this one waited.
	if sess, err := s.current(); sess != nil || err != nil {
		return sess, err
	}
	sess, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.retired {
		s.mu.Unlock()
		s.c.closeLater(sess)
		return nil, s.retiredError()
	}
	s.sess = sess
	s.mu.Unlock()
	return sess, nil
}

// current returns the live session, nil when one must be opened. A broken
// session is dropped here.
func (s *server) current() (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.retired {
		return nil, s.retiredError()
	}
	if s.sess == nil {
		return nil, nil
	}
	if !s.sess.broken() {
		return s.sess, nil
	}
	s.c.closeLater(s.sess)
	s.sess = nil
	return nil, nil
}

func (s *server) retiredError() error {
	if s.c.isClosed() {
		return errClosed
	}
	return apperr.New(apperr.ErrUnavailable, "TOOL_SERVER_CHANGED",
		"tool server %q was removed from mcp_servers or given another URL while in use", s.name)
}

// open connects a new session; its tool list is fetched on first need.
func (s *server) open(ctx context.Context) (*session, error) {
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	sess := &session{dead: make(chan struct{})}
	client := mcp.NewClient(&mcp.Implementation{Name: "cpesuite-testrunner-worker", Version: buildinfo.Get().Version},
		&mcp.ClientOptions{
			// The worker serves no roots, sampling or elicitation.
			Capabilities:           &mcp.ClientCapabilities{},
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { sess.toolsChanged() },
		})
	transport := &mcp.StreamableClientTransport{Endpoint: s.rawURL, HTTPClient: s.c.cfg.HTTPClient}
	cs, err := client.Connect(cctx, transport, nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil, s.ctxError(ctx, "opening a session")
		}
		e := apperr.Wrap(apperr.ErrUpstream, s.red.err(err), "TOOL_SERVER_UNREACHABLE",
			fmt.Sprintf("tool server %q at %s is unreachable", s.name, s.url))
		s.failed(e)
		s.c.log.Warn("MCP tool server unreachable", "server", s.name, "url", s.url, "error", e.Error())
		return nil, e
	}
	sess.cs = cs
	s.c.spawn(func() {
		_ = cs.Wait()
		close(sess.dead)
	})
	var protocol string
	s.mu.Lock()
	s.health.sessionsOpened++
	if res := cs.InitializeResult(); res != nil {
		protocol = res.ProtocolVersion
		s.health.protocol = protocol
		if res.ServerInfo != nil {
			s.health.serverName, s.health.serverVersion = res.ServerInfo.Name, res.ServerInfo.Version
		}
	}
	s.mu.Unlock()
	s.c.log.Info("MCP session opened", "server", s.name, "url", s.url, "protocol", protocol)
	return sess, nil
}

// Operations, for the retry rule of do.
const (
	opList = "tools/list"
	opCall = "tools/call"
)

// do runs f on the server's session and classifies its error. A request
// that cannot have run (see notSent) is sent once more on a fresh session;
// so is tools/list after any transport failure, since listing twice does
// no harm. A tool call that may have run is not repeated.
func (s *server) do(ctx context.Context, op string, f func(context.Context, *session) error) error {
	for attempt := 0; ; attempt++ {
		sess, err := s.acquire(ctx)
		if err != nil {
			return err
		}
		err = f(ctx, sess)
		if err == nil {
			s.succeeded()
			return nil
		}
		if ctx.Err() != nil {
			return s.ctxError(ctx, op)
		}
		if rpcErr := serverError(err); rpcErr != nil {
			// The server answered: it is reachable, it refused this request.
			s.succeeded()
			return apperr.Wrap(apperr.ErrUpstream, s.red.err(err), "TOOL_SERVER_ERROR",
				fmt.Sprintf("tool server %q refused %s: %s", s.name, op, s.red.text(rpcErr.Message)))
		}
		notRun := notSent(err, op)
		if notRun || sess.broken() {
			s.drop(sess)
		}
		if attempt == 0 && (notRun || op == opList) {
			s.c.log.Info("MCP request failed, retrying", "server", s.name, "url", s.url, "op", op, "error", s.red.text(err.Error()))
			continue
		}
		e := apperr.Wrap(apperr.ErrUpstream, s.red.err(err), "TOOL_SERVER_FAILED",
			fmt.Sprintf("tool server %q at %s failed during %s", s.name, s.url, op))
		s.failed(e)
		s.c.log.Warn("MCP request failed", "server", s.name, "url", s.url, "op", op, "error", e.Error())
		return e
	}
}

// codeRejected is the code of the go-sdk's "rejected by transport" error
// (internal/jsonrpc2.ErrRejected): it wraps transport failures, it is not
// an answer of the server.
const codeRejected = -32005

// serverError returns the JSON-RPC error the server answered with, nil
// for a failure of the transport.
func serverError(err error) *jsonrpc.Error {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && rpcErr.Code != codeRejected {
		return rpcErr
	}
	return nil
}

// notSent reports whether err proves the request for op never ran: the
// session was closed before it was written, or the server answered that
// very request with 404 for an unknown session id (MCP streamable HTTP
// §2.5.3: a server that no longer has the session must answer so).
func notSent(err error, op string) bool {
	if errors.Is(err, mcp.ErrConnectionClosed) {
		return true
	}
	return errors.Is(err, mcp.ErrSessionMissing) && strings.Contains(err.Error(), fmt.Sprintf("sending %q", op))
}

// drop forgets sess when it is still the server's session.
func (s *server) drop(sess *session) {
	s.mu.Lock()
	if s.sess == sess {
		s.sess = nil
	}
	s.mu.Unlock()
	s.c.closeLater(sess)
}

// retire closes the server for good (setting change or Close).
func (s *server) retire() {
	s.mu.Lock()
	s.retired = true
	sess := s.sess
	s.sess = nil
	s.mu.Unlock()
	if sess != nil {
		s.c.closeLater(sess)
	}
}

// ctxError reports the end of the caller's context (stop, shutdown or the
// call's time-out); it is not a failure of the server.
func (s *server) ctxError(ctx context.Context, what string) error {
	cause := context.Cause(ctx)
	return apperr.Wrap(apperr.ErrUnavailable, cause, "TOOL_CALL_ENDED",
		fmt.Sprintf("tool server %q: %s ended: %v", s.name, what, s.red.text(cause.Error())))
}

func (s *server) succeeded() {
	now := s.c.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.health.ok = true
	s.health.lastOKAt = now
}

func (s *server) failed(err error) {
	now := s.c.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.health.ok = false
	s.health.lastErr = err.Error()
	s.health.lastErrAt = now
}

// tools returns the session's tool list, from the cache unless refresh is
// set, the cache is older than ToolsTTL or the server announced a change.
func (s *server) tools(ctx context.Context, refresh bool) ([]*mcp.Tool, error) {
	if !refresh {
		if sess, _ := s.current(); sess != nil {
			if list, ok := sess.cached(s.c.now()); ok {
				return list, nil
			}
		}
	}
	var out []*mcp.Tool
	err := s.do(ctx, opList, func(ctx context.Context, sess *session) error {
		sess.mu.Lock()
		changes := sess.changes
		sess.mu.Unlock()
		list := []*mcp.Tool{}
		for t, err := range sess.cs.Tools(ctx, nil) {
			if err != nil {
				return err
			}
			list = append(list, t)
		}
		now := s.c.now()
		sess.mu.Lock()
		// A notification that arrived during the fetch leaves the list
		// stale (listedAt != changes), so the next use fetches again.
		sess.tools, sess.toolsAt, sess.listedAt = list, now, changes
		sess.mu.Unlock()
		s.listed(list, now)
		out = list
		return nil
	})
	return out, err
}

// cached returns the session's tool list when it can still be trusted.
func (sess *session) cached(now time.Time) ([]*mcp.Tool, bool) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.tools == nil || sess.listedAt != sess.changes || now.Sub(sess.toolsAt) >= ToolsTTL {
		return nil, false
	}
	return sess.tools, true
}

func (s *server) listed(list []*mcp.Tool, at time.Time) {
	names := toolNames(list)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.health.lastTools, s.health.lastToolsAt = names, at
}

// find returns the named tool; a cached list that lacks it is refreshed
// once, since the server may have added it since.
func (s *server) find(ctx context.Context, name string) (*mcp.Tool, error) {
	list, err := s.tools(ctx, false)
	if err != nil {
		return nil, err
	}
	if t := lookup(list, name); t != nil {
		return t, nil
	}
	if list, err = s.tools(ctx, true); err != nil {
		return nil, err
	}
	if t := lookup(list, name); t != nil {
		return t, nil
	}
	names := toolNames(list)
	known := strings.Join(names, ", ")
	if known == "" {
		known = "none"
	}
	return nil, apperr.NotFound("UNKNOWN_TOOL", "tool server %q has no tool %q (its tools: %s)", s.name, name, known).
		WithDetails(map[string]any{"server": s.name, "tools": names})
}

func lookup(list []*mcp.Tool, name string) *mcp.Tool {
	for _, t := range list {
		if t.Name == name {
			return t
		}
	}
	return nil
}

func toolNames(list []*mcp.Tool) []string {
	names := make([]string, 0, len(list))
	for _, t := range list {
		names = append(names, t.Name)
	}
	sort.Strings(names)
	return names
}
