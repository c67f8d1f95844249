package acs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/cwmp"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
)

// rawInform encodes an Inform and then puts raw bytes in place of markers,
// so that a test can send what our encoder would never write (it replaces
// invalid UTF-8). Markers: SERIAL, MANUF, OUIX, CLASS, PNAME, PVALUE,
// PTYPE, EVCODE.
func rawInform(t *testing.T, repl map[string]string, extraEvents int) []byte {
	t.Helper()
	inf := &cwmp.Inform{DeviceID: cwmp.DeviceID{Manufacturer: "MANUF", OUI: "OUIX", ProductClass: "CLASS", SerialNumber: "SERIAL"},
		Event: []cwmp.EventStruct{{EventCode: "EVCODE"}}, MaxEnvelopes: 1, CurrentTime: time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC),
		ParameterList: []cwmp.ParameterValueStruct{
			{Name: "InternetGatewayDevice.DeviceInfo.SoftwareVersion", Value: cwmp.String("1.0")},
			{Name: "PNAME", Value: cwmp.Value{Type: "PTYPE", Text: "PVALUE"}},
		}}
	for i := 0; i < extraEvents; i++ {
		inf.Event = append(inf.Event, cwmp.EventStruct{EventCode: cwmp.EventValueChange})
	}
	b, err := cwmp.Encode(cwmp.NewEnvelope(cwmp.CWMP10, "id-7", inf))
	if err != nil {
		t.Fatal(err)
	}
	defaults := map[string]string{"SERIAL": "VAL1", "MANUF": "Acme", "OUIX": "00D09E", "CLASS": "IGD", "EVCODE": cwmp.EventPeriodic,
		"PNAME": "InternetGatewayDevice.ManagementServer.PeriodicInformInterval", "PTYPE": cwmp.TypeUnsignedInt, "PVALUE": "300"}
	for k, v := range repl {
		defaults[k] = v
	}
	for k, v := range defaults {
		b = bytes.ReplaceAll(b, []byte(">"+k+"<"), []byte(">"+v+"<"))
		b = bytes.ReplaceAll(b, []byte(`"`+k+`"`), []byte(`"`+v+`"`))
	}
	return b
}

// TestInformFieldsValidatedAtBoundary: an Inform whose fields break
// TR-069's limits (invalid UTF-8, over-long strings, a malformed OUI) gets
// fault 8003 with its cwmp:ID, and nothing of it is stored; values at the
// limits pass. The fault names the field, never the value.
func TestInformFieldsValidatedAtBoundary(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name        string
		repl        map[string]string
		extraEvents int
		wantField   string // "" for accepted
	}{
		{"valid", nil, 0, ""},
		{"serial of 64 two-byte characters", map[string]string{"SERIAL": strings.Repeat("é", 64)}, 0, ""},
		{"lower-case OUI", map[string]string{"OUIX": "00d09e"}, 0, ""},
		{"empty product class", map[string]string{"CLASS": ""}, 0, ""},
		{"64 events", nil, 63, ""},
		{"parameter name of 256", map[string]string{"PNAME": "InternetGatewayDevice." + long(256-len("InternetGatewayDevice."))}, 0, ""},
		{"serial with invalid UTF-8", map[string]string{"SERIAL": "P\xff1"}, 0, "DeviceId.SerialNumber: not valid UTF-8"},
		{"serial of 12,000 characters", map[string]string{"SERIAL": long(12000)}, 0, "DeviceId.SerialNumber: 12000 characters, at most 64 allowed"},
		{"serial of 65 characters", map[string]string{"SERIAL": long(65)}, 0, "DeviceId.SerialNumber"},
		{"empty serial", map[string]string{"SERIAL": ""}, 0, "DeviceId.SerialNumber: empty"},
		{"OUI of 5 characters", map[string]string{"OUIX": "00D09"}, 0, "DeviceId.OUI"},
		{"OUI not hexadecimal", map[string]string{"OUIX": "00D0GE"}, 0, "DeviceId.OUI"},
		{"empty OUI", map[string]string{"OUIX": ""}, 0, "DeviceId.OUI"},
		{"manufacturer of 65", map[string]string{"MANUF": long(65)}, 0, "DeviceId.Manufacturer"},
		{"product class of 65", map[string]string{"CLASS": long(65)}, 0, "DeviceId.ProductClass"},
		{"product class with invalid UTF-8", map[string]string{"CLASS": "\xc3("}, 0, "DeviceId.ProductClass: not valid UTF-8"},
		{"event code of 65", map[string]string{"EVCODE": long(65)}, 0, "Event[0].EventCode"},
		{"65 events", nil, 64, "Event: 65 events"},
		{"parameter name of 257", map[string]string{"PNAME": "InternetGatewayDevice." + long(257-len("InternetGatewayDevice."))}, 0, "ParameterList[1].Name"},
		{"value with invalid UTF-8", map[string]string{"PTYPE": cwmp.TypeString, "PNAME": "InternetGatewayDevice.X", "PVALUE": "a\xffb"}, 0, "ParameterList[1].Value (InternetGatewayDevice.X): not valid UTF-8"},
		{"unsignedInt of 40 digits", map[string]string{"PVALUE": strings.Repeat("9", 40)}, 0, "ParameterList[1].Value"},
		{"SoftwareVersion over string(64)", map[string]string{"PNAME": "Device.DeviceInfo.SoftwareVersion", "PTYPE": cwmp.TypeString, "PVALUE": long(65)}, 0, "ParameterList[1].Value (Device.DeviceInfo.SoftwareVersion): 65 characters, at most 64"},
		{"ConnectionRequestURL over string(256)", map[string]string{"PNAME": "InternetGatewayDevice.ManagementServer.ConnectionRequestURL", "PTYPE": cwmp.TypeString, "PVALUE": "http://" + long(250)}, 0, "ConnectionRequestURL): 257 characters"},
		{"ExternalIPAddress over string(45)", map[string]string{"PNAME": "InternetGatewayDevice.WANDevice.1.WANConnectionDevice.1.WANIPConnection.1.ExternalIPAddress", "PTYPE": cwmp.TypeString, "PVALUE": long(46)}, 0, "ExternalIPAddress): 46 characters"},
		{"string value over 65535", map[string]string{"PNAME": "InternetGatewayDevice.X", "PTYPE": cwmp.TypeString, "PVALUE": long(65536)}, 0, "ParameterList[1].Value (InternetGatewayDevice.X): 65536 characters"},
	}
	forACS(t, func(t *testing.T, db *sqlstore.DB) {
		cfg := testConfig()
		cfg.AllowUnauthenticated = true
		a := startACS(t, db, cfg)
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				repl := map[string]string{"SERIAL": fmt.Sprintf("VAL%d", i), "OUIX": "00D09E", "CLASS": "IGD"}
				for k, v := range tt.repl {
					repl[k] = v
				}
				before, _, err := a.store.CountDevices(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				resp, err := http.Post(a.srv.URL, "text/xml", bytes.NewReader(rawInform(t, repl, tt.extraEvents)))
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if tt.wantField == "" {
					if resp.StatusCode != http.StatusOK {
						t.Fatalf("status %d, want 200: %s", resp.StatusCode, body)
					}
					if _, err := a.store.DeviceByKey(context.Background(), DeviceKey{OUI: repl["OUIX"], ProductClass: repl["CLASS"], Serial: repl["SERIAL"]}); err != nil {
						t.Fatalf("accepted Inform not stored: %v", err)
					}
					return
				}
				env, err := cwmp.Decode(body)
				if err != nil || resp.StatusCode != http.StatusInternalServerError {
					t.Fatalf("status %d, want 500 with a CWMP fault: %s", resp.StatusCode, clipBody(body))
				}
				f, ok := env.Body.(*cwmp.Fault)
				if !ok || f.FaultCode != cwmp.FaultInvalidArguments || env.ID != "id-7" {
					t.Fatalf("got %s %+v (ID %q), want fault 8003 with ID id-7", env.Body.Method(), env.Body, env.ID)
				}
				if !strings.Contains(f.FaultString, tt.wantField) {
					t.Errorf("FaultString %q lacks %q", f.FaultString, tt.wantField)
				}
				if len(f.FaultString) > 256 {
					t.Errorf("FaultString of %d bytes: the offending value leaked into it", len(f.FaultString))
				}
				if after, _, _ := a.store.CountDevices(context.Background()); after != before {
					t.Fatalf("a refused Inform was stored (%d devices, were %d)", after, before)
				}
			})
		}
	})
}

func clipBody(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

// TestBadSendersDoNotFailGoodInforms is the load: good CPEs keep
// opening sessions while two senders post hostile Informs. On PostgreSQL
// 60-71 % of the good sessions used to get 503; now every one succeeds.
func TestBadSendersDoNotFailGoodInforms(t *testing.T) {
	forACS(t, func(t *testing.T, db *sqlstore.DB) {
		cfg := testConfig()
		cfg.AllowUnauthenticated = true
		a := startACS(t, db, cfg)
		stop := make(chan struct{})
		var bad sync.WaitGroup
		badBodies := [][]byte{rawInform(t, map[string]string{"SERIAL": "P\xff1"}, 0), rawInform(t, map[string]string{"SERIAL": incompressible(12000)}, 0)}
		badAnswers := make([]map[int]int, len(badBodies))
		for i, body := range badBodies {
			bad.Add(1)
			badAnswers[i] = map[int]int{}
			go func() {
				defer bad.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					resp, err := http.Post(a.srv.URL, "text/xml", bytes.NewReader(body))
					if err != nil {
						continue
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					badAnswers[i][resp.StatusCode]++
				}
			}()
		}
		const cpes, rounds = 24, 3
		var good sync.WaitGroup
		var mu sync.Mutex
		failures := map[string]int{}
		for c := 0; c < cpes; c++ {
			good.Add(1)
			go func() {
				defer good.Done()
				jar, _ := cookiejar.New(nil)
				hc := &http.Client{Jar: jar, Timeout: 30 * time.Second}
				body := rawInform(t, map[string]string{"SERIAL": fmt.Sprintf("GOOD%02d", c)}, 0)
				for r := 0; r < rounds; r++ {
					outcome := goodSession(hc, a.srv.URL, body)
					if outcome != "" {
						mu.Lock()
						failures[outcome]++
						mu.Unlock()
					}
				}
			}()
		}
		good.Wait()
		close(stop)
		bad.Wait()
		if len(failures) > 0 {
			t.Fatalf("good sessions failed next to bad senders: %v", failures)
		}
		for i, got := range badAnswers {
			for code := range got {
				if code != http.StatusInternalServerError {
					t.Errorf("bad sender %d got status %d (answers %v), want only 500 faults", i, code, got)
				}
			}
		}
		if total, _, _ := a.store.CountDevices(context.Background()); total != cpes {
			t.Fatalf("%d devices stored, want the %d good ones", total, cpes)
		}
	})
}

// goodSession runs Inform then an empty POST and describes what went
// wrong, or returns "".
func goodSession(hc *http.Client, url string, inform []byte) string {
	resp, err := hc.Post(url, "text/xml", bytes.NewReader(inform))
	if err != nil {
		return "inform: " + err.Error()
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("inform: status %d", resp.StatusCode)
	}
	resp, err = hc.Post(url, "text/xml", nil)
	if err != nil {
		return "empty POST: " + err.Error()
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Sprintf("empty POST: status %d", resp.StatusCode)
	}
	return ""
}

// TestSessionRequestsValidated: CPE requests after the Inform are held to
// TR-069's limits too (fault 8003 with their cwmp:ID), and the session goes
// on after the fault.
func TestSessionRequestsValidated(t *testing.T) {
	now := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	args := make([]cwmp.ArgStruct, 17)
	tests := []struct {
		name      string
		msg       cwmp.Message
		wantFault string // "" for accepted
	}{
		{"TransferComplete", &cwmp.TransferComplete{CommandKey: strings.Repeat("k", 32), StartTime: now, CompleteTime: now}, ""},
		{"TransferComplete CommandKey over string(32)", &cwmp.TransferComplete{CommandKey: strings.Repeat("k", 33)}, "CommandKey: 33 characters"},
		{"TransferComplete FaultString over string(256)", &cwmp.TransferComplete{FaultStruct: cwmp.FaultStruct{FaultCode: 9010, FaultString: strings.Repeat("f", 257)}}, "FaultStruct.FaultString"},
		{"AutonomousTransferComplete TransferURL over 1024", &cwmp.AutonomousTransferComplete{TransferURL: "http://" + strings.Repeat("u", 1020)}, "TransferURL: 1027 characters"},
		{"RequestDownload with 17 arguments", &cwmp.RequestDownload{FileType: "1 Firmware Upgrade Image", FileTypeArg: args}, "FileTypeArg: 17 arguments"},
		{"RequestDownload FileType over string(64)", &cwmp.RequestDownload{FileType: strings.Repeat("t", 65)}, "FileType: 65 characters"},
	}
	a := startACS(t, sqltest.Open(t, sqlstore.SQLite), testConfig())
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cpe := newCPE(t, a.srv.URL, fmt.Sprintf("REQ%d", i), DataModelTR098)
			mustInform(t, cpe, cwmp.EventPeriodic)
			resp, body := cpe.post(cwmp.NewEnvelope(cpe.version, "req-1", tt.msg))
			env, err := cwmp.Decode(body)
			if err != nil {
				t.Fatalf("%d %s: %v", resp.StatusCode, body, err)
			}
			if tt.wantFault == "" {
				if resp.StatusCode != http.StatusOK || env.Body.Method() != tt.msg.Method()+"Response" {
					t.Fatalf("%d %s", resp.StatusCode, env.Body.Method())
				}
			} else {
				f, ok := env.Body.(*cwmp.Fault)
				if resp.StatusCode != http.StatusInternalServerError || !ok || f.FaultCode != cwmp.FaultInvalidArguments || env.ID != "req-1" ||
					!strings.Contains(f.FaultString, tt.wantFault) {
					t.Fatalf("%d %+v, want fault 8003 naming %q", resp.StatusCode, env.Body, tt.wantFault)
				}
			}
			if resp, _ := cpe.post(nil); resp.StatusCode != http.StatusNoContent {
				t.Fatalf("session after the answer: %d", resp.StatusCode)
			}
		})
	}
}

// BenchmarkValidateInform is the cost the boundary checks add to every
// Inform: the acsload Inform (25 parameters).
func BenchmarkValidateInform(b *testing.B) {
	inf := &cwmp.Inform{DeviceID: cwmp.DeviceID{Manufacturer: "Acme Networks", OUI: "00D09E", ProductClass: "HG8245H", SerialNumber: "ACME00012345"},
		Event: []cwmp.EventStruct{{EventCode: cwmp.EventPeriodic}}, MaxEnvelopes: 1}
	for i := 0; i < 25; i++ {
		inf.ParameterList = append(inf.ParameterList, cwmp.ParameterValueStruct{
			Name: fmt.Sprintf("InternetGatewayDevice.LANDevice.1.WLANConfiguration.%d.SSID", i), Value: cwmp.String("network name " + fmt.Sprint(i))})
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := validateInform(inf); err != nil {
			b.Fatal(err)
		}
	}
}
