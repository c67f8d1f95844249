package tree

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary files to Parse; whatever it accepts must then
// behave as a tree.
func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile("testdata/small.xml"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(doc(`<Parameter name="Device.A.B" type="int">1</Parameter>`)))
	f.Add([]byte(`<!DOCTYPE x [<!ENTITY a "b">]><ParameterTree/>`))
	f.Fuzz(checkParse)
}

func checkParse(t *testing.T, data []byte) {
	{
		tp, err := Parse(bytes.NewReader(data), 1<<20)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("Parse error %T %v is not a *FormatError", err, err)
			}
			if fe.Line < 0 || fe.Line > bytes.Count(data, []byte{'\n'})+1 {
				t.Fatalf("line %d outside the file (%d lines)", fe.Line, bytes.Count(data, []byte{'\n'})+1)
			}
			return
		}
		if tp.Root() != RootTR098 && tp.Root() != RootTR181 {
			t.Fatalf("root %q", tp.Root())
		}
		d := New(tp)
		all, err := d.Names("", false)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.IsSortedFunc(all, func(a, b Param) int { return strings.Compare(a.Name, b.Name) }) {
			t.Fatalf("Names not sorted")
		}
		leaves, err := d.Values([]string{""})
		if err != nil || len(leaves) != tp.Len() {
			t.Fatalf("Values(\"\") = %d, %v; Len %d", len(leaves), err, tp.Len())
		}
		for _, p := range leaves {
			if err := p.Type.Check(p.Value); err != nil {
				t.Fatalf("%s: %v", p.Name, err)
			}
		}
		for _, p := range all {
			if _, ok := d.Get(p.Name); !ok {
				t.Fatalf("Get(%q) failed", p.Name)
			}
			if p.Object && p.Name != tp.Root() {
				if _, err := d.Names(p.Name, true); err != nil {
					t.Fatalf("Names(%q): %v", p.Name, err)
				}
			}
		}
		for _, key := range tp.Tables() {
			table := strings.TrimSuffix(key, "{i}.")
			if _, ok := d.Get(table); !ok {
				continue
			}
			n, err := d.AddObject(table)
			if err != nil {
				continue // e.g. no instance number left
			}
			inst := table + itoa(int(n)) + "."
			if _, ok := d.Get(inst); !ok {
				t.Fatalf("AddObject(%q) = %d, but %s is missing", table, n, inst)
			}
			if err := d.DeleteObject(inst); err != nil {
				t.Fatalf("DeleteObject(%q): %v", inst, err)
			}
		}
	}
}
