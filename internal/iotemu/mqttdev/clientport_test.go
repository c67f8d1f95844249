package mqttdev

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"

	"cpesuite/internal/iotemu/proto"
	"cpesuite/internal/testutil"
)

// TestFixedClientPortRestart: a device bound to a fixed clientPort can be
// stopped and started again at once. Stop closes the connection from the
// device's side, which leaves the local port in TIME_WAIT for about a
// minute; without SO_REUSEADDR the restart failed with "address already
// in use" until then.
func TestFixedClientPortRestart(t *testing.T) {
	brokers := []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"mosquitto", func(t *testing.T) string { return testutil.RequireMosquitto(t) }},
		{"embedded", func(t *testing.T) string { return startBroker(t, "127.0.0.1:0", brokerOpts{}).url() }},
	}
	for _, b := range brokers {
		for _, v := range versions {
			t.Run(b.name+"/v"+v, func(t *testing.T) {
				url := b.url(t)
				_, p, err := net.SplitHostPort(testutil.FreeAddr(t))
				if err != nil {
					t.Fatal(err)
				}
				port, _ := strconv.Atoi(p)
				td := newTestDevice(t, url, map[string]string{OptMQTTVersion: v}, func(c *proto.Config) {
					c.ClientIP, c.ClientPort = "127.0.0.1", port
				})
				for round := range 3 {
					td.start(t)
					td.host.waitConn(t, proto.Connected, "connected")
					if err := td.dev.Stop(context.Background()); err != nil {
						t.Fatalf("round %d: Stop: %v", round, err)
					}
				}
				td.host.mu.Lock()
				defer td.host.mu.Unlock()
				for _, s := range td.host.statuses {
					if strings.Contains(s, "address already in use") {
						t.Fatalf("a restart could not bind port %d: %q", port, s)
					}
				}
			})
		}
	}
}
