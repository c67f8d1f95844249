package mqttbroker

import (
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"cpesuite/internal/testutil"
)

func TestBrokerPubSubAndClose(t *testing.T) {
	var logs testutil.SyncBuffer
	b, err := Start("127.0.0.1:0", slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	if strings.HasSuffix(b.Addr(), ":0") {
		t.Fatalf("Addr() = %s, want the bound port", b.Addr())
	}

	tests := []struct {
		name    string
		topic   string
		payload string
		qos     byte
	}{
		{"qos0", "t/a", "zero", 0},
		{"qos1", "t/b", "one", 1},
		{"qos2", "t/c", "two", 2},
	}
	o := mqtt.NewClientOptions().AddBroker("tcp://" + b.Addr()).SetClientID(t.Name()).SetAutoReconnect(false)
	c := mqtt.NewClient(o)
	if tok := c.Connect(); !tok.WaitTimeout(testutil.MinDeadline) || tok.Error() != nil {
		t.Fatalf("connect: %v", tok.Error())
	}
	defer c.Disconnect(100)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got atomic.Value
			if tok := c.Subscribe(tc.topic, tc.qos, func(_ mqtt.Client, m mqtt.Message) { got.Store(string(m.Payload())) }); !tok.WaitTimeout(testutil.MinDeadline) || tok.Error() != nil {
				t.Fatalf("subscribe: %v", tok.Error())
			}
			if tok := c.Publish(tc.topic, tc.qos, false, tc.payload); !tok.WaitTimeout(testutil.MinDeadline) || tok.Error() != nil {
				t.Fatalf("publish: %v", tok.Error())
			}
			testutil.Eventually(t, testutil.MinDeadline, "delivery of "+tc.payload, func() bool { return got.Load() == tc.payload })
		})
	}
	if s := logs.String(); strings.Contains(s, "level=INFO") {
		t.Errorf("info lines reached the log:\n%s", s)
	}

	addr := b.Addr()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("port not freed by Close: %v", err)
	}
	_ = ln.Close()
}

func TestBrokerStartErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	tests := []struct{ name, addr string }{
		{"port in use", ln.Addr().String()},
		{"bad address", "no-such-host.invalid:x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Start(tc.addr, nil)
			if err == nil {
				_ = b.Close()
				t.Fatal("Start succeeded")
			}
		})
	}
}
