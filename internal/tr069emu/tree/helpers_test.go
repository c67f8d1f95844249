package tree

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"cpesuite/internal/cwmp"
)

// small loads testdata/small.xml, the tree most tests work on.
func small(t testing.TB) *Template {
	t.Helper()
	f, err := os.Open("testdata/small.xml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tp, err := Parse(f, 0)
	if err != nil {
		t.Fatalf("parsing small.xml: %v", err)
	}
	return tp
}

func mustParse(t testing.TB, doc string) *Template {
	t.Helper()
	tp, err := Parse(strings.NewReader(doc), 0)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, doc)
	}
	return tp
}

func namesOf(ps []Param) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

func wantNames(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s:\n got  %q\n want %q", what, got, want)
	}
}

// wantCode fails unless err is an *Error with the fault code.
func wantCode(t *testing.T, what string, err error, code cwmp.FaultCode) {
	t.Helper()
	var te *Error
	if !errors.As(err, &te) {
		t.Fatalf("%s: error %v (%T), want *Error %d", what, err, err, code)
	}
	if te.Code != code {
		t.Fatalf("%s: code %d (%v), want %d", what, te.Code, te, code)
	}
}

func mustGet(t *testing.T, d *Tree, name string) Param {
	t.Helper()
	p, ok := d.Get(name)
	if !ok {
		t.Fatalf("Get(%q): not found", name)
	}
	return p
}

func wantValue(t *testing.T, d *Tree, name, want string) {
	t.Helper()
	if got := mustGet(t, d, name).Value; got != want {
		t.Fatalf("%s = %q, want %q", name, got, want)
	}
}

func wantAbsent(t *testing.T, d *Tree, name string) {
	t.Helper()
	if p, ok := d.Get(name); ok {
		t.Fatalf("Get(%q) = %+v, want absent", name, p)
	}
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
