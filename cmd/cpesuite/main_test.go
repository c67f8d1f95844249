package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"cpesuite/internal/testutil"
)

// platformDeadline bounds the waits for the whole platform to start and to
// stop: a safety net against a hang on a busy 2-core machine, not a measure
// of speed (start-up time is in BENCHMARKS.md).
const platformDeadline = 2 * time.Minute

// buildBinary compiles the real command once per test binary run.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cpesuite")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestSignalsStopCleanly starts the real binary, downloads from it, sends
// SIGTERM (and SIGINT) and expects exit code 0.
func TestSignalsStopCleanly(t *testing.T) {
	bin := buildBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			addr := testutil.FreeAddr(t)
			cmd := exec.Command(bin, "up")
			cmd.Env = append(os.Environ(), "CPESUITE_SPEEDTEST_ADDR="+addr, "CPESUITE_DATA_DIR="+t.TempDir(), "CPESUITE_LOG_FORMAT=json",
				"CPESUITE_ACS_ADDR="+testutil.FreeAddr(t), "CPESUITE_ACS_API_ADDR="+testutil.FreeAddr(t), "CPESUITE_TR069_EMULATOR_ADDR="+testutil.FreeAddr(t), "CPESUITE_FCC_ADDR="+testutil.FreeAddr(t), "CPESUITE_CONFIGS_ADDR="+testutil.FreeAddr(t), "CPESUITE_IOT_EMULATOR_ADDR="+testutil.FreeAddr(t), "CPESUITE_IOT_EMULATOR_BROKER_ADDR="+testutil.FreeAddr(t), "CPESUITE_WORKER_ADDR="+testutil.FreeAddr(t), "CPESUITE_GATEWAY_ADDR="+testutil.FreeAddr(t), "CPESUITE_MCP_EMULATOR_ADDR="+testutil.FreeAddr(t), "CPESUITE_MCP_BROWSER_ADDR="+testutil.FreeAddr(t),
				// The exit code after a signal is the case; the stop deadline
				// only has to outlast a loaded machine's stop of every module.
				"CPESUITE_STOP_TIMEOUT="+platformDeadline.String())
			// Written by the process's output copier while the test reads it.
			var logs testutil.SyncBuffer
			cmd.Stderr = &logs
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()

			deadline := time.Now().Add(platformDeadline)
			var n int
			for {
				resp, err := http.Get("http://" + addr + "/download?size=1000")
				if err == nil {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					n = len(b)
					break
				}
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatalf("binary did not serve: %v\n%s", err, logs.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			if n != 1000 {
				t.Fatalf("downloaded %d bytes", n)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-exited:
				if err != nil {
					t.Fatalf("exit after %s: %v\n%s", sig, err, logs.String())
				}
			case <-time.After(platformDeadline):
				_ = cmd.Process.Kill()
				t.Fatalf("still running %s after %s", platformDeadline, sig)
			}
			if !strings.Contains(logs.String(), "cpesuite stopped") {
				t.Errorf("no stop log line:\n%s", logs.String())
			}
		})
	}
}

func TestMalformedEnvFailsWithOneLine(t *testing.T) {
	bin := buildBinary(t)
	cmd := exec.Command(bin, "up")
	cmd.Env = append(os.Environ(), "CPESUITE_ACS_ADDR=nonsense", "CPESUITE_DATA_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 2 {
		t.Fatalf("want exit 2, got %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "CPESUITE_ACS_ADDR") {
		t.Fatalf("want one line naming CPESUITE_ACS_ADDR, got:\n%s", out)
	}
}
