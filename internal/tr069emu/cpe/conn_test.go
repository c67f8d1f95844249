package cpe

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/cwmp"
	"cpesuite/internal/tr069emu/tree"
)

// socketACS is an ACS double that binds a CWMP session to the TCP
// connection that carried its Inform, as GenieACS does (its session table
// is keyed by the socket): a message of a session arriving on another
// session's connection, or on a fresh connection while the session's own
// is still open, is refused with 400 "Invalid session". Only when the
// session's connection has closed may the session continue on a new one,
// and then only with its session cookie (GenieACS restores the session
// from its cache by that cookie). Every session gets two RPCs, so devices
// wait their task delays in the middle of their sessions.
type socketACS struct {
	t   testing.TB
	srv *httptest.Server
	// closeAfterInform makes the double close the connection after every
	// InformResponse (Connection: close), as an ACS behind a proxy may.
	closeAfterInform bool

	mu       sync.Mutex
	byConn   map[net.Conn]*boundSession
	byCookie map[string]*boundSession
	closed   map[net.Conn]bool
	serials  map[net.Conn][]string // every device a connection carried
	ended    map[string]int        // sessions ended with 204, by serial
	refused  []string
	nextID   int
}

type boundSession struct {
	id     string
	serial string
	conn   net.Conn
	rpcs   []cwmp.Message
}

type connKey struct{}

func newSocketACS(t testing.TB, closeAfterInform bool) *socketACS {
	a := &socketACS{t: t, closeAfterInform: closeAfterInform, byConn: map[net.Conn]*boundSession{},
		byCookie: map[string]*boundSession{}, closed: map[net.Conn]bool{}, serials: map[net.Conn][]string{}, ended: map[string]int{}}
	a.srv = httptest.NewUnstartedServer(a)
	a.srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) }
	a.srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateClosed || s == http.StateHijacked {
			a.mu.Lock()
			a.closed[c] = true
			a.mu.Unlock()
		}
	}
	a.srv.Start()
	t.Cleanup(a.srv.Close)
	return a
}

// refuse answers like GenieACS does for a request it cannot place.
func (a *socketACS) refuse(w http.ResponseWriter, why string) {
	a.refused = append(a.refused, why)
	a.mu.Unlock()
	http.Error(w, "Invalid session", http.StatusBadRequest)
}

func (a *socketACS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	conn := r.Context().Value(connKey{}).(net.Conn)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var env *cwmp.Envelope
	if len(bytes.TrimSpace(body)) > 0 {
		if env, err = cwmp.Decode(body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	cookie := ""
	if c, err := r.Cookie("session"); err == nil {
		cookie = c.Value
	}
	a.mu.Lock()
	s := a.byConn[conn]
	switch {
	case s != nil && cookie != s.id:
		// The connection belongs to another session: GenieACS finds that
		// session by the socket and the cookie does not match it.
		a.refuse(w, fmt.Sprintf("cookie %q on the connection of %s's session %s", cookie, s.serial, s.id))
		return
	case s == nil && env != nil && env.Body.Method() == "Inform":
		if cookie != "" && a.byCookie[cookie] != nil {
			a.refuse(w, fmt.Sprintf("Inform inside the open session %s", cookie))
			return
		}
		inf := env.Body.(*cwmp.Inform)
		a.nextID++
		s = &boundSession{id: "s" + strconv.Itoa(a.nextID), serial: inf.DeviceID.SerialNumber, conn: conn,
			rpcs: []cwmp.Message{
				&cwmp.GetParameterValues{ParameterNames: []string{"Device.DeviceInfo.SerialNumber"}},
				&cwmp.GetRPCMethods{},
			}}
		a.byConn[conn], a.byCookie[s.id] = s, s
	case s == nil:
		old := a.byCookie[cookie]
		if old == nil {
			a.refuse(w, fmt.Sprintf("no session for cookie %q", cookie))
			return
		}
		if !a.closed[old.conn] {
			a.refuse(w, fmt.Sprintf("session %s of %s moved to a new connection while its own is open", old.id, old.serial))
			return
		}
		delete(a.byConn, old.conn)
		old.conn = conn
		a.byConn[conn], s = old, old
	}
	if !slices.Contains(a.serials[conn], s.serial) {
		a.serials[conn] = append(a.serials[conn], s.serial)
	}
	if env != nil && env.Body.Method() == "Inform" {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: s.id, Path: "/"})
		if a.closeAfterInform {
			// The server notices the close only after its linger; the
			// double decided it, so the session may move at once.
			a.closed[conn] = true
			w.Header().Set("Connection", "close")
		}
		a.mu.Unlock()
		a.write(w, env.Reply(&cwmp.InformResponse{MaxEnvelopes: 1}))
		return
	}
	if len(s.rpcs) == 0 {
		delete(a.byConn, conn)
		delete(a.byCookie, s.id)
		a.ended[s.serial]++
		a.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		return
	}
	m := s.rpcs[0]
	s.rpcs = s.rpcs[1:]
	a.nextID++
	id := "acs-" + strconv.Itoa(a.nextID)
	a.mu.Unlock()
	a.write(w, cwmp.NewEnvelope(cwmp.CWMP12, id, m))
}

func (a *socketACS) write(w http.ResponseWriter, env *cwmp.Envelope) {
	b, err := cwmp.Encode(env)
	if err != nil {
		a.t.Errorf("double: encode: %v", err)
		return
	}
	w.Header().Set("Content-Type", `text/xml; charset="utf-8"`)
	_, _ = w.Write(b)
}

// endedAll reports whether every serial ended n sessions.
func (a *socketACS) endedAll(serials []string, n int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range serials {
		if a.ended[s] < n {
			return false
		}
	}
	return true
}

// TestSessionOwnsItsConnection runs 100 devices at once against an ACS
// that binds each session to its TCP connection. Every session waits task
// delays between its messages, which is when a shared connection pool
// hands a device's idle connection to another device's session. Each
// device runs two sessions, so an idle keep-alive connection left by one
// session must not reach another device's next one either.
func TestSessionOwnsItsConnection(t *testing.T) {
	t.Parallel()
	const devices = 100
	for _, tc := range []struct {
		name             string
		closeAfterInform bool
	}{
		{"ACS keeps the connection", false},
		{"ACS closes the connection after the InformResponse", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := newSocketACS(t, tc.closeAfterInform)
			env := newEnv(t, Settings{TaskDelays: map[string]time.Duration{
				"GetParameterValues": 30 * time.Millisecond, "GetRPCMethods": 70 * time.Millisecond}})
			env.MinRetry = time.Hour // a refused session must show, not heal by a retry
			tmpl := baseTemplate(t, tree.TR181)
			var devs []*Device
			var serials []string
			for i := range devices {
				serial := fmt.Sprintf("EMUSOCK%d%03d", map[bool]int{false: 0, true: 1}[tc.closeAfterInform], i)
				d := newDevice(t, env, tree.TR181, a.srv.URL+"/", Options{Serial: serial, Tree: tree.New(tmpl), Bootstrap: true, PeriodicDisabled: true})
				devs = append(devs, d)
				serials = append(serials, serial)
			}
			for _, d := range devs {
				d.Start(context.Background())
			}
			for round := 1; round <= 2; round++ {
				if round == 2 {
					for _, d := range devs {
						connReq(t, d)
					}
				}
				eventually(t, fmt.Sprintf("round %d: every device's session ended or refused", round), func() bool {
					a.mu.Lock()
					refused := len(a.refused) > 0
					a.mu.Unlock()
					return refused || a.endedAll(serials, round)
				})
				a.mu.Lock()
				refused := slices.Clone(a.refused)
				a.mu.Unlock()
				if len(refused) > 0 {
					t.Fatalf("round %d: the ACS refused %d messages as not of the connection's session; first: %s", round, len(refused), refused[0])
				}
			}
			a.mu.Lock()
			defer a.mu.Unlock()
			for c, s := range a.serials {
				if len(s) > 1 {
					t.Errorf("connection %s carried the sessions of %d devices: %v", c.RemoteAddr(), len(s), s)
				}
			}
		})
	}
}
