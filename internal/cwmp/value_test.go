package cwmp

import (
	"testing"
	"time"
)

func TestValueConstructors(t *testing.T) {
	tests := []struct {
		got, want Value
	}{
		{String("x"), Value{"xsd:string", "x"}},
		{UnsignedInt(4294967295), Value{"xsd:unsignedInt", "4294967295"}},
		{Int(-2147483648), Value{"xsd:int", "-2147483648"}},
		{Long(-1), Value{"xsd:long", "-1"}},
		{UnsignedLong(18446744073709551615), Value{"xsd:unsignedLong", "18446744073709551615"}},
		{Bool(true), Value{"xsd:boolean", "true"}},
		{Bool(false), Value{"xsd:boolean", "false"}},
		{DateTime(time.Time{}), Value{"xsd:dateTime", "0001-01-01T00:00:00Z"}},
		{DateTime(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)), Value{"xsd:dateTime", "2024-01-02T03:04:05Z"}},
		{DateTime(time.Date(2024, 1, 2, 3, 4, 5, 500000000, time.FixedZone("", 7200))), Value{"xsd:dateTime", "2024-01-02T03:04:05.5+02:00"}},
		{Base64([]byte("hi")), Value{"xsd:base64", "aGk="}},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %#v, want %#v", tt.got, tt.want)
		}
	}
}

func TestValueAccessors(t *testing.T) {
	if b, err := (Value{Text: " 1 "}).AsBool(); err != nil || !b {
		t.Errorf("AsBool(1) = %v, %v", b, err)
	}
	if n, err := (Value{Text: "18446744073709551615"}).AsUint(); err != nil || n != 18446744073709551615 {
		t.Errorf("AsUint = %v, %v", n, err)
	}
	if _, err := (Value{Text: "-1"}).AsUint(); err == nil {
		t.Error("AsUint(-1) succeeded")
	}
	if n, err := (Value{Text: "-5"}).AsInt(); err != nil || n != -5 {
		t.Errorf("AsInt = %v, %v", n, err)
	}
	if tm, err := (Value{Text: UnknownTime}).AsTime(); err != nil || !tm.IsZero() {
		t.Errorf("AsTime(unknown) = %v, %v", tm, err)
	}
	if b, err := Base64([]byte{0, 255}).AsBytes(); err != nil || len(b) != 2 || b[1] != 255 {
		t.Errorf("AsBytes = %v, %v", b, err)
	}
	if got := (Value{Text: "x"}).String(); got != "x" {
		t.Errorf("String = %q", got)
	}
	kinds := map[string]string{"": "string", "xsd:string": "string", "xs:unsignedInt": "unsignedInt", "boolean": "boolean", "a:b:dateTime": "dateTime"}
	for typ, want := range kinds {
		if got := (Value{Type: typ}).Kind(); got != want {
			t.Errorf("Kind(%q) = %q, want %q", typ, got, want)
		}
	}
}

func TestParseBool(t *testing.T) {
	for in, want := range map[string]bool{"1": true, "0": false, "true": true, "false": false, "TRUE": true, " False\n": false} {
		if got, err := ParseBool(in); err != nil || got != want {
			t.Errorf("ParseBool(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "yes", "2", "t", "10"} {
		if _, err := ParseBool(in); err == nil {
			t.Errorf("ParseBool(%q) succeeded", in)
		}
	}
}

func TestParseDateTime(t *testing.T) {
	tests := map[string]time.Time{
		"2024-01-02T03:04:05Z":                time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
		"2024-01-02T03:04:05.123456789Z":      time.Date(2024, 1, 2, 3, 4, 5, 123456789, time.UTC),
		"2024-01-02T03:04:05+01:00":           time.Date(2024, 1, 2, 2, 4, 5, 0, time.UTC),
		"2024-01-02T03:04:05":                 time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
		" 0001-01-01T00:00:00Z ":              {},
		"0001-01-01T00:00:00":                 {},
		"9999-12-31T23:59:59Z":                time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		"2024-01-02T03:04:05.5-05:30":         time.Date(2024, 1, 2, 8, 34, 5, 500000000, time.UTC),
		"2024-01-02T03:04:05.000000000Z":      time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
		"2024-01-02T03:04:05.1234567Z":        time.Date(2024, 1, 2, 3, 4, 5, 123456700, time.UTC),
		"2024-01-02T03:04:05.999999999+00:00": time.Date(2024, 1, 2, 3, 4, 5, 999999999, time.UTC),
	}
	for in, want := range tests {
		got, err := ParseDateTime(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseDateTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "yesterday", "2024-01-02", "2024-13-01T00:00:00Z", "0000-00-00T00:00:00"} {
		if _, err := ParseDateTime(in); err == nil {
			t.Errorf("ParseDateTime(%q) succeeded", in)
		}
	}
}
