package caseapi

import (
	"bytes"
	"encoding/xml"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"cpesuite/internal/testrunner/testcase"
)

// FuzzValidTreeName holds every accepted name to what keeps the tree
// folder closed: a single local path element ending in .xml, and a name a
// case may put in emulator_setup.tree_file.
func FuzzValidTreeName(f *testing.F) {
	for _, s := range []string{
		"igd.xml", "../x.xml", "..", ".", `a\b.xml`, "a/b.xml", ".x.xml", "x.txt", "", "a\x00.xml",
		"..%2fx.xml", "x.XML", "a..b.xml", "\xff.xml", "a\u2028.xml", strings.Repeat("a", 300) + ".xml",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ValidTreeName(name) != nil {
			return
		}
		switch {
		case !filepath.IsLocal(name), filepath.Base(name) != name, filepath.Clean(name) != name:
			t.Fatalf("%q leaves the folder", name)
		case strings.ContainsAny(name, `/\`), strings.Contains(name, ".."), strings.HasPrefix(name, "."):
			t.Fatalf("%q has a separator or dot alias", name)
		case !utf8.ValidString(name), hasControl(name), len(name) > MaxTreeNameLength:
			t.Fatalf("%q has control bytes or is too long", name)
		case !strings.EqualFold(filepath.Ext(name), ".xml"):
			t.Fatalf("%q is no .xml name", name)
		}
		c := testcase.Case{ID: "x", Title: "x", Steps: []testcase.Step{{Action: "a"}},
			EmulatorSetup: testcase.EmulatorSetup{TreeFile: name}}
		if err := c.Validate(); err != nil {
			t.Fatalf("an uploadable tree %q cannot be named by a case: %v", name, err)
		}
	})
}

// FuzzCheckTreeXML: the check never panics, and a document it accepts is
// one element (with its CharsetReader) that holds no directive.
func FuzzCheckTreeXML(f *testing.F) {
	for _, s := range []string{
		`<a/>`, `<?xml version="1.0"?><a><b x="1">t</b></a>`, `<!DOCTYPE a><a/>`, `<a/><b/>`, `<a>&x;</a>`,
		"\ufeff<a/>", `<?xml version="1.0" encoding="ISO-8859-1"?><a>caf` + "\xe9" + `</a>`, `<a><![CDATA[<!x>]]></a>`,
		`<!--c--><a/><!--d-->`, `<a/>x`, ``, `<`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if checkTreeXML(data) != nil {
			return
		}
		dec := xml.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, utf8BOM)))
		dec.CharsetReader = charsetReader
		var root struct {
			XMLName xml.Name
			Inner   []byte `xml:",innerxml"`
		}
		if err := dec.Decode(&root); err != nil {
			t.Fatalf("accepted %q, which does not decode: %v", data, err)
		}
		for {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			if _, ok := tok.(xml.StartElement); ok {
				t.Fatalf("accepted %q with a second root", data)
			}
		}
		scan := xml.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, utf8BOM)))
		scan.CharsetReader = charsetReader
		for {
			tok, err := scan.Token()
			if err != nil {
				break
			}
			if _, ok := tok.(xml.Directive); ok {
				t.Fatalf("accepted %q with a directive", data)
			}
		}
	})
}
