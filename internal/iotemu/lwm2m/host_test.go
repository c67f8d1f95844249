package lwm2m

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cpesuite/internal/iotemu/lwm2m/lwm2mtest"
	"cpesuite/internal/iotemu/param"
	"cpesuite/internal/iotemu/proto"
	"cpesuite/internal/iotemu/proto/prototest"
	"cpesuite/internal/testutil"
)

// fakeHost is the session's side of one device, with the lookups the
// tests here need.
type fakeHost struct{ *prototest.Host }

func newFakeHost(ps []param.Param) *fakeHost {
	return &fakeHost{prototest.NewHost(ps)}
}

// saw reports whether the connection was ever c.
func (h *fakeHost) saw(c proto.Connection) bool {
	return slices.Contains(h.Connections(), c)
}

// entries returns the log entries of one direction and event.
func (h *fakeHost) entries(dir, event string) []proto.Entry {
	var out []proto.Entry
	for _, e := range h.Entries() {
		if e.Direction == dir && e.Event == event {
			out = append(out, e)
		}
	}
	return out
}

func (h *fakeHost) wrote(entry string) bool {
	return slices.Contains(h.Writes(), entry)
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
		// A safety net: an exchange the test expects to be answered must
		// not time out on a loaded machine. Tests of lost messages set a
		// short time-out of their own.
		Options: map[string]string{OptRequestTimeout: requestTimeout},
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
	h.OnChange(dev.Changed)
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
	testutil.Eventually(t, testutil.MinDeadline, "CONNECTED", func() bool { return td.host.Connection() == proto.Connected })
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

// requestTimeout is OptRequestTimeout in seconds, testutil.MinDeadline.
var requestTimeout = strconv.Itoa(int(testutil.MinDeadline / time.Second))

// ctxT bounds a call of the test by a safety net longer than the device's
// own request time-out, so the device reports a lost answer itself.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline+30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// dumpLogs writes the device's message log to the test log, for failures.
func dumpLogs(t *testing.T, h *fakeHost) {
	t.Helper()
	for _, e := range h.Entries() {
		t.Logf("%s %s %s | %s", e.Direction, e.Event, e.MessageOptions, e.Payload)
	}
}
