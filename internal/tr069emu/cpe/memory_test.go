package cpe

import (
	"context"
	"runtime"
	"testing"
	"time"

	"cpesuite/internal/tr069emu/tree"
)

// idleHeapPerDevice starts n idle devices (no initial Inform, periodic an
// hour away) and returns the live heap they add, per device.
func idleHeapPerDevice(tb testing.TB, n int) float64 {
	tb.Helper()
	tmpl, err := tree.Base("TR-181")
	if err != nil {
		tb.Fatal(err)
	}
	env := &Env{Credentials: func() (string, string) { return "cpe", "x" }}
	env.SetSettings(Settings{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	devs := make([]*Device, n)
	for i := range devs {
		d := New(env, Options{Serial: "MEM" + string(rune('A'+i%26)) + itoa(i), ACSURL: "http://127.0.0.1:1/", Tree: tree.New(tmpl),
			ConnReqURL: "http://127.0.0.1:8555/cr/MEM" + itoa(i), Periodic: time.Hour, WithoutInitialInform: true})
		d.Start(context.Background())
		devs[i] = d
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
	for _, d := range devs {
		d.Stop()
	}
	runtime.KeepAlive(devs)
	return per
}

func itoa(i int) string {
	var b [20]byte
	p := len(b)
	for {
		p--
		b[p] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[p:])
		}
	}
}

// TestIdleDeviceMemory holds the budget: at most 100 KB of heap per
// idle emulated device.
func TestIdleDeviceMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates thousands of devices")
	}
	per := idleHeapPerDevice(t, 5000)
	t.Logf("idle device: %.0f bytes of heap", per)
	if per > 100*1000 {
		t.Fatalf("idle device costs %.0f bytes of heap, budget 100 KB", per)
	}
}

// BenchmarkIdleDeviceHeap reports the live heap of 10,000 idle devices per
// device; it measures memory, so it runs the measurement once.
func BenchmarkIdleDeviceHeap(b *testing.B) {
	per := idleHeapPerDevice(b, 10000)
	for b.Loop() {
	}
	b.ReportMetric(per, "heap-bytes/device")
}
