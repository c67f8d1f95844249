package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/testutil"
)

// fccCall sends a request with scope ALL to the campaign service; status 0
// means it did not answer (yet).
func fccCall(t *testing.T, p *platform, method, path string, body any) (int, []byte) {
	t.Helper()
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, p.url("CPESUITE_FCC_ADDR", path), bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-SVC-Domain-Scope", "ALL")
	req.Header.Set("X-SVC-User-Id", "e2e")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestCampaignOverEmulatedFleet: emulated CPEs inform our ACS, the campaign
// service resolves them from the ACS tables, saves a campaign freezing them
// and exports it.
func TestCampaignOverEmulatedFleet(t *testing.T) {
	p := up(t, "acs,tr069-emulator,fcc", nil)
	emu := p.url("CPESUITE_TR069_EMULATOR_ADDR", "")
	for _, dev := range []map[string]string{{"protocol": "TR-181", "serial": "FCC1"}, {"protocol": "TR-098", "serial": "FCC2"}} {
		post(t, emu+"/apiV2/startProtocol", dev)
	}
	resolve := map[string]any{"sourceType": "SERIAL_LIST", "serials": []string{"fcc1", "FCC2", "missing"}}
	var res struct {
		TotalCount      int64
		NotFoundSerials []string
		Items           []struct {
			Serial         string
			Protocol       string
			SupportedByACS bool `json:"supportedByAcs"`
		}
	}
	testutil.Eventually(t, platformDeadline, "both emulated CPEs resolvable", func() bool {
		status, body := fccCall(t, p, "POST", "/FCC/devices/resolve", resolve)
		if status == 0 {
			return false // the campaign service starts after the emulator
		}
		if status != 200 {
			t.Fatalf("resolve: %d %s", status, body)
		}
		_ = json.Unmarshal(body, &res)
		return res.TotalCount == 2
	})
	if len(res.NotFoundSerials) != 1 || res.NotFoundSerials[0] != "missing" || !res.Items[0].SupportedByACS {
		t.Fatalf("resolve %+v", res)
	}
	date := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	status, body := fccCall(t, p, "PUT", "/FCC/item/details", map[string]any{"name": "e2e", "type": "SPEED", "domainId": 1,
		"activation": map[string]any{"type": "Scheduled", "date": date, "totalTestDuration": 1, "singleTestDuration": 15},
		"configs": []any{map[string]any{"sourceType": "SERIAL_LIST", "serials": []string{"FCC1", "fcc2"},
			"settings": []any{map[string]any{"type": "SPEED", "downloadUrl": "http://127.0.0.1:7580/download"}}}}})
	if status != 200 {
		t.Fatalf("save: %d %s", status, body)
	}
	var saved struct{ ID int64 }
	_ = json.Unmarshal(body, &saved)
	status, body = fccCall(t, p, "PUT", "/FCC/item/export", map[string]any{"id": saved.ID})
	if status != 200 || !strings.Contains(string(body), "<serial>FCC1</serial>") || !strings.Contains(string(body), "<serial>FCC2</serial>") {
		t.Fatalf("export: %d %s", status, body)
	}
	// The actuator is there and the identity filter is not in its way.
	resp, err := http.Get(p.url("CPESUITE_FCC_ADDR", "/actuator/health"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("health %d", resp.StatusCode)
	}
}
