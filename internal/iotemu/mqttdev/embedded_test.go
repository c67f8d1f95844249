package mqttdev

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"cpesuite/internal/iotemu/proto"
	"cpesuite/internal/testutil"
)

func secret(t *testing.T) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "pw-" + hex.EncodeToString(b)
}

// TestCredentials: a broker that requires a password admits the right one
// and refuses a wrong one, which leaves the device DISCONNECTED with a
// status saying why.
func TestCredentials(t *testing.T) {
	pass := secret(t)
	b := startBroker(t, "127.0.0.1:0", brokerOpts{user: "dev", pass: pass})
	tests := []struct {
		name       string
		version    string
		user, pass string
		want       proto.Connection
		wantStatus string
	}{
		{"v3.1.1 right", "3.1.1", "dev", pass, proto.Connected, "connected to"},
		{"v3.1.1 wrong", "3.1.1", "dev", pass + "x", proto.Disconnected, "refused by broker"},
		{"v3.1.1 none", "3.1.1", "", "", proto.Disconnected, "refused by broker"},
		{"v5 right", "5", "dev", pass, proto.Connected, "connected to"},
		{"v5 wrong", "5", "dev", pass + "x", proto.Disconnected, "refused by broker: bad user name or password"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			td := newTestDevice(t, b.url(), map[string]string{
				OptMQTTVersion: tc.version, OptUsername: tc.user, OptPassword: tc.pass,
			})
			td.start(t)
			td.host.waitConn(t, tc.want, tc.wantStatus)
			if tc.want == proto.Disconnected && !td.host.hasEntry(dirIn, evConnack, "returnCode=") {
				t.Errorf("refusing CONNACK not logged: %+v", td.host.Entries())
			}
		})
	}
}

// TestPasswordNeverLogged drives a device through connect, refusal,
// publishes and stop and looks for the password in everything it handed
// the host.
func TestPasswordNeverLogged(t *testing.T) {
	pass := secret(t)
	b := startBroker(t, "127.0.0.1:0", brokerOpts{user: "dev", pass: pass})
	for _, v := range versions {
		for _, p := range []string{pass, pass + "-wrong"} {
			t.Run("v"+v, func(t *testing.T) {
				td := newTestDevice(t, b.url(), map[string]string{
					OptMQTTVersion: v, OptUsername: "dev", OptPassword: p,
				})
				td.start(t)
				if p == pass {
					td.host.waitConn(t, proto.Connected, "connected")
					if err := td.dev.Heartbeat(context.Background()); err != nil {
						t.Fatal(err)
					}
				} else {
					td.host.waitConn(t, proto.Disconnected, "refused")
				}
				if err := td.dev.Stop(context.Background()); err != nil {
					t.Fatal(err)
				}
				if !td.host.hasEntry(dirOut, evConnect, "username=dev") {
					t.Error("CONNECT not logged")
				}
				td.host.assertNoSecret(t, p)
			})
		}
	}
}

// TestReconnect: the broker goes away and comes back on the same address;
// the device notices, reports it, reconnects and announces itself again.
func TestReconnect(t *testing.T) {
	for _, v := range versions {
		t.Run("v"+v, func(t *testing.T) {
			t.Parallel()
			b := startBroker(t, "127.0.0.1:0", brokerOpts{})
			td := newTestDevice(t, b.url(), map[string]string{OptMQTTVersion: v, OptKeepAliveSec: "5"})
			td.start(t)
			td.host.waitConn(t, proto.Connected, "connected")

			b.close()
			td.host.waitConn(t, proto.Disconnected, "connection lost")
			if err := td.dev.Heartbeat(context.Background()); err == nil {
				t.Error("Heartbeat while disconnected succeeded")
			}

			b2 := startBroker(t, b.addr, brokerOpts{})
			obs := observe(t, b2.url(), td.prefix+"#")
			td.host.waitConn(t, proto.Connected, "connected")
			obs.wait(t, td.prefix+"state", 0, "online after reconnect", payloadIs("online"))
			// And the set subscription is back.
			obs.publish(t, td.prefix+"set", `{"id":1,"name":"Switch","value":"true"}`)
			obs.wait(t, td.prefix+"ack", 0, "ack after reconnect", ackWithID("1"))
		})
	}
}

// TestChangedCoalesces: changes made while the broker is unreachable are
// queued without blocking, only the last value of a parameter survives,
// and it is published once the device connects.
func TestChangedCoalesces(t *testing.T) {
	for _, v := range versions {
		t.Run("v"+v, func(t *testing.T) {
			t.Parallel()
			addr := testutil.FreeAddr(t)
			td := newTestDevice(t, "tcp://"+addr, map[string]string{OptMQTTVersion: v, OptRetainTelemetry: "true"})
			td.start(t)
			td.host.waitConn(t, proto.Disconnected, "cannot connect to "+addr)
			for i := 1; i <= 100; i++ {
				td.dev.Changed("Temperature", strconv.Itoa(i))
			}
			td.dev.Changed("Switch", "true")

			b := startBroker(t, addr, brokerOpts{})
			td.host.waitConn(t, proto.Connected, "connected")
			obs := observe(t, b.url(), td.prefix+"param/#")
			obs.wait(t, td.prefix+"param/Switch", 0, "Switch", payloadIs("true"))
			obs.wait(t, td.prefix+"param/Temperature", 0, "Temperature", payloadIs("100"))
			// The observer may have subscribed late and seen only the
			// retained value; the device's log shows what it sent.
			var sent []string
			for _, e := range td.host.Entries() {
				if e.Event == evPublish && strings.Contains(e.MessageOptions, "topic="+td.prefix+"param/Temperature ") {
					sent = append(sent, e.Payload)
				}
			}
			if len(sent) != 1 || sent[0] != "100" {
				t.Errorf("Temperature publishes = %q, want just 100", sent)
			}
		})
	}
}

// TestTLS connects over TLS with a test CA and a client certificate, and
// checks that a broker the trust store does not vouch for is refused.
func TestTLS(t *testing.T) {
	pki := newTestPKI(t)
	b := startBroker(t, "127.0.0.1:0", brokerOpts{tls: pki.serverTLS()})
	tests := []struct {
		name        string
		version     string
		trust, keys string
		want        proto.Connection
		wantStatus  string
	}{
		{"v3.1.1", "3.1.1", pki.caPEM, pki.clientPEM, proto.Connected, "connected to"},
		{"v5", "5", pki.caPEM, pki.clientPEM, proto.Connected, "connected to"},
		{"v3.1.1 unknown CA", "3.1.1", pki.otherCAPEM, pki.clientPEM, proto.Disconnected, "certificate"},
		{"v5 unknown CA", "5", pki.otherCAPEM, pki.clientPEM, proto.Disconnected, "certificate"},
		{"v5 no client certificate", "5", pki.caPEM, "", proto.Disconnected, "cannot connect"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			td := newTestDevice(t, b.url(), map[string]string{OptMQTTVersion: tc.version}, func(c *proto.Config) {
				c.SecurityMode = proto.SecurityX509
				c.TrustStorePath = tc.trust
				c.AuthKeyStorePath = tc.keys
			})
			td.start(t)
			td.host.waitConn(t, tc.want, tc.wantStatus)
			_, status := td.host.state()
			t.Logf("status: %s", status)
			if tc.want == proto.Connected {
				// QoS 1: returns after the broker's PUBACK.
				if err := td.dev.Heartbeat(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestStartTLSFileErrors(t *testing.T) {
	pki := newTestPKI(t)
	junk := filepath.Join(t.TempDir(), "junk.pem")
	if err := os.WriteFile(junk, []byte("not PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, trust, keys string }{
		{"missing trust store", "/nonexistent/ca.pem", ""},
		{"trust store without certificates", junk, ""},
		{"key store without key", pki.caPEM, pki.caPEM},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			td := newTestDevice(t, "tcp://127.0.0.1:1", nil, func(c *proto.Config) {
				c.SecurityMode = proto.SecurityX509
				c.TrustStorePath = tc.trust
				c.AuthKeyStorePath = tc.keys
			})
			if err := td.dev.Start(context.Background()); err == nil {
				t.Fatal("Start succeeded")
			}
		})
	}
}

// TestKeepAlive: with a short keep-alive and nothing else to send, the
// device pings, and the broker (mochi drops a client silent for
// keepAlive+keepAlive/2 whole seconds, so 1 s would leave no slack) keeps
// it connected.
func TestKeepAlive(t *testing.T) {
	for _, v := range versions {
		t.Run("v"+v, func(t *testing.T) {
			t.Parallel()
			var pings atomic.Int64
			b := startBroker(t, "127.0.0.1:0", brokerOpts{pings: &pings})
			td := newTestDevice(t, b.url(), map[string]string{OptMQTTVersion: v, OptKeepAliveSec: "2"})
			td.start(t)
			td.host.waitConn(t, proto.Connected, "connected")
			testutil.Eventually(t, within, "2 PINGREQs", func() bool { return pings.Load() >= 2 })
			if n := td.host.connects(); n != 1 {
				t.Errorf("%d CONNECTs, want 1", n)
			}
			if c, s := td.host.state(); c != proto.Connected || !strings.HasPrefix(s, "connected") {
				t.Errorf("after pings: %s %q", c, s)
			}
		})
	}
}

func TestTimerPinger(t *testing.T) {
	dev, broker := net.Pipe()
	defer broker.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := &timerPinger{}
	if err := p.Run(ctx, dev, 1); err != nil {
		t.Fatal(err)
	}
	readPing := func() {
		t.Helper()
		b := make([]byte, 2)
		if _, err := io.ReadFull(broker, b); err != nil || b[0] != 0xC0 || b[1] != 0 {
			t.Fatalf("read % x, %v; want PINGREQ", b, err)
		}
	}
	readPing()
	p.PacketReceived()
	p.PingResp()
	readPing()
	// No PINGRESP this time: the pinger gives up and closes the connection.
	if _, err := broker.Read(make([]byte, 1)); err == nil {
		t.Fatal("connection still open without PINGRESP")
	}
	if !p.timedOut() {
		t.Error("timedOut() = false")
	}
}
