package testcase

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestMarshalRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		c    *Case
	}{
		{"every field", sampleCase()},
		{"minimal", &Case{ID: "a", Title: "t", Steps: []Step{{Action: "x"}}}},
		{"awkward strings", &Case{
			ID:    "0123",
			Title: "true",
			Tags:  []string{"null", "~", "1.5", "yes", "- dash", "#hash", "key: value", " padded ", "2001-12-14"},
			Steps: []Step{{
				Action:   "line one\nline two\n",
				Expected: "trailing spaces  \n  indented\n\ttab",
				Tool: &ToolCall{Server: "builtin", Name: "x", Arguments: map[string]any{
					"": "empty key", "a.b": []any{}, "n": map[string]any{}, "big": uint64(1 << 63), "neg": -5, "tiny": 1e-7, "huge": 1e300,
				}},
			}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := Marshal(tt.c)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			got, err := Parse(data)
			if err != nil {
				t.Fatalf("Parse(Marshal(c)): %v\n%s", err, data)
			}
			if !reflect.DeepEqual(got, tt.c) {
				t.Fatalf("round trip changed the case:\n got %#v\nwant %#v\nyaml:\n%s", got, tt.c, data)
			}
		})
	}
}

func TestMarshalIsCanonical(t *testing.T) {
	c := &Case{
		ID:    "TC-1",
		Title: "Reboot",
		Tags:  []string{"smoke"},
		Steps: []Step{{
			Action: "Reboot",
			Tool:   &ToolCall{Server: "acs", Name: "reboot", Arguments: map[string]any{"z": 1, "a": "b"}},
		}},
		EmulatorSetup: EmulatorSetup{TreeFile: "t.xml"},
	}
	want := `id: TC-1
title: Reboot
tags:
  - smoke
emulator_setup:
  tree_file: t.xml
steps:
  - action: Reboot
    tool:
      server: acs
      name: reboot
      arguments:
        a: b
        z: 1
`
	data, err := Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != want {
		t.Fatalf("Marshal =\n%s\nwant\n%s", data, want)
	}
}

// A case created through the JSON API has float64 numbers; they must not
// turn into "30.0" in the file, and they read back as the same JSON.
func TestMarshalJSONBodyNumbers(t *testing.T) {
	var c Case
	body := `{"id":"a","title":"t","steps":[{"action":"x","tool":{"server":"s","name":"n","arguments":{"wait":30,"ratio":0.25}}}]}`
	if err := json.Unmarshal([]byte(body), &c); err != nil {
		t.Fatal(err)
	}
	data, err := Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, data)
	}
	a, _ := json.Marshal(got.Steps[0].Tool.Arguments)
	if string(a) != `{"ratio":0.25,"wait":30}` {
		t.Fatalf("arguments read back as %s from\n%s", a, data)
	}
}
