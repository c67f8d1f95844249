package acs

import (
	"encoding/json"
	"strings"
	"testing"

	"cpesuite/internal/cwmp"
)

func TestDiagSetValues(t *testing.T) {
	tests := []struct {
		model string
		kind  TaskKind
		args  DiagnosticsArgs
		want  []string
	}{
		{DataModelTR098, KindUploadDiagnostics, DiagnosticsArgs{}, []string{
			"InternetGatewayDevice.UploadDiagnostics.UploadURL=http://st/upload", "InternetGatewayDevice.UploadDiagnostics.DSCP=0",
			"InternetGatewayDevice.UploadDiagnostics.TestFileLength=10000000", "InternetGatewayDevice.UploadDiagnostics.DiagnosticsState=Requested"}},
		{DataModelTR181, KindUploadDiagnostics, DiagnosticsArgs{URL: "http://x/up", TestFileLength: 5, NumberOfConnections: 4, EnablePerConnResults: true}, []string{
			"Device.IP.Diagnostics.UploadDiagnostics.UploadURL=http://x/up", "Device.IP.Diagnostics.UploadDiagnostics.DSCP=0",
			"Device.IP.Diagnostics.UploadDiagnostics.TestFileLength=5", "Device.IP.Diagnostics.UploadDiagnostics.NumberOfConnections=4",
			"Device.IP.Diagnostics.UploadDiagnostics.EnablePerConnectionResults=true", "Device.IP.Diagnostics.UploadDiagnostics.DiagnosticsState=Requested"}},
		{DataModelTR181, KindIPPing, DiagnosticsArgs{Host: "192.0.2.1", Interface: "Device.IP.Interface.1"}, []string{
			"Device.IP.Diagnostics.IPPing.Interface=Device.IP.Interface.1", "Device.IP.Diagnostics.IPPing.Host=192.0.2.1",
			"Device.IP.Diagnostics.IPPing.NumberOfRepetitions=4", "Device.IP.Diagnostics.IPPing.Timeout=1000",
			"Device.IP.Diagnostics.IPPing.DataBlockSize=64", "Device.IP.Diagnostics.IPPing.DSCP=0", "Device.IP.Diagnostics.IPPing.DiagnosticsState=Requested"}},
		{"", KindIPPing, DiagnosticsArgs{Host: "h"}, []string{"InternetGatewayDevice.IPPingDiagnostics.Host=h"}},
	}
	for _, tt := range tests {
		var got []string
		for _, v := range diagSetValues(tt.model, tt.kind, tt.args, "http://st/") {
			got = append(got, v.Name+"="+v.Value)
		}
		if tt.model == "" { // unknown data model: TR-098 paths
			if !strings.Contains(strings.Join(got, "\n"), tt.want[0]) {
				t.Errorf("unknown model: %v", got)
			}
			continue
		}
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s %s:\n got %v\nwant %v", tt.model, tt.kind, got, tt.want)
		}
	}
}

func TestParseDiagResult(t *testing.T) {
	pv := func(kv ...string) Params {
		p := Params{}
		for i := 0; i < len(kv); i += 2 {
			p[kv[i]] = ParamValue{Value: kv[i+1]}
		}
		return p
	}
	up := "Device.IP.Diagnostics.UploadDiagnostics."
	ping := "InternetGatewayDevice.IPPingDiagnostics."
	tests := []struct {
		name      string
		model     string
		kind      TaskKind
		params    Params
		wantState string
		wantErr   string
		want      []string
	}{
		{"upload TR-181", DataModelTR181, KindUploadDiagnostics, pv(up+"DiagnosticsState", "Completed", up+"BOMTime", "2026-11-21T08:00:00Z",
			up+"EOMTime", "2026-11-21T08:00:04Z", up+"TestFileLength", "10000000", up+"TotalBytesSent", "10100000"),
			"Completed", "", []string{`"throughputKbps":20000`, `"totalBytesSent":10100000`}},
		{"ping TR-098", DataModelTR098, KindIPPing, pv(ping+"DiagnosticsState", "Complete", ping+"SuccessCount", "3", ping+"FailureCount", "1",
			ping+"AverageResponseTime", "12", ping+"MinimumResponseTime", "9", ping+"MaximumResponseTime", "20"),
			"Complete", "", []string{`"successCount":3`, `"failureCount":1`, `"averageResponseTimeMs":12`, `"maximumResponseTimeMs":20`}},
		{"error state", DataModelTR098, KindIPPing, pv(ping+"DiagnosticsState", "Error_CannotResolveHostName"), "Error_CannotResolveHostName", "", nil},
		{"missing state", DataModelTR098, KindIPPing, pv(ping+"SuccessCount", "3"), "", "DiagnosticsState missing", nil},
		{"bad number", DataModelTR098, KindIPPing, pv(ping+"DiagnosticsState", "Complete", ping+"SuccessCount", "three"), "Complete", "not a whole number", nil},
		{"bad time", DataModelTR181, KindUploadDiagnostics, pv(up+"DiagnosticsState", "Completed", up+"BOMTime", "yesterday"), "Completed", "ISO 8601", nil},
	}
	for _, tt := range tests {
		res, state, err := parseDiagResult(tt.model, tt.kind, tt.params)
		if state != tt.wantState {
			t.Errorf("%s: state %q", tt.name, state)
		}
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		b, _ := json.Marshal(res)
		for _, w := range tt.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s: %s lacks %s", tt.name, b, w)
			}
		}
	}
	// A diagnostic that ends in an error state faults the task with the state.
	task := &Task{Kind: KindIPPing, Phase: PhaseGetResults}
	out := applyResponse(task, DataModelTR098, gpvResponse(pv(ping+"DiagnosticsState", "Error_Internal")))
	if out.state != TaskFault || !strings.Contains(out.fault.Message, "Error_Internal") {
		t.Errorf("error state outcome %+v", out)
	}
}

func gpvResponse(p Params) *cwmp.GetParameterValuesResponse {
	r := &cwmp.GetParameterValuesResponse{}
	for name, v := range p {
		r.ParameterList = append(r.ParameterList, cwmp.ParameterValueStruct{Name: name, Value: cwmp.String(v.Value)})
	}
	return r
}
