package testcase

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzParse checks that Parse never panics and that whatever it accepts is
// a valid case that survives Marshal and Parse unchanged and encodes as
// JSON.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"id: a\ntitle: t\nsteps: [{action: x}]\n",
		"id: a\ntitle: t\nsteps:\n  - action: x\n    tool: {server: s, name: n, arguments: {a: [1, 2.5, true, ~, {b: c}], d: 2001-12-14, e: 1e3}, expect: {error: false, matches: '^a+$'}}\n",
		"id: a\ntitle: &t t\nsteps: [{action: *t}]\n",
		"id: a\n---\nid: b\n",
		"id: !foo a\n",
		"steps: 3\n",
		"id: a\ntitle: \"line\\nbreak  \"\ntags: ['', ' x']\nsteps: [{action: \"|\"}]\n",
	} {
		f.Add([]byte(seed))
	}
	if data, err := Marshal(sampleCase()); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			if c != nil {
				t.Fatal("Parse returned a case with an error")
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Parse accepted a case Validate refuses: %v", err)
		}
		out, err := Marshal(c)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(Marshal(c)): %v\ninput:\n%q\nmarshalled:\n%s", err, data, out)
		}
		if !reflect.DeepEqual(again, c) {
			t.Fatalf("round trip changed the case\n got %#v\nwant %#v\nmarshalled:\n%s", again, c, out)
		}
		if _, err := json.Marshal(c); err != nil {
			t.Fatalf("a parsed case does not encode as JSON: %v", err)
		}
		_ = Summarize("f.yaml", c)
	})
}
