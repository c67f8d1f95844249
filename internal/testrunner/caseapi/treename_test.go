package caseapi

import (
	"strings"
	"testing"

	"cpesuite/internal/platform/apperr"
)

func TestValidTreeName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"igd.xml", true},
		{"IGD Default v2.XML", true},
		{"a.b-c_d.xml", true},
		{"données.xml", true},
		{strings.Repeat("a", MaxTreeNameLength-4) + ".xml", true},
		{strings.Repeat("a", MaxTreeNameLength-3) + ".xml", false},
		{"", false},
		{".", false},
		{"..", false},
		{"../x.xml", false},
		{"..%2fx.xml", false},
		{"a..b.xml", false},
		{`a\b.xml`, false},
		{"a/b.xml", false},
		{"/x.xml", false},
		{".x.xml", false},
		{".xml", false},
		{"x.txt", false},
		{"x.xml.bak", false},
		{"x.xml ", false},
		{"a\x00.xml", false},
		{"a\tb.xml", false},
		{"a\x7f.xml", false},
		{"a\u0085.xml", false},
		{"\xff.xml", false},
	} {
		err := ValidTreeName(tc.name)
		if tc.ok != (err == nil) {
			t.Errorf("ValidTreeName(%q) = %v", tc.name, err)
		}
		if err != nil && (apperr.Status(err) != 400 || apperr.Code(err) != "INVALID_TREE_NAME") {
			t.Errorf("ValidTreeName(%q): %d %s", tc.name, apperr.Status(err), apperr.Code(err))
		}
	}
}
