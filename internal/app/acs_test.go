package app

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cpesuite/internal/acs"
	"cpesuite/internal/cwmp"
	"cpesuite/internal/testutil"
)

// TestACSAllowUnauthenticatedFromEnv builds the ACS the way `cpesuite run
// acs` does, from the environment. CPESUITE_ACS_ALLOW_UNAUTHENTICATED=true
// used to have no effect there: the module always fills in a password
// (generated when unset) and a password turned authentication on, so a CPE
// without credentials got 401.
func TestACSAllowUnauthenticatedFromEnv(t *testing.T) {
	type cred int
	const (
		none cred = iota
		wrong
		generated
	)
	tests := []struct {
		name  string
		allow string // CPESUITE_ACS_ALLOW_UNAUTHENTICATED; "" leaves it unset
		cred  cred
		want  int
	}{
		{"allowed: no credentials", "true", none, http.StatusOK},
		{"allowed: the generated password", "true", generated, http.StatusOK},
		{"allowed: a wrong password is still refused", "true", wrong, http.StatusUnauthorized},
		{"default: no credentials", "", none, http.StatusUnauthorized},
		{"default: the generated password", "", generated, http.StatusOK},
		{"explicitly false: no credentials", "false", none, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			addr := testutil.FreeAddr(t)
			env := map[string]string{"CPESUITE_DATA_DIR": dir, "CPESUITE_LOG_FORMAT": "json",
				"CPESUITE_ACS_ADDR": addr, "CPESUITE_ACS_API_ADDR": testutil.FreeAddr(t), "CPESUITE_ACS_AUTH": "basic",
				"CPESUITE_STOP_TIMEOUT": stopTimeout}
			if tt.allow != "" {
				env["CPESUITE_ACS_ALLOW_UNAUTHENTICATED"] = tt.allow
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var errb testutil.SyncBuffer
			done := make(chan int, 1)
			go func() { done <- CLI(ctx, []string{"run", "acs"}, io.Discard, &errb, envMap(env)) }()
			testutil.Eventually(t, testutil.MinDeadline, "the acs target to start", func() bool { return strings.Contains(errb.String(), `"all modules ready"`) })

			// The password is generated either way: CPEs that do
			// authenticate and connection requests use it.
			raw, err := os.ReadFile(filepath.Join(dir, acs.PasswordFileName))
			if err != nil {
				t.Fatalf("generated password: %v", err)
			}
			body, err := cwmp.Encode(cwmp.NewEnvelope(cwmp.CWMP10, "1", &cwmp.Inform{
				DeviceID: cwmp.DeviceID{Manufacturer: "Sim", OUI: "001122", ProductClass: "sim", SerialNumber: "SIM-1"},
				Event:    []cwmp.EventStruct{{EventCode: cwmp.EventBootstrap}, {EventCode: cwmp.EventBoot}}, MaxEnvelopes: 1}))
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/", bytes.NewReader(body))
			req.Header.Set("Content-Type", "text/xml")
			switch tt.cred {
			case wrong:
				req.SetBasicAuth("cpe", "not-the-password")
			case generated:
				req.SetBasicAuth("cpe", strings.TrimSpace(string(raw)))
			}
			resp, err := (&http.Client{Timeout: testutil.MinDeadline}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("Inform: %d, want %d: %s", resp.StatusCode, tt.want, got)
			}
			if tt.want == http.StatusOK && !strings.Contains(string(got), "InformResponse") {
				t.Fatalf("no InformResponse: %s", got)
			}
			cancel()
			if code := <-done; code != 0 {
				t.Fatalf("exit %d; log:\n%s", code, errb.String())
			}
			if strings.Contains(errb.String(), strings.TrimSpace(string(raw))) {
				t.Error("the CPE password is in the log")
			}
		})
	}
}
