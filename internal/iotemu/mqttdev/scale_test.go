//go:build measure

// A measurement, not a check: built only with -tags measure, so that a
// plain test run has no placeholder that skips.

package mqttdev

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"cpesuite/internal/iotemu/proto"
	"cpesuite/internal/testutil"
)

// TestScale measures what a connected device costs: heap and goroutine
// stacks per device and CPU while every device publishes telemetry every
// 10 s, over CPESUITE_MQTT_SCALE devices (default 1000):
//
//	CPESUITE_MQTT_SCALE=1000 go test -tags measure -run TestScale -v ./internal/iotemu/mqttdev/
//
// CPESUITE_MQTT_SCALE_CPU_SEC sets the CPU sampling window (default 30).
func TestScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CPESUITE_MQTT_SCALE"))
	if n <= 0 {
		n = 1000
	}
	window := 30 * time.Second
	if s, err := strconv.Atoi(os.Getenv("CPESUITE_MQTT_SCALE_CPU_SEC")); err == nil && s > 0 {
		window = time.Duration(s) * time.Second
	}
	brokerURL := testutil.RequireMosquitto(t)
	for _, v := range versions {
		t.Run("v"+v, func(t *testing.T) {
			// Hosts (parameter sets) belong to the session and exist before
			// the baseline; their logs are off, as in a session with logging
			// disabled.
			tds := make([]*testDevice, n)
			for i := range tds {
				tds[i] = newTestDevice(t, brokerURL, map[string]string{OptMQTTVersion: v, OptPublishPeriodSec: "10"})
				tds[i].host.quiet.Store(true)
			}
			before := memSnapshot()
			for _, td := range tds {
				td.start(t)
			}
			testutil.Eventually(t, 5*time.Minute, strconv.Itoa(n)+" devices connected", func() bool {
				c := 0
				for _, td := range tds {
					if conn, _ := td.host.state(); conn == proto.Connected {
						c++
					}
				}
				return c == n
			})
			after := memSnapshot()
			t.Logf("%d devices MQTT %s: heap %.1f KiB/device, stacks %.1f KiB/device, %.1f goroutines/device",
				n, v,
				float64(after.heap-before.heap)/float64(n)/1024,
				float64(after.stack-before.stack)/float64(n)/1024,
				float64(after.goroutines-before.goroutines)/float64(n))

			cpu0, wall0 := cpuTime(), time.Now()
			// Sampling, not waiting for a condition: the window is the
			// measurement.
			time.Sleep(window)
			cpu := cpuTime() - cpu0
			t.Logf("%d devices MQTT %s publishing every 10 s: %.1f%% of one core over %s (%.0f publishes/s)",
				n, v, 100*cpu.Seconds()/time.Since(wall0).Seconds(), window, float64(n)/10)

			for _, td := range tds {
				_ = td.dev.Stop(context.Background())
			}
		})
	}
}

type mem struct {
	heap, stack uint64
	goroutines  int
}

func memSnapshot() mem {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return mem{heap: ms.HeapAlloc, stack: ms.StackInuse, goroutines: runtime.NumGoroutine()}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
