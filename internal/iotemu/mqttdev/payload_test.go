package mqttdev

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"cpesuite/internal/iotemu/param"
)

func TestAppendTelemetry(t *testing.T) {
	tests := []struct {
		name  string
		id    string
		value string
	}{
		{"plain", "dev1", "21.5"},
		{"quotes and backslashes", `a"b\c`, `x"y\z`},
		{"control characters", "tab\there", "nl\ncr\rnul\x00bell\x07"},
		{"unicode", "Gerät-ü", "温度 ☃ \u2028 \u2029"},
		{"invalid utf-8", "bad\xffid", "\xc3\x28"},
		{"empty", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps := []param.Param{{Name: "B", Value: tc.value}, {Name: "A", Value: "1"}}
			b := appendTelemetry(nil, tc.id, "SN", 1700000000123, ps)
			var doc struct {
				ClientID     string            `json:"clientId"`
				SerialNumber string            `json:"serialNumber"`
				TS           int64             `json:"ts"`
				Params       map[string]string `json:"params"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			// encoding/json is the reference for the string escaping.
			wantID, _ := json.Marshal(tc.id)
			var id string
			_ = json.Unmarshal(wantID, &id)
			wantVal, _ := json.Marshal(tc.value)
			var val string
			_ = json.Unmarshal(wantVal, &val)
			if doc.ClientID != id || doc.SerialNumber != "SN" || doc.TS != 1700000000123 || doc.Params["B"] != val || doc.Params["A"] != "1" {
				t.Errorf("decoded %+v from %s", doc, b)
			}
			if !strings.Contains(string(b), `"params":{"B":`) {
				t.Errorf("params not in declaration order: %s", b)
			}
		})
	}
}

func TestParseCommand(t *testing.T) {
	tests := []struct {
		name    string
		payload string
		wantID  string
		want    []write
		wantErr string
	}{
		{"name and value", `{"name":"Temperature","value":"22"}`, "", []write{{name: "Temperature", value: "22"}}, ""},
		{"string id", `{"id":"x","name":"T","value":"1"}`, `"x"`, []write{{name: "T", value: "1"}}, ""},
		{"number and bool values", `{"id":3,"params":{"B":true,"A":-1.5e2,"C":"s"}}`, "3",
			[]write{{name: "B", value: "true"}, {name: "A", value: "-1.5e2"}, {name: "C", value: "s"}}, ""},
		{"both forms", `{"name":"X","value":"1","params":{"Y":"2"}}`, "", []write{{name: "X", value: "1"}, {name: "Y", value: "2"}}, ""},
		{"missing value", `{"name":"X"}`, "", []write{{name: "X", err: "missing value"}}, ""},
		{"null value", `{"params":{"X":null}}`, "", []write{{name: "X", err: "value must not be null"}}, ""},
		{"object value", `{"params":{"X":{"a":1}}}`, "", []write{{name: "X", err: "value must be a string, number or boolean"}}, ""},
		{"not json", `hello`, "", nil, "malformed command"},
		{"empty object", `{}`, "", nil, "malformed command"},
		{"value without name", `{"value":"1"}`, "", nil, "value without name"},
		{"params not object", `{"params":[1]}`, "", nil, "must be an object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd, err := parseCommand([]byte(tc.payload))
			if (err != nil) != (tc.wantErr != "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if string(cmd.id) != tc.wantID {
				t.Errorf("id = %s, want %s", cmd.id, tc.wantID)
			}
			if !reflect.DeepEqual(cmd.writes, tc.want) {
				t.Errorf("writes = %+v, want %+v", cmd.writes, tc.want)
			}
		})
	}
}

func TestAckMarshal(t *testing.T) {
	tests := []struct {
		name string
		a    ack
		want string
	}{
		{"no id, no results", ack{Error: "malformed command"}, `{"results":[],"error":"malformed command"}`},
		{"id and results", ack{ID: json.RawMessage(`"7"`), Results: []ackResult{{Name: "T", OK: true}, {Name: "U", Error: "nope"}}},
			`{"id":"7","results":[{"name":"T","ok":true},{"name":"U","ok":false,"error":"nope"}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(tc.a.marshal()); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}
