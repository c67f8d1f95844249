package coapdev

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/iotemu/param"
	"cpesuite/internal/iotemu/proto"
	"cpesuite/internal/testutil"
)

func TestProtocolDescription(t *testing.T) {
	p := &Protocol{}
	if p.Name() != "COAP" {
		t.Errorf("Name = %q", p.Name())
	}
	opts := p.Options()
	want := []struct{ key, def string }{
		{OptContentFormat, "text"}, {OptObservePeriodSec, "0"}, {OptResourcePrefix, "params"},
	}
	if len(opts) != len(want) {
		t.Fatalf("Options = %+v", opts)
	}
	for i, w := range want {
		if opts[i].Key != w.key || opts[i].Default != w.def || opts[i].Secret {
			t.Errorf("option %d = %+v, want key %s default %s", i, opts[i], w.key, w.def)
		}
	}
	if got := strings.Join(opts[0].Choices, ","); got != "text,json" {
		t.Errorf("contentFormat choices = %s", got)
	}
	ps := p.Params(proto.Config{SerialNumber: "SN-9", Manufacturer: "M", ModelName: "X"})
	if len(ps) != len(param.Sensor("", "", "")) || ps[0].Value != "SN-9" || ps[1].Value != "M" || ps[2].Value != "X" {
		t.Errorf("Params = %+v", ps)
	}
}

func TestTransport(t *testing.T) {
	p := &Protocol{}
	ports := map[string][]int{"UDP": {5683}, "DTLS": {5684}}
	tests := []struct {
		name     string
		cfg      proto.Config
		selected string
		port     int
	}{
		{"none", proto.Config{SecurityMode: proto.SecurityNone, ClientPort: 5683}, "UDP", 5683},
		{"unset mode is none", proto.Config{ClientPort: 0}, "UDP", 0},
		{"psk", proto.Config{SecurityMode: proto.SecurityPSK, ClientPort: 5684}, "DTLS", 5684},
		{"x509", proto.Config{SecurityMode: proto.SecurityX509, ClientPort: 15684}, "DTLS", 15684},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := p.Transport(tt.cfg)
			if tr.Key != "transport" || strings.Join(tr.Options, ",") != "UDP,DTLS" {
				t.Errorf("key/options = %s %v", tr.Key, tr.Options)
			}
			if tr.Selected != tt.selected || tr.SelectedPort != tt.port {
				t.Errorf("selected = %s:%d, want %s:%d", tr.Selected, tr.SelectedPort, tt.selected, tt.port)
			}
			if fmt.Sprint(tr.Ports) != fmt.Sprint(ports) {
				t.Errorf("ports = %v", tr.Ports)
			}
		})
	}

	t.Run("running device reports its bound port", func(t *testing.T) {
		cfg := proto.Config{ClientID: "dev-port", ClientIP: "127.0.0.1", ClientPort: 0, Options: defaults(p)}
		d := startDevice(t, p, cfg, newFakeHost())
		bound := d.Addr().(*net.UDPAddr).Port
		if got := p.Transport(cfg).SelectedPort; got != bound || bound == 0 {
			t.Errorf("SelectedPort = %d, bound %d", got, bound)
		}
		if err := d.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := p.Transport(cfg).SelectedPort; got != 0 {
			t.Errorf("SelectedPort after stop = %d, want cfg.ClientPort 0", got)
		}
	})
}

func TestNewValidates(t *testing.T) {
	p := &Protocol{}
	key := hex.EncodeToString([]byte("secret"))
	tests := []struct {
		name    string
		cfg     proto.Config
		wantErr string
	}{
		{"defaults", proto.Config{Options: defaults(p)}, ""},
		{"missing options take defaults", proto.Config{}, ""},
		{"json", proto.Config{Options: defaults(p, OptContentFormat, "json")}, ""},
		{"bad content format", proto.Config{Options: defaults(p, OptContentFormat, "cbor")}, "contentFormat"},
		{"negative period", proto.Config{Options: defaults(p, OptObservePeriodSec, "-1")}, "observePeriodSec"},
		{"non-numeric period", proto.Config{Options: defaults(p, OptObservePeriodSec, "soon")}, "observePeriodSec"},
		{"empty prefix", proto.Config{Options: defaults(p, OptResourcePrefix, "/")}, "resourcePrefix"},
		{"relative prefix", proto.Config{Options: defaults(p, OptResourcePrefix, "a/../b")}, "resourcePrefix"},
		{"nested prefix", proto.Config{Options: defaults(p, OptResourcePrefix, "/sensors/v1/")}, ""},
		{"psk", proto.Config{SecurityMode: proto.SecurityPSK, PSKID: "id", PSKKey: key}, ""},
		{"psk without identity", proto.Config{SecurityMode: proto.SecurityPSK, PSKKey: key}, "identity"},
		{"psk key not hex", proto.Config{SecurityMode: proto.SecurityPSK, PSKID: "id", PSKKey: "zz-topsecret"}, "hex"},
		{"psk key empty", proto.Config{SecurityMode: proto.SecurityPSK, PSKID: "id"}, "hex"},
		{"x509 without key store", proto.Config{SecurityMode: proto.SecurityX509}, "key store"},
		{"unknown mode", proto.Config{SecurityMode: "TLS13"}, "unknown security mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := p.New(tt.cfg, newFakeHost())
			if tt.wantErr == "" {
				if err != nil || d == nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New error = %v, want one mentioning %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "topsecret") || strings.Contains(err.Error(), "'z'") {
				t.Errorf("error leaks the key: %v", err)
			}
		})
	}
}

// TestStartStopRestart covers the lifecycle: status and connection, an
// idempotent Stop, Start after Stop, re-binding the same fixed port, and
// a port in use.
func TestStartStopRestart(t *testing.T) {
	psk := proto.Config{SecurityMode: proto.SecurityPSK, PSKID: "dev", PSKKey: hex.EncodeToString([]byte("k3y"))}
	tests := []struct {
		name   string
		cfg    proto.Config
		scheme string
	}{
		{"udp", proto.Config{}, "coap"},
		{"dtls psk", psk, "coaps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Protocol{}
			ctx := context.Background()

			// Learn a free port from an ephemeral start.
			h0 := newFakeHost()
			d0 := startDevice(t, p, tt.cfg, h0)
			port := d0.Addr().(*net.UDPAddr).Port
			status, conn := h0.getStatus()
			if want := fmt.Sprintf("serving %s://127.0.0.1:%d", tt.scheme, port); status != want || conn != proto.Unknown {
				t.Errorf("status %q conn %q, want %q UNKNOWN", status, conn, want)
			}
			if err := d0.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			if d0.Addr() != nil {
				t.Error("Addr after Stop is not nil")
			}
			if err := d0.Stop(ctx); err != nil {
				t.Errorf("second Stop: %v", err)
			}
			if status, conn := h0.getStatus(); status != "stopped" || conn != proto.Unknown {
				t.Errorf("after stop: status %q conn %q", status, conn)
			}

			cfg := tt.cfg
			cfg.ClientPort = port
			h := newFakeHost()
			d := startDevice(t, p, cfg, h)
			for round := range 3 {
				if got := d.Addr().(*net.UDPAddr).Port; got != port {
					t.Fatalf("round %d: bound %d, want %d", round, got, port)
				}
				if tt.scheme == "coap" {
					c := dialUDP(t, d)
					if code, body := get(t, c, "/params/Temperature", -1); code != "2.05" || body != "21.5" {
						t.Fatalf("round %d: GET = %s %q", round, code, body)
					}
				} else {
					c := dialPSK(t, d, "dev", []byte("k3y"))
					if code, body := get(t, c, "/params/Temperature", -1); code != "2.05" || body != "21.5" {
						t.Fatalf("round %d: GET = %s %q", round, code, body)
					}
				}
				if err := d.Stop(ctx); err != nil {
					t.Fatal(err)
				}
				if err := d.Start(ctx); err != nil {
					t.Fatalf("round %d: restart on the same port: %v", round, err)
				}
			}

			// The port is taken now: another device cannot start on it.
			other, err := p.New(cfg, newFakeHost())
			if err != nil {
				t.Fatal(err)
			}
			if err := other.Start(ctx); err == nil {
				_ = other.Stop(ctx)
				t.Fatal("second device started on a port in use")
			}
		})
	}
}

func TestStopWithNotificationInFlight(t *testing.T) {
	h := newFakeHost()
	p := &Protocol{}
	d, err := p.newDevice(proto.Config{ClientIP: "127.0.0.1", Options: defaults(p)}, h)
	if err != nil {
		t.Fatal(err)
	}
	// An ACK_TIMEOUT far past the safety net below: a Stop that waited for
	// the retransmission loop would run out of it whatever the speed of the
	// machine, and one that does not wait passes however slow it is.
	d.ackTimeout = time.Hour
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
		defer cancel()
		_ = d.Stop(ctx)
	})
	raw := newRawClient(t, d)
	raw.observe(t, "/params/Temperature", 0x42)
	// The raw client never acknowledges, so the notification sits in its
	// retransmission loop.
	d.Changed("Temperature", "30")
	raw.next(t, testutil.MinDeadline)
	ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
	defer cancel()
	if err := d.Stop(ctx); err != nil {
		t.Fatalf("Stop with a notification in flight: %v", err)
	}
}
