package app

import (
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/testutil"
)

// testutil.SyncBuffer is a bytes.Buffer safe for the logger and the test to share.

// platformDeadline bounds the waits for a whole platform (cpesuite up) to
// start and to stop: a safety net for a loaded 2-core machine, never a
// measure of speed. stopTimeout is the same net for the stop deadline of
// the process, in tests that hold a stop to exit code 0.
const (
	platformDeadline = 2 * time.Minute
	stopTimeout      = "2m"
)

func envMap(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func runCLI(ctx context.Context, args []string, env map[string]string) (int, string, string) {
	var out, errb testutil.SyncBuffer
	code := CLI(ctx, args, &out, &errb, envMap(env))
	return code, out.String(), errb.String()
}

func TestCLIUsageAndConfigErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		wantCode int
		wantErr  string // one line of stderr must contain this
	}{
		{"no command", nil, nil, 2, "Usage:"},
		{"unknown command", []string{"start"}, nil, 2, `unknown command "start"`},
		{"acs addr nonsense", []string{"up"}, map[string]string{"CPESUITE_ACS_ADDR": "nonsense"}, 2, `CPESUITE_ACS_ADDR: invalid value "nonsense"`},
		{"port not numeric", []string{"up"}, map[string]string{"CPESUITE_TR069_EMULATOR_ADDR": "127.0.0.1:http"}, 2, "CPESUITE_TR069_EMULATOR_ADDR: invalid value"},
		{"flag addr", []string{"up", "--speedtest.addr=x"}, nil, 2, "--speedtest.addr"},
		{"bad grid members", []string{"up"}, map[string]string{"GRID_MEMBERS": "a:b:c"}, 2, "GRID_MEMBERS"},
		{"bad stop timeout", []string{"up"}, map[string]string{"CPESUITE_STOP_TIMEOUT": "10"}, 2, "CPESUITE_STOP_TIMEOUT"},
		{"bad speedtest cap", []string{"up"}, map[string]string{"CPESUITE_SPEEDTEST_MAX_BYTES": "2000000000"}, 2, "CPESUITE_SPEEDTEST_MAX_BYTES"},
		{"unknown target", []string{"up", "--only", "speedtest,nbi"}, map[string]string{"CPESUITE_DATA_DIR": dir}, 2, `unknown target "nbi" (implemented: acs, speedtest, tr069-emulator, iot-emulator, fcc, configs, mcp-emulator, mcp-browser, worker, gateway)`},
		{"infrastructure is not a target", []string{"run", "grid"}, map[string]string{"CPESUITE_DATA_DIR": dir}, 2, `unknown target "grid"`},
		{"run without target", []string{"run"}, map[string]string{"CPESUITE_DATA_DIR": dir}, 2, "name a target"},
		{"extra args", []string{"run", "speedtest", "nbi"}, map[string]string{"CPESUITE_DATA_DIR": dir}, 2, "unexpected arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(context.Background(), tt.args, tt.env)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.wantCode, stderr)
			}
			if !strings.Contains(stderr, tt.wantErr) {
				t.Fatalf("stderr lacks %q:\n%s", tt.wantErr, stderr)
			}
			if tt.wantErr != "Usage:" && strings.Count(strings.TrimSpace(stderr), "\n") > 0 && !strings.Contains(stderr, "Usage:") {
				t.Errorf("a configuration error must be one line:\n%s", stderr)
			}
		})
	}
}

func TestCLIInfoCommands(t *testing.T) {
	code, out, _ := runCLI(context.Background(), []string{"targets"}, nil)
	if code != 0 || !regexp.MustCompile(`(?m)^speedtest +:7580`).MatchString(out) || !regexp.MustCompile(`(?m)^acs +:7547`).MatchString(out) || !regexp.MustCompile(`(?m)^tr069-emulator +:8555`).MatchString(out) || !regexp.MustCompile(`(?m)^fcc +:8080`).MatchString(out) || !regexp.MustCompile(`(?m)^configs +:8081`).MatchString(out) || !regexp.MustCompile(`(?m)^iot-emulator +:8556`).MatchString(out) || !regexp.MustCompile(`(?m)^worker +:8083`).MatchString(out) || !regexp.MustCompile(`(?m)^gateway +:8088`).MatchString(out) || !regexp.MustCompile(`(?m)^mcp-emulator +:8558`).MatchString(out) || !regexp.MustCompile(`(?m)^mcp-browser +:8559`).MatchString(out) || !strings.Contains(out, "not implemented yet: nbi") {
		t.Errorf("targets: %d\n%s", code, out)
	}
	code, out, _ = runCLI(context.Background(), []string{"version"}, nil)
	if code != 0 || !strings.HasPrefix(out, "cpesuite ") || !strings.Contains(out, "commit") {
		t.Errorf("version: %d %q", code, out)
	}
	code, out, _ = runCLI(context.Background(), []string{"help", "up"}, nil)
	if code != 0 || !strings.Contains(out, "--speedtest.addr (env CPESUITE_SPEEDTEST_ADDR") || !strings.Contains(out, "GRID_MEMBERS") {
		t.Errorf("help up: %d\n%s", code, out)
	}
}

func TestCLIUpServesAndStopsCleanly(t *testing.T) {
	for _, args := range [][]string{{"up"}, {"up", "--only", "speedtest"}, {"run", "speedtest"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			addr := testutil.FreeAddr(t)
			dataDir := t.TempDir() + "/nested/data"
			env := map[string]string{"CPESUITE_SPEEDTEST_ADDR": addr, "CPESUITE_DATA_DIR": dataDir, "CPESUITE_LOG_FORMAT": "json",
				"CPESUITE_ACS_ADDR": testutil.FreeAddr(t), "CPESUITE_ACS_API_ADDR": testutil.FreeAddr(t), "CPESUITE_TR069_EMULATOR_ADDR": testutil.FreeAddr(t), "CPESUITE_FCC_ADDR": testutil.FreeAddr(t), "CPESUITE_CONFIGS_ADDR": testutil.FreeAddr(t), "CPESUITE_IOT_EMULATOR_ADDR": testutil.FreeAddr(t), "CPESUITE_IOT_EMULATOR_BROKER_ADDR": testutil.FreeAddr(t), "CPESUITE_WORKER_ADDR": testutil.FreeAddr(t), "CPESUITE_GATEWAY_ADDR": testutil.FreeAddr(t), "CPESUITE_MCP_EMULATOR_ADDR": testutil.FreeAddr(t), "CPESUITE_MCP_BROWSER_ADDR": testutil.FreeAddr(t),
				"CPESUITE_STOP_TIMEOUT": stopTimeout}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var errb testutil.SyncBuffer
			done := make(chan int, 1)
			go func() { done <- CLI(ctx, args, io.Discard, &errb, envMap(env)) }()

			var body []byte
			testutil.Eventually(t, platformDeadline, "speedtest to answer", func() bool {
				resp, err := http.Get("http://" + addr + "/download?size=1000")
				if err != nil {
					return false
				}
				defer resp.Body.Close()
				body, _ = io.ReadAll(resp.Body)
				return resp.StatusCode == 200
			})
			if len(body) != 1000 {
				t.Fatalf("downloaded %d bytes, want 1000", len(body))
			}
			// Modules after speedtest may still be starting.
			testutil.Eventually(t, platformDeadline, "all modules ready", func() bool { return strings.Contains(errb.String(), `"all modules ready"`) })
			cancel() // what SIGINT/SIGTERM does in main
			select {
			case code := <-done:
				if code != 0 {
					t.Fatalf("exit %d after a clean stop; log:\n%s", code, errb.String())
				}
			case <-time.After(platformDeadline):
				t.Fatal("did not stop")
			}
			logs := errb.String()
			wantGrid := args[0] == "up" && len(args) == 1
			if strings.Contains(logs, `"grid ready"`) != wantGrid {
				t.Errorf("grid started=%v, want %v (only `up` without --only starts all modules)", !wantGrid, wantGrid)
			}
			for _, want := range []string{`"all modules ready"`, `"cpesuite stopped"`} {
				if !strings.Contains(logs, want) {
					t.Errorf("log lacks %s:\n%s", want, logs)
				}
			}
		})
	}
}

func TestCLIPortInUseFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	env := map[string]string{"CPESUITE_SPEEDTEST_ADDR": ln.Addr().String(), "CPESUITE_DATA_DIR": t.TempDir(),
		"CPESUITE_ACS_ADDR": testutil.FreeAddr(t), "CPESUITE_ACS_API_ADDR": testutil.FreeAddr(t), "CPESUITE_TR069_EMULATOR_ADDR": testutil.FreeAddr(t), "CPESUITE_FCC_ADDR": testutil.FreeAddr(t), "CPESUITE_CONFIGS_ADDR": testutil.FreeAddr(t), "CPESUITE_IOT_EMULATOR_ADDR": testutil.FreeAddr(t), "CPESUITE_IOT_EMULATOR_BROKER_ADDR": testutil.FreeAddr(t), "CPESUITE_WORKER_ADDR": testutil.FreeAddr(t), "CPESUITE_GATEWAY_ADDR": testutil.FreeAddr(t), "CPESUITE_MCP_EMULATOR_ADDR": testutil.FreeAddr(t), "CPESUITE_MCP_BROWSER_ADDR": testutil.FreeAddr(t)}
	code, _, stderr := runCLI(context.Background(), []string{"up"}, env)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, ln.Addr().String()+" is already in use") {
		t.Errorf("error does not say the port is taken:\n%s", stderr)
	}
}
