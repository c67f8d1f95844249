package lwm2m

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cpesuite/internal/iotemu/lwm2m/lwm2mtest"
	"cpesuite/internal/iotemu/param"
	"cpesuite/internal/iotemu/proto"
	"cpesuite/internal/testutil"
)

// fakeHost is the session's side of one device, as small as the tests
// need: a param.Set, a log, the connection history and a Write that checks
// writability and frozen parameters like the session does.
type fakeHost struct {
	params *param.Set
	fail   atomic.Bool

	mu       sync.Mutex
	logs     []proto.Entry
	conns    []proto.Connection
	status   string
	frozen   map[string]bool
	writes   []string
	onChange func(name, value string)
}

func newFakeHost(ps []param.Param) *fakeHost {
	return &fakeHost{params: param.NewSet(ps), frozen: map[string]bool{}}
}

func (h *fakeHost) Params() *param.Set { return h.params }

func (h *fakeHost) Write(name, value string) error {
	p, ok := h.params.Get(name)
	if !ok {
		return fmt.Errorf("%w %q", param.ErrUnknown, name)
	}
	if !p.Writable {
		return fmt.Errorf("%s: %w", name, proto.ErrReadOnly)
	}
	h.mu.Lock()
	frozen := h.frozen[name]
	h.mu.Unlock()
	if frozen {
		return fmt.Errorf("%s: %w", name, proto.ErrFrozen)
	}
	return h.set(name, value)
}

// set stores a value and tells the device, as an API write does.
func (h *fakeHost) set(name, value string) error {
	_, stored, err := h.params.Put(name, value)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.writes = append(h.writes, name+"="+stored)
	f := h.onChange
	h.mu.Unlock()
	if f != nil {
		f(name, stored)
	}
	return nil
}

func (h *fakeHost) Log(e proto.Entry) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.logs = append(h.logs, e)
}

func (h *fakeHost) SetStatus(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.status = s
}

func (h *fakeHost) SetConnection(c proto.Connection) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.conns = append(h.conns, c)
}

func (h *fakeHost) FailResponse() bool { return h.fail.Load() }

func (h *fakeHost) connection() proto.Connection {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.conns) == 0 {
		return proto.Unknown
	}
	return h.conns[len(h.conns)-1]
}

// saw reports whether the connection was ever c.
func (h *fakeHost) saw(c proto.Connection) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, x := range h.conns {
		if x == c {
			return true
		}
	}
	return false
}

func (h *fakeHost) statusLine() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.status
}

func (h *fakeHost) freeze(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.frozen[name] = true
}

// entries returns the log entries of one direction and event.
func (h *fakeHost) entries(dir, event string) []proto.Entry {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []proto.Entry
	for _, e := range h.logs {
		if e.Direction == dir && e.Event == event {
			out = append(out, e)
		}
	}
	return out
}

func (h *fakeHost) wrote(entry string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, w := range h.writes {
		if w == entry {
			return true
		}
	}
	return false
}

// testDevice is a device under test with its host and server.
type testDevice struct {
	*device
	host *fakeHost
	srv  *lwm2mtest.Server
	ep   string
	cfg  proto.Config
}

var devSeq atomic.Int64

// baseConfig returns a configuration for srv with fast test timings.
func baseConfig(srv *lwm2mtest.Server) proto.Config {
	n := devSeq.Add(1)
	return proto.Config{
		ClientID:     fmt.Sprintf("client-%d", n),
		SerialNumber: fmt.Sprintf("SN%06d", n),
		Manufacturer: "Acme",
		ModelName:    "M1",
		ServerIP:     srv.Host(),
		ServerPort:   srv.Port(),
		ClientIP:     "127.0.0.1",
		SecurityMode: proto.SecurityNone,
		Options:      map[string]string{OptRequestTimeout: "1"},
	}
}

// newTestDevice creates (not starts) a device for srv; edit adjusts the
// configuration. The device is stopped when the test ends.
func newTestDevice(t *testing.T, srv *lwm2mtest.Server, edit func(*proto.Config)) *testDevice {
	t.Helper()
	cfg := baseConfig(srv)
	if edit != nil {
		edit(&cfg)
	}
	var p Protocol
	h := newFakeHost(p.Params(cfg))
	d, err := p.New(cfg, h)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	dev := d.(*device)
	h.onChange = dev.Changed
	t.Cleanup(func() { _ = dev.Stop(context.Background()) })
	return &testDevice{device: dev, host: h, srv: srv, ep: dev.ep, cfg: cfg}
}

// startRegistered starts the device and waits for its registration.
func (td *testDevice) startRegistered(t *testing.T) lwm2mtest.Registration {
	t.Helper()
	if err := td.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	reg := td.srv.WaitRegistered(t, td.ep)
	testutil.Eventually(t, 5*time.Second, "CONNECTED", func() bool { return td.host.connection() == proto.Connected })
	return reg
}

func noViolations(t *testing.T, srv *lwm2mtest.Server) {
	t.Helper()
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("server recorded violations:\n%s", strings.Join(v, "\n"))
	}
}

// freeUDPPort returns a loopback UDP port nobody uses right now.
func freeUDPPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// dumpLogs writes the device's message log to the test log, for failures.
func dumpLogs(t *testing.T, h *fakeHost) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.logs {
		t.Logf("%s %s %s | %s", e.Direction, e.Event, e.MessageOptions, e.Payload)
	}
}
