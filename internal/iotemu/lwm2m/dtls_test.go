package lwm2m

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/plgd-dev/go-coap/v3/message/codes"

	"cpesuite/internal/iotemu/lwm2m/codec"
	"cpesuite/internal/iotemu/lwm2m/lwm2mtest"
	"cpesuite/internal/iotemu/proto"
)

var pskKey = []byte{0x10, 0x21, 0x32, 0x43, 0x54, 0x65, 0x76, 0x87, 0x98, 0xa9, 0xba, 0xcb, 0xdc, 0xed, 0xfe, 0x0f}

func pskDevice(t *testing.T, srv *lwm2mtest.Server, id string, key []byte) *testDevice {
	t.Helper()
	return newTestDevice(t, srv, func(c *proto.Config) {
		c.SecurityMode = proto.SecurityPSK
		c.PSKID = id
		c.PSKKey = hex.EncodeToString(key)
	})
}

// noSecretLogged fails if the key shows up in the device's log or status.
func noSecretLogged(t *testing.T, h *fakeHost, key []byte) {
	t.Helper()
	secret := hex.EncodeToString(key)
	if status := h.Status(); strings.Contains(strings.ToLower(status), secret) {
		t.Errorf("status %q holds the key", status)
	}
	for _, e := range h.Entries() {
		if strings.Contains(strings.ToLower(e.MessageOptions+e.Payload+e.RawMessage), secret) {
			t.Errorf("log entry %+v holds the key", e)
		}
	}
}

func TestDTLSPSK(t *testing.T) {
	srv := lwm2mtest.New(t, lwm2mtest.WithPSK(map[string][]byte{"psk-id": pskKey}), lwm2mtest.WithKindOf(KindOf))
	td := pskDevice(t, srv, "psk-id", pskKey)
	reg := td.startRegistered(t)
	if reg.Version != "1.1" || !strings.HasPrefix(td.host.Params().Value("Security.0.ServerURI"), "coaps://") {
		t.Fatalf("registration %+v, uri %s", reg, td.host.Params().Value("Security.0.ServerURI"))
	}
	ctx := ctxT(t)

	if ok, err := td.Update(ctx); !ok || err != nil {
		t.Fatalf("Update = %t, %v", ok, err)
	}
	recs, err := srv.ReadRecords(ctx, td.ep, "/3/0", codec.FormatSenMLCBOR)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := recordValue(recs, "/3/0/0"); v != "Acme" {
		t.Fatalf("read %v", recs)
	}
	if code, err := srv.Write(ctx, td.ep, "/3/0/14", codec.FormatTLV, tlv(t, "/3/0/14", rec("/3/0/14", str("+04:00"))), true); err != nil || code != codes.Changed {
		t.Fatalf("write: %v %v", code, err)
	}
	if !td.host.wrote("Device.0.UTCOffset=+04:00") {
		t.Fatal("write did not reach the host")
	}
	ch, cancel, err := srv.Observe(ctx, td.ep, "/3303/0/5700", codec.FormatText)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	receive(t, ch)
	if err := td.host.Set(nameTempValue, "22.75"); err != nil {
		t.Fatal(err)
	}
	if n := receive(t, ch); textValue(n) != "22.75" {
		t.Fatalf("notification %q", n.Payload)
	}

	if err := td.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if srv.DeregisterCount(td.ep) != 1 {
		t.Fatal("no De-register over DTLS")
	}
	// Restart: a new socket and a new handshake.
	td.startRegistered(t)
	if srv.RegisterCount(td.ep) != 2 {
		t.Fatalf("registers %d", srv.RegisterCount(td.ep))
	}
	noViolations(t, srv)
	noSecretLogged(t, td.host, pskKey)
}

func TestDTLSWrongPSK(t *testing.T) {
	srv := lwm2mtest.New(t, lwm2mtest.WithPSK(map[string][]byte{"psk-id": pskKey}))
	tests := []struct {
		name string
		id   string
		key  []byte
	}{
		{"wrong key", "psk-id", []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}},
		{"unknown identity", "nobody", pskKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A record under a wrong key is dropped, not answered, so the
			// handshake ends by timing out: the short time-out is the case,
			// and passing does not depend on speed.
			td := newTestDevice(t, srv, func(c *proto.Config) {
				c.SecurityMode = proto.SecurityPSK
				c.PSKID = tc.id
				c.PSKKey = hex.EncodeToString(tc.key)
				c.Options[OptRequestTimeout] = "1"
			})
			if err := td.Start(ctxT(t)); err != nil {
				t.Fatalf("Start: %v", err)
			}
			if td.host.Connection() != proto.Disconnected || !strings.Contains(td.host.Status(), "dtls handshake") {
				t.Fatalf("%s %q", td.host.Connection(), td.host.Status())
			}
			if _, ok := srv.Registration(td.ep); ok {
				t.Fatal("registered with a wrong key")
			}
			noSecretLogged(t, td.host, tc.key)
		})
	}
}

func TestPSKKeyMustBeHex(t *testing.T) {
	srv := lwm2mtest.New(t, lwm2mtest.WithPSK(map[string][]byte{"psk-id": pskKey}))
	td := newTestDevice(t, srv, func(c *proto.Config) {
		c.SecurityMode = proto.SecurityPSK
		c.PSKID = "psk-id"
		c.PSKKey = "not hex at all"
	})
	err := td.Start(ctxT(t))
	if err == nil {
		t.Fatal("Start accepted a key that is not hex")
	}
	if strings.Contains(err.Error(), "not hex at all") {
		t.Errorf("error %q shows the key", err)
	}
}
