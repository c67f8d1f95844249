package iotemu

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInitStartFailures: 422 INIT_FAILED (unreadable certificate file,
// named by file name only; options a stack refuses) and 422 START_FAILED
// (the client port is taken); the session stays as it was.
func TestInitStartFailures(t *testing.T) {
	e := startEmu(t, testConfig(t))
	missing := filepath.Join(t.TempDir(), "secret-dir", "client.pem")
	e.do("POST", "/api/protocol/COAP", nil).must(t, 204)
	e.do("POST", "/api/config", map[string]any{"securityMode": "X509", "authKeyStorePath": missing}).must(t, 200)
	b := e.do("POST", "/api/init", nil).errBody(t, 422, codeInitFailed)
	if !strings.Contains(b.Message, "client.pem") || strings.Contains(b.Message, "secret-dir") {
		t.Fatalf("message must name the file by file name only: %q", b.Message)
	}
	e.do("POST", "/api/config", map[string]any{"secure": false}).must(t, 200)

	e.do("POST", "/api/protocol/LWM2M", nil).must(t, 204)
	e.do("POST", "/api/protocolOptions", map[string]string{"lifetime": "soon"}).must(t, 204)
	e.do("POST", "/api/init", nil).errBody(t, 422, codeInitFailed)
	var s Status
	e.do("GET", "/api/status", nil).must(t, 200).json(t, &s)
	if s.Initialized || s.DeviceCount != 0 {
		t.Fatalf("a failed init left %+v", s)
	}

	busy, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.LocalAddr().(*net.UDPAddr).Port
	e.do("POST", "/api/protocol/COAP", nil).must(t, 204)
	e.do("POST", "/api/config", map[string]any{"clientIp": "127.0.0.1", "clientPort": port, "clientsCount": 1}).must(t, 200)
	e.do("POST", "/api/init", nil).must(t, 204)
	e.do("POST", "/api/start", nil).errBody(t, 422, codeStartFailed)
	e.do("GET", "/api/status", nil).must(t, 200).json(t, &s)
	if !s.Initialized || s.Started {
		t.Fatalf("a failed start left %+v", s)
	}
}

// TestVersion: every field present; git fields may be null.
func TestVersion(t *testing.T) {
	e := startEmu(t, testConfig(t))
	var m map[string]any
	e.do("GET", "/api/version", nil).must(t, 200).json(t, &m)
	for _, k := range []string{"version", "productVersion", "buildVersion", "buildTime", "name", "artifact", "group", "commit", "commitShort", "commitTime", "branch"} {
		if _, ok := m[k]; !ok {
			t.Errorf("version lacks %s: %v", k, m)
		}
	}
	if m["version"] == "" || m["name"] == "" {
		t.Fatalf("version %v", m)
	}
	// The test binary is built as go build builds, without make's linker
	// flags and without VCS stamping: buildTime must still be a timestamp.
	bt, _ := m["buildTime"].(string)
	if _, err := time.Parse(time.RFC3339, bt); err != nil {
		t.Errorf("buildTime %v is not an RFC 3339 timestamp", m["buildTime"])
	}
}
