package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"cpesuite/internal/testutil"
)

// TestIoTEmulatorDefaults: on a fresh data dir `cpesuite up` runs the IoT
// emulator with MQTT devices pointed at its embedded broker, so init and
// start give a CONNECTED device with no configuration at all.
func TestIoTEmulatorDefaults(t *testing.T) {
	p := up(t, "tr069-emulator,iot-emulator", nil)
	call := func(method, path, body string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, p.url("CPESUITE_IOT_EMULATOR_ADDR", path), strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	testutil.Eventually(t, platformDeadline, "the IoT emulator API", func() bool {
		resp, err := http.Get(p.url("CPESUITE_IOT_EMULATOR_ADDR", "/api/status"))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	// The default configuration must point at the embedded broker's port.
	code, body := call("GET", "/api/config", "")
	var cfg struct {
		Protocol   string `json:"protocol"`
		ServerPort int    `json:"serverPort"`
	}
	if code != 200 || json.Unmarshal(body, &cfg) != nil || cfg.Protocol != "MQTT" || !strings.HasSuffix(p.addrs["CPESUITE_IOT_EMULATOR_BROKER_ADDR"], ":"+itoa(cfg.ServerPort)) {
		t.Fatalf("default config %d %s (broker %s)", code, body, p.addrs["CPESUITE_IOT_EMULATOR_BROKER_ADDR"])
	}
	for _, path := range []string{"/api/init", "/api/start"} {
		if code, body := call("POST", path, ""); code != 204 {
			t.Fatalf("%s: %d %s", path, code, body)
		}
	}
	testutil.Eventually(t, platformDeadline, "the default device to connect to the embedded broker", func() bool {
		_, body := call("GET", "/api/devices/iot-emu", "")
		return strings.Contains(string(body), `"connection":"CONNECTED"`)
	})
	if code, body := call("PUT", "/api/devices/iot-emu/parameters/Temperature", `{"value":"19.5"}`); code != 204 {
		t.Fatalf("parameter write: %d %s", code, body)
	}
	if code, body := call("POST", "/api/stop", ""); code != 204 {
		t.Fatalf("stop: %d %s", code, body)
	}
	if code, _ := call("GET", "/swagger-ui.html", ""); code != 200 {
		t.Fatalf("swagger UI: %d", code)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
