package export

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"cpesuite/internal/fcc/results"
)

// synthRows calls fn with n rows built in place from two templates (speed
// and latency, half each), so the source itself holds no memory that grows
// with n.
func synthRows(n int, fn func(*results.Row) error) error {
	sp, lat := speedRow("", "measured over 4 connections"), latencyRow("", ptr(12.5))
	base := sp.StartedAt.Time
	serial := make([]byte, 0, 16)
	for i := range n {
		r := &sp
		if i%2 == 1 {
			r = &lat
		}
		serial = strconv.AppendInt(append(serial[:0], "SN-"...), int64(i/4), 10)
		r.Serial = string(serial)
		r.Iteration = i % 4
		r.StartedAt.Time = base.Add(time.Duration(i) * time.Millisecond)
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// heapPeak samples HeapInuse until stopped and returns the largest value.
func heapPeak() (stop func() uint64) {
	var (
		peak uint64
		wg   sync.WaitGroup
		done = make(chan struct{})
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 { close(done); wg.Wait(); return peak }
}

// cpuTime is the process's user and system CPU time so far: on a shared,
// loaded machine it tells the writer's cost apart from waiting for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// vmHWM is the process's peak resident set (Linux), in bytes; 0 elsewhere.
func vmHWM() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb * 1024
		}
	}
	return 0
}

// BenchmarkExport writes n synthetic rows (half speed, half latency) to a
// counting sink. Metrics: rows/s, output MB, peak-heap-MB (HeapInuse
// sampled every 20 ms) and peak-rss-MB (the process's VmHWM, meaningful
// when one case runs per process: -bench 'Export/CSV/1M$').
func BenchmarkExport(b *testing.B) {
	sizes := []int{100_000, 1_000_000, 5_000_000}
	if testing.Short() {
		sizes = sizes[:1]
	}
	for _, f := range []Format{FormatCSV, FormatXLSX} {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/%s", f, label(n)), func(b *testing.B) {
				var out countWriter
				stop := heapPeak()
				cpu0 := cpuTime()
				start := time.Now()
				for b.Loop() {
					out = countWriter{}
					w, _ := New(f, &out)
					if err := synthRows(n, w.Write); err != nil {
						b.Fatal(err)
					}
					if err := w.Close(); err != nil {
						b.Fatal(err)
					}
				}
				elapsed := time.Since(start)
				b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
				b.ReportMetric(float64(n)*float64(b.N)/elapsed.Seconds(), "rows/s")
				b.ReportMetric(float64(out.n)/1e6, "out-MB")
				b.ReportMetric(float64(stop())/(1<<20), "peak-heap-MB")
				b.ReportMetric(vmHWM()/(1<<20), "peak-rss-MB")
			})
		}
	}
}

func label(n int) string {
	if n >= 1_000_000 {
		return strconv.Itoa(n/1_000_000) + "M"
	}
	return strconv.Itoa(n/1000) + "k"
}

// BenchmarkSource is the synthetic row source alone, to subtract from
// BenchmarkExport.
func BenchmarkSource(b *testing.B) {
	for b.Loop() {
		_ = synthRows(1_000_000, func(*results.Row) error { return nil })
	}
	b.ReportMetric(1e6*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

var _ io.Writer = (*countWriter)(nil)
