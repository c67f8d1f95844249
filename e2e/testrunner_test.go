package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"cpesuite/internal/testutil"
)

// TestTestRunnerUp is `cpesuite up` with the gateway and its local
// worker: the worker is registered as stand "local" at start, the
// bootstrap admin logs in, and a run dispatched through the gateway
// executes on the worker, calling the TR-069 emulator's API.
func TestTestRunnerUp(t *testing.T) {
	dir := t.TempDir()
	const pw = "E2e-Adm1n-Passw0rd"
	p := up(t, "tr069-emulator,worker,gateway", map[string]string{"CPESUITE_DATA_DIR": dir, "CPESUITE_GATEWAY_ADMIN_PASSWORD": pw})
	gw := func(path string) string { return p.url("CPESUITE_GATEWAY_ADDR", path) }
	testutil.Eventually(t, platformDeadline, "the gateway", func() bool {
		resp, err := http.Get(gw("/health"))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	call := func(tok, method, path string, body any) (int, []byte) {
		t.Helper()
		data, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, gw(path), bytes.NewReader(data))
		req.Header.Set("Content-Type", "application/json")
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	var health struct {
		Workers []struct {
			Name      string
			Reachable bool
		}
	}
	_, b := call("", "GET", "/health", nil)
	if json.Unmarshal(b, &health) != nil || len(health.Workers) != 1 || health.Workers[0].Name != "local" || !health.Workers[0].Reachable {
		t.Fatalf("gateway health: %s", b)
	}
	code, b := call("", "POST", "/api/auth/login", map[string]string{"username": "admin", "password": pw})
	var login struct{ Token string }
	if code != 200 || json.Unmarshal(b, &login) != nil {
		t.Fatalf("login: %d %s", code, b)
	}
	caseYAML := `id: emulator-status
title: The emulator answers its status
steps:
  - action: Read the load test status
    expected: the emulator reports Stopped
    tool:
      server: builtin
      name: http_request
      arguments: {url: "` + p.url("CPESUITE_TR069_EMULATOR_ADDR", "/api/status") + `"}
      expect: {contains: Stopped}
`
	if err := os.WriteFile(filepath.Join(dir, "worker", "tests", "status.yaml"), []byte(caseYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, b := call(login.Token, "POST", "/api/gateway/profiles", map[string]any{"name": "lab", "settings": map[string]string{"emulator_url": p.url("CPESUITE_TR069_EMULATOR_ADDR", "")}}); code != 201 {
		t.Fatalf("profile: %d %s", code, b)
	}
	code, b = call(login.Token, "POST", "/api/gateway/run", map[string]any{"env": "lab", "test_file": "status.yaml"})
	var run struct {
		RunID string `json:"run_id"`
		Stand string
	}
	if code != 200 || json.Unmarshal(b, &run) != nil || run.Stand != "local" {
		t.Fatalf("dispatch: %d %s", code, b)
	}
	var detail struct{ Status string }
	testutil.Eventually(t, platformDeadline, "the run's verdict", func() bool {
		_, b := call(login.Token, "GET", "/api/runs/"+run.RunID, nil)
		return json.Unmarshal(b, &detail) == nil && detail.Status != "running" && detail.Status != ""
	})
	if detail.Status != "passed" {
		_, b := call(login.Token, "GET", "/api/runs/"+run.RunID, nil)
		t.Fatalf("run ended %s: %s", detail.Status, b)
	}
}
