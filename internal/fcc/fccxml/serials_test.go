package fccxml

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestSerials(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		max  int
		want []string
	}{
		{"flat", "<serials><serial>A</serial><serial>B</serial></serials>", 0, []string{"A", "B"}},
		{"any depth", "<a><b><serial>S1</serial><c><d><serial>S2</serial></d></c></b><serial>S3</serial></a>", 0, []string{"S1", "S2", "S3"}},
		{"root is a serial", "<serial>S</serial>", 0, []string{"S"}},
		{"trimmed, blanks skipped, duplicates kept", "<x><serial>\n  A \n</serial><serial/><serial>  </serial><serial>A</serial></x>", 0, []string{"A", "A"}},
		{"exported campaign", `<?xml version="1.0" encoding="UTF-8"?>
<fccExport><formatVersion>1</formatVersion><test><name>n</name><type>SPEED</type><configs><config>
<fleet page="1"><serial>S1</serial><serial>S2</serial></fleet></config></configs></test></fccExport>`, 0, []string{"S1", "S2"}},
		{"namespaces", `<d:devices xmlns:d="urn:d"><d:serial>N1</d:serial><serial xmlns="urn:e">N2</serial></d:devices>`, 0, []string{"N1", "N2"}},
		{"other elements ignored, names matched exactly", "<a><serialNumber>X</serialNumber><Serial>Y</Serial><serial>Z</serial></a>", 0, []string{"Z"}},
		{"entities and CDATA", "<a><serial>A&amp;B</serial><serial><![CDATA[<C>]]></serial></a>", 0, []string{"A&B", "<C>"}},
		{"no serials", "<a><b/></a>", 0, []string{}},
		{"exactly max", "<a><serial>1</serial><serial>2</serial></a>", 2, []string{"1", "2"}},
		{"BOM", "\ufeff<a><serial>1</serial></a>", 0, []string{"1"}},
		{"several roots", "<a><serial>1</serial></a><b><serial>2</serial></b>", 0, []string{"1", "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Serials(strings.NewReader(tt.doc), tt.max)
			if err != nil {
				t.Fatalf("Serials: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSerialsRefuses(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		max  int
		want string
	}{
		{"over the limit", "<a><serial>1</serial><serial>2</serial><serial>3</serial></a>", 2, "too many serials: the limit is 2"},
		{"blanks do not count", "<a><serial>1</serial><serial/><serial>2</serial><serial>3</serial></a>", 2, "the limit is 2"},
		{"DTD", `<!DOCTYPE x [<!ENTITY e "boom">]><a><serial>&e;</serial></a>`, 0, "DTD"},
		{"unknown entity", "<a><serial>&e;</serial></a>", 0, "invalid character entity &e;"},
		{"element inside serial", "<a><serial>A<b/></serial></a>", 0, "<serial> holds text only, found element <b>"},
		{"depth bomb", strings.Repeat("<a>", 65) + strings.Repeat("</a>", 65), 0, "deeper than 64"},
		{"not XML", "SN1, SN2", 0, "text outside the root element"},
		{"empty", "", 0, "no elements"},
		{"unclosed", "<a><serial>1</serial>", 0, "unexpected EOF"},
		{"long serial", "<a><serial>" + strings.Repeat("x", maxText+1) + "</serial></a>", 0, "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Serials(strings.NewReader(tt.doc), tt.max)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Serials = %q, %v; want an ErrInvalid containing %q", got, err, tt.want)
			}
		})
	}
}

func TestSerialList(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want []string
	}{
		{"one per line", "SN1\nSN2\nSN3\n", 0, []string{"SN1", "SN2", "SN3"}},
		{"CRLF and blank lines", "SN1\r\n\r\n  SN2  \r\n", 0, []string{"SN1", "SN2"}},
		{"CSV", "SN1,SN2,,SN3", 0, []string{"SN1", "SN2", "SN3"}},
		{"semicolons and white space", "SN1; SN2\tSN3  SN4", 0, []string{"SN1", "SN2", "SN3", "SN4"}},
		{"quoted cells", "\"SN1\",\" SN2 \"\n\"\"", 0, []string{"SN1", "SN2"}},
		{"BOM", "\ufeffSN1\nSN2", 0, []string{"SN1", "SN2"}},
		{"header", "serial\nSN1\nSN2", 0, []string{"SN1", "SN2"}},
		{"header any case, after BOM and blank lines", "\ufeff\n\n  Serial;\r\nSN1", 0, []string{"SN1"}},
		{"quoted header", "\"SERIAL\"\nSN1", 0, []string{"SN1"}},
		{"header only on the first line", "SN1\nserial\n", 0, []string{"SN1", "serial"}},
		{"a first line with more entries is not a header", "serial,SN1", 0, []string{"serial", "SN1"}},
		{"duplicates kept", "A\nA\na", 0, []string{"A", "A", "a"}},
		{"unicode", "Überprüfung,測試", 0, []string{"Überprüfung", "測試"}},
		{"empty", "", 0, []string{}},
		{"only a header", "serial\n", 0, []string{}},
		{"exactly max", "1,2,3", 3, []string{"1", "2", "3"}},
		{"XML detected", "  \n<devices><d><serial>X1</serial></d></devices>", 0, []string{"X1"}},
		{"XML detected after BOM", "\ufeff<?xml version=\"1.0\"?><a><serial>X1</serial></a>", 0, []string{"X1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SerialList(strings.NewReader(tt.in), tt.max)
			if err != nil {
				t.Fatalf("SerialList: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSerialListRefuses(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"over the limit", "serial\n1\n2,3\n4", 3, "too many serials: the limit is 3 at line 4"},
		{"XML over the limit", "<a><serial>1</serial><serial>2</serial></a>", 1, "the limit is 1"},
		{"XML with a DTD", "<!DOCTYPE a [<!ENTITY e \"x\">]><a><serial>&e;</serial></a>", 0, "DTD"},
		{"binary", "PK\x03\x04\x14\x00", 0, "control character at line 1"},
		{"NUL on line 2", "SN1\nSN\x002", 0, "control character at line 2"},
		{"not UTF-8", "SN1\n\xff\xfe\xfd", 0, "not UTF-8 text at line 2"},
		{"UTF-16", "\xff\xfeS\x00N\x00", 0, "UTF-16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SerialList(strings.NewReader(tt.in), tt.max)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("SerialList = %q, %v; want an ErrInvalid containing %q", got, err, tt.want)
			}
		})
	}
}
