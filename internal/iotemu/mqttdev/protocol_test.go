package mqttdev

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"cpesuite/internal/iotemu/param"
	"cpesuite/internal/iotemu/proto"
)

func TestProtocolDescription(t *testing.T) {
	p := Protocol{}
	if p.Name() != "MQTT" {
		t.Errorf("Name() = %q", p.Name())
	}
	want := []struct {
		key, def string
		secret   bool
		choices  []string
	}{
		{OptMQTTVersion, "3.1.1", false, []string{"3.1.1", "5"}},
		{OptUsername, "", false, nil},
		{OptPassword, "", true, nil},
		{OptTopicPrefix, "cpesuite/devices", false, nil},
		{OptQoS, "1", false, []string{"0", "1", "2"}},
		{OptPublishPeriodSec, "10", false, nil},
		{OptKeepAliveSec, "30", false, nil},
		{OptCleanSession, "true", false, []string{"true", "false"}},
		{OptRetainTelemetry, "false", false, []string{"true", "false"}},
	}
	got := p.Options()
	if len(got) != len(want) {
		t.Fatalf("%d options, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Key != w.key || g.Default != w.def || g.Secret != w.secret || !reflect.DeepEqual(g.Choices, w.choices) {
			t.Errorf("option %d = %+v, want %+v", i, g, w)
		}
	}
	got[0].Key = "mutated"
	if p.Options()[0].Key != OptMQTTVersion {
		t.Error("Options returns shared storage")
	}

	tr, err := json.Marshal(p.Transport(proto.Config{}))
	if err != nil || string(tr) != "{}" {
		t.Errorf("Transport renders %s, %v; want {}", tr, err)
	}
	cfg := proto.Config{SerialNumber: "S1", Manufacturer: "M", ModelName: "X"}
	if !reflect.DeepEqual(p.Params(cfg), param.Sensor("S1", "M", "X")) {
		t.Error("Params is not param.Sensor")
	}
}

func TestNewValidation(t *testing.T) {
	base := func() proto.Config {
		opts := map[string]string{}
		for _, o := range (Protocol{}).Options() {
			opts[o.Key] = o.Default
		}
		return proto.Config{ClientID: "dev1", ServerIP: "127.0.0.1", ServerPort: 1883, Options: opts}
	}
	tests := []struct {
		name    string
		mod     func(*proto.Config)
		wantErr string // "" = valid
	}{
		{"defaults", func(*proto.Config) {}, ""},
		{"missing option keys use defaults", func(c *proto.Config) { c.Options = nil }, ""},
		{"mqtt 5", func(c *proto.Config) { c.Options[OptMQTTVersion] = "5" }, ""},
		{"x509", func(c *proto.Config) { c.SecurityMode = proto.SecurityX509 }, ""},
		{"psk refused", func(c *proto.Config) { c.SecurityMode = proto.SecurityPSK }, "PSK is not supported"},
		{"unknown security", func(c *proto.Config) { c.SecurityMode = "FOO" }, "unknown security mode"},
		{"bad version", func(c *proto.Config) { c.Options[OptMQTTVersion] = "3.1" }, "mqttVersion"},
		{"bad qos", func(c *proto.Config) { c.Options[OptQoS] = "3" }, "qos"},
		{"bad period", func(c *proto.Config) { c.Options[OptPublishPeriodSec] = "-1" }, "publishPeriodSec"},
		{"bad keep-alive", func(c *proto.Config) { c.Options[OptKeepAliveSec] = "70000" }, "keepAliveSec"},
		{"bad clean", func(c *proto.Config) { c.Options[OptCleanSession] = "maybe" }, "cleanSession"},
		{"bad retain", func(c *proto.Config) { c.Options[OptRetainTelemetry] = "" }, "retainTelemetry"},
		{"wildcard prefix", func(c *proto.Config) { c.Options[OptTopicPrefix] = "a/#" }, "topicPrefix"},
		{"empty prefix", func(c *proto.Config) { c.Options[OptTopicPrefix] = "/" }, "topicPrefix"},
		{"empty client id", func(c *proto.Config) { c.ClientID = "" }, "client id"},
		{"client id with slash", func(c *proto.Config) { c.ClientID = "a/b" }, "client id"},
		{"no server", func(c *proto.Config) { c.ServerIP = "" }, "no server"},
		{"bad client ip", func(c *proto.Config) { c.ClientIP = "nope" }, "client address"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base()
			tc.mod(&cfg)
			d, err := Protocol{}.New(cfg, newFakeHost(cfg))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("New error = %v, want %q", err, tc.wantErr)
			case err == nil:
				if _, ok := d.(proto.Rebooter); !ok {
					t.Error("device is not a proto.Rebooter")
				}
			}
		})
	}
}

func TestDeviceTopicsAndPorts(t *testing.T) {
	tests := []struct {
		name               string
		prefix, security   string
		port               int
		wantBase, wantAddr string
	}{
		{"defaults", "cpesuite/devices", "", 0, "cpesuite/devices/dev1/", "10.0.0.1:1883"},
		{"trailing slash", "x/y/", proto.SecurityNone, 1884, "x/y/dev1/", "10.0.0.1:1884"},
		{"tls default port", "p", proto.SecurityX509, 0, "p/dev1/", "10.0.0.1:8883"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := proto.Config{ClientID: "dev1", ServerIP: "10.0.0.1", ServerPort: tc.port, SecurityMode: tc.security,
				Options: map[string]string{OptTopicPrefix: tc.prefix}}
			d, err := Protocol{}.New(cfg, newFakeHost(cfg))
			if err != nil {
				t.Fatal(err)
			}
			dev := d.(*Device)
			if dev.telemetryTopic != tc.wantBase+"telemetry" || dev.setTopic != tc.wantBase+"set" ||
				dev.ackTopic != tc.wantBase+"ack" || dev.stateTopic != tc.wantBase+"state" ||
				dev.paramPrefix != tc.wantBase+"param/" {
				t.Errorf("topics %q %q %q %q %q", dev.telemetryTopic, dev.setTopic, dev.ackTopic, dev.stateTopic, dev.paramPrefix)
			}
			if dev.addr != tc.wantAddr {
				t.Errorf("addr = %s, want %s", dev.addr, tc.wantAddr)
			}
		})
	}
}
