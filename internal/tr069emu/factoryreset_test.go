package tr069emu

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/cwmp"
	"cpesuite/internal/testutil"
	"cpesuite/internal/tr069emu/cpe"
)

// informLog is an ACS that accepts every Inform and ends the session at
// once, recording which path each Inform reached and its events.
type informLog struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []loggedInform
}

type loggedInform struct {
	path   string
	serial string
	events []string
}

func newInformLog(t *testing.T) *informLog {
	l := &informLog{}
	l.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if len(bytes.TrimSpace(body)) == 0 {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		env, err := cwmp.Decode(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		inf, ok := env.Body.(*cwmp.Inform)
		if !ok {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		li := loggedInform{path: r.URL.Path, serial: inf.DeviceID.SerialNumber}
		for _, e := range inf.Event {
			li.events = append(li.events, e.EventCode)
		}
		l.mu.Lock()
		l.got = append(l.got, li)
		l.mu.Unlock()
		b, _ := cwmp.Encode(env.Reply(&cwmp.InformResponse{MaxEnvelopes: 1}))
		w.Header().Set("Content-Type", `text/xml; charset="utf-8"`)
		_, _ = w.Write(b)
	}))
	t.Cleanup(l.srv.Close)
	return l
}

// wait polls for the n-th Inform (from 1) of serial at path and returns
// its events.
func (l *informLog) wait(t *testing.T, serial, path string, n int) []string {
	t.Helper()
	var events []string
	testutil.Eventually(t, 30*time.Second, "Inform "+strconv.Itoa(n)+" of "+serial+" at "+path, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		seen := 0
		for _, g := range l.got {
			if g.serial == serial && g.path == path {
				if seen++; seen == n {
					events = g.events
					return true
				}
			}
		}
		return false
	})
	return events
}

// TestFactoryResetRestartsFromWholeStoredConfig changes a running device's
// stored configuration (ACS URL, tree file, auto-update list) and edits its
// tree, then resets it: the device must come back from the whole stored
// configuration, show it in activeEmulators and inform 0 BOOTSTRAP with
// 1 BOOT at the stored ACS URL. Without a stored configuration the one it
// was started with is the factory state.
func TestFactoryResetRestartsFromWholeStoredConfig(t *testing.T) {
	acs := newInformLog(t)
	e := startEmu(t, testConfig(t, deadACS))
	before := []cpe.Updatable{{Name: "Device.DeviceInfo.ProcessStatus.CPUUsage", Type: "INT", StepType: "RANDOM", Min: 0, Max: 100, Step: 1}}
	after := []cpe.Updatable{{Name: "InternetGatewayDevice.DeviceInfo.UpTime", Type: "INT", StepType: "INCREMENT", Min: 0, Max: 1000, Step: 5}}
	for _, tc := range []struct {
		name     string
		serial   string
		save     bool
		wantFile string
		wantPath string
		wantUpd  []cpe.Updatable
		probe    string // a parameter of the tree the reset must bring back
	}{
		{"stored configuration changed while running", "FRSTORED", true, "tr098-base.xml", "/second", after, "InternetGatewayDevice.DeviceInfo.SerialNumber"},
		{"started without saving", "FRUNSAVED", false, "tr181-base.xml", "/first", before, "Device.DeviceInfo.SerialNumber"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := map[string]any{"serial": tc.serial, "acsUrl": acs.srv.URL + "/first", "parameterFile": "tr181-base.xml",
				"updatableParameters": before}
			q := "?saveConfig=false"
			if tc.save {
				q = ""
			}
			e.must(200, e.do("POST", "/apiV2/start"+q, start))
			if got := acs.wait(t, tc.serial, "/first", 1); !slices.Equal(got, []string{cwmp.EventBootstrap, cwmp.EventBoot}) {
				t.Errorf("first Inform after power-on: events %v, want 0 BOOTSTRAP and 1 BOOT", got)
			}
			e.must(204, e.do("POST", "/apiV2/changeParameter", map[string]string{"serial": tc.serial,
				"parameterName": "Device.DeviceInfo.ProvisioningCode", "parameterValue": "EDITED"}))
			if tc.save {
				e.must(204, e.do("POST", "/apiV2/saveDevice", map[string]any{"serial": tc.serial, "acsUrl": acs.srv.URL + "/second",
					"parameterFile": "tr098-base.xml", "updatableParameters": after, "enableHttpConnectionRequest": true}))
			}

			e.must(204, e.do("POST", "/apiV2/factoryReset", map[string]string{"serial": tc.serial}))

			nth := 1
			if tc.wantPath == "/first" {
				nth = 2
			}
			if got := acs.wait(t, tc.serial, tc.wantPath, nth); !slices.Equal(got, []string{cwmp.EventBootstrap, cwmp.EventBoot}) {
				t.Errorf("Inform after the reset: events %v, want 0 BOOTSTRAP and 1 BOOT", got)
			}
			var active []ActiveEmulator
			e.must(200, e.do("GET", "/apiV2/activeEmulators", nil)).json(t, &active)
			i := slices.IndexFunc(active, func(a ActiveEmulator) bool { return a.Serial == tc.serial })
			if i < 0 {
				t.Fatalf("activeEmulators lacks %s after the reset: %+v", tc.serial, active)
			}
			if a := active[i]; a.ParameterFile != tc.wantFile || a.ACSURL != acs.srv.URL+tc.wantPath || !a.IsRunning {
				t.Errorf("activeEmulators shows %+v, want parameterFile %s, acsUrl %s, running", a, tc.wantFile, acs.srv.URL+tc.wantPath)
			}
			var upd []cpe.Updatable
			e.must(200, e.do("GET", "/apiV2/updatableParameters?serial="+tc.serial, nil)).json(t, &upd)
			if len(upd) != 1 || upd[0].Name != tc.wantUpd[0].Name || upd[0].StepType != tc.wantUpd[0].StepType {
				t.Errorf("updatableParameters after the reset %+v, want %+v", upd, tc.wantUpd)
			}
			var pv map[string]string
			e.must(200, e.do("GET", "/apiV2/parameterValue?serial="+tc.serial+"&parameterName="+tc.probe, nil)).json(t, &pv)
			if pv["value"] != tc.serial {
				t.Errorf("%s after the reset = %v, want the serial", tc.probe, pv)
			}
			if !tc.save {
				e.must(200, e.do("GET", "/apiV2/parameterValue?serial="+tc.serial+"&parameterName=Device.DeviceInfo.ProvisioningCode", nil)).json(t, &pv)
				if pv["value"] == "EDITED" {
					t.Errorf("the reset kept the edited ProvisioningCode")
				}
			}
		})
	}
	var stats Statistics
	e.must(200, e.do("GET", "/apiV2/statistics", nil)).json(t, &stats)
	if stats.ActiveEmulators != 2 {
		t.Errorf("statistics %+v after the resets, want 2 active emulators", stats)
	}
}
