package coapdev

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cpesuite/internal/iotemu/param"
	"cpesuite/internal/iotemu/proto"
)

// fakeHost is the session's side of a device in tests: a parameter set,
// a recorded log, the status and connection, and Write with the
// writability and freezing checks of the real session.
type fakeHost struct {
	params *param.Set
	fail   atomic.Bool

	mu     sync.Mutex
	log    []proto.Entry
	status string
	conn   proto.Connection
	frozen map[string]bool
	writes []string // name=value of successful writes

	// onWrite, when set, runs after a successful write (the session calls
	// Device.Changed there).
	onWrite func(name, value string)
}

func newFakeHost() *fakeHost {
	return &fakeHost{
		params: param.NewSet(param.Sensor("SN-1", "Acme", "Sensor-9")),
		frozen: map[string]bool{},
	}
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
	_, stored, err := h.params.Put(name, value)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.writes = append(h.writes, name+"="+stored)
	cb := h.onWrite
	h.mu.Unlock()
	if cb != nil {
		cb(name, stored)
	}
	return nil
}

func (h *fakeHost) Log(e proto.Entry) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.log = append(h.log, e)
}

func (h *fakeHost) SetStatus(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.status = s
}

func (h *fakeHost) SetConnection(c proto.Connection) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.conn = c
}

func (h *fakeHost) FailResponse() bool { return h.fail.Load() }

func (h *fakeHost) freeze(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.frozen[name] = true
}

func (h *fakeHost) entries() []proto.Entry {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]proto.Entry(nil), h.log...)
}

// logged reports whether an entry with direction and event has options
// containing every one of parts.
func (h *fakeHost) logged(dir, event string, parts ...string) bool {
	for _, e := range h.entries() {
		if e.Direction != dir || e.Event != event {
			continue
		}
		ok := true
		for _, p := range parts {
			if !strings.Contains(e.MessageOptions, p) && !strings.Contains(e.Payload, p) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func (h *fakeHost) getStatus() (string, proto.Connection) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.status, h.conn
}

// startDevice creates and starts a device on an ephemeral loopback port
// and stops it when the test ends.
func startDevice(t *testing.T, p *Protocol, cfg proto.Config, h *fakeHost) *Device {
	t.Helper()
	if cfg.ClientIP == "" {
		cfg.ClientIP = "127.0.0.1"
	}
	if cfg.ClientID == "" {
		cfg.ClientID = t.Name()
	}
	if cfg.Options == nil {
		cfg.Options = defaults(p)
	}
	d, err := p.newDevice(cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := d.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return d
}

func defaults(p *Protocol, kv ...string) map[string]string {
	m := map[string]string{}
	for _, o := range p.Options() {
		m[o.Key] = o.Default
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}
