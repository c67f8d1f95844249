package iotemu

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"cpesuite/internal/iotemu/lwm2m/codec"
	"cpesuite/internal/iotemu/lwm2m/lwm2mtest"
	"cpesuite/internal/testutil"
)

// TestLwM2MSession runs LwM2M devices through the session against the
// strict test server: register (CONNECTED), a server read of a value set
// through the API, observe + notify, lwm2m/update, lwm2m/deregister with
// details (DISCONNECTED), restart through /api/start.
func TestLwM2MSession(t *testing.T) {
	srv := lwm2mtest.New(t)
	e := startEmu(t, testConfig(t))
	e.do("POST", "/api/protocol/LWM2M", nil).must(t, 204)
	e.do("POST", "/api/protocolOptions", map[string]string{"lwm2mVersion": "1.1", "contentFormat": "SENML_JSON"}).must(t, 204)
	e.do("POST", "/api/config", map[string]any{"serverIp": srv.Host(), "serverPort": srv.Port(), "clientId": "lw", "clientsCount": 2}).must(t, 200)
	e.do("POST", "/api/init", nil).must(t, 204)
	e.do("POST", "/api/start", nil).must(t, 204)
	for _, id := range []string{"lw-1", "lw-2"} {
		srv.WaitRegistered(t, id)
		testutil.Eventually(t, testutil.MinDeadline, id+" CONNECTED", func() bool { return e.detail(id).Connection == "CONNECTED" })
	}
	ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
	defer cancel()
	ch, stop, err := srv.Observe(ctx, "lw-1", "/3303/0/5700", codec.FormatText)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	<-ch // the first answer
	e.do("PUT", "/api/devices/lw-1/parameters/Temperature.0.SensorValue", map[string]string{"value": "31.5"}).must(t, 204)
	select {
	case n := <-ch:
		if string(n.Payload) != "31.5" {
			t.Fatalf("notify payload %q", n.Payload)
		}
	case <-ctx.Done():
		t.Fatal("no notify after the API write")
	}
	f, body, err := srv.Read(ctx, "lw-1", "/3303/0/5700", codec.FormatText)
	if err != nil || f != codec.FormatText || string(body) != "31.5" {
		t.Fatalf("server read: %d %q %v", f, body, err)
	}
	// Server writes go through the session (history, rule).
	if _, err := srv.Write(ctx, "lw-1", "/3/0/14", codec.FormatText, []byte("+02:00"), true); err != nil {
		t.Fatal(err)
	}
	if v := e.devices["lw-1"].params.Value("Device.0.UTCOffset"); v != "+02:00" {
		t.Fatalf("server write not applied: %q", v)
	}
	before := srv.UpdateCount("lw-2")
	e.do("POST", "/api/lwm2m/update", nil).must(t, 204)
	testutil.Eventually(t, testutil.MinDeadline, "update from lw-2", func() bool { return srv.UpdateCount("lw-2") > before })
	var dr DeregisterResult
	e.do("POST", "/api/lwm2m/deregister?details=true", nil).must(t, 200).json(t, &dr)
	if dr.Count != 2 || len(dr.Deregistered) != 2 {
		t.Fatalf("deregister %+v", dr)
	}
	srv.WaitDeregistered(t, "lw-1")
	if c := e.detail("lw-2").Connection; c != "DISCONNECTED" {
		t.Fatalf("after deregister: %s", c)
	}
	e.do("POST", "/api/lwm2m/deregister", nil).errBody(t, 409, codeNotStarted)
	if r := e.do("POST", "/api/lwm2m/update", nil); r.status != 409 || len(r.body) != 0 {
		t.Fatalf("update with none running: %d %q", r.status, r.body)
	}
	// Restart through POST /api/start.
	e.do("POST", "/api/start", nil).must(t, 204)
	testutil.Eventually(t, testutil.MinDeadline, "re-registration", func() bool { return srv.RegisterCount("lw-2") >= 2 })
	e.do("POST", "/api/devices/lw-1/reboot", nil).must(t, 204)
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("wire format violations: %v", v)
	}
	var lb LogBatch
	e.do("GET", "/api/logs", nil).must(t, 200).json(t, &lb)
	events := map[string]bool{}
	for _, l := range lb.Entries {
		events[l.Event] = true
	}
	for _, ev := range []string{"REGISTER", "UPDATE", "DEREGISTER", "OBSERVE", "NOTIFY", "READ", "WRITE"} {
		if !events[ev] {
			t.Errorf("no %s in the log ring (%v)", ev, events)
		}
	}
	e.do("POST", "/api/stop", nil).must(t, 204)
	if c := e.detail("lw-1").Connection; c != "DISCONNECTED" {
		t.Fatalf("after stop: %s", c)
	}
}

// TestMQTTSession runs MQTT devices through the session against the local
// Mosquitto: CONNECTED, telemetry on the documented topic, a set command
// goes through the rule path.
func TestMQTTSession(t *testing.T) {
	url := testutil.RequireMosquitto(t)
	host, port := "127.0.0.1", 1883
	if _, err := fmt.Sscanf(strings.TrimPrefix(url, "tcp://"), "127.0.0.1:%d", &port); err != nil {
		t.Fatalf("unexpected Mosquitto URL %s", url)
	}
	prefix := fmt.Sprintf("cpesuite-test/%d", time.Now().UnixNano())
	e := startEmu(t, testConfig(t))
	e.do("POST", "/api/protocol/MQTT", nil).must(t, 204)
	e.do("POST", "/api/protocolOptions", map[string]string{"topicPrefix": prefix, "publishPeriodSec": "1", "mqttVersion": "5"}).must(t, 204)
	e.do("POST", "/api/config", map[string]any{"serverIp": host, "serverPort": port, "clientId": "mq", "clientsCount": 2}).must(t, 200)

	got := make(chan paho.Message, 16)
	opts := paho.NewClientOptions().AddBroker(url).SetClientID(fmt.Sprintf("watch-%d", time.Now().UnixNano()))
	c := paho.NewClient(opts)
	if tok := c.Connect(); !tok.WaitTimeout(testutil.MinDeadline) || tok.Error() != nil {
		t.Fatalf("watcher connect: %v", tok.Error())
	}
	defer c.Disconnect(100)
	if tok := c.Subscribe(prefix+"/mq-2/telemetry", 1, func(_ paho.Client, m paho.Message) {
		select {
		case got <- m:
		default:
		}
	}); !tok.WaitTimeout(testutil.MinDeadline) || tok.Error() != nil {
		t.Fatalf("subscribe: %v", tok.Error())
	}
	e.do("POST", "/api/init", nil).must(t, 204)
	e.do("POST", "/api/start", nil).must(t, 204)
	testutil.Eventually(t, testutil.MinDeadline, "mq-2 CONNECTED", func() bool { return e.detail("mq-2").Connection == "CONNECTED" })
	select {
	case m := <-got:
		var tm struct {
			ClientID string            `json:"clientId"`
			Params   map[string]string `json:"params"`
		}
		if err := json.Unmarshal(m.Payload(), &tm); err != nil || tm.ClientID != "mq-2" || tm.Params["Temperature"] == "" {
			t.Fatalf("telemetry %s: %v", m.Payload(), err)
		}
	case <-time.After(testutil.MinDeadline):
		t.Fatal("no telemetry")
	}
	if tok := c.Publish(prefix+"/mq-2/set", 1, false, `{"name":"Switch","value":"true"}`); !tok.WaitTimeout(testutil.MinDeadline) || tok.Error() != nil {
		t.Fatalf("publish: %v", tok.Error())
	}
	testutil.Eventually(t, testutil.MinDeadline, "set command applied", func() bool { return e.devices["mq-2"].params.Value("Switch") == "true" })
	var h History
	e.do("GET", "/api/devices/mq-2/parameters/Switch/history", nil).must(t, 200).json(t, &h)
	if len(h.Entries) == 0 || h.Entries[len(h.Entries)-1].Value != "true" {
		t.Fatalf("server write not in history: %+v", h)
	}
	e.do("POST", "/api/stop", nil).must(t, 204)
	if c := e.detail("mq-1").Connection; c != "DISCONNECTED" {
		t.Fatalf("after stop: %s", c)
	}
}
