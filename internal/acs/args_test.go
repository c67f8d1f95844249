package acs

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestValidateArgs(t *testing.T) {
	tests := []struct {
		kind    TaskKind
		args    string
		wantErr string
		want    string
	}{
		{KindGetParameterValues, `{"names":["InternetGatewayDevice.DeviceInfo."]}`, "", ""},
		{KindGetParameterValues, `{}`, "at least one", ""},
		{KindGetParameterValues, `{"names":["a b"]}`, "not allowed", ""},
		{KindGetParameterValues, `{"names":["x"],"extra":1}`, "unknown field", ""},
		{KindSetParameterValues, `{"values":[{"name":"A.B","value":"1"}]}`, "", `"type":"xsd:string"`},
		{KindSetParameterValues, `{"values":[{"name":"A.B","value":"1","type":"xsd:float"}]}`, "is not one of", ""},
		{KindSetParameterValues, `{"values":[{"name":"A.","value":"1"}]}`, "object path", ""},
		{KindSetParameterValues, `{"values":[{"name":"A.B","value":"1"},{"name":"A.B","value":"2"}]}`, "set twice", ""},
		{KindGetParameterNames, `{"path":"Device.","nextLevel":true}`, "", ""},
		{KindGetParameterNames, `null`, "", ""},
		{KindSetParameterAttributes, `{"attributes":[{"name":"A.B","notificationChange":true,"notification":7}]}`, "0 to 6", ""},
		{KindAddObject, `{"objectName":"Device.NAT.PortMapping."}`, "", ""},
		{KindAddObject, `{"objectName":"Device.NAT.PortMapping"}`, "must end with a dot", ""},
		{KindReboot, `{"commandKey":"r1"}`, "", ""},
		{KindReboot, `{"commandKey":"` + strings.Repeat("k", 33) + `"}`, "longer than 32", ""},
		{KindFactoryReset, ``, "", ""},
		{KindFactoryReset, `{"x":1}`, "unknown field", ""},
		{KindScheduleInform, `{"delaySeconds":0}`, "at least 1", ""},
		{KindDownload, `{"fileType":"1 Firmware Upgrade Image","url":"http://fw.example/img.bin","fileSize":1000}`, "", ""},
		{KindDownload, `{"fileType":"1 Firmware Upgrade Image","url":"file:///etc/passwd"}`, "not an http", ""},
		{KindDownload, `{"url":"http://x/y"}`, "fileType is required", ""},
		{KindUpload, `{"fileType":"3 Vendor Log File","url":"http://x/up","fileSize":3}`, "Download only", ""},
		{KindDownloadDiagnostics, `{}`, "", ""},
		{KindDownloadDiagnostics, `{"host":"x"}`, "IPPing only", ""},
		{KindIPPing, `{"host":"8.8.8.8","numberOfRepetitions":3}`, "", ""},
		{KindIPPing, `{"url":"http://x/"}`, "do not apply", ""},
		{KindIPPing, `{"host":"a b"}`, "not a host", ""},
		{"Bogus", `{}`, "unknown task kind", ""},
	}
	for _, tt := range tests {
		out, err := ValidateArgs(tt.kind, json.RawMessage(tt.args))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s %s: err %v, want %q", tt.kind, tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %s: %v", tt.kind, tt.args, err)
			continue
		}
		if tt.want != "" && !strings.Contains(string(out), tt.want) {
			t.Errorf("%s: normalised %s lacks %s", tt.kind, out, tt.want)
		}
	}
}
