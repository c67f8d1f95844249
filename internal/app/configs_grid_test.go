package app

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/platform/grid"
	"cpesuite/internal/testutil"
)

// TestConfigsStartWaitsForGrid (issue 18 item 11): `cpesuite run configs`
// with an unreachable GRID_MEMBERS must keep starting, retrying with the
// spec's back-off, instead of exiting; it becomes ready once the grid is
// reachable, and a stop while it waits ends it promptly.
func TestConfigsStartWaitsForGrid(t *testing.T) {
	tests := []struct {
		name       string
		gridArrive bool // a NATS server appears on the member address
	}{
		{"becomes ready when the grid appears", true},
		{"stops while waiting", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			gridAddr := testutil.FreeAddr(t)
			_, port, _ := net.SplitHostPort(testutil.FreeAddr(t))
			env := map[string]string{"CPESUITE_DATA_DIR": dir, "CPESUITE_LOG_FORMAT": "json",
				"GRID_MEMBERS": gridAddr, "SERVER_PORT": port,
				"CFG_BOOTSTRAP_ADMIN_PASSWORD": "Bootstrap-Passw0rd!", "CPESUITE_STOP_TIMEOUT": stopTimeout}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var errb testutil.SyncBuffer
			done := make(chan int, 1)
			go func() { done <- CLI(ctx, []string{"run", "configs"}, io.Discard, &errb, envMap(env)) }()

			// Two failed attempts: it retries rather than giving up after one.
			testutil.Eventually(t, testutil.MinDeadline, "second grid retry logged", func() bool {
				select {
				case code := <-done:
					t.Fatalf("exited with %d while the grid was unreachable; log:\n%s", code, errb.String())
				default:
				}
				return strings.Contains(errb.String(), `"msg":"grid not reachable; start-up waits for it","module":"configs","attempt":2,`)
			})
			// The back-off is jittered upwards from the spec's initial 2 s.
			if !strings.Contains(errb.String(), `"attempt":1,"retry_in":"2.`) && !strings.Contains(errb.String(), `"attempt":1,"retry_in":"2s"`) {
				t.Errorf("the first retry does not wait the spec's initial 2 s; log:\n%s", errb.String())
			}
			snapshot := "http://127.0.0.1:" + port + "/configs-service/environment/snapshot"
			if resp, err := http.Get(snapshot); err == nil {
				resp.Body.Close()
				t.Fatal("the service answers before its grid is reachable")
			}

			if !tt.gridArrive {
				cancel()
				select {
				case code := <-done:
					if code != 0 {
						t.Fatalf("stop while waiting for the grid: exit %d; log:\n%s", code, errb.String())
					}
				case <-time.After(testutil.MinDeadline):
					t.Fatal("the stop did not end the wait for the grid")
				}
				return
			}

			emb, err := grid.StartEmbedded(grid.Config{StoreDir: t.TempDir(), Listen: gridAddr})
			if err != nil {
				t.Fatalf("starting the grid: %v", err)
			}
			t.Cleanup(emb.Shutdown)
			client := &http.Client{Timeout: testutil.MinDeadline}
			testutil.Eventually(t, testutil.MinDeadline, "configs ready once the grid is reachable", func() bool {
				resp, err := client.Get(snapshot)
				if err != nil {
					return false
				}
				resp.Body.Close()
				return resp.StatusCode == http.StatusOK
			})
			cancel()
			select {
			case code := <-done:
				if code != 0 {
					t.Fatalf("exit %d; log:\n%s", code, errb.String())
				}
			case <-time.After(testutil.MinDeadline):
				t.Fatal("did not stop")
			}
		})
	}
}
