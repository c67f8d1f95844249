package mqttdev

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"cpesuite/internal/iotemu/proto"
	"cpesuite/internal/testutil"
)

var versions = []string{"3.1.1", "5"}

// TestDeviceMosquitto runs the whole life of a device against the real
// broker, for both protocol versions.
func TestDeviceMosquitto(t *testing.T) {
	brokerURL := testutil.RequireMosquitto(t)
	for _, v := range versions {
		t.Run("v"+v, func(t *testing.T) {
			t.Parallel()
			td := newTestDevice(t, brokerURL, map[string]string{OptMQTTVersion: v})
			p := td.prefix
			obs := observe(t, brokerURL, p+"#")
			td.start(t)
			td.host.waitConn(t, proto.Connected, "connected to 127.0.0.1:1883 (MQTT "+v+")")

			t.Run("state online retained", func(t *testing.T) {
				obs.wait(t, p+"state", 0, "online", payloadIs("online"))
				// A late subscriber gets it as a retained message.
				late := observe(t, brokerURL, p+"state")
				m := late.wait(t, p+"state", 0, "retained online", payloadIs("online"))
				if !m.retained {
					t.Errorf("state not retained: %+v", m)
				}
			})

			t.Run("log", func(t *testing.T) {
				for _, want := range []struct{ dir, event, opts string }{
					{dirOut, evConnect, "will=" + p + "state"},
					{dirIn, evConnack, "returnCode=0"},
					{dirOut, evSubscribe, "topic=" + p + "set qos=1"},
					{dirOut, evPublish, "topic=" + p + "state qos=1 retain=true"},
				} {
					if !td.host.hasEntry(want.dir, want.event, want.opts) {
						t.Errorf("no %s %s entry with %q in %+v", want.dir, want.event, want.opts, td.host.Entries())
					}
				}
			})

			t.Run("heartbeat telemetry", func(t *testing.T) {
				sent := time.Now()
				if err := td.dev.Heartbeat(context.Background()); err != nil {
					t.Fatal(err)
				}
				m := obs.wait(t, p+"telemetry", 0, "telemetry", nil)
				got := time.Now()
				var doc struct {
					ClientID     string            `json:"clientId"`
					SerialNumber string            `json:"serialNumber"`
					TS           int64             `json:"ts"`
					Params       map[string]string `json:"params"`
				}
				if err := json.Unmarshal([]byte(m.payload), &doc); err != nil {
					t.Fatalf("telemetry %q: %v", m.payload, err)
				}
				if doc.ClientID != td.cfg.ClientID || doc.SerialNumber != td.cfg.SerialNumber {
					t.Errorf("telemetry identity = %q %q", doc.ClientID, doc.SerialNumber)
				}
				// Bracketed by the clock around the heartbeat, not by a
				// tolerance that a stalled machine could exceed.
				if doc.TS < sent.UnixMilli() || doc.TS > got.UnixMilli() {
					t.Errorf("ts %d is not between the heartbeat (%d) and its arrival (%d)", doc.TS, sent.UnixMilli(), got.UnixMilli())
				}
				for _, prm := range td.host.Params().List() {
					if _, ok := doc.Params[prm.Name]; !ok {
						t.Errorf("telemetry lacks %s: %s", prm.Name, m.payload)
					}
				}
				if doc.Params["Temperature"] != "21.5" || doc.Params["Manufacturer"] != "Acme" {
					t.Errorf("telemetry params = %v", doc.Params)
				}
				if m.retained {
					t.Error("telemetry retained with retainTelemetry=false")
				}
			})

			t.Run("set commands", func(t *testing.T) {
				td.host.Freeze("Humidity")
				tests := []struct {
					name    string
					id      string
					payload string
					want    []ackResult
					wantErr string // top-level ack error
					check   map[string]string
				}{
					{
						name: "single", id: `"a1"`,
						payload: `{"id":"a1","name":"Temperature","value":"22"}`,
						want:    []ackResult{{Name: "Temperature", OK: true}},
						check:   map[string]string{"Temperature": "22"},
					},
					{
						name: "several with errors", id: `7`,
						payload: `{"id":7,"params":{"Switch":true,"Uptime":"5","NoSuch":"1","Pressure":"high","Humidity":"50","BatteryLevel":80}}`,
						want: []ackResult{
							{Name: "Switch", OK: true},
							{Name: "Uptime", Error: "not writable"},
							{Name: "NoSuch", Error: "unknown parameter"},
							{Name: "Pressure", Error: "invalid value"},
							{Name: "Humidity", Error: "frozen"},
							{Name: "BatteryLevel", OK: true},
						},
						check: map[string]string{"Switch": "true", "Pressure": "1013.25", "Humidity": "45", "BatteryLevel": "80"},
					},
					{
						name: "malformed", payload: `not json`,
						wantErr: "malformed command",
					},
				}
				for _, tc := range tests {
					t.Run(tc.name, func(t *testing.T) {
						skip := len(obs.messages(p + "ack"))
						obs.publish(t, p+"set", tc.payload)
						m := obs.wait(t, p+"ack", skip, "ack", nil)
						a := ackOf(t, m)
						if tc.id != "" && string(a.ID) != tc.id {
							t.Errorf("ack id = %s, want %s", a.ID, tc.id)
						}
						if !strings.Contains(a.Error, tc.wantErr) || (tc.wantErr == "") != (a.Error == "") {
							t.Errorf("ack error = %q, want %q", a.Error, tc.wantErr)
						}
						if len(a.Results) != len(tc.want) {
							t.Fatalf("ack = %s, want %d results", m.payload, len(tc.want))
						}
						for i, w := range tc.want {
							r := a.Results[i]
							if r.Name != w.Name || r.OK != w.OK || !strings.Contains(r.Error, w.Error) || (w.Error == "") != (r.Error == "") {
								t.Errorf("result %d = %+v, want %+v", i, r, w)
							}
						}
						for name, want := range tc.check {
							if got := td.host.Params().Value(name); got != want {
								t.Errorf("%s = %q, want %q", name, got, want)
							}
						}
					})
				}
				// The session calls Changed after a server write.
				obs.wait(t, p+"param/Temperature", 0, "Temperature change", payloadIs("22"))
				obs.wait(t, p+"param/BatteryLevel", 0, "BatteryLevel change", payloadIs("80"))
				if !td.host.hasEntry(dirIn, evPublish, "topic="+p+"set") {
					t.Error("inbound set not logged")
				}
			})

			t.Run("failResponse", func(t *testing.T) {
				td.host.SetFail(true)
				defer td.host.SetFail(false)
				skip := len(obs.messages(p + "ack"))
				obs.publish(t, p+"set", `{"id":"f","name":"Temperature","value":"30"}`)
				a := ackOf(t, obs.wait(t, p+"ack", skip, "ack", ackWithID(`"f"`)))
				if len(a.Results) != 1 || a.Results[0].OK || a.Results[0].Error != failResponseError {
					t.Errorf("ack = %+v", a)
				}
				if got := td.host.Params().Value("Temperature"); got != "22" {
					t.Errorf("Temperature written despite failResponse: %q", got)
				}
			})

			t.Run("Changed publishes", func(t *testing.T) {
				td.dev.Changed("SignalStrength", "-55")
				m := obs.wait(t, p+"param/SignalStrength", 0, "change", payloadIs("-55"))
				if m.retained {
					t.Error("param change retained with retainTelemetry=false")
				}
			})

			t.Run("stop", func(t *testing.T) {
				skip := len(obs.messages(p + "state"))
				if err := td.dev.Stop(context.Background()); err != nil {
					t.Fatal(err)
				}
				if c, s := td.host.state(); c != proto.Disconnected || s != "stopped" {
					t.Errorf("after Stop: %s %q", c, s)
				}
				obs.wait(t, p+"state", skip, "offline", payloadIs("offline"))
				if !td.host.hasEntry(dirOut, evDisconnect, "") {
					t.Error("DISCONNECT not logged")
				}
				if err := td.dev.Heartbeat(context.Background()); err == nil {
					t.Error("Heartbeat after Stop succeeded")
				}
				if err := td.dev.Stop(context.Background()); err != nil {
					t.Errorf("second Stop: %v", err)
				}
			})

			t.Run("restart and reboot", func(t *testing.T) {
				skip := len(obs.messages(p + "state"))
				td.start(t)
				td.host.waitConn(t, proto.Connected, "connected")
				obs.wait(t, p+"state", skip, "online again", payloadIs("online"))

				skip = len(obs.messages(p + "state"))
				if err := td.dev.Reboot(context.Background()); err != nil {
					t.Fatal(err)
				}
				obs.wait(t, p+"state", skip, "offline on reboot", payloadIs("offline"))
				obs.wait(t, p+"state", skip+1, "online after reboot", payloadIs("online"))
				td.host.waitConn(t, proto.Connected, "connected")
			})
		})
	}
}

// TestPeriodicTelemetry checks the timer: telemetry keeps coming without
// heartbeats, Uptime advances, and retainTelemetry sets the retain flag.
func TestPeriodicTelemetry(t *testing.T) {
	brokerURL := testutil.RequireMosquitto(t)
	for _, v := range versions {
		t.Run("v"+v, func(t *testing.T) {
			t.Parallel()
			td := newTestDevice(t, brokerURL, map[string]string{
				OptMQTTVersion: v, OptPublishPeriodSec: "1", OptRetainTelemetry: "true", OptQoS: "0",
			})
			obs := observe(t, brokerURL, td.prefix+"telemetry")
			td.start(t)
			obs.wait(t, td.prefix+"telemetry", 2, "third telemetry", nil)
			ms := obs.messages(td.prefix + "telemetry")
			uptime := func(m message) int {
				var doc struct{ Params map[string]string }
				if err := json.Unmarshal([]byte(m.payload), &doc); err != nil {
					t.Fatal(err)
				}
				n, _ := strconv.Atoi(doc.Params["Uptime"])
				return n
			}
			if first, last := uptime(ms[0]), uptime(ms[len(ms)-1]); last <= first {
				t.Errorf("Uptime did not advance: %d then %d", first, last)
			}
			// Live deliveries of a retained publish carry retain=0; a late
			// subscriber sees the flag.
			late := observe(t, brokerURL, td.prefix+"telemetry")
			if m := late.wait(t, td.prefix+"telemetry", 0, "retained telemetry", nil); !m.retained {
				t.Errorf("telemetry not retained: %+v", m)
			}
		})
	}
}

// TestQoSLevels publishes and takes commands at every QoS, both versions.
func TestQoSLevels(t *testing.T) {
	brokerURL := testutil.RequireMosquitto(t)
	for _, v := range versions {
		for _, q := range []string{"0", "1", "2"} {
			t.Run("v"+v+" qos"+q, func(t *testing.T) {
				t.Parallel()
				td := newTestDevice(t, brokerURL, map[string]string{OptMQTTVersion: v, OptQoS: q})
				obs := observe(t, brokerURL, td.prefix+"#")
				td.start(t)
				td.host.waitConn(t, proto.Connected, "connected")
				obs.wait(t, td.prefix+"state", 0, "online", payloadIs("online"))
				if err := td.dev.Heartbeat(context.Background()); err != nil {
					t.Fatal(err)
				}
				obs.wait(t, td.prefix+"telemetry", 0, "telemetry", nil)
				obs.publish(t, td.prefix+"set", `{"id":"q","name":"Humidity","value":"61"}`)
				obs.wait(t, td.prefix+"ack", 0, "ack", ackWithID(`"q"`))
				if !td.host.hasEntry(dirOut, evPublish, "qos="+q) {
					t.Errorf("no publish at qos %s logged", q)
				}
			})
		}
	}
}

// TestPersistentSession: with cleanSession=false the broker keeps the
// session across a stop and start (MQTT 5: a session that never expires).
func TestPersistentSession(t *testing.T) {
	brokerURL := testutil.RequireMosquitto(t)
	for _, v := range versions {
		t.Run("v"+v, func(t *testing.T) {
			t.Parallel()
			td := newTestDevice(t, brokerURL, map[string]string{OptMQTTVersion: v, OptCleanSession: "false"})
			t.Cleanup(func() { dropSession(t, brokerURL, td.cfg.ClientID) })
			td.start(t)
			td.host.waitConn(t, proto.Connected, "connected")
			if err := td.dev.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			td.start(t)
			td.host.waitConn(t, proto.Connected, "connected")
			if !td.host.hasEntry(dirIn, evConnack, "sessionPresent=true") {
				t.Errorf("no CONNACK with a session present: %+v", td.host.Entries())
			}
			if !td.host.hasEntry(dirOut, evConnect, "cleanSession=false") {
				t.Error("CONNECT log does not say cleanSession=false")
			}
		})
	}
}

// dropSession removes a persistent session from the shared broker by
// connecting once with a clean session under the same client id.
func dropSession(t *testing.T, brokerURL, clientID string) {
	c := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(brokerURL).SetClientID(clientID).
		SetCleanSession(true).SetAutoReconnect(false))
	if tok := c.Connect(); tok.WaitTimeout(within) && tok.Error() == nil {
		c.Disconnect(100)
	}
}
