package cwmp

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestVendorStyles decodes envelopes written the way different CPE stacks
// write them: other prefixes, default namespaces, every cwmp version, CRLF,
// CDATA, comments, single quotes, missing xsi:types and array forms.
func TestVendorStyles(t *testing.T) {
	cet := time.FixedZone("", 3600)
	est := time.FixedZone("", -5*3600)
	tests := []struct {
		file    string
		version Version
		id      string
		check   func(t *testing.T, env *Envelope)
	}{
		{"inform-soapenv-cwmp10.xml", CWMP10, "1", func(t *testing.T, env *Envelope) {
			in := env.Body.(*Inform)
			equal(t, "DeviceID", in.DeviceID, DeviceID{"Broadband & Fibre Ltd", "00E0FC", "EG8145V5", "48575443A1B2C3D4"})
			equal(t, "Event", in.Event, []EventStruct{{EventCode: EventBootstrap}, {EventCode: EventBoot}})
			timeEqual(t, in.CurrentTime, time.Date(2024, 3, 1, 10, 15, 0, 0, cet))
			equal(t, "ParameterKey", in.ParameterList[2].Value, String(`a&b<c>d"e'f`))
			equal(t, "UpTime", in.ParameterList[3].Value, UnsignedInt(3600))
			equal(t, "IDMustUnderstand", env.IDMustUnderstand, true)
		}},
		{"inform-soapenv-cwmp12-crlf.xml", CWMP12, "  spaced-id  ", func(t *testing.T, env *Envelope) {
			in := env.Body.(*Inform)
			equal(t, "Manufacturer", in.DeviceID.Manufacturer, "Tech<Co>")
			equal(t, "Event", in.Event, []EventStruct{{EventCode: EventPeriodic}})
			equal(t, "RetryCount", in.RetryCount, uint32(2))
			equal(t, "Banner", in.ParameterList[1].Value, String("line one\nline two"))
			equal(t, "Enable", in.ParameterList[2].Value, Value{Type: TypeBoolean, Text: "1"})
		}},
		{"inform-soap-default-ns-cwmp14.xml", CWMP14, "77", func(t *testing.T, env *Envelope) {
			in := env.Body.(*Inform)
			equal(t, "IDMustUnderstand", env.IDMustUnderstand, true)
			equal(t, "SessionTimeout", env.SessionTimeout, ptr(uint32(30)))
			equal(t, "SupportedCWMPVersions", env.SupportedCWMPVersions, "1.0,1.1,1.2,1.3,1.4")
			equal(t, "CurrentTime is the Unknown Time", in.CurrentTime.IsZero(), true)
			equal(t, "params", in.ParameterList, []ParameterValueStruct{
				{"Device.RootDataModelVersion", Value{Text: "2.15"}},
				{"Device.ManagementServer.ConnectionRequestURL", Value{Text: "http://[2001:db8::1]:7547/cr"}},
			})
			equal(t, "Kind of untyped", in.ParameterList[0].Value.Kind(), "string")
		}},
		{"inform-ns1-gsoap-cwmp11.xml", CWMP11, "gs-42", func(t *testing.T, env *Envelope) {
			in := env.Body.(*Inform)
			equal(t, "DeviceID", in.DeviceID, DeviceID{"Acme <Home> & Co", "00259E", "HG-8", "ACME-7"})
			equal(t, "Event", in.Event, []EventStruct{{EventCode: EventValueChange}, {EventCode: EventMDownload, CommandKey: "fw-1"}})
			timeEqual(t, in.CurrentTime, time.Date(2024, 3, 1, 9, 15, 0, 123000000, time.UTC))
			equal(t, "params", in.ParameterList, []ParameterValueStruct{
				{"InternetGatewayDevice.LANDevice.1.WLANConfiguration.1.SSID", String("Café €5 <free>")},
				{"InternetGatewayDevice.DeviceInfo.X_ACME_Counter", Value{Type: TypeUnsignedLong, Text: "18446744073709551615"}},
				{"InternetGatewayDevice.DeviceInfo.X_ACME_Empty", String("")},
			})
		}},
		{"inform-cwmp13-xs-prefix.xml", CWMP13, "900", func(t *testing.T, env *Envelope) {
			in := env.Body.(*Inform)
			equal(t, "SessionTimeout", env.SessionTimeout, ptr(uint32(120)))
			timeEqual(t, in.CurrentTime, time.Date(2024, 3, 1, 9, 15, 0, 0, est))
			p := in.ParameterList
			equal(t, "long", p[0].Value, Value{Type: "xs:long", Text: "-9223372036854775808"})
			if n, err := p[0].Value.AsInt(); err != nil || n != -9223372036854775808 {
				t.Errorf("AsInt = %d, %v", n, err)
			}
			equal(t, "Kind", p[1].Value.Kind(), "int")
			if b, err := p[2].Value.AsBytes(); err != nil || string(b) != "Hello, CWMP!" {
				t.Errorf("AsBytes = %q, %v", b, err)
			}
		}},
		{"gpvresponse-cwmp10-no-id.xml", CWMP10, "", func(t *testing.T, env *Envelope) {
			r := env.Body.(*GetParameterValuesResponse)
			equal(t, "script", r.ParameterList[0].Value.Text, `if a < b && c > d then echo "ok"`)
			equal(t, "IDMustUnderstand", env.IDMustUnderstand, false)
		}},
		{"fault-spv-prefixed-faultcode.xml", CWMP12, "acs-77", func(t *testing.T, env *Envelope) {
			equal[Message](t, "fault", env.Body, &Fault{SOAPFaultCode: "Client", FaultCode: 9003, FaultString: "Invalid arguments",
				SetParameterValuesFaults: []SPVFault{
					{"Device.WiFi.SSID.1.SSID", 9007, "Value too long"},
					{"Device.DeviceInfo.UpTime", 9008, ""},
				}})
		}},
		{"transfercomplete-cwmp10.xml", CWMP10, "tc-5", func(t *testing.T, env *Envelope) {
			equal(t, "NoMoreRequests", env.NoMoreRequests, ptr(false))
			equal[Message](t, "body", env.Body, &TransferComplete{CommandKey: "fw-7.15",
				StartTime: time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC), CompleteTime: time.Date(2024, 3, 1, 9, 3, 30, 0, time.UTC)})
		}},
		{"changedustate-array-form.xml", CWMP12, "du-9", func(t *testing.T, env *Envelope) {
			equal[Message](t, "body", env.Body, &ChangeDUState{CommandKey: "k", Operations: []Operation{
				InstallOp{URL: "http://apps.example/a.ipk", ExecutionEnvRef: "Device.SoftwareModules.ExecEnv.1."},
				UpdateOp{UUID: "11111111-2222-5333-8444-555555555555", Version: "2"},
				UninstallOp{UUID: "11111111-2222-5333-8444-555555555555"},
			}})
		}},
		{"dustatechangecomplete-array-form.xml", CWMP12, "5", func(t *testing.T, env *Envelope) {
			equal[Message](t, "body", env.Body, &DUStateChangeComplete{CommandKey: "du-9", Results: []OpResult{
				{UUID: "u1", DeploymentUnitRef: "Device.SoftwareModules.DeploymentUnit.1.", Version: "1", CurrentState: "Installed",
					Resolved: true, StartTime: time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC), CompleteTime: time.Date(2024, 3, 1, 9, 0, 5, 0, time.UTC)},
				{UUID: "u2", CurrentState: "Failed", Fault: FaultStruct{FaultCode: 9017, FaultString: "File transfer failure: unable to complete download"}},
			}})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "vendor", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			env, err := Decode(data)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if env.Version != tt.version || env.ID != tt.id {
				t.Errorf("Version, ID = %v, %q; want %v, %q", env.Version, env.ID, tt.version, tt.id)
			}
			tt.check(t, env)
			// The answer goes out in the CPE's version, and what we write
			// reads back the same.
			out, err := Encode(env)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			back, err := Decode(out)
			if err != nil {
				t.Fatalf("Decode(Encode): %v\n%s", err, out)
			}
			if back.Version != tt.version {
				t.Errorf("re-encoded version %v, want %v", back.Version, tt.version)
			}
			again, _ := Encode(back)
			if string(again) != string(out) {
				t.Errorf("encoding is not stable:\n%s\n---\n%s", out, again)
			}
		})
	}
}

func equal[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

func timeEqual(t *testing.T, got, want time.Time) {
	t.Helper()
	if !got.Equal(want) {
		t.Errorf("time = %v, want %v", got, want)
	}
	_, gotOff := got.Zone()
	_, wantOff := want.Zone()
	if gotOff != wantOff {
		t.Errorf("zone offset = %d, want %d", gotOff, wantOff)
	}
}
