package acs_test

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"cpesuite/internal/acs"
	"cpesuite/internal/fcc/fccwire"
)

// BenchmarkCampaignLoad runs one iteration of download + upload over N
// emulated CPEs (CPESUITE_CAMPAIGN_BENCH_CPES, default 100; half TR-098,
// half TR-181) against the speedtest target, all in this process, with
// max-diagnostics 50. It reports ACTIVATE-to-ACTIVATION_FINISHED time,
// diagnostics per second and process CPU per diagnostic (ACS, executor,
// emulator and speedtest together: an upper bound for the ACS).
func BenchmarkCampaignLoad(b *testing.B) {
	n := 100
	if v, err := strconv.Atoi(os.Getenv("CPESUITE_CAMPAIGN_BENCH_CPES")); err == nil && v > 0 {
		n = v
	}
	for range b.N {
		b.StopTimer()
		env := newCampaignEnv(b, func(c *acs.Config) { c.MaxDiagnostics = 50 })
		env.startExecutor()
		var devs []fccwire.Device
		for i := range n {
			file := "tr098-base.xml"
			if i%2 == 1 {
				file = "tr181-base.xml"
			}
			devs = append(devs, env.cpe(fmt.Sprintf("BENCH%05d", i), file))
		}
		run := newActivate(1001, fccwire.TypeSpeed, 60, fccwire.Group{ConfigID: 1, Speed: &fccwire.SpeedSettings{TestMode: fccwire.FileBased,
			DownloadURL: env.speedURL + "/download?size=100000", FileSizeUpload: i64(100_000)}, Devices: devs})
		var before syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
		start := time.Now()
		b.StartTimer()
		env.activate(run)
		f := env.finished(1001)
		b.StopTimer()
		elapsed := time.Since(start)
		var after syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
		cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
		diags := float64(2 * n)
		if f.ResultsSent != int64(2*n) {
			b.Fatalf("finished %+v", f)
		}
		b.ReportMetric(elapsed.Seconds(), "s/run")
		b.ReportMetric(diags/elapsed.Seconds(), "diagnostics/s")
		b.ReportMetric(float64(cpu.Microseconds())/diags, "cpu-us/diagnostic")
	}
}
