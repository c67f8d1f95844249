package coapdev

import (
	"context"
	"strings"
	"testing"

	"cpesuite/internal/iotemu/param"
	"cpesuite/internal/iotemu/proto"
	"cpesuite/internal/iotemu/proto/prototest"
	"cpesuite/internal/testutil"
)

// fakeHost is the session's side of a device in tests, with the lookups
// the tests here need.
type fakeHost struct{ *prototest.Host }

func newFakeHost() *fakeHost {
	return &fakeHost{prototest.NewHost(param.Sensor("SN-1", "Acme", "Sensor-9"))}
}

// logged reports whether an entry with direction and event has options
// containing every one of parts.
func (h *fakeHost) logged(dir, event string, parts ...string) bool {
	for _, e := range h.Entries() {
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
	return h.Status(), h.Connection()
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
		ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
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
