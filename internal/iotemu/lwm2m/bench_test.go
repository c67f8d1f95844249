package lwm2m

import (
	"context"
	"strconv"
	"testing"

	"cpesuite/internal/iotemu/lwm2m/lwm2mtest"
	"cpesuite/internal/iotemu/proto"
)

// BenchmarkRegisterUpdate measures one device's Start (socket and
// Register), one Update and Stop (De-register) against the test server.
func BenchmarkRegisterUpdate(b *testing.B) {
	srv := lwm2mtest.New(b)
	var p Protocol
	opts := map[string]string{OptRequestTimeout: "5"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		cfg := proto.Config{
			ClientID: "bench-" + strconv.Itoa(i), Manufacturer: "Acme", ModelName: "M1", SerialNumber: strconv.Itoa(i),
			ServerIP: srv.Host(), ServerPort: srv.Port(), ClientIP: "127.0.0.1", SecurityMode: proto.SecurityNone, Options: opts,
		}
		h := newFakeHost(p.Params(cfg))
		d, err := p.New(cfg, h)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		if ok, err := d.(proto.Updater).Update(context.Background()); !ok || err != nil {
			b.Fatalf("update %t %v (%s)", ok, err, h.Status())
		}
		if err := d.Stop(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
