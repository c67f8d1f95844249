package tree

import (
	"strings"
	"testing"

	"cpesuite/internal/cwmp"
)

func TestParseType(t *testing.T) {
	cases := []struct {
		in   string
		want Type
		ok   bool
	}{
		{"string", String, true},
		{"xsd:string", String, true},
		{"XSD:STRING", String, true},
		{"int", Int, true},
		{"xsd:unsignedInt", UnsignedInt, true},
		{"unsignedint", UnsignedInt, true},
		{"boolean", Boolean, true},
		{"dateTime", DateTime, true},
		{"base64", Base64, true},
		{"long", Long, true},
		{"xsd:unsignedLong", UnsignedLong, true},
		{"", String, false},
		{"xsd:", String, false},
		{"xs:int", String, false},
		{"hexBinary", String, false},
		{" int", String, false},
	}
	for _, c := range cases {
		got, err := ParseType(c.in)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("ParseType(%q) = %v, %v; want %v, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestTypeNames(t *testing.T) {
	for ty := String; ty <= UnsignedLong; ty++ {
		back, err := ParseType(ty.XSD())
		if err != nil || back != ty {
			t.Errorf("ParseType(%q) = %v, %v", ty.XSD(), back, err)
		}
		if !strings.HasPrefix(ty.XSD(), "xsd:") || ty.XSD()[4:] != ty.String() {
			t.Errorf("%d: XSD %q, String %q", ty, ty.XSD(), ty.String())
		}
	}
	if UnsignedInt.XSD() != cwmp.TypeUnsignedInt || UnsignedInt.String() != "unsignedInt" {
		t.Errorf("UnsignedInt: %q %q", UnsignedInt.XSD(), UnsignedInt.String())
	}
	if got := Type(99).String(); got != "Type(99)" {
		t.Errorf("Type(99).String() = %q", got)
	}
	if got := Type(99).XSD(); got != cwmp.TypeString {
		t.Errorf("Type(99).XSD() = %q", got)
	}
}

func TestTypeCheck(t *testing.T) {
	cases := []struct {
		t  Type
		v  string
		ok bool
	}{
		{String, "", true},
		{String, "anything <at> all", true},
		{Int, "-2147483648", true},
		{Int, "2147483647", true},
		{Int, "2147483648", false},
		{Int, "+5", true},
		{Int, "", false},
		{Int, " 5", false},
		{Int, "1.5", false},
		{UnsignedInt, "0", true},
		{UnsignedInt, "4294967295", true},
		{UnsignedInt, "4294967296", false},
		{UnsignedInt, "-1", false},
		{Long, "-9223372036854775808", true},
		{Long, "9223372036854775808", false},
		{UnsignedLong, "18446744073709551615", true},
		{UnsignedLong, "18446744073709551616", false},
		{Boolean, "0", true},
		{Boolean, "1", true},
		{Boolean, "true", true},
		{Boolean, "False", true},
		{Boolean, "yes", false},
		{Boolean, "", false},
		{DateTime, "0001-01-01T00:00:00Z", true},
		{DateTime, "2024-05-01T12:30:00+02:00", true},
		{DateTime, "2024-05-01T12:30:00.123456Z", true},
		{DateTime, "2024-05-01T12:30:00", true},
		{DateTime, "2024-05-01", false},
		{DateTime, "", false},
		{Base64, "", true},
		{Base64, "aGVsbG8=", true},
		{Base64, "aGVsbG8", false},
		{Base64, "!!!!", false},
		{Type(42), "x", false},
	}
	for _, c := range cases {
		err := c.t.Check(c.v)
		if (err == nil) != c.ok {
			t.Errorf("%v.Check(%q) = %v, want ok %v", c.t, c.v, err, c.ok)
		}
	}
}

func TestSameValue(t *testing.T) {
	cases := []struct {
		t    Type
		a, b string
		same bool
	}{
		{String, "a", "a", true},
		{String, "a", "A", false},
		{Boolean, "1", "true", true},
		{Boolean, "0", "TRUE", false},
		{Boolean, "x", "x", true},
		{Int, "+5", "5", true},
		{UnsignedInt, "007", "7", true},
		{UnsignedLong, "1", "2", false},
		{DateTime, "2024-01-01T00:00:00Z", "2024-01-01T01:00:00+01:00", true},
		{Base64, "AA==", "AA== ", false},
	}
	for _, c := range cases {
		if got := c.t.sameValue(c.a, c.b); got != c.same {
			t.Errorf("%v.sameValue(%q, %q) = %v", c.t, c.a, c.b, got)
		}
	}
}

func TestErrorStrings(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{&Error{Code: 9005, Name: "Device.X", Msg: "no such parameter"}, "Device.X: no such parameter"},
		{&Error{Code: 9003, Msg: "bad"}, "bad"},
		{&FormatError{Line: 3, Msg: "boom"}, "tree file: line 3: boom"},
		{&FormatError{Msg: "boom"}, "tree file: boom"},
		{&SetFaults{}, "no parameter set"},
		{&SetFaults{Faults: []cwmp.SPVFault{{ParameterName: "A.b", FaultCode: 9007, FaultString: "bad"}}}, "A.b: bad (9007)"},
		{&SetFaults{Faults: []cwmp.SPVFault{{ParameterName: "A.b", FaultCode: 9007, FaultString: "bad"}, {ParameterName: "A.c", FaultCode: 9005}}},
			"2 parameters refused, first A.b: bad (9007)"},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}
