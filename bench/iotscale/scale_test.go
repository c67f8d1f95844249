package iotscale

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"cpesuite/internal/iotemu"
	"cpesuite/internal/iotemu/lwm2m/lwm2mtest"
	"cpesuite/internal/testutil"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func envDur(name string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heap returns live heap and goroutine stack bytes after a full GC.
func heap() (uint64, uint64) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc, m.StackInuse
}

func raw(m map[string]any) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for k, v := range m {
		b, _ := json.Marshal(v)
		out[k] = b
	}
	return out
}

type run struct {
	b   *testing.B
	e   *iotemu.Emulator
	n   int
	h0  uint64
	s0  uint64
	g0  int
	reg time.Duration
}

func newEmulator(b *testing.B, protocol string, opts map[string]string, settings map[string]any) *run {
	b.Helper()
	n := envInt("CPESUITE_BENCH_DEVICES", 10000)
	cfg := iotemu.Config{DataDir: b.TempDir(), MaxDevices: 100000, RuleBudget: 50 * time.Millisecond, StopWait: 60 * time.Second}
	e, err := iotemu.New(cfg, slog.New(slog.DiscardHandler), iotemu.Stacks())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(e.Shutdown)
	if err := e.SelectProtocol(protocol, false); err != nil {
		b.Fatal(err)
	}
	if err := e.SetOptions(opts); err != nil {
		b.Fatal(err)
	}
	settings["clientsCount"] = n
	settings["concurrentClients"] = envInt("CPESUITE_BENCH_CONCURRENT", 100)
	// Logging and history off: the figures are the protocol stacks' cost.
	settings["loggingEnabled"] = false
	settings["guiRenderingType"] = "OFF"
	if err := e.Configure(raw(settings)); err != nil {
		b.Fatal(err)
	}
	r := &run{b: b, e: e, n: n, g0: runtime.NumGoroutine()}
	r.h0, r.s0 = heap()
	return r
}

// startAll initialises, starts and waits for every device to be CONNECTED.
func (r *run) startAll() {
	r.b.Helper()
	t0 := time.Now()
	if err := r.e.Init(); err != nil {
		r.b.Fatal(err)
	}
	if err := r.e.Start(r.b.Context()); err != nil {
		r.b.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Minute)
	for {
		conn := 0
		for _, d := range r.e.Devices() {
			if d.Connection == "CONNECTED" {
				conn++
			}
		}
		if conn == r.n {
			break
		}
		if time.Now().After(deadline) {
			r.b.Fatalf("%d of %d devices connected after 10 minutes", conn, r.n)
		}
		time.Sleep(200 * time.Millisecond)
	}
	r.reg = time.Since(t0)
}

// steady measures CPU over the window and reports the figures.
func (r *run) steady(window time.Duration, count func() int) {
	r.b.Helper()
	c0, n0, t0 := cpuTime(), count(), time.Now()
	time.Sleep(window)
	c1, n1, el := cpuTime(), count(), time.Since(t0)
	h1, s1 := heap()
	g1 := runtime.NumGoroutine()
	r.b.ReportMetric(float64(s1-r.s0)/float64(r.n)/1024, "KiB-stack/device")
	r.b.ReportMetric(float64(r.n), "devices")
	r.b.ReportMetric(float64(r.n)/r.reg.Seconds(), "connects/s")
	r.b.ReportMetric(float64(h1-r.h0)/float64(r.n)/1024, "KiB-heap/device")
	r.b.ReportMetric(float64(g1-r.g0)/float64(r.n), "goroutines/device")
	r.b.ReportMetric(float64(c1-c0)/float64(el)*100, "%CPU-steady")
	r.b.ReportMetric(float64(n1-n0)/el.Seconds(), "msgs/s")
	fmt.Fprintf(os.Stderr, "devices=%d connect=%v heap/device=%.1f KiB stack/device=%.1f KiB goroutines/device=%.2f cpu=%.1f%% msgs/s=%.0f\n",
		r.n, r.reg.Round(time.Millisecond), float64(h1-r.h0)/float64(r.n)/1024, float64(s1-r.s0)/float64(r.n)/1024, float64(g1-r.g0)/float64(r.n),
		float64(c1-c0)/float64(el)*100, float64(n1-n0)/el.Seconds())
}

// BenchmarkLwM2MDevices registers n LwM2M devices (own UDP socket each)
// with the strict test server in this process and keeps them updating
// every 10 s; the CPU figure includes the server's share.
func BenchmarkLwM2MDevices(b *testing.B) {
	for range b.N {
		srv := lwm2mtest.New(b)
		r := newEmulator(b, "LWM2M", map[string]string{"lifetime": "60", "updatePeriod": "10"},
			map[string]any{"serverIp": srv.Host(), "serverPort": srv.Port(), "clientId": "bench-lw"})
		r.startAll()
		r.steady(envDur("CPESUITE_BENCH_STEADY", 60*time.Second), func() int {
			n := 0
			for i := range r.n {
				n += srv.UpdateCount(fmt.Sprintf("bench-lw-%d", i+1))
			}
			return n
		})
		if v := srv.Violations(); len(v) > 0 {
			b.Fatalf("%d wire format violations, first: %s", len(v), v[0])
		}
	}
}

// BenchmarkMQTTDevices connects n MQTT 3.1.1 devices to the local
// Mosquitto, each publishing telemetry every 10 s.
func BenchmarkMQTTDevices(b *testing.B) { benchMQTT(b, "3.1.1") }

// BenchmarkMQTT5Devices is the same with MQTT 5 devices.
func BenchmarkMQTT5Devices(b *testing.B) { benchMQTT(b, "5") }

func benchMQTT(b *testing.B, version string) {
	url := testutil.RequireMosquitto(b)
	port := 1883
	if i := strings.LastIndex(url, ":"); i > 0 {
		port, _ = strconv.Atoi(url[i+1:])
	}
	for range b.N {
		prefix := fmt.Sprintf("bench/%d", time.Now().UnixNano())
		// A subscriber counts what reaches the broker: each device publishes
		// every 10 s, so the expected rate is n/10.
		var got atomic.Int64
		c := paho.NewClient(paho.NewClientOptions().AddBroker(url).SetClientID("bench-counter-" + prefix[6:]))
		if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			b.Fatalf("counter connect: %v", tok.Error())
		}
		if tok := c.Subscribe(prefix+"/+/telemetry", 0, func(paho.Client, paho.Message) { got.Add(1) }); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			b.Fatalf("counter subscribe: %v", tok.Error())
		}
		r := newEmulator(b, "MQTT", map[string]string{"publishPeriodSec": "10", "qos": "0", "topicPrefix": prefix, "mqttVersion": version},
			map[string]any{"serverIp": "127.0.0.1", "serverPort": port, "clientId": "bench-mq"})
		r.startAll()
		r.steady(envDur("CPESUITE_BENCH_STEADY", 60*time.Second), func() int { return int(got.Load()) })
		c.Disconnect(100)
	}
}
