package tree

import (
	"bytes"
	"testing"
)

func mustBase(t testing.TB, model string) *Template {
	t.Helper()
	tp, err := Base(model)
	if err != nil {
		t.Fatalf("Base(%s): %v", model, err)
	}
	return tp
}

func TestBase(t *testing.T) {
	for _, model := range []string{TR098, TR181} {
		tp := mustBase(t, model)
		if tp.DataModel() != model {
			t.Fatalf("Base(%s).DataModel() = %s", model, tp.DataModel())
		}
		if again := mustBase(t, model); again != tp {
			t.Fatalf("Base(%s) parsed twice", model)
		}
		if tp.Len() < 250 {
			t.Fatalf("Base(%s) has %d parameters", model, tp.Len())
		}
	}
	if tp, err := Base("tr-181"); err != nil || tp.DataModel() != TR181 {
		t.Fatalf("Base(tr-181) = %v, %v", tp, err)
	}
	if _, err := Base("TR-104"); err == nil {
		t.Fatalf("Base(TR-104) did not fail")
	}
	files := BaseFiles()
	if len(files) != 2 {
		t.Fatalf("BaseFiles = %d files", len(files))
	}
	for name, data := range files {
		tp, err := Parse(bytes.NewReader(data), 0)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := map[string]string{"tr098-base.xml": TR098, "tr181-base.xml": TR181}[name]
		if tp.DataModel() != want {
			t.Fatalf("%s is %s", name, tp.DataModel())
		}
		data[0] = 'X' // a copy: the next caller is not affected
	}
	if BaseFiles()["tr098-base.xml"][0] != '<' {
		t.Fatalf("BaseFiles returned shared bytes")
	}
}

// TestBaseContents checks what the emulator and the ACS tests rely on.
func TestBaseContents(t *testing.T) {
	type want struct {
		typ      Type
		writable bool
		value    string
	}
	const unknown = "0001-01-01T00:00:00Z"
	ro := func(t Type, v string) want { return want{t, false, v} }
	rw := func(t Type, v string) want { return want{t, true, v} }
	cases := map[string]map[string]want{
		TR098: {
			"DeviceInfo.Manufacturer":                                               ro(String, "cpesuite"),
			"DeviceInfo.ManufacturerOUI":                                            ro(String, "A1B2C3"),
			"DeviceInfo.ProductClass":                                               ro(String, "EMU-GW"),
			"DeviceInfo.SerialNumber":                                               ro(String, "EMU0000001"),
			"DeviceInfo.UpTime":                                                     ro(UnsignedInt, "0"),
			"DeviceInfo.ProvisioningCode":                                           rw(String, ""),
			"ManagementServer.PeriodicInformEnable":                                 rw(Boolean, "true"),
			"ManagementServer.PeriodicInformInterval":                               rw(UnsignedInt, "3600"),
			"ManagementServer.PeriodicInformTime":                                   rw(DateTime, unknown),
			"ManagementServer.ConnectionRequestURL":                                 ro(String, ""),
			"ManagementServer.ParameterKey":                                         ro(String, ""),
			"ManagementServer.UpgradesManaged":                                      rw(Boolean, "false"),
			"Time.CurrentLocalTime":                                                 ro(DateTime, unknown),
			"LANDevice.1.WLANConfiguration.1.KeyPassphrase":                         rw(String, ""),
			"LANDevice.1.WLANConfiguration.2.X_CPESUITE_SNR":                        ro(Int, "30"),
			"LANDevice.1.WLANConfiguration.2.X_CPESUITE_Band":                       ro(String, "5GHz"),
			"LANDevice.1.WLANConfiguration.1.Channel":                               rw(UnsignedInt, "6"),
			"LANDevice.1.Hosts.Host.2.IPAddress":                                    ro(String, "192.168.1.11"),
			"WANDevice.1.WANConnectionDevice.1.WANIPConnection.1.ExternalIPAddress": rw(String, "203.0.113.10"),
			"DownloadDiagnostics.DiagnosticsState":                                  rw(String, "None"),
			"DownloadDiagnostics.Interface":                                         rw(String, ""),
			"DownloadDiagnostics.DownloadURL":                                       rw(String, ""),
			"DownloadDiagnostics.DSCP":                                              rw(UnsignedInt, "0"),
			"DownloadDiagnostics.EthernetPriority":                                  rw(UnsignedInt, "0"),
			"DownloadDiagnostics.ROMTime":                                           ro(DateTime, unknown),
			"DownloadDiagnostics.BOMTime":                                           ro(DateTime, unknown),
			"DownloadDiagnostics.EOMTime":                                           ro(DateTime, unknown),
			"DownloadDiagnostics.TestBytesReceived":                                 ro(UnsignedInt, "0"),
			"DownloadDiagnostics.TotalBytesReceived":                                ro(UnsignedInt, "0"),
			"DownloadDiagnostics.TCPOpenRequestTime":                                ro(DateTime, unknown),
			"DownloadDiagnostics.TCPOpenResponseTime":                               ro(DateTime, unknown),
			"UploadDiagnostics.DiagnosticsState":                                    rw(String, "None"),
			"UploadDiagnostics.Interface":                                           rw(String, ""),
			"UploadDiagnostics.UploadURL":                                           rw(String, ""),
			"UploadDiagnostics.DSCP":                                                rw(UnsignedInt, "0"),
			"UploadDiagnostics.EthernetPriority":                                    rw(UnsignedInt, "0"),
			"UploadDiagnostics.TestFileLength":                                      rw(UnsignedInt, "0"),
			"UploadDiagnostics.ROMTime":                                             ro(DateTime, unknown),
			"UploadDiagnostics.BOMTime":                                             ro(DateTime, unknown),
			"UploadDiagnostics.EOMTime":                                             ro(DateTime, unknown),
			"UploadDiagnostics.TotalBytesSent":                                      ro(UnsignedInt, "0"),
			"UploadDiagnostics.TCPOpenRequestTime":                                  ro(DateTime, unknown),
			"UploadDiagnostics.TCPOpenResponseTime":                                 ro(DateTime, unknown),
			"IPPingDiagnostics.DiagnosticsState":                                    rw(String, "None"),
			"IPPingDiagnostics.Interface":                                           rw(String, ""),
			"IPPingDiagnostics.Host":                                                rw(String, ""),
			"IPPingDiagnostics.NumberOfRepetitions":                                 rw(UnsignedInt, "4"),
			"IPPingDiagnostics.Timeout":                                             rw(UnsignedInt, "1000"),
			"IPPingDiagnostics.DataBlockSize":                                       rw(UnsignedInt, "64"),
			"IPPingDiagnostics.DSCP":                                                rw(UnsignedInt, "0"),
			"IPPingDiagnostics.SuccessCount":                                        ro(UnsignedInt, "0"),
			"IPPingDiagnostics.FailureCount":                                        ro(UnsignedInt, "0"),
			"IPPingDiagnostics.AverageResponseTime":                                 ro(UnsignedInt, "0"),
			"IPPingDiagnostics.MinimumResponseTime":                                 ro(UnsignedInt, "0"),
			"IPPingDiagnostics.MaximumResponseTime":                                 ro(UnsignedInt, "0"),
			"IPPingDiagnostics.X_CPESUITE_Method":                                   ro(String, ""),
		},
		TR181: {
			"RootDataModelVersion":                              ro(String, "2.15"),
			"DeviceInfo.Manufacturer":                           ro(String, "cpesuite"),
			"DeviceInfo.ManufacturerOUI":                        ro(String, "A1B2C3"),
			"DeviceInfo.UpTime":                                 ro(UnsignedInt, "0"),
			"ManagementServer.URL":                              rw(String, "http://127.0.0.1:7547/"),
			"ManagementServer.PeriodicInformInterval":           rw(UnsignedInt, "3600"),
			"Time.CurrentLocalTime":                             ro(DateTime, unknown),
			"IP.Interface.1.IPv4Address.1.IPAddress":            rw(String, "203.0.113.10"),
			"Hosts.Host.1.IPAddress":                            ro(String, "192.168.1.10"),
			"Hosts.HostNumberOfEntries":                         ro(UnsignedInt, "2"),
			"WiFi.Radio.1.Channel":                              rw(UnsignedInt, "6"),
			"WiFi.Radio.2.OperatingFrequencyBand":               rw(String, "5GHz"),
			"WiFi.Radio.1.Stats.Noise":                          ro(Int, "-92"),
			"WiFi.Radio.1.X_CPESUITE_SNR":                       ro(Int, "35"),
			"WiFi.SSID.1.SSID":                                  rw(String, "cpesuite-2G"),
			"WiFi.AccessPoint.1.Security.KeyPassphrase":         rw(String, ""),
			"IP.Diagnostics.IPPing.DiagnosticsState":            rw(String, "None"),
			"IP.Diagnostics.IPPing.Interface":                   rw(String, ""),
			"IP.Diagnostics.IPPing.ProtocolVersion":             rw(String, "Any"),
			"IP.Diagnostics.IPPing.Host":                        rw(String, ""),
			"IP.Diagnostics.IPPing.NumberOfRepetitions":         rw(UnsignedInt, "4"),
			"IP.Diagnostics.IPPing.Timeout":                     rw(UnsignedInt, "1000"),
			"IP.Diagnostics.IPPing.DataBlockSize":               rw(UnsignedInt, "64"),
			"IP.Diagnostics.IPPing.DSCP":                        rw(UnsignedInt, "0"),
			"IP.Diagnostics.IPPing.IPAddressUsed":               ro(String, ""),
			"IP.Diagnostics.IPPing.SuccessCount":                ro(UnsignedInt, "0"),
			"IP.Diagnostics.IPPing.FailureCount":                ro(UnsignedInt, "0"),
			"IP.Diagnostics.IPPing.AverageResponseTime":         ro(UnsignedInt, "0"),
			"IP.Diagnostics.IPPing.MinimumResponseTime":         ro(UnsignedInt, "0"),
			"IP.Diagnostics.IPPing.MaximumResponseTime":         ro(UnsignedInt, "0"),
			"IP.Diagnostics.IPPing.AverageResponseTimeDetailed": ro(UnsignedInt, "0"),
			"IP.Diagnostics.IPPing.MinimumResponseTimeDetailed": ro(UnsignedInt, "0"),
			"IP.Diagnostics.IPPing.MaximumResponseTimeDetailed": ro(UnsignedInt, "0"),
			"IP.Diagnostics.IPPing.X_CPESUITE_Method":           ro(String, ""),
		},
	}
	// The TR-181 transfer diagnostics share most parameters.
	for _, obj := range []string{"IP.Diagnostics.DownloadDiagnostics.", "IP.Diagnostics.UploadDiagnostics."} {
		c := cases[TR181]
		up := obj == "IP.Diagnostics.UploadDiagnostics."
		url, test := "DownloadURL", "TestBytesReceived"
		if up {
			url, test = "UploadURL", "TestBytesSent"
			c[obj+"TestFileLength"] = rw(UnsignedInt, "0")
		}
		for n, w := range map[string]want{
			"DiagnosticsState": rw(String, "None"), "Interface": rw(String, ""), url: rw(String, ""),
			"DSCP": rw(UnsignedInt, "0"), "EthernetPriority": rw(UnsignedInt, "0"), "ProtocolVersion": rw(String, "Any"),
			"NumberOfConnections": rw(UnsignedInt, "1"), "EnablePerConnectionResults": rw(Boolean, "false"),
			"TimeBasedTestDuration": rw(UnsignedInt, "0"), "TimeBasedTestMeasurementInterval": rw(UnsignedInt, "0"),
			"TimeBasedTestMeasurementOffset": rw(UnsignedInt, "0"),
			"ROMTime":                        ro(DateTime, unknown), "BOMTime": ro(DateTime, unknown), "EOMTime": ro(DateTime, unknown),
			"TCPOpenRequestTime": ro(DateTime, unknown), "TCPOpenResponseTime": ro(DateTime, unknown),
			test: ro(UnsignedLong, "0"), "TotalBytesReceived": ro(UnsignedLong, "0"), "TotalBytesSent": ro(UnsignedLong, "0"),
			"PerConnectionResultNumberOfEntries": ro(UnsignedInt, "0"), "IncrementalResultNumberOfEntries": ro(UnsignedInt, "0"),
		} {
			c[obj+n] = w
		}
	}
	for model, params := range cases {
		tp := mustBase(t, model)
		d := New(tp)
		for n, w := range params {
			p := mustGet(t, d, tp.Root()+n)
			if p.Type != w.typ || p.Writable != w.writable || p.Value != w.value || p.Object {
				t.Errorf("%s%s = %+v, want %+v", tp.Root(), n, p, w)
			}
		}
	}

	// PerConnectionResult instances come from the template, with every
	// TR-143 parameter, and are counted.
	d := New(mustBase(t, TR181))
	for _, obj := range []string{"Device.IP.Diagnostics.DownloadDiagnostics.", "Device.IP.Diagnostics.UploadDiagnostics."} {
		test := "TestBytesReceived"
		if obj == "Device.IP.Diagnostics.UploadDiagnostics." {
			test = "TestBytesSent"
		}
		for i := 1; i <= 2; i++ {
			if n, err := d.AddObject(obj + "PerConnectionResult."); err != nil || int(n) != i {
				t.Fatalf("AddObject(%sPerConnectionResult.) = %d, %v", obj, n, err)
			}
		}
		ps, err := d.Values([]string{obj + "PerConnectionResult.2."})
		if err != nil {
			t.Fatal(err)
		}
		wantNames(t, "PerConnectionResult.2", namesOf(ps), []string{
			obj + "PerConnectionResult.2.BOMTime", obj + "PerConnectionResult.2.EOMTime", obj + "PerConnectionResult.2.ROMTime",
			obj + "PerConnectionResult.2.TCPOpenRequestTime", obj + "PerConnectionResult.2.TCPOpenResponseTime",
			obj + "PerConnectionResult.2." + test, obj + "PerConnectionResult.2.TotalBytesReceived", obj + "PerConnectionResult.2.TotalBytesSent",
		})
		wantValue(t, d, obj+"PerConnectionResultNumberOfEntries", "2")
	}

	// The forced Inform parameters.
	informs := map[string][]string{
		TR098: {"InternetGatewayDevice.DeviceSummary", "InternetGatewayDevice.DeviceInfo.HardwareVersion",
			"InternetGatewayDevice.DeviceInfo.SoftwareVersion", "InternetGatewayDevice.DeviceInfo.SpecVersion",
			"InternetGatewayDevice.DeviceInfo.ProvisioningCode", "InternetGatewayDevice.ManagementServer.ParameterKey",
			"InternetGatewayDevice.ManagementServer.ConnectionRequestURL",
			"InternetGatewayDevice.WANDevice.1.WANConnectionDevice.1.WANIPConnection.1.ExternalIPAddress"},
		TR181: {"Device.RootDataModelVersion", "Device.DeviceInfo.HardwareVersion", "Device.DeviceInfo.SoftwareVersion",
			"Device.DeviceInfo.ProvisioningCode", "Device.ManagementServer.ParameterKey",
			"Device.ManagementServer.ConnectionRequestURL", "Device.IP.Interface.1.IPv4Address.1.IPAddress"},
	}
	for model, want := range informs {
		wantNames(t, model+" InformParams", namesOf(New(mustBase(t, model)).InformParams()), want)
	}

	// The emulator's WiFi reset finds every radio's channel and SNR.
	wantNames(t, "TR-181 WiFi", New(mustBase(t, TR181)).Match("Device.WiFi.Radio.{i}.X_CPESUITE_SNR"),
		[]string{"Device.WiFi.Radio.1.X_CPESUITE_SNR", "Device.WiFi.Radio.2.X_CPESUITE_SNR"})
	wantNames(t, "TR-098 WiFi", New(mustBase(t, TR098)).Match("InternetGatewayDevice.LANDevice.{i}.WLANConfiguration.{i}.Channel"),
		[]string{"InternetGatewayDevice.LANDevice.1.WLANConfiguration.1.Channel", "InternetGatewayDevice.LANDevice.1.WLANConfiguration.2.Channel"})
}

// TestBaseTables checks that AddObject works on every table of both base
// trees and keeps the NumberOfEntries parameters right.
func TestBaseTables(t *testing.T) {
	for _, model := range []string{TR098, TR181} {
		tp := mustBase(t, model)
		d := New(tp)
		for _, key := range tp.Tables() {
			table := key[:len(key)-len("{i}.")]
			if _, ok := d.Get(table); !ok {
				// Nested tables exist in instances only.
				continue
			}
			before := len(d.instances(table))
			n, err := d.AddObject(table)
			if err != nil {
				t.Fatalf("%s: AddObject(%s): %v", model, table, err)
			}
			if int(n) != before+1 {
				t.Fatalf("%s: AddObject(%s) = %d with %d instances", model, table, n, before)
			}
			if p, ok := d.Get(countNameFor(table)); ok && p.Value != itoa(before+1) {
				t.Errorf("%s: %s = %s after AddObject, want %d", model, countNameFor(table), p.Value, before+1)
			}
		}
	}
}

func itoa(n int) string {
	return string(appendInt(nil, n))
}

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}
