package caseapi

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"cpesuite/internal/testrunner/testcase"
)

func TestDeriveSetup(t *testing.T) {
	trees := map[string]string{"igd-default.xml": "IGD-default.xml", "tr181.xml": "tr181.xml"}
	tests := []struct {
		name    string
		c       testcase.Case
		want    testcase.EmulatorSetup
		unknown []string
	}{
		{
			name: "everything in the prose",
			c: testcase.Case{
				Title:         "Reboot of HG8245H",
				Description:   "Load the tree igd-default.xml, device model: HG8245H, serial number CPE-0001.",
				Preconditions: []string{"the emulator runs"},
				Steps:         []testcase.Step{{Action: "reboot"}},
			},
			want: testcase.EmulatorSetup{TreeFile: "IGD-default.xml", Serial: "CPE-0001", Model: "HG8245H"},
		},
		{
			name: "first known tree wins, unknown ones are reported",
			c: testcase.Case{
				Title:       "x",
				Description: "use missing.xml or /srv/trees/tr181.xml, else IGD-default.xml; also missing.xml",
				Steps:       []testcase.Step{{Action: "a"}},
			},
			want:    testcase.EmulatorSetup{TreeFile: "tr181.xml"},
			unknown: []string{"missing.xml"},
		},
		{
			name: "serial forms",
			c:    testcase.Case{Title: "S/N: AB12CD34", Steps: []testcase.Step{{Action: "a"}}},
			want: testcase.EmulatorSetup{Serial: "AB12CD34"},
		},
		{
			name: "serial is",
			c:    testcase.Case{Title: "x", Steps: []testcase.Step{{Action: "check that the serial is ZX9000"}}},
			want: testcase.EmulatorSetup{Serial: "ZX9000"},
		},
		{
			name: "words that are no serial or model",
			c: testcase.Case{
				Title:       "Serial numbers over the serial port",
				Description: "The data model TR-181 and the language model gpt-4 are no device models; model selection neither.",
				Steps:       []testcase.Step{{Action: "read the serial number from the device", Expected: "serial number shown"}},
			},
		},
		{
			name: "quoted model with spaces",
			c:    testcase.Case{Title: `Model "Archer C7" upgrade`, Steps: []testcase.Step{{Action: "a"}}},
			want: testcase.EmulatorSetup{Model: "Archer C7"},
		},
		{
			name: "model without a digit needs a colon",
			c:    testcase.Case{Title: "Model: Fritzbox.", Steps: []testcase.Step{{Action: "a"}}},
			want: testcase.EmulatorSetup{Model: "Fritzbox"},
		},
		{
			name: "tool arguments",
			c: testcase.Case{Title: "x", Steps: []testcase.Step{{Action: "start", Tool: &testcase.ToolCall{
				Server: "emu", Name: "start",
				Arguments: map[string]any{"device": map[string]any{"serial": "SN-77", "tree_file": "tr181.xml"}, "count": 1},
			}}}},
			want: testcase.EmulatorSetup{TreeFile: "tr181.xml", Serial: "SN-77"},
		},
		{
			name: "traversal in a mention is not a tree",
			c:    testcase.Case{Title: "x", Description: "../../etc/tr181.xml and a..b.xml", Steps: []testcase.Step{{Action: "a"}}},
			want: testcase.EmulatorSetup{TreeFile: "tr181.xml"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := deriveSetup(&tc.c, trees)
			if got.Setup != tc.want || !reflect.DeepEqual(got.UnknownTrees, tc.unknown) {
				t.Fatalf("got %+v %v, want %+v %v", got.Setup, got.UnknownTrees, tc.want, tc.unknown)
			}
		})
	}
}

func TestRegenerate(t *testing.T) {
	e := newEnv(t)
	e.writeTree("igd.xml", "<a/>")
	text := `# written by hand
id: regen
title: Reboot
description: "Emulator with igd.xml and serial number CPE-42; model: RX-1. Also needs other.xml."
emulator_setup:
  serial: OLD-1
  model: RX-1
steps:
  - action: reboot
`
	e.writeCase("regen.yaml", text)

	r := e.do("POST", "/api/tests/regen.yaml/regenerate", nil)
	expect(t, r, 200, "")
	var got Regenerated
	r.json(t, &got)
	want := Regenerated{
		File:          "regen.yaml",
		EmulatorSetup: testcase.EmulatorSetup{TreeFile: "igd.xml", Serial: "CPE-42", Model: "RX-1"},
		Previous:      testcase.EmulatorSetup{Serial: "OLD-1", Model: "RX-1"},
		Changed:       []string{"tree_file", "serial"},
		UnknownTrees:  []string{"other.xml"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	c, err := e.cases.Get("regen.yaml")
	if err != nil || c.EmulatorSetup != want.EmulatorSetup {
		t.Fatalf("stored %+v %v", c, err)
	}

	// Again: nothing changes and the file is not rewritten.
	e.writeCase("regen.yaml", "# again\n"+strings.TrimPrefix(mustRead(t, filepath.Join(e.casesDir, "regen.yaml")), "# again\n"))
	r = e.do("POST", "/api/tests/regen.yaml/regenerate", nil)
	expect(t, r, 200, "")
	got = Regenerated{}
	r.json(t, &got)
	if len(got.Changed) != 0 || got.EmulatorSetup != want.EmulatorSetup || got.Previous != want.EmulatorSetup {
		t.Fatalf("second run %+v", got)
	}
	if !strings.HasPrefix(mustRead(t, filepath.Join(e.casesDir, "regen.yaml")), "# again\n") {
		t.Fatal("an unchanged case was rewritten")
	}

	// Nothing in the text: the answer says so with empty lists.
	e.writeCase("plain.yaml", caseYAML("plain", ""))
	r = e.do("POST", "/api/tests/plain.yaml/regenerate", nil)
	expect(t, r, 200, "")
	if !strings.Contains(string(r.body), `"changed":[]`) || !strings.Contains(string(r.body), `"unknown_trees":[]`) {
		t.Fatalf("empty regenerate %s", r.body)
	}
	expect(t, e.do("POST", "/api/tests/missing.yaml/regenerate", nil), 404, "CASE_NOT_FOUND")
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
