package mcpclient

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/wire"
)

// Status is the body of GET /api/mcp-status.
type Status struct {
	MCPs map[string]ServerStatus `json:"mcps"`
	// Connected is true when at least one server is configured and every
	// configured server answered its probe.
	Connected bool `json:"connected"`
	// Error is set when the mcp_servers setting cannot be read.
	Error string `json:"error,omitempty"`
}

// ServerStatus is one server's probe result.
type ServerStatus struct {
	OK        bool      `json:"ok"`
	URL       string    `json:"url"`
	Tools     int       `json:"tools"`
	CheckedAt time.Time `json:"checked_at"`
	Error     string    `json:"error"`
}

// Diag is the body of GET /api/mcp-diag.
type Diag struct {
	MCPs  map[string]ServerDiag `json:"mcps"`
	Error string                `json:"error,omitempty"`
}

// ServerDiag is what the client knows of one server without asking it.
type ServerDiag struct {
	URL string `json:"url"`
	// OK is the outcome of the last contact (call, list, probe or
	// session opening); false before the first one.
	OK bool `json:"ok"`
	// Session is true while an MCP session is open.
	Session         bool       `json:"session"`
	ProtocolVersion string     `json:"protocol_version,omitempty"`
	ServerName      string     `json:"server_name,omitempty"`
	ServerVersion   string     `json:"server_version,omitempty"`
	SessionsOpened  int        `json:"sessions_opened"`
	LastError       string     `json:"last_error"`
	LastErrorAt     *time.Time `json:"last_error_at"`
	LastOKAt        *time.Time `json:"last_ok_at"`
	// LastTools are the tool names of the last successful tools/list.
	LastTools   []string   `json:"last_tools"`
	LastToolsAt *time.Time `json:"last_tools_at"`
	// CheckedAt is the time of the last status probe.
	CheckedAt *time.Time `json:"checked_at"`
}

// Status probes every configured server concurrently: it opens a session
// when there is none and fetches the tool list, ProbeTimeout each.
func (c *Client) Status(ctx context.Context) Status {
	st := Status{MCPs: map[string]ServerStatus{}}
	servers, err := c.current()
	if err != nil {
		st.Error = err.Error()
		return st
	}
	ctx, end, err := c.begin(ctx, ProbeTimeout, "status probe")
	if err != nil {
		st.Error = err.Error()
		return st
	}
	defer end()
	results := make([]ServerStatus, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() { results[i] = s.probe(ctx) })
	}
	wg.Wait()
	st.Connected = len(servers) > 0
	for i, s := range servers {
		st.MCPs[s.name] = results[i]
		st.Connected = st.Connected && results[i].OK
	}
	return st
}

func (s *server) probe(ctx context.Context) ServerStatus {
	// Each probe has its own short deadline even when the request has a
	// longer one.
	ctx, cancel := context.WithTimeoutCause(ctx, ProbeTimeout, fmt.Errorf("no answer within %s", ProbeTimeout))
	defer cancel()
	list, err := s.tools(ctx, true)
	now := s.c.now()
	s.mu.Lock()
	s.health.checkedAt = now
	s.mu.Unlock()
	st := ServerStatus{OK: err == nil, URL: s.url, Tools: len(list), CheckedAt: now}
	if err != nil {
		st.Error = err.Error()
	}
	return st
}

// Diag reports every configured server's state without contacting it.
func (c *Client) Diag() Diag {
	d := Diag{MCPs: map[string]ServerDiag{}}
	servers, err := c.current()
	if err != nil {
		d.Error = err.Error()
		return d
	}
	for _, s := range servers {
		d.MCPs[s.name] = s.diag()
	}
	return d
}

func (s *server) diag() ServerDiag {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.health
	return ServerDiag{
		URL:             s.url,
		OK:              h.ok,
		Session:         s.sess != nil && !s.sess.broken(),
		ProtocolVersion: h.protocol,
		ServerName:      h.serverName,
		ServerVersion:   h.serverVersion,
		SessionsOpened:  h.sessionsOpened,
		LastError:       h.lastErr,
		LastErrorAt:     timePtr(h.lastErrAt),
		LastOKAt:        timePtr(h.lastOKAt),
		LastTools:       append([]string{}, h.lastTools...),
		LastToolsAt:     timePtr(h.lastToolsAt),
		CheckedAt:       timePtr(h.checkedAt),
	}
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// Routes registers GET /api/mcp-status and GET /api/mcp-diag behind guard;
// any role may read them.
func (c *Client) Routes(mux *httpx.Mux, guard identity.Guard) {
	a := httpx.Adapter{Errors: wire.ErrorWriter(), Log: c.log}
	mux.HandleFunc("GET /api/mcp-status", a.H(guard.H(func(w http.ResponseWriter, r *http.Request, _ identity.Identity) error {
		return httpx.WriteJSON(w, http.StatusOK, c.Status(r.Context()))
	})))
	mux.HandleFunc("GET /api/mcp-diag", a.H(guard.H(func(w http.ResponseWriter, r *http.Request, _ identity.Identity) error {
		return httpx.WriteJSON(w, http.StatusOK, c.Diag())
	})))
}
