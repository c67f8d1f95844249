package tr069emu

import (
	"strconv"
	"strings"
	"testing"

	"cpesuite/internal/testutil"
)

// TestWANBusyAPI drives the WAN load extension (/apiV2/makeWanBusy,
// resetWanBusy, wanTraffic) on both bundled trees and on a load-test
// device, and reads the effect where the ACS would: the tree's WAN byte
// counters.
func TestWANBusyAPI(t *testing.T) {
	e := startEmu(t, testConfig(t, deadACS))
	cases := []struct {
		serial, file string
		rx           string // the WAN's received-bytes counter in this tree
	}{
		{"WAN181", "tr181-base.xml", "Device.IP.Interface.1.Stats.BytesReceived"},
		{"WAN098", "tr098-base.xml", "InternetGatewayDevice.WANDevice.1.WANCommonInterfaceConfig.TotalBytesReceived"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			startSingle(t, e, tc.serial, tc.file)
			traffic := func() WANTraffic {
				var w WANTraffic
				e.must(200, e.do("GET", "/apiV2/wanTraffic?serial="+tc.serial, nil)).json(t, &w)
				return w
			}
			counter := func() uint64 {
				var v struct{ Value string }
				e.must(200, e.do("GET", "/apiV2/parameterValue?serial="+tc.serial+"&parameterName="+tc.rx, nil)).json(t, &v)
				n, err := strconv.ParseUint(v.Value, 10, 64)
				if err != nil {
					t.Fatalf("%s = %q", tc.rx, v.Value)
				}
				return n
			}
			idle := traffic()
			if idle.Busy || idle.DownloadBytesPerSecond != 0 || idle.Serial != tc.serial {
				t.Fatalf("new device %+v, want idle", idle)
			}
			e.must(204, e.do("POST", "/apiV2/makeWanBusy", map[string]any{"serial": tc.serial, "downloadBytesPerSecond": 50_000_000}))
			busy := traffic()
			if !busy.Busy || busy.DownloadBytesPerSecond != 50_000_000 || busy.UploadBytesPerSecond != 0 {
				t.Fatalf("after makeWanBusy %+v", busy)
			}
			// Idle background traffic would need minutes for a megabyte.
			from := counter()
			testutil.Eventually(t, testutil.MinDeadline, "busy WAN counter to move by a megabyte", func() bool { return counter() > from+1_000_000 })
			if now := traffic(); now.BytesReceived < busy.BytesReceived+1_000_000 {
				t.Fatalf("wanTraffic bytesReceived %d, before %d: counters and API disagree", now.BytesReceived, busy.BytesReceived)
			}
			e.must(204, e.do("POST", "/apiV2/resetWanBusy", map[string]string{"serial": tc.serial}))
			cleared := traffic()
			if cleared.Busy || cleared.DownloadBytesPerSecond != 0 {
				t.Fatalf("after resetWanBusy %+v", cleared)
			}
			if cleared.BytesReceived < busy.BytesReceived {
				t.Fatalf("counters went back on reset: %d -> %d", busy.BytesReceived, cleared.BytesReceived)
			}
		})
	}
	t.Run("load-test device", func(t *testing.T) {
		p := e.Properties()
		p.Groups, p.Concurrent = 1, 1
		e.must(204, e.do("POST", "/api/properties", p))
		e.must(204, e.do("POST", "/api/start", nil))
		serial := e.BatchSerial(1)
		testutil.Eventually(t, testutil.MinDeadline, "batch device "+serial, func() bool {
			_, err := e.device(serial)
			return err == nil
		})
		e.must(204, e.do("POST", "/apiV2/makeWanBusy", map[string]any{"serial": serial, "uploadBytesPerSecond": 1_000_000}))
		var w WANTraffic
		e.must(200, e.do("GET", "/apiV2/wanTraffic?serial="+serial, nil)).json(t, &w)
		if !w.Busy || w.UploadBytesPerSecond != 1_000_000 {
			t.Fatalf("batch device %+v after makeWanBusy", w)
		}
		e.must(204, e.do("POST", "/apiV2/resetWanBusy", map[string]string{"serial": serial}))
	})
}

// TestWANBusyAPIBadInput: the extension's boundary checks, each with the
// status and the reason in the {error} body.
func TestWANBusyAPIBadInput(t *testing.T) {
	e := startEmu(t, testConfig(t, deadACS))
	startSingle(t, e, "KNOWN1", "tr181-base.xml")
	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		want               string
	}{
		{"busy unknown", "POST", "/apiV2/makeWanBusy", map[string]any{"serial": "NOPE", "downloadBytesPerSecond": 1}, 404, "NOPE"},
		{"busy no serial", "POST", "/apiV2/makeWanBusy", map[string]any{"downloadBytesPerSecond": 1}, 400, "serial"},
		{"busy bad serial", "POST", "/apiV2/makeWanBusy", map[string]any{"serial": "../x", "downloadBytesPerSecond": 1}, 400, "serial"},
		{"busy negative", "POST", "/apiV2/makeWanBusy", map[string]any{"serial": "KNOWN1", "uploadBytesPerSecond": -1}, 400, "uploadBytesPerSecond"},
		{"busy above 10 Gbit/s", "POST", "/apiV2/makeWanBusy", map[string]any{"serial": "KNOWN1", "downloadBytesPerSecond": 1_250_000_001}, 400, "downloadBytesPerSecond"},
		{"busy no rate", "POST", "/apiV2/makeWanBusy", map[string]any{"serial": "KNOWN1"}, 400, "resetWanBusy"},
		{"busy zero rates", "POST", "/apiV2/makeWanBusy", map[string]any{"serial": "KNOWN1", "downloadBytesPerSecond": 0, "uploadBytesPerSecond": 0}, 400, "above 0"},
		{"busy not a number", "POST", "/apiV2/makeWanBusy", `{"serial":"KNOWN1","downloadBytesPerSecond":"fast"}`, 400, "downloadBytesPerSecond"},
		{"reset unknown", "POST", "/apiV2/resetWanBusy", map[string]string{"serial": "NOPE"}, 404, "NOPE"},
		{"reset no serial", "POST", "/apiV2/resetWanBusy", map[string]string{}, 400, "serial"},
		{"traffic unknown", "GET", "/apiV2/wanTraffic?serial=NOPE", nil, 404, "NOPE"},
		{"traffic no serial", "GET", "/apiV2/wanTraffic", nil, 400, "serial"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.method, tc.path, tc.body)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if got := r.errorText(t); !strings.Contains(got, tc.want) {
				t.Fatalf("error %q does not mention %q", got, tc.want)
			}
		})
	}
}
