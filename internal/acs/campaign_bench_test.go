package acs_test

import (
	"context"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"cpesuite/internal/acs"
	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/testutil"
)

// BenchmarkCampaignLoad runs one iteration of download + upload over N
// emulated CPEs (CPESUITE_CAMPAIGN_BENCH_CPES, default 100; half TR-098,
// half TR-181, all in one emulator in this process) against the speedtest
// target, with max-diagnostics CPESUITE_CAMPAIGN_BENCH_MAX_DIAG (default
// 50). The fleet is started and registered before the clock starts; the
// ACTIVATE goes out in parts when it is large. It reports
// ACTIVATE-to-ACTIVATION_FINISHED time, diagnostics per second and process
// CPU per diagnostic (ACS, executor, emulator and speedtest together: an
// upper bound for the ACS; a -cpuprofile splits it by package).
func BenchmarkCampaignLoad(b *testing.B) {
	n := envInt("CPESUITE_CAMPAIGN_BENCH_CPES", 100)
	maxDiag := envInt("CPESUITE_CAMPAIGN_BENCH_MAX_DIAG", 50)
	size := envInt("CPESUITE_CAMPAIGN_BENCH_BYTES", 100_000)
	for range b.N {
		b.StopTimer()
		env := newCampaignEnv(b, func(c *acs.Config) { c.MaxDiagnostics = maxDiag })
		// The executor's production intervals: the tests' 50 ms poll
		// would re-read every transaction in flight 20 times a second.
		env.ecfg.PollInterval, env.ecfg.ConnectRetry = time.Second, 30*time.Second
		env.startExecutor()
		devs := env.fleet("BENCH", n)
		run := newActivate(1001, fccwire.TypeSpeed, 60, fccwire.Group{ConfigID: 1, Speed: &fccwire.SpeedSettings{TestMode: fccwire.FileBased,
			DownloadURL: env.speedURL + "/download?size=" + strconv.Itoa(size), FileSizeUpload: i64(int64(size))}, Devices: devs})
		// The window is a safety net only; a slow run must end COMPLETED.
		run.Window.EndAt = fccwire.At(time.Now().Add(6 * time.Hour))
		var before syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
		stopProfile := profileRun(b)
		start := time.Now()
		b.StartTimer()
		parts := env.activateParts(run)
		f := env.finishedWithin(1001, 30*testutil.MinDeadline)
		b.StopTimer()
		elapsed := time.Since(start)
		stopProfile()
		var after syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
		cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
		diags := float64(2 * n)
		if f.ResultsSent != int64(2*n) || f.Reason != fccwire.FinishCompleted {
			b.Fatalf("finished %+v", f)
		}
		queued, ran := env.taskLatencies(devs)
		b.ReportMetric(float64(pct(queued, 50).Milliseconds()), "ms-queued-p50")
		b.ReportMetric(float64(pct(queued, 90).Milliseconds()), "ms-queued-p90")
		b.ReportMetric(float64(pct(ran, 50).Milliseconds()), "ms-running-p50")
		b.ReportMetric(float64(pct(ran, 90).Milliseconds()), "ms-running-p90")
		b.ReportMetric(float64(parts), "parts")
		b.ReportMetric(elapsed.Seconds(), "s/run")
		b.ReportMetric(diags/elapsed.Seconds(), "diagnostics/s")
		b.ReportMetric(float64(cpu.Microseconds())/diags, "cpu-us/diagnostic")
	}
}

// taskLatencies returns, for every diagnostic task of the fleet, the time
// from enqueue to its first RPC (connection request, session, Inform,
// slot check) and from there to its end (the CPE's transfer, 8 DIAGNOSTICS
// COMPLETE, the results). With max-diagnostics in flight, their sum is
// what bounds diagnostics per second.
func (env *campaignEnv) taskLatencies(devs []fccwire.Device) (queued, ran []time.Duration) {
	for _, d := range devs {
		tasks, err := env.acs.Store().DeviceTasks(context.Background(), d.CpeID, 100)
		if err != nil {
			env.t.Fatal(err)
		}
		for _, t := range tasks {
			if t.Kind.IsDiagnostics() && t.StartedAt != nil && t.FinishedAt != nil {
				queued = append(queued, t.StartedAt.Sub(t.CreatedAt))
				ran = append(ran, t.FinishedAt.Sub(*t.StartedAt))
			}
		}
	}
	return queued, ran
}

// pct returns the p-th percentile of ds (sorted in place).
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[(len(ds)-1)*p/100]
}

// profileRun writes a CPU profile of the measured part only (from the
// ACTIVATE to ACTIVATION_FINISHED, without the fleet's registration) to
// CPESUITE_CAMPAIGN_BENCH_CPUPROFILE when it is set.
func profileRun(b *testing.B) (stop func()) {
	path := os.Getenv("CPESUITE_CAMPAIGN_BENCH_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
