package llm

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseVerdict(t *testing.T) {
	pass := func(d string) stepVerdict { return stepVerdict{status: "passed", detail: d} }
	tests := []struct {
		name    string
		text    string
		want    map[int]stepVerdict
		summary string
		notes   int
		err     string // substring of the error; "" means success
	}{
		{
			name: "fenced json block",
			text: "Done.\n```json\n{\"steps\":[{\"step\":1,\"status\":\"passed\",\"detail\":\"ok\"}],\"summary\":\"fine\"}\n```",
			want: map[int]stepVerdict{1: pass("ok")}, summary: "fine",
		},
		{
			name: "unlabelled fence",
			text: "```\n{\"steps\":[{\"step\":1,\"status\":\"failed\",\"detail\":\"x\"}]}\n```",
			want: map[int]stepVerdict{1: {status: "failed", detail: "x"}},
		},
		{
			name: "the last fenced verdict wins over an earlier draft",
			text: "```json\n{\"steps\":[{\"step\":1,\"status\":\"failed\"}]}\n```\ncorrection:\n```json\n{\"steps\":[{\"step\":1,\"status\":\"passed\"}]}\n```",
			want: map[int]stepVerdict{1: pass("")},
		},
		{
			name: "a fenced block of something else is skipped for a bare object",
			text: "Body was:\n```json\n{\"serial\":\"CPE-1\"}\n```\nVerdict: {\"steps\":[{\"step\":1,\"status\":\"passed\"}]}",
			want: map[int]stepVerdict{1: pass("")},
		},
		{
			name: "bare object in prose with nested braces in details",
			text: `Here: {"steps":[{"step":1,"status":"passed","detail":"got {\"a\":1}"},{"step":2,"status":"error","detail":{"why":"tool down"}}],"summary":"s"} bye`,
			want: map[int]stepVerdict{1: pass(`got {"a":1}`), 2: {status: "error", detail: `{"why":"tool down"}`}}, summary: "s",
		},
		{
			name: "positions stand in for missing step numbers",
			text: `{"steps":[{"status":"passed"},{"status":"FAILED","detail":"no"}]}`,
			want: map[int]stepVerdict{1: pass(""), 2: {status: "failed", detail: "no"}},
		},
		{
			name: "numeric strings and 'step 2'",
			text: `{"steps":[{"step":"1","status":" Passed "},{"step":"Step 2","status":"passed"}]}`,
			want: map[int]stepVerdict{1: pass(""), 2: pass("")},
		},
		{
			name: "steps as an object keyed by number",
			text: `{"steps":{"2":{"status":"failed"},"1":{"status":"passed"}}}`,
			want: map[int]stepVerdict{1: pass(""), 2: {status: "failed"}},
		},
		{
			name: "unknown status is an error naming it",
			text: `{"steps":[{"step":1,"status":"skipped","detail":"not run"}]}`,
			want: map[int]stepVerdict{1: {status: "error", detail: `the model reported status "skipped", not passed, failed or error: not run`}},
		},
		{
			name:  "a repeated step counts once, a bad number is noted",
			text:  `{"steps":[{"step":1,"status":"passed"},{"step":1,"status":"failed"},{"step":1.5,"status":"passed"},{"step":"x","status":"passed"}]}`,
			want:  map[int]stepVerdict{1: pass("")},
			notes: 3,
		},
		{name: "no json", text: "Everything worked fine.", err: `no JSON object with a "steps" list found`},
		{name: "json without steps", text: `{"result":"ok"}`, err: `no JSON object with a "steps" list found`},
		{name: "broken fenced json", text: "```json\n{\"steps\":[{\"step\":1,\n```", err: "the fenced block is not a JSON object"},
		{name: "steps of the wrong type", text: `{"steps":"all passed"}`, err: `"steps" is neither a list`},
		{name: "empty", text: "", err: "no JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := parseVerdict(tc.text)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(v.steps, tc.want) || v.summary != tc.summary || len(v.notes) != tc.notes {
				t.Fatalf("got steps %+v summary %q notes %q", v.steps, v.summary, v.notes)
			}
		})
	}
}

func TestParseVerdictScansOnlyTheEnd(t *testing.T) {
	// A huge answer is searched from its end only, and still quickly.
	text := strings.Repeat("{", maxVerdictScan*2) + `{"steps":[{"step":1,"status":"passed"}]}`
	v, err := parseVerdict(text)
	if err != nil || v.steps[1].status != "passed" {
		t.Fatalf("%+v %v", v, err)
	}
}

func TestStepMarker(t *testing.T) {
	tests := []struct {
		text string
		want []string // every marker's number
	}{
		{"STEP 1\nI will call the tool.", []string{"1"}},
		{"Done with that.\n**STEP 3**: reboot", []string{"3"}},
		{"## STEP 2\nand then\nSTEP 4", []string{"2", "4"}},
		{"Now step 2.", nil},        // lower case prose is no marker
		{"as in STEP 2 above", nil}, // not at a line start
		{"STEPS 2", nil},            // not the word STEP
		{"> STEP 12 begins", []string{"12"}},
	}
	for _, tc := range tests {
		var got []string
		for _, m := range stepMarker.FindAllStringSubmatch(tc.text, -1) {
			got = append(got, m[1])
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: markers %v, want %v", tc.text, got, tc.want)
		}
	}
}
