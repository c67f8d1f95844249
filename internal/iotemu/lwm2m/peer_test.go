package lwm2m

import (
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plgd-dev/go-coap/v3/message/codes"

	"cpesuite/internal/iotemu/lwm2m/codec"
	"cpesuite/internal/iotemu/lwm2m/lwm2mtest"
	"cpesuite/internal/testutil"
)

// Regressions found against independent peers (issue 18 item 4).

// TestResponseLog: every answer to a server request is logged under the
// operation's name (a POST to an object is CREATE, to an instance WRITE,
// only to a resource EXECUTE) and with the datagram as sent: the
// piggybacked ACK carrying the request's message id.
func TestResponseLog(t *testing.T) {
	td := registered(t, "1.1")
	ctx := ctxT(t)
	tests := []struct {
		event string
		do    func() (codes.Code, error)
		want  codes.Code
	}{
		{"READ", func() (codes.Code, error) {
			_, _, err := td.srv.Read(ctx, td.ep, "/3/0/0", codec.FormatText)
			return codes.Content, err
		}, codes.Content},
		{"DISCOVER", func() (codes.Code, error) {
			c, _, err := td.srv.Discover(ctx, td.ep, "/3/0")
			return c, err
		}, codes.Content},
		{"WRITE", func() (codes.Code, error) {
			return td.srv.Write(ctx, td.ep, "/3/0", codec.FormatTLV, tlv(t, "/3/0", rec("/3/0/14", str("+03:00"))), false)
		}, codes.Changed},
		{"CREATE", func() (codes.Code, error) {
			return td.srv.Write(ctx, td.ep, "/3303", codec.FormatTLV, tlv(t, "/3303/1", rec("/3303/1/5700", codec.Value{Kind: codec.KindFloat, Float: 1})), false)
		}, codes.MethodNotAllowed},
		{"EXECUTE", func() (codes.Code, error) { return td.srv.Execute(ctx, td.ep, "/3303/0/5605", "") }, codes.Changed},
		{"WRITE_ATTRIBUTES", func() (codes.Code, error) { return td.srv.WriteAttributes(ctx, td.ep, "/3/0/9", "pmin=1") }, codes.Changed},
		{"DELETE", func() (codes.Code, error) { return td.srv.Delete(ctx, td.ep, "/3/0") }, codes.MethodNotAllowed},
	}
	for _, tc := range tests {
		t.Run(tc.event, func(t *testing.T) {
			before := len(td.host.entries("OUT", tc.event))
			code, err := tc.do()
			if err != nil {
				t.Fatal(err)
			}
			if code != tc.want {
				t.Fatalf("answer %v, want %v", code, tc.want)
			}
			in, out := td.host.entries("IN", tc.event), td.host.entries("OUT", tc.event)
			if len(in) == 0 || len(out) != before+1 {
				dumpLogs(t, td.host)
				t.Fatalf("%d IN and %d OUT %s entries (OUT before: %d)", len(in), len(out), tc.event, before)
			}
			req, resp := in[len(in)-1], out[len(out)-1]
			rq, err := hex.DecodeString(req.RawMessage)
			if err != nil || len(rq) < 4 {
				t.Fatalf("request rawMessage %q", req.RawMessage)
			}
			rs, err := hex.DecodeString(resp.RawMessage)
			if err != nil || len(rs) < 4 {
				t.Fatalf("response rawMessage %q: a piggybacked answer must be logged as sent", resp.RawMessage)
			}
			// RFC 7252 §3: Ver 1, T ACK (2), then Code and the request's
			// Message ID.
			if rs[0]>>6 != 1 || rs[0]>>4&3 != 2 || codes.Code(rs[1]) != tc.want || rs[2] != rq[2] || rs[3] != rq[3] {
				t.Errorf("response datagram %x to request %x: want an ACK %v with message id %x", rs[:4], rq[:4], tc.want, rq[2:4])
			}
		})
	}
	for _, e := range td.host.entries("IN", "EXECUTE") {
		if !strings.Contains(e.MessageOptions, "POST /3303/0/5605") {
			t.Errorf("EXECUTE logged for a request that is no Execute: %+v", e)
		}
	}
}

// TestSensorValueReadOnly: IPSO 3303's Sensor Value is read-only for the
// server (4.05, alone or inside an instance write, nothing applied); the
// API, automatic updates and rules still change it through the host.
func TestSensorValueReadOnly(t *testing.T) {
	td := registered(t, "1.1")
	ctx := ctxT(t)
	tests := []struct {
		name    string
		path    string
		format  uint16
		payload []byte
		replace bool
	}{
		{"resource text", "/3303/0/5700", codec.FormatText, []byte("99"), true},
		{"instance replace tlv", "/3303/0", codec.FormatTLV, tlv(t, "/3303/0", rec("/3303/0/5700", codec.Value{Kind: codec.KindFloat, Float: 99})), true},
		{"instance partial senml", "/3303/0", codec.FormatSenMLJSON, senmlJSON(t, "/3303/0", rec("/3303/0/5700", codec.Value{Kind: codec.KindFloat, Float: 99})), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, err := td.srv.Write(ctx, td.ep, tc.path, tc.format, tc.payload, tc.replace)
			if err != nil {
				t.Fatal(err)
			}
			if code != codes.MethodNotAllowed {
				t.Fatalf("write %s: %v, want 4.05 Method Not Allowed", tc.path, code)
			}
			if v := td.host.Params().Value(nameTempValue); v != "21.5" {
				t.Fatalf("sensor value %q after a refused write", v)
			}
		})
	}
	if p, _ := td.host.Params().Get(nameTempValue); p.Writable {
		t.Error("Temperature.0.SensorValue listed as writable by the server")
	}
	// The host side (API) still drives it, and the server reads it.
	if err := td.host.Set(nameTempValue, "30.5"); err != nil {
		t.Fatal(err)
	}
	if _, b, err := td.srv.Read(ctx, td.ep, "/3303/0/5700", codec.FormatText); err != nil || string(b) != "30.5" {
		t.Fatalf("read after API write: %q %v", b, err)
	}
	noViolations(t, td.srv)
}

// TestCurrentTimeIsDeviceClock: /3/0/13 reads the device's clock, which
// runs, instead of the time the device was created; a Write sets the
// clock and it runs on from there; observers with pmax see it advance.
func TestCurrentTimeIsDeviceClock(t *testing.T) {
	td := registered(t, "1.1")
	ctx := ctxT(t)
	read := func() int64 {
		t.Helper()
		_, b, err := td.srv.Read(ctx, td.ep, "/3/0/13", codec.FormatText)
		if err != nil {
			t.Fatal(err)
		}
		v, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			t.Fatalf("current time %q", b)
		}
		return v
	}
	first := read()
	testutil.Eventually(t, testutil.MinDeadline, "the device clock to advance", func() bool { return read() > first })
	if v := td.host.Params().Value("Device.0.CurrentTime"); v == strconv.FormatInt(first, 10) {
		t.Errorf("parameter %s still holds the first reading %s", "Device.0.CurrentTime", v)
	}

	// 2001-09-09: far from the host's clock, so the device's is used.
	const set = 1000000000
	if code, err := td.srv.Write(ctx, td.ep, "/3/0/13", codec.FormatText, []byte(strconv.Itoa(set)), true); err != nil || code != codes.Changed {
		t.Fatalf("write current time: %v %v", code, err)
	}
	if v := read(); v < set || v > first-1000 {
		t.Fatalf("current time %d after setting %d: not the device clock", v, set)
	}
	testutil.Eventually(t, testutil.MinDeadline, "the set clock to run on", func() bool { return read() > set })

	// A periodic notification carries the time of its sending.
	if code, _ := td.srv.WriteAttributes(ctx, td.ep, "/3/0/13", "pmax=1"); code != codes.Changed {
		t.Fatalf("write attributes: %v", code)
	}
	ch, cancel, err := td.srv.Observe(ctx, td.ep, "/3/0/13", codec.FormatText)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	prev := notified(t, ch)
	testutil.Eventually(t, testutil.MinDeadline, "a notification with a later time", func() bool {
		v := notified(t, ch)
		if v < prev {
			t.Fatalf("notified time went back from %d to %d", prev, v)
		}
		return v > prev
	})
	noViolations(t, td.srv)
}

func notified(t *testing.T, ch <-chan lwm2mtest.Notification) int64 {
	t.Helper()
	select {
	case n, ok := <-ch:
		if !ok {
			t.Fatal("observation channel closed")
		}
		v, err := strconv.ParseInt(string(n.Payload), 10, 64)
		if err != nil {
			t.Fatalf("notification %q", n.Payload)
		}
		return v
	case <-time.After(testutil.MinDeadline):
		t.Fatalf("no notification within %s", testutil.MinDeadline)
	}
	return 0
}
