package coapdev

import (
	"context"
	"net"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/plgd-dev/go-coap/v3/message"
	"github.com/plgd-dev/go-coap/v3/message/codes"
	"github.com/plgd-dev/go-coap/v3/udp/coder"

	"cpesuite/internal/iotemu/proto"
	"cpesuite/internal/testutil"
)

// TestHeapPerDevice measures what a running device costs: 1,000 devices
// are started on ephemeral ports, and the heap, stacks and goroutines are
// compared before and after, idle and once every device has answered one
// request (which adds go-coap's per-peer state). The numbers are logged;
// the bound only catches gross regressions such as a 64 KiB buffer per
// device. Run without -race for meaningful numbers.
func TestHeapPerDevice(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 1,000 devices")
	}
	const n = 1000
	p := &Protocol{}
	devs := make([]*Device, n)
	for i := range devs {
		d, err := p.newDevice(proto.Config{ClientIP: "127.0.0.1", ClientID: "mem-" + strconv.Itoa(i), Options: defaults(p)}, newFakeHost())
		if err != nil {
			t.Fatal(err)
		}
		devs[i] = d
	}
	t.Cleanup(func() {
		for _, d := range devs {
			_ = d.Stop(context.Background())
		}
	})

	before := measure()
	for _, d := range devs {
		if err := d.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	idle := measure()

	// One GET per device, all from one client socket.
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	opts, _, err := message.Options{}.SetPath(make([]byte, 64), "/params/Temperature")
	if err != nil {
		t.Fatal(err)
	}
	req := make([]byte, 128)
	resp := make([]byte, 1500)
	for i, d := range devs {
		k, err := coder.DefaultCoder.Encode(message.Message{Token: []byte{1}, Code: codes.GET, Type: message.Confirmable,
			MessageID: int32(i), Options: opts}, req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.WriteTo(req[:k], d.Addr()); err != nil {
			t.Fatal(err)
		}
		if err := conn.SetReadDeadline(time.Now().Add(testutil.MinDeadline)); err != nil {
			t.Fatal(err)
		}
		k, err = conn.Read(resp)
		if err != nil {
			t.Fatalf("device %d: %v", i, err)
		}
		m := message.Message{Options: make(message.Options, 0, 8)}
		if _, err := coder.DefaultCoder.Decode(slices.Clone(resp[:k]), &m); err != nil || string(m.Payload) != "21.5" {
			t.Fatalf("device %d answered %v (%v)", i, m, err)
		}
	}
	used := measure()

	perDev := func(a, b stats) (heap, stack, gor float64) {
		return float64(int64(b.heap)-int64(a.heap)) / n / 1024, float64(int64(b.stack)-int64(a.stack)) / n / 1024,
			float64(b.goroutines-a.goroutines) / n
	}
	h1, s1, g1 := perDev(before, idle)
	h2, s2, g2 := perDev(before, used)
	t.Logf("per running device, idle:            heap %.1f KiB, stacks %.1f KiB, %.2f goroutines", h1, s1, g1)
	t.Logf("per running device, after a request: heap %.1f KiB, stacks %.1f KiB, %.2f goroutines", h2, s2, g2)
	if h1 > 32 {
		t.Errorf("an idle device costs %.1f KiB of heap", h1)
	}
}

type stats struct {
	heap, stack uint64
	goroutines  int
}

func measure() stats {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return stats{heap: m.HeapAlloc, stack: m.StackInuse, goroutines: runtime.NumGoroutine()}
}
