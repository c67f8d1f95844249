package lwm2m

import (
	"strings"
	"testing"
	"time"

	"github.com/plgd-dev/go-coap/v3/message/codes"

	"cpesuite/internal/iotemu/lwm2m/codec"
	"cpesuite/internal/iotemu/lwm2m/lwm2mtest"
	"cpesuite/internal/iotemu/proto"
	"cpesuite/internal/testutil"
)

// registered starts a device of the given version against a fresh server
// and returns both.
func registered(t *testing.T, version string, opts ...lwm2mtest.Option) *testDevice {
	t.Helper()
	srv := lwm2mtest.New(t, append([]lwm2mtest.Option{lwm2mtest.WithKindOf(KindOf)}, opts...)...)
	td := newTestDevice(t, srv, func(c *proto.Config) { c.Options[OptVersion] = version })
	td.startRegistered(t)
	return td
}

func recordValue(recs []codec.Record, path string) (string, bool) {
	for _, r := range recs {
		if r.Path.String() == path {
			return r.Value.String(), true
		}
	}
	return "", false
}

func TestRead(t *testing.T) {
	td := registered(t, "1.1")
	tests := []struct {
		path       string
		accept     uint16
		wantFormat uint16
		want       map[string]string // path -> value among the records
	}{
		{"/3/0", codec.FormatTLV, codec.FormatTLV, map[string]string{"/3/0/0": "Acme", "/3/0/1": "M1", "/3/0/11/0": "0", "/3/0/6/1": "5"}},
		{"/3/0", codec.FormatSenMLJSON, codec.FormatSenMLJSON, map[string]string{"/3/0/0": "Acme", "/3/0/2": td.cfg.SerialNumber}},
		{"/3/0", codec.FormatSenMLCBOR, codec.FormatSenMLCBOR, map[string]string{"/3/0/0": "Acme", "/3/0/9": "100"}},
		{"/3/0", lwm2mtest.NoAccept, codec.FormatTLV, map[string]string{"/3/0/0": "Acme"}},
		{"/3", codec.FormatSenMLJSON, codec.FormatSenMLJSON, map[string]string{"/3/0/0": "Acme"}},
		{"/3/0/0", codec.FormatText, codec.FormatText, map[string]string{"/3/0/0": "Acme"}},
		{"/3/0/0", lwm2mtest.NoAccept, codec.FormatText, map[string]string{"/3/0/0": "Acme"}},
		{"/3/0/0", codec.FormatTLV, codec.FormatTLV, map[string]string{"/3/0/0": "Acme"}},
		{"/3/0/0", codec.FormatCBOR, codec.FormatCBOR, map[string]string{"/3/0/0": "Acme"}},
		{"/3/0/6", lwm2mtest.NoAccept, codec.FormatTLV, map[string]string{"/3/0/6/0": "1", "/3/0/6/1": "5"}},
		{"/3/0/11/0", codec.FormatText, codec.FormatText, map[string]string{"/3/0/11/0": "0"}},
		{"/3303/0/5700", codec.FormatText, codec.FormatText, map[string]string{"/3303/0/5700": "21.5"}},
		{"/1/0/1", codec.FormatSenMLCBOR, codec.FormatSenMLCBOR, map[string]string{"/1/0/1": "300"}},
	}
	for _, tc := range tests {
		t.Run(tc.path+"_"+formatName(tc.accept), func(t *testing.T) {
			f, body, err := td.srv.Read(ctxT(t), td.ep, tc.path, tc.accept)
			if err != nil {
				t.Fatal(err)
			}
			if f != tc.wantFormat {
				t.Fatalf("content format %d, want %d", f, tc.wantFormat)
			}
			p, _ := codec.ParsePath(tc.path)
			recs, err := codec.Decode(f, p, body, KindOf)
			if err != nil {
				t.Fatalf("decode: %v (%q)", err, body)
			}
			for path, want := range tc.want {
				if got, ok := recordValue(recs, path); !ok || got != want {
					t.Errorf("%s = %q (present %t), want %q", path, got, ok, want)
				}
			}
		})
	}
	if got := td.host.entries("IN", "READ"); len(got) != len(tests) {
		t.Errorf("%d READ requests logged, want %d", len(got), len(tests))
	}
	out := td.host.entries("OUT", "READ")
	if len(out) == 0 || !strings.Contains(out[0].MessageOptions, "2.05") || !strings.Contains(out[0].Payload, "/3/0/0=Acme") {
		t.Errorf("read answer log %+v", out[0])
	}
	noViolations(t, td.srv)
}

func formatName(f uint16) string {
	switch f {
	case lwm2mtest.NoAccept:
		return "none"
	case codec.FormatTLV:
		return "tlv"
	case codec.FormatSenMLJSON:
		return "senml-json"
	case codec.FormatSenMLCBOR:
		return "senml-cbor"
	case codec.FormatText:
		return "text"
	case codec.FormatCBOR:
		return "cbor"
	case codec.FormatOpaque:
		return "opaque"
	}
	return "other"
}

func TestReadErrors(t *testing.T) {
	td := registered(t, "1.1")
	tests := []struct {
		path   string
		accept uint16
		want   codes.Code
	}{
		{"/3/0", 50, codes.NotAcceptable},               // application/json
		{"/3/0", codec.FormatText, codes.NotAcceptable}, // text for many values
		{"/3/0/0", codec.FormatOpaque, codes.NotAcceptable},
		{"/3/0/4", lwm2mtest.NoAccept, codes.MethodNotAllowed}, // executable
		{"/5/0/0", lwm2mtest.NoAccept, codes.MethodNotAllowed}, // write-only
		{"/3/1", lwm2mtest.NoAccept, codes.NotFound},
		{"/3/0/99", lwm2mtest.NoAccept, codes.NotFound},
		{"/3/0/11/7", lwm2mtest.NoAccept, codes.NotFound},
		{"/42", lwm2mtest.NoAccept, codes.NotFound},
		{"/0/0", lwm2mtest.NoAccept, codes.Unauthorized},
		{"/0/0/0", codec.FormatText, codes.Unauthorized},
	}
	for _, tc := range tests {
		t.Run(tc.path+"_"+formatName(tc.accept), func(t *testing.T) {
			_, _, err := td.srv.Read(ctxT(t), td.ep, tc.path, tc.accept)
			if got := lwm2mtest.CodeOf(err); got != tc.want {
				t.Fatalf("code %v (%v), want %v", got, err, tc.want)
			}
		})
	}
}

func TestReadVersion10(t *testing.T) {
	td := registered(t, "1.0")
	// A 1.0 client knows TLV, text and opaque; SenML came with 1.1.
	if _, _, err := td.srv.Read(ctxT(t), td.ep, "/3/0", codec.FormatSenMLJSON); lwm2mtest.CodeOf(err) != codes.NotAcceptable {
		t.Fatalf("SenML from a 1.0 client: %v", err)
	}
	recs, err := td.srv.ReadRecords(ctxT(t), td.ep, "/3/0", lwm2mtest.NoAccept)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := recordValue(recs, "/3/0/0"); v != "Acme" {
		t.Fatalf("records %v", recs)
	}
	noViolations(t, td.srv)
}

func tlv(t *testing.T, base string, recs ...codec.Record) []byte {
	t.Helper()
	p, _ := codec.ParsePath(base)
	b, err := codec.EncodeTLV(p, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func senmlJSON(t *testing.T, base string, recs ...codec.Record) []byte {
	t.Helper()
	p, _ := codec.ParsePath(base)
	b, err := codec.EncodeSenMLJSON(p, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func rec(path string, v codec.Value) codec.Record {
	p, _ := codec.ParsePath(path)
	return codec.Record{Path: p, Value: v}
}

func str(s string) codec.Value { return codec.Value{Kind: codec.KindString, Str: s} }

func TestWrite(t *testing.T) {
	td := registered(t, "1.1")
	td.host.Freeze("Device.0.Timezone")
	tests := []struct {
		name    string
		path    string
		format  uint16
		payload func(t *testing.T) []byte
		replace bool
		want    codes.Code
		param   string // name=value expected in the host afterwards
	}{
		{"utc offset tlv", "/3/0/14", codec.FormatTLV, func(t *testing.T) []byte { return tlv(t, "/3/0/14", rec("/3/0/14", str("+02:00"))) }, true, codes.Changed, "Device.0.UTCOffset=+02:00"},
		{"utc offset text", "/3/0/14", codec.FormatText, func(*testing.T) []byte { return []byte("-05:00") }, true, codes.Changed, "Device.0.UTCOffset=-05:00"},
		{"instance partial senml", "/3/0", codec.FormatSenMLJSON, func(t *testing.T) []byte {
			return senmlJSON(t, "/3/0", rec("/3/0/14", str("+01:00")))
		}, false, codes.Changed, "Device.0.UTCOffset=+01:00"},
		{"instance replace tlv", "/3/0", codec.FormatTLV, func(t *testing.T) []byte {
			return tlv(t, "/3/0", rec("/3/0/14", str("+04:00")))
		}, true, codes.Changed, "Device.0.UTCOffset=+04:00"},
		{"sensor value read-only", "/3303/0/5700", codec.FormatText, func(*testing.T) []byte { return []byte("30.25") }, true, codes.MethodNotAllowed, ""},
		{"lifetime text", "/1/0/1", codec.FormatText, func(*testing.T) []byte { return []byte("600") }, true, codes.Changed, "Server.0.Lifetime=600"},
		{"package uri", "/5/0/1", codec.FormatText, func(*testing.T) []byte { return []byte("http://fw.example/1.bin") }, true, codes.Changed, "FirmwareUpdate.0.PackageURI=http://fw.example/1.bin"},
		{"read-only", "/3/0/0", codec.FormatText, func(*testing.T) []byte { return []byte("Evil") }, true, codes.MethodNotAllowed, ""},
		{"read-only in instance", "/3/0", codec.FormatTLV, func(t *testing.T) []byte { return tlv(t, "/3/0", rec("/3/0/0", str("Evil"))) }, false, codes.MethodNotAllowed, ""},
		{"frozen", "/3/0/15", codec.FormatText, func(*testing.T) []byte { return []byte("Europe/Prague") }, true, codes.MethodNotAllowed, ""},
		{"executable", "/3/0/4", codec.FormatText, func(*testing.T) []byte { return []byte("1") }, true, codes.MethodNotAllowed, ""},
		{"unknown resource", "/3/0/99", codec.FormatText, func(*testing.T) []byte { return []byte("1") }, true, codes.NotFound, ""},
		{"unknown instance", "/3/7", codec.FormatTLV, func(t *testing.T) []byte { return tlv(t, "/3/7", rec("/3/7/14", str("x"))) }, true, codes.NotFound, ""},
		{"unknown object", "/77/0/1", codec.FormatText, func(*testing.T) []byte { return []byte("1") }, true, codes.NotFound, ""},
		{"security", "/0/0/0", codec.FormatText, func(*testing.T) []byte { return []byte("coap://evil") }, true, codes.Unauthorized, ""},
		{"bad value", "/1/0/1", codec.FormatText, func(*testing.T) []byte { return []byte("soon") }, true, codes.BadRequest, ""},
		{"unsupported format", "/3/0/14", 50, func(*testing.T) []byte { return []byte(`"x"`) }, true, codes.UnsupportedMediaType, ""},
		{"text for an instance", "/3/0", codec.FormatText, func(*testing.T) []byte { return []byte("x") }, true, codes.BadRequest, ""},
		{"garbage tlv", "/3/0", codec.FormatTLV, func(*testing.T) []byte { return []byte{0xff, 0xff} }, true, codes.BadRequest, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, err := td.srv.Write(ctxT(t), td.ep, tc.path, tc.format, tc.payload(t), tc.replace)
			if err != nil {
				t.Fatal(err)
			}
			if code != tc.want {
				t.Fatalf("code %v, want %v", code, tc.want)
			}
			if tc.param != "" && !td.host.wrote(tc.param) {
				t.Fatalf("host did not get %s (writes %v)", tc.param, td.host.Writes())
			}
		})
	}
	if td.host.Params().Value("Device.0.Manufacturer") != "Acme" {
		t.Error("read-only value changed")
	}
	// The server's lifetime write reaches the server with the next Update.
	testutil.Eventually(t, testutil.MinDeadline, "lifetime 600 at the server", func() bool {
		r, _ := td.srv.Registration(td.ep)
		return r.Lifetime == 600
	})
	noViolations(t, td.srv)
}

func TestExecute(t *testing.T) {
	td := registered(t, "1.1")
	ctx := ctxT(t)
	tests := []struct {
		path string
		want codes.Code
	}{
		{"/3/0/0", codes.MethodNotAllowed},    // not executable
		{"/3/0", codes.BadRequest},            // partial update without payload
		{"/3/0/99", codes.NotFound},           // unknown
		{"/5/0/2", codes.MethodNotAllowed},    // Update while Idle
		{"/3/0/11/0", codes.MethodNotAllowed}, // resource instance
		{"/0/0/0", codes.Unauthorized},        // Security
		{"/3303/0/5605", codes.Changed},       // reset min/max
		{"/1/0/8", codes.Changed},             // registration update trigger
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			code, err := td.srv.Execute(ctx, td.ep, tc.path, "")
			if err != nil {
				t.Fatal(err)
			}
			if code != tc.want {
				t.Fatalf("code %v, want %v", code, tc.want)
			}
		})
	}
	testutil.Eventually(t, testutil.MinDeadline, "update after /1/0/8", func() bool { return td.srv.UpdateCount(td.ep) >= 1 })

	// Firmware: URI, download, Downloaded, Update, Idle with result 1.
	if code, _ := td.srv.Write(ctx, td.ep, "/5/0/7", codec.FormatText, []byte("2.0"), true); code != codes.MethodNotAllowed {
		t.Fatalf("PkgVersion is read-only, got %v", code)
	}
	_, _, _ = td.host.Params().Put(namePkgVersion, "2.0.0")
	if code, _ := td.srv.Write(ctx, td.ep, "/5/0/1", codec.FormatText, []byte("coap://fw/2.bin"), true); code != codes.Changed {
		t.Fatalf("write URI: %v", code)
	}
	testutil.Eventually(t, testutil.MinDeadline, "state Downloaded", func() bool { return td.host.Params().Value(nameFwState) == "2" })
	if code, _ := td.srv.Execute(ctx, td.ep, "/5/0/2", ""); code != codes.Changed {
		t.Fatalf("execute Update: %v", code)
	}
	testutil.Eventually(t, testutil.MinDeadline, "state Idle, result 1", func() bool {
		return td.host.Params().Value(nameFwState) == "0" && td.host.Params().Value(nameFwResult) == "1"
	})
	if v := td.host.Params().Value(nameFwVersion); v != "2.0.0" {
		t.Errorf("firmware version %q", v)
	}
	// A pushed package is accepted and discarded.
	if code, _ := td.srv.Write(ctx, td.ep, "/5/0/0", codec.FormatOpaque, []byte{1, 2, 3}, true); code != codes.Changed {
		t.Fatalf("write package: %v", code)
	}
	if td.host.Params().Value(nameFwState) != "2" {
		t.Errorf("state after package %q", td.host.Params().Value(nameFwState))
	}

	// Reboot: 2.04, then De-register and Register.
	if code, _ := td.srv.Execute(ctx, td.ep, "/3/0/4", ""); code != codes.Changed {
		dumpLogs(t, td.host)
		t.Fatalf("reboot: %v", code)
	}
	testutil.Eventually(t, testutil.MinDeadline, "re-registration after reboot", func() bool {
		return td.srv.RegisterCount(td.ep) == 2 && td.srv.DeregisterCount(td.ep) == 1 && td.host.Connection() == proto.Connected
	})
	noViolations(t, td.srv)
}

func TestFactoryReset(t *testing.T) {
	td := registered(t, "1.1")
	if err := td.host.Set("Device.0.UTCOffset", "+03:00"); err != nil {
		t.Fatal(err)
	}
	if code, _ := td.srv.Execute(ctxT(t), td.ep, "/3/0/5", ""); code != codes.Changed {
		t.Fatalf("factory reset: %v", code)
	}
	testutil.Eventually(t, testutil.MinDeadline, "re-registration after factory reset", func() bool {
		return td.srv.RegisterCount(td.ep) == 2 && td.host.Connection() == proto.Connected
	})
	if v := td.host.Params().Value("Device.0.UTCOffset"); v != "+00:00" {
		t.Errorf("UTC offset %q after factory reset", v)
	}
}

func TestDiscover(t *testing.T) {
	td := registered(t, "1.1")
	ctx := ctxT(t)
	if code, err := td.srv.WriteAttributes(ctx, td.ep, "/3303/0/5700", "pmin=2", "gt=30"); err != nil || code != codes.Changed {
		t.Fatalf("write attributes: %v %v", code, err)
	}
	if code, _ := td.srv.WriteAttributes(ctx, td.ep, "/3303/0", "pmax=60"); code != codes.Changed {
		t.Fatalf("write attributes on the instance: %v", code)
	}
	tests := []struct {
		path     string
		want     []string
		notWant  []string
		wantCode codes.Code
	}{
		{"/3", []string{"</3>,</3/0>,</3/0/0>", "</3/0/4>", "</3/0/6>;dim=2", "</3/0/11>;dim=1"}, []string{"</3/0/6/0>"}, codes.Content},
		{"/3/0", []string{"</3/0>,</3/0/0>", "</3/0/6>;dim=2"}, []string{"</3>,"}, codes.Content},
		{"/3/0/6", []string{"</3/0/6>;dim=2"}, []string{"</3/0/0>"}, codes.Content},
		{"/3303/0", []string{"</3303/0>;pmax=60", "</3303/0/5700>;pmin=2;gt=30"}, nil, codes.Content},
		{"/3303/0/5700", []string{"</3303/0/5700>;pmin=2;pmax=60;gt=30"}, nil, codes.Content},
		{"/3/9", nil, nil, codes.NotFound},
		{"/0", nil, nil, codes.Unauthorized},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			code, links, err := td.srv.Discover(ctx, td.ep, tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if code != tc.wantCode {
				t.Fatalf("code %v, want %v", code, tc.wantCode)
			}
			if code != codes.Content {
				return
			}
			if _, err := codec.ParseLinks(links); err != nil {
				t.Fatalf("invalid link format %q: %v", links, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(links, w) {
					t.Errorf("%q lacks %q", links, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(links, w) {
					t.Errorf("%q has %q", links, w)
				}
			}
		})
	}
	for _, bad := range [][]string{{"pmin=x"}, {"pmin=5", "pmax=1"}, {"foo=1"}, {"pmin=1", "pmin=2"}} {
		if code, _ := td.srv.WriteAttributes(ctx, td.ep, "/3303/0/5700", bad...); code != codes.BadRequest {
			t.Errorf("write attributes %v: %v", bad, code)
		}
	}
	if code, _ := td.srv.WriteAttributes(ctx, td.ep, "/3/0", "gt=1"); code != codes.BadRequest {
		t.Errorf("gt on an instance: %v", code)
	}
	if code, _ := td.srv.WriteAttributes(ctx, td.ep, "/3303/0/5700", "pmin"); code != codes.Changed {
		t.Errorf("unset pmin: %v", code)
	}
	if _, links, _ := td.srv.Discover(ctx, td.ep, "/3303/0/5700"); strings.Contains(links, "pmin") {
		t.Errorf("pmin still set: %q", links)
	}
	noViolations(t, td.srv)
}

// textValue decodes a text notification.
func textValue(n lwm2mtest.Notification) string { return string(n.Payload) }

func receive(t *testing.T, ch <-chan lwm2mtest.Notification) lwm2mtest.Notification {
	t.Helper()
	select {
	case n, ok := <-ch:
		if !ok {
			t.Fatal("observation channel closed")
		}
		return n
	case <-time.After(testutil.MinDeadline):
		t.Fatalf("no notification within %s", testutil.MinDeadline)
	}
	return lwm2mtest.Notification{}
}

func TestObserve(t *testing.T) {
	td := registered(t, "1.1")
	ctx := ctxT(t)
	ch, cancel, err := td.srv.Observe(ctx, td.ep, "/3303/0/5700", codec.FormatText)
	if err != nil {
		t.Fatal(err)
	}
	first := receive(t, ch)
	if first.Code != codes.Content || textValue(first) != "21.5" || first.Format != codec.FormatText {
		t.Fatalf("first answer %+v", first)
	}
	if err := td.host.Set(nameTempValue, "23.25"); err != nil {
		t.Fatal(err)
	}
	n := receive(t, ch)
	if textValue(n) != "23.25" || n.Seq <= first.Seq {
		t.Fatalf("notification %+v after %+v", n, first)
	}
	notes := td.host.entries("OUT", "NOTIFY")
	if len(notes) != 1 || !strings.Contains(notes[0].MessageOptions, "NonConfirmable") || !strings.Contains(notes[0].Payload, "/3303/0/5700=23.25") {
		t.Errorf("notify log %+v", notes)
	}
	// A change elsewhere is not notified on this observation; the max
	// measured value follows the sensor.
	if v := td.host.Params().Value(nameTempMax); v != "23.25" {
		t.Errorf("max measured %q", v)
	}

	// Observe of the instance in SenML JSON sees changes of its resources.
	ich, icancel, err := td.srv.Observe(ctx, td.ep, "/3303/0", codec.FormatSenMLJSON)
	if err != nil {
		t.Fatal(err)
	}
	defer icancel()
	receive(t, ich)
	if err := td.host.Set(nameTempValue, "19"); err != nil {
		t.Fatal(err)
	}
	in := receive(t, ich)
	recs, err := codec.DecodeSenMLJSON(in.Payload, KindOf)
	if err != nil || in.Format != codec.FormatSenMLJSON {
		t.Fatalf("instance notification %+v: %v", in, err)
	}
	if v, _ := recordValue(recs, "/3303/0/5601"); v != "19" {
		t.Errorf("min measured in notification %q", v)
	}
	if textValue(receive(t, ch)) != "19" {
		t.Error("resource observation missed the change")
	}

	// Cancel Observation (GET with Observe=1) ends the resource one.
	cancel()
	testutil.Eventually(t, testutil.MinDeadline, "one observation left", func() bool { return len(td.observations()) == 1 })
	if len(td.host.entries("IN", "CANCEL_OBSERVE")) != 1 {
		t.Error("cancel not logged")
	}

	// A RST to a notification ends the instance one.
	td.srv.ForgetObservations()
	if err := td.host.Set(nameTempValue, "20"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, testutil.MinDeadline, "no observation left after RST", func() bool { return len(td.observations()) == 0 })
	noViolations(t, td.srv)
}

func TestObserveAttributes(t *testing.T) {
	// The server forgets idle peers quickly: the periodic notification
	// comes after the go-coap connection that sent Observe was released,
	// and must still reach its observer.
	td := registered(t, "1.1", lwm2mtest.WithIdleTimeout(100*time.Millisecond))
	ctx := ctxT(t)
	// pmax: a notification without change; gt: only crossings of 30.
	if code, _ := td.srv.WriteAttributes(ctx, td.ep, "/3303/0/5700", "pmax=3", "gt=30"); code != codes.Changed {
		t.Fatalf("write attributes: %v", code)
	}
	// Taken before the Observe goes out, so the pmax timer the device
	// starts with its answer cannot start earlier: a stalled test only
	// makes the notification look later, never early.
	start := time.Now()
	ch, cancel, err := td.srv.Observe(ctx, td.ep, "/3303/0/5700", codec.FormatText)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	receive(t, ch)
	if n := receive(t, ch); textValue(n) != "21.5" || time.Since(start) < 2*time.Second {
		t.Fatalf("periodic notification %+v after %s", n, time.Since(start))
	}
	// 25 does not cross 30: no notification; 31 does.
	if err := td.host.Set(nameTempValue, "25"); err != nil {
		t.Fatal(err)
	}
	if err := td.host.Set(nameTempValue, "31"); err != nil {
		t.Fatal(err)
	}
	for {
		n := receive(t, ch)
		if v := textValue(n); v == "31" {
			break
		} else if v == "25" {
			t.Fatal("notified 25 although it crosses no threshold")
		}
	}
}

func TestFailResponse(t *testing.T) {
	td := registered(t, "1.1")
	td.host.SetFail(true)
	ctx := ctxT(t)
	if _, _, err := td.srv.Read(ctx, td.ep, "/3/0/0", codec.FormatText); lwm2mtest.CodeOf(err) != codes.InternalServerError {
		t.Fatalf("read: %v", err)
	}
	if code, _ := td.srv.Write(ctx, td.ep, "/3/0/14", codec.FormatText, []byte("+01:00"), true); code != codes.InternalServerError {
		t.Fatalf("write: %v", code)
	}
	if code, _ := td.srv.Execute(ctx, td.ep, "/3/0/4", ""); code != codes.InternalServerError {
		t.Fatalf("execute: %v", code)
	}
	td.host.SetFail(false)
	if _, _, err := td.srv.Read(ctx, td.ep, "/3/0/0", codec.FormatText); err != nil {
		t.Fatalf("read after failResponse off: %v", err)
	}
	// Registration traffic is the client's own and unaffected.
	if ok, err := td.Update(ctx); !ok || err != nil {
		t.Fatalf("update: %t %v", ok, err)
	}
}

func TestDeleteAndCreateRefused(t *testing.T) {
	td := registered(t, "1.1")
	ctx := ctxT(t)
	if code, _ := td.srv.Delete(ctx, td.ep, "/3/0"); code != codes.MethodNotAllowed {
		t.Errorf("delete /3/0: %v", code)
	}
	if code, _ := td.srv.Delete(ctx, td.ep, "/3/4"); code != codes.NotFound {
		t.Errorf("delete /3/4: %v", code)
	}
	if code, _ := td.srv.Write(ctx, td.ep, "/3303", codec.FormatTLV, tlv(t, "/3303/1", rec("/3303/1/5700", codec.Value{Kind: codec.KindFloat, Float: 1})), false); code != codes.MethodNotAllowed {
		t.Errorf("create: %v", code)
	}
}
