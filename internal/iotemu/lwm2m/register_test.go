package lwm2m

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/plgd-dev/go-coap/v3/message"
	"github.com/plgd-dev/go-coap/v3/message/codes"
	"github.com/plgd-dev/go-coap/v3/options"
	"github.com/plgd-dev/go-coap/v3/udp"

	"cpesuite/internal/iotemu/lwm2m/codec"
	"cpesuite/internal/iotemu/lwm2m/lwm2mtest"
	"cpesuite/internal/iotemu/proto"
	"cpesuite/internal/testutil"
)

func TestProtocolDescription(t *testing.T) {
	var p Protocol
	if p.Name() != "LWM2M" {
		t.Fatalf("Name = %q", p.Name())
	}
	var keys []string
	for _, o := range p.Options() {
		keys = append(keys, o.Key)
		if o.Secret {
			t.Errorf("option %s is secret", o.Key)
		}
	}
	want := "lwm2mVersion,lifetime,binding,contentFormat,updatePeriod,lateRegistration,lateRegistrationDelay,requestTimeout,endpointPrefix"
	if got := strings.Join(keys, ","); got != want {
		t.Fatalf("options %s, want %s", got, want)
	}
	tests := []struct {
		mode, sel string
	}{{proto.SecurityNone, "UDP"}, {proto.SecurityPSK, "DTLS"}, {proto.SecurityX509, "DTLS"}}
	for _, tc := range tests {
		tr := p.Transport(proto.Config{SecurityMode: tc.mode, ServerPort: 5999})
		if tr.Key != "transport" || tr.Selected != tc.sel || tr.SelectedPort != 5999 ||
			tr.Ports["UDP"][0] != 5683 || tr.Ports["DTLS"][0] != 5684 || len(tr.Options) != 2 {
			t.Errorf("%s: transport %+v", tc.mode, tr)
		}
	}
}

func TestParams(t *testing.T) {
	cfg := proto.Config{ClientID: "c1", SerialNumber: "SN1", Manufacturer: "Acme", ModelName: "M1",
		ServerIP: "10.0.0.1", ServerPort: 5684, SecurityMode: proto.SecurityPSK, PSKID: "id1", PSKKey: "0011"}
	ps := Protocol{}.Params(cfg)
	byName := map[string]string{}
	for _, p := range ps {
		if strings.Contains(p.Name, "/") {
			t.Errorf("param name %q has a '/'", p.Name)
		}
		if _, dup := byName[p.Name]; dup {
			t.Errorf("duplicate param %q", p.Name)
		}
		byName[p.Name] = p.Value
		path, ok := PathOf(p.Name)
		if !ok {
			t.Errorf("PathOf(%q) unknown", p.Name)
			continue
		}
		if n, ok := NameOf(path); !ok || n != p.Name {
			t.Errorf("NameOf(%s) = %q, want %q", path, n, p.Name)
		}
	}
	tests := []struct{ name, value string }{
		{"Device.0.Manufacturer", "Acme"},
		{"Device.0.ModelNumber", "M1"},
		{"Device.0.SerialNumber", "SN1"},
		{"Device.0.ErrorCode.0", "0"},
		{"Device.0.AvailablePowerSources.1", "5"},
		{"Security.0.ServerURI", "coaps://10.0.0.1:5684"},
		{"Security.0.SecurityMode", "0"},
		{"Server.0.ShortServerID", "123"},
		{"Server.0.Lifetime", "300"},
		{"Server.0.Binding", "U"},
		{"Temperature.0.SensorUnits", "Cel"},
	}
	for _, tc := range tests {
		if got, ok := byName[tc.name]; !ok || got != tc.value {
			t.Errorf("%s = %q (present %t), want %q", tc.name, got, ok, tc.value)
		}
	}
	for _, absent := range []string{"Device.0.Reboot", "Security.0.SecretKey", "FirmwareUpdate.0.Package", "Server.0.RegistrationUpdateTrigger"} {
		if _, ok := byName[absent]; ok {
			t.Errorf("%s must not be a param", absent)
		}
	}
	if p, _ := PathOf("Device.0.ErrorCode.0"); p != (codec.Path{Object: 3, Instance: 0, Resource: 11, ResourceInstance: 0}) {
		t.Errorf("PathOf(Device.0.ErrorCode.0) = %v", p)
	}
	if p, _ := PathOf("Temperature.0.SensorValue"); p.String() != "/3303/0/5700" {
		t.Errorf("PathOf(Temperature.0.SensorValue) = %v", p)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts map[string]string
		mode string
	}{
		{"version", map[string]string{OptVersion: "2.0"}, proto.SecurityNone},
		{"lifetime", map[string]string{OptLifetime: "x"}, proto.SecurityNone},
		{"binding", map[string]string{OptBinding: "UU"}, proto.SecurityNone},
		{"format", map[string]string{OptContentFormat: "JSON"}, proto.SecurityNone},
		{"late", map[string]string{OptLateRegistration: "maybe"}, proto.SecurityNone},
		{"timeout", map[string]string{OptRequestTimeout: "0"}, proto.SecurityNone},
		{"psk without key", nil, proto.SecurityPSK},
		{"unknown mode", nil, "RPK"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Protocol{}.New(proto.Config{ClientID: "c", Options: tc.opts, SecurityMode: tc.mode}, newFakeHost(nil))
			if err == nil {
				t.Fatal("New accepted bad configuration")
			}
		})
	}
}

// TestRegisterPayloadStrict holds every Register payload the stack can
// send against an RFC 6690 parser to the letter and wakaama's root link
// rules; the defaults (1.1, TLV) once sent ct=11542, which wakaama
// refused with 4.00.
func TestRegisterPayloadStrict(t *testing.T) {
	for _, version := range []string{"1.0", "1.1", "1.2"} {
		for _, f := range []uint16{codec.FormatTLV, codec.FormatSenMLJSON, codec.FormatSenMLCBOR} {
			body := registrationLinks(version, f)
			if err := lwm2mtest.CheckLinkFormat(body); err != nil {
				t.Errorf("%s format %d: %s: %v", version, f, body, err)
			}
			if found := lwm2mtest.RegisterLinkRules(body); len(found) > 0 {
				t.Errorf("%s format %d: %s: %v", version, f, body, found)
			}
		}
	}
	o, err := checkOptions(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := registrationLinks(o.version, o.format); !strings.HasPrefix(got, `</>;rt="oma.lwm2m",</1/0>`) {
		t.Errorf("defaults register %s, want the root link without ct", got)
	}
}

func TestRegisterUpdateDeregister(t *testing.T) {
	tests := []struct {
		version, binding, format string
		wantB                    string
		wantQueue                bool
		wantBody                 string
	}{
		{"1.0", "U", "TLV", "U", false, "</1/0>,</3/0>,</4/0>,</5/0>,</6/0>,</3303/0>"},
		{"1.0", "UQ", "TLV", "UQ", true, "</1/0>,</3/0>,</4/0>,</5/0>,</6/0>,</3303/0>"},
		{"1.1", "U", "SENML_CBOR", "U", false, `</>;rt="oma.lwm2m";ct=112,</1/0>,</3/0>,</4/0>,</5/0>,</6/0>,</3303/0>`},
		{"1.1", "UQ", "TLV", "U", true, `</>;rt="oma.lwm2m",</1/0>,</3/0>,</4/0>,</5/0>,</6/0>,</3303/0>`},
		{"1.2", "U", "SENML_JSON", "U", false, `</>;rt="oma.lwm2m";ct=110,</1/0>,</3/0>,</4/0>,</5/0>,</6/0>,</3303/0>`},
	}
	for _, tc := range tests {
		t.Run(tc.version+"_"+tc.binding, func(t *testing.T) {
			srv := lwm2mtest.New(t)
			td := newTestDevice(t, srv, func(c *proto.Config) {
				c.Options[OptVersion] = tc.version
				c.Options[OptBinding] = tc.binding
				c.Options[OptContentFormat] = tc.format
				c.Options[OptLifetime] = "120"
				c.Options[OptEndpointPrefix] = "urn:dev:"
			})
			if !strings.HasPrefix(td.ep, "urn:dev:client-") {
				t.Fatalf("endpoint %q lacks the prefix", td.ep)
			}
			reg := td.startRegistered(t)
			if reg.Version != tc.version || reg.Lifetime != 120 || reg.Binding != tc.wantB || reg.Queue != tc.wantQueue {
				t.Errorf("registration %+v", reg)
			}
			if reg.Body != tc.wantBody {
				t.Errorf("body %s\nwant %s", reg.Body, tc.wantBody)
			}
			if got := td.host.Status(); got != "registered as "+reg.Location {
				t.Errorf("status %q", got)
			}
			out := td.host.entries("OUT", "REGISTER")
			if len(out) != 1 || !strings.Contains(out[0].MessageOptions, "POST /rd?ep="+td.ep+"&lt=120&lwm2m="+tc.version) ||
				!strings.Contains(out[0].MessageOptions, "Content-Format=40") || out[0].Payload != tc.wantBody || out[0].RawMessage == "" {
				t.Errorf("register log %+v", out)
			}
			if in := td.host.entries("IN", "REGISTER"); len(in) != 1 || !strings.Contains(in[0].MessageOptions, "2.01") ||
				!strings.Contains(in[0].MessageOptions, "Location-Path="+reg.Location) {
				t.Errorf("register answer log %+v", in)
			}

			ok, err := td.Update(ctxT(t))
			if !ok || err != nil {
				t.Fatalf("Update = %t, %v", ok, err)
			}
			if n := srv.UpdateCount(td.ep); n != 1 {
				t.Errorf("updates %d", n)
			}
			if err := td.Heartbeat(ctxT(t)); err != nil {
				t.Fatalf("Heartbeat: %v", err)
			}
			if n := srv.UpdateCount(td.ep); n != 2 {
				t.Errorf("updates after heartbeat %d", n)
			}
			upd := td.host.entries("OUT", "UPDATE")
			if len(upd) != 2 || !strings.Contains(upd[0].MessageOptions, "POST "+reg.Location) || strings.Contains(upd[0].MessageOptions, "?") {
				t.Errorf("update log %+v", upd)
			}

			if err := td.Stop(ctxT(t)); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			if _, ok := srv.Registration(td.ep); ok || srv.DeregisterCount(td.ep) != 1 {
				t.Errorf("still registered after Stop (deregisters %d)", srv.DeregisterCount(td.ep))
			}
			if td.host.Connection() != proto.Disconnected || td.host.Status() != "stopped" {
				t.Errorf("after Stop: %s %q", td.host.Connection(), td.host.Status())
			}
			if len(td.host.entries("OUT", "DEREGISTER")) != 1 {
				t.Error("no DEREGISTER logged")
			}
			if err := td.Stop(ctxT(t)); err != nil {
				t.Errorf("second Stop: %v", err)
			}
			if ok, _ := td.Update(ctxT(t)); ok {
				t.Error("Update of a stopped device reported registered")
			}
			noViolations(t, srv)
		})
	}
}

func TestAutomaticUpdate(t *testing.T) {
	srv := lwm2mtest.New(t)
	td := newTestDevice(t, srv, func(c *proto.Config) { c.Options[OptUpdatePeriod] = "0.1" })
	td.startRegistered(t)
	testutil.Eventually(t, testutil.MinDeadline, "three automatic updates", func() bool { return srv.UpdateCount(td.ep) >= 3 })
	noViolations(t, srv)
}

func TestUpdateSendsChangedLifetime(t *testing.T) {
	srv := lwm2mtest.New(t)
	td := newTestDevice(t, srv, nil)
	td.startRegistered(t)
	if err := td.host.Set(nameLifetime, "600"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, testutil.MinDeadline, "lifetime update", func() bool {
		r, _ := srv.Registration(td.ep)
		return r.Lifetime == 600
	})
	upd := td.host.entries("OUT", "UPDATE")
	if len(upd) == 0 || !strings.Contains(upd[0].MessageOptions, "?lt=600") {
		t.Fatalf("update log %+v", upd)
	}
	// An unchanged lifetime is not sent again.
	if _, err := td.Update(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	upd = td.host.entries("OUT", "UPDATE")
	if strings.Contains(upd[len(upd)-1].MessageOptions, "lt=") {
		t.Errorf("unchanged lifetime sent: %s", upd[len(upd)-1].MessageOptions)
	}
	noViolations(t, srv)
}

func TestUpdateRetry(t *testing.T) {
	tests := []struct {
		name      string
		drops     int
		wantErr   bool
		wantConn  proto.Connection
		wantRetry int
	}{
		{"one drop is retried", 1, false, proto.Connected, 1},
		{"two drops disconnect", 2, true, proto.Disconnected, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := lwm2mtest.New(t)
			td := newTestDevice(t, srv, func(c *proto.Config) {
				c.Options[OptRequestTimeout] = "0.3"
				c.Options[OptUpdatePeriod] = "60"
			})
			td.startRegistered(t)
			srv.DropUpdates(tc.drops)
			ok, err := td.Update(ctxT(t))
			if !ok || (err != nil) != tc.wantErr {
				t.Fatalf("Update = %t, %v", ok, err)
			}
			if got := td.host.Connection(); got != tc.wantConn {
				t.Errorf("connection %s, want %s", got, tc.wantConn)
			}
			if n := len(td.host.entries("OUT", "UPDATE_RETRY")); n != tc.wantRetry {
				t.Errorf("%d retries", n)
			}
			if tc.wantErr {
				if st := td.host.Status(); !strings.Contains(st, "update failed") || !strings.Contains(st, "no answer") {
					t.Errorf("status %q", st)
				}
			} else if srv.UpdateCount(td.ep) != 1 {
				t.Errorf("updates %d", srv.UpdateCount(td.ep))
			}
			noViolations(t, srv)
		})
	}
}

func TestFailedUpdateRegistersAgain(t *testing.T) {
	srv := lwm2mtest.New(t)
	td := newTestDevice(t, srv, func(c *proto.Config) {
		c.Options[OptRequestTimeout] = "0.2"
		c.Options[OptUpdatePeriod] = "0.3"
	})
	td.startRegistered(t)
	srv.DropUpdates(2)
	testutil.Eventually(t, testutil.MinDeadline, "DISCONNECTED after two lost updates", func() bool { return td.host.saw(proto.Disconnected) })
	// At least two: on a loaded machine an answer to a registration may
	// miss the short time-out this test needs and be registered again.
	testutil.Eventually(t, testutil.MinDeadline, "second registration", func() bool {
		return srv.RegisterCount(td.ep) >= 2 && td.host.Connection() == proto.Connected
	})
	noViolations(t, srv)
}

func TestReRegisterAfterNotFound(t *testing.T) {
	srv := lwm2mtest.New(t)
	td := newTestDevice(t, srv, nil)
	first := td.startRegistered(t)
	srv.Forget(td.ep)
	if ok, err := td.Update(ctxT(t)); !ok || err != nil {
		t.Fatalf("Update = %t, %v", ok, err)
	}
	reg, ok := srv.Registration(td.ep)
	if !ok || reg.ID == first.ID || srv.RegisterCount(td.ep) != 2 {
		t.Fatalf("not registered again: %+v (registers %d)", reg, srv.RegisterCount(td.ep))
	}
	if td.host.Connection() != proto.Connected || td.host.Status() != "registered as "+reg.Location {
		t.Errorf("%s %q", td.host.Connection(), td.host.Status())
	}
	noViolations(t, srv)
}

func TestLateRegistration(t *testing.T) {
	srv := lwm2mtest.New(t)
	td := newTestDevice(t, srv, func(c *proto.Config) {
		c.Options[OptLateRegistration] = "true"
		c.Options[OptLateDelay] = "0.3"
	})
	start := time.Now()
	if err := td.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if td.host.Connection() != proto.Disconnected || !strings.HasPrefix(td.host.Status(), "late registration") {
		t.Fatalf("after Start: %s %q", td.host.Connection(), td.host.Status())
	}
	reg := srv.WaitRegistered(t, td.ep)
	if waited := reg.RegisteredAt.Sub(start); waited < 300*time.Millisecond {
		t.Fatalf("registered after %s, before the delay", waited)
	}
	testutil.Eventually(t, testutil.MinDeadline, "CONNECTED", func() bool { return td.host.Connection() == proto.Connected })
	noViolations(t, srv)
}

func TestRegisterFailure(t *testing.T) {
	deadPort := freeUDPPort(t)
	tests := []struct {
		name    string
		setup   func(*lwm2mtest.Server)
		port    int
		wantSub string
	}{
		{"error code", func(s *lwm2mtest.Server) { s.FailRegister(codes.Forbidden) }, 0, "4.03"},
		{"no location", func(s *lwm2mtest.Server) { s.OmitLocation(true) }, 0, "Location-Path"},
		{"no server", nil, deadPort, "register failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := lwm2mtest.New(t)
			if tc.setup != nil {
				tc.setup(srv)
			}
			td := newTestDevice(t, srv, func(c *proto.Config) {
				c.Options[OptRequestTimeout] = "0.3"
				if tc.port != 0 {
					c.ServerPort = tc.port
				}
			})
			if err := td.Start(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			if td.host.Connection() != proto.Disconnected || !strings.Contains(td.host.Status(), tc.wantSub) {
				t.Fatalf("%s %q", td.host.Connection(), td.host.Status())
			}
			if _, ok := srv.Registration(td.ep); ok && tc.name != "no location" {
				t.Fatal("registered")
			}
			if ok, _ := td.Update(ctxT(t)); ok {
				t.Error("Update reported registered")
			}
		})
	}
}

func TestRegisterRecoversWhenServerAccepts(t *testing.T) {
	srv := lwm2mtest.New(t)
	srv.FailRegister(codes.ServiceUnavailable)
	td := newTestDevice(t, srv, func(c *proto.Config) { c.Options[OptUpdatePeriod] = "0.2" })
	if err := td.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if td.host.Connection() != proto.Disconnected {
		t.Fatalf("connection %s", td.host.Connection())
	}
	srv.FailRegister(0)
	td.srv.WaitRegistered(t, td.ep)
	testutil.Eventually(t, testutil.MinDeadline, "CONNECTED", func() bool { return td.host.Connection() == proto.Connected })
}

func TestServerRestart(t *testing.T) {
	srv := lwm2mtest.New(t)
	td := newTestDevice(t, srv, func(c *proto.Config) { c.Options[OptUpdatePeriod] = "0.3" })
	td.startRegistered(t)
	srv.Close()
	// The Update meets a closed port: the ICMP error ends the connection.
	if ok, err := td.Update(ctxT(t)); !ok || err == nil {
		t.Fatalf("Update to a closed server = %t, %v", ok, err)
	}
	if td.host.Connection() != proto.Disconnected {
		t.Fatalf("connection %s", td.host.Connection())
	}
	srv2 := lwm2mtest.New(t, lwm2mtest.WithListenAddr(srv.Addr().String()))
	srv2.WaitRegistered(t, td.ep)
	testutil.Eventually(t, testutil.MinDeadline, "CONNECTED again", func() bool { return td.host.Connection() == proto.Connected })
	noViolations(t, srv2)
}

func TestStopFreesPortAndRestarts(t *testing.T) {
	srv := lwm2mtest.New(t)
	port := freeUDPPort(t)
	td := newTestDevice(t, srv, func(c *proto.Config) { c.ClientPort = port })
	reg := td.startRegistered(t)
	if reg.Addr.Port != port {
		t.Fatalf("registered from port %d, want %d", reg.Addr.Port, port)
	}
	// A second device on the same port cannot start.
	other := newTestDevice(t, srv, func(c *proto.Config) { c.ClientPort = port })
	if err := other.Start(ctxT(t)); err == nil {
		t.Fatal("second device bound a port in use")
	}
	if err := td.Stop(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if srv.DeregisterCount(td.ep) != 1 {
		t.Fatal("no De-register")
	}
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
	if err != nil {
		t.Fatalf("port %d still in use after Stop: %v", port, err)
	}
	_ = c.Close()

	// Restart on the same port.
	reg2 := td.startRegistered(t)
	if reg2.ID == reg.ID || reg2.Addr.Port != port || srv.RegisterCount(td.ep) != 2 {
		t.Fatalf("restart: %+v", reg2)
	}
	if err := td.Stop(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	noViolations(t, srv)
}

func TestDeregisterer(t *testing.T) {
	srv := lwm2mtest.New(t)
	td := newTestDevice(t, srv, nil)
	td.startRegistered(t)
	was, err := td.Deregister(ctxT(t))
	if !was || err != nil {
		t.Fatalf("Deregister = %t, %v", was, err)
	}
	srv.WaitDeregistered(t, td.ep)
	if td.host.Connection() != proto.Disconnected || td.host.Status() != "deregistered" {
		t.Errorf("%s %q", td.host.Connection(), td.host.Status())
	}
	if was, _ := td.Deregister(ctxT(t)); was {
		t.Error("second Deregister reported a registration")
	}
	if err := td.Heartbeat(ctxT(t)); !errors.Is(err, errNotStarted) {
		t.Errorf("Heartbeat of a deregistered device: %v", err)
	}
	td.startRegistered(t)
	noViolations(t, srv)
}

func TestRebootReRegisters(t *testing.T) {
	srv := lwm2mtest.New(t)
	td := newTestDevice(t, srv, nil)
	td.startRegistered(t)
	if err := td.Reboot(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if srv.DeregisterCount(td.ep) != 1 || srv.RegisterCount(td.ep) != 2 || td.host.Connection() != proto.Connected {
		t.Fatalf("deregisters %d registers %d %s", srv.DeregisterCount(td.ep), srv.RegisterCount(td.ep), td.host.Connection())
	}
	noViolations(t, srv)
}

func TestBootstrap(t *testing.T) {
	srv := lwm2mtest.New(t)
	tests := []struct {
		name    string
		code    codes.Code
		started bool
		wantErr bool
	}{
		{"running, 2.04", codes.Changed, true, false},
		{"stopped, 2.04", codes.Changed, false, false},
		{"running, 4.00", codes.BadRequest, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv.AnswerBootstrap(tc.code)
			td := newTestDevice(t, srv, nil)
			if tc.started {
				td.startRegistered(t)
			}
			err := td.Bootstrap(ctxT(t))
			if (err != nil) != tc.wantErr {
				t.Fatalf("Bootstrap: %v", err)
			}
			if srv.BootstrapCount(td.ep) != 1 {
				t.Fatalf("bootstraps %d", srv.BootstrapCount(td.ep))
			}
		})
	}
	noViolations(t, srv)
}

func TestStrictServerRecordsViolations(t *testing.T) {
	// The strict server must catch what a wrong client sends; the stack
	// never sends these, so a raw go-coap client plays the wrong client.
	srv := lwm2mtest.New(t)
	tests := []struct {
		name  string
		query []string
		cf    int // -1: none
		body  string
		want  string
	}{
		{"missing ep", []string{"lt=60", "lwm2m=1.1"}, 40, "</1/0>,</3/0>", "missing ep"},
		{"lt not integer", []string{"ep=a", "lt=x", "lwm2m=1.1"}, 40, "</1/0>,</3/0>", "lt="},
		{"bad version", []string{"ep=a", "lwm2m=1.3"}, 40, "</1/0>,</3/0>", "lwm2m="},
		{"bad binding", []string{"ep=a", "lwm2m=1.1", "b=UQ"}, 40, "</1/0>,</3/0>", "b="},
		{"duplicate", []string{"ep=a", "ep=b"}, 40, "</1/0>,</3/0>", "duplicated"},
		{"no content format", []string{"ep=a"}, -1, "</1/0>,</3/0>", "Content-Format missing"},
		{"wrong content format", []string{"ep=a"}, 0, "</1/0>,</3/0>", "not 40"},
		{"bad link format", []string{"ep=a"}, 40, "</1/0", "invalid link format"},
		{"security object", []string{"ep=a"}, 40, "</0/0>,</1/0>,</3/0>", "Security"},
		{"resource link", []string{"ep=a"}, 40, "</1/0>,</3/0/1>", "not an object"},
		{"device missing", []string{"ep=a"}, 40, "</1/0>", "/3 missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(srv.Violations())
			code := rawRegister(t, srv, "/rd", tc.query, tc.cf, tc.body)
			if code != codes.BadRequest {
				t.Errorf("answer %v, want 4.00", code)
			}
			v := srv.Violations()[before:]
			if len(v) == 0 || !strings.Contains(strings.Join(v, "\n"), tc.want) {
				t.Errorf("violations %q, want one with %q", v, tc.want)
			}
		})
	}
	before := len(srv.Violations())
	rawRegister(t, srv, "/register", []string{"ep=a"}, 40, "</1/0>,</3/0>")
	if v := srv.Violations()[before:]; len(v) != 1 || !strings.Contains(v[0], "instead of /rd") {
		t.Errorf("wrong uri: %q", v)
	}
	if code := rawRegister(t, srv, "/rd", []string{"ep=good", "lt=60", "lwm2m=1.1", "b=U"}, 40, `</>;rt="oma.lwm2m";ct=110,</1/0>,</3/0>`); code != codes.Created {
		t.Errorf("valid register answered %v", code)
	}
	if _, ok := srv.Registration("good"); !ok {
		t.Error("valid register not recorded")
	}
}

// rawRegister sends one POST to srv from a plain go-coap client and
// returns the answer's code.
func rawRegister(t *testing.T, srv *lwm2mtest.Server, path string, query []string, cf int, body string) codes.Code {
	t.Helper()
	cc, err := udp.Dial(srv.Addr().String(), options.WithErrors(func(error) {}))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx := ctxT(t)
	req, err := cc.NewPostRequest(ctx, path, message.MediaType(max(cf, 0)), bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.ReleaseMessage(req)
	if cf < 0 {
		req.Remove(message.ContentFormat)
	}
	for _, q := range query {
		req.AddQuery(q)
	}
	resp, err := cc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.ReleaseMessage(resp)
	return resp.Code()
}
