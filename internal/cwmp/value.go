package cwmp

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The xsi:type values this package writes. Decoded values keep whatever type
// text the peer sent, prefix included.
const (
	TypeString       = "xsd:string"
	TypeUnsignedInt  = "xsd:unsignedInt"
	TypeInt          = "xsd:int"
	TypeBoolean      = "xsd:boolean"
	TypeDateTime     = "xsd:dateTime"
	TypeBase64       = "xsd:base64"
	TypeLong         = "xsd:long"
	TypeUnsignedLong = "xsd:unsignedLong"
)

// UnknownTime is the TR-069 "Unknown Time" (0001-01-01T00:00:00Z), which is
// also Go's zero time.Time.
const UnknownTime = "0001-01-01T00:00:00Z"

// Value is a parameter value as it travels: the xsi:type and the text, both
// exactly as given. Nothing is reformatted, so a value read from a CPE is
// written back byte for byte. An empty Type means the sender gave no xsi:type
// and is treated as a string; Encode then writes no xsi:type either. A type
// with another prefix than xsd, such as "xs:long", is also written as given;
// use Kind to compare types whatever their prefix.
type Value struct {
	Type string
	Text string
}

// String returns a value of type xsd:string.
func String(s string) Value { return Value{Type: TypeString, Text: s} }

// UnsignedInt returns a value of type xsd:unsignedInt.
func UnsignedInt(n uint32) Value {
	return Value{Type: TypeUnsignedInt, Text: strconv.FormatUint(uint64(n), 10)}
}

// Int returns a value of type xsd:int.
func Int(n int32) Value { return Value{Type: TypeInt, Text: strconv.FormatInt(int64(n), 10)} }

// Long returns a value of type xsd:long.
func Long(n int64) Value { return Value{Type: TypeLong, Text: strconv.FormatInt(n, 10)} }

// UnsignedLong returns a value of type xsd:unsignedLong.
func UnsignedLong(n uint64) Value {
	return Value{Type: TypeUnsignedLong, Text: strconv.FormatUint(n, 10)}
}

// Bool returns a value of type xsd:boolean, written "true" or "false".
func Bool(b bool) Value { return Value{Type: TypeBoolean, Text: strconv.FormatBool(b)} }

// DateTime returns a value of type xsd:dateTime in RFC 3339 form, with
// fractional seconds only when t has them. The zero time gives UnknownTime.
func DateTime(t time.Time) Value {
	return Value{Type: TypeDateTime, Text: string(appendDateTime(nil, t))}
}

// Base64 returns a value of type xsd:base64 holding b in standard encoding.
func Base64(b []byte) Value {
	return Value{Type: TypeBase64, Text: base64.StdEncoding.EncodeToString(b)}
}

// Kind returns the local name of the type, such as "unsignedInt", whatever
// prefix the sender used; a value without a type is a "string".
func (v Value) Kind() string {
	t := v.Type
	if i := strings.LastIndexByte(t, ':'); i >= 0 {
		t = t[i+1:]
	}
	t = strings.TrimSpace(t)
	if t == "" {
		return "string"
	}
	return t
}

// String returns the text of v.
func (v Value) String() string { return v.Text }

// AsBool parses the text as an xsd:boolean (see ParseBool).
func (v Value) AsBool() (bool, error) { return ParseBool(v.Text) }

// AsUint parses the text as an unsigned decimal of up to 64 bits.
func (v Value) AsUint() (uint64, error) {
	return strconv.ParseUint(strings.TrimSpace(v.Text), 10, 64)
}

// AsInt parses the text as a signed decimal of up to 64 bits.
func (v Value) AsInt() (int64, error) {
	return strconv.ParseInt(strings.TrimSpace(v.Text), 10, 64)
}

// AsTime parses the text as an xsd:dateTime (see ParseDateTime).
func (v Value) AsTime() (time.Time, error) { return ParseDateTime(v.Text) }

// AsBytes decodes the text as standard base64.
func (v Value) AsBytes() ([]byte, error) {
	return base64.StdEncoding.DecodeString(strings.TrimSpace(v.Text))
}

// ParseBool parses an xsd:boolean: "1", "0", "true" or "false". Surrounding
// white space and the case of true/false are forgiven, as CPEs vary.
func ParseBool(s string) (bool, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "1" || strings.EqualFold(s, "true"):
		return true, nil
	case s == "0" || strings.EqualFold(s, "false"):
		return false, nil
	}
	return false, fmt.Errorf("cwmp: invalid boolean %q", s)
}

// ParseDateTime parses an xsd:dateTime: RFC 3339 with optional fractional
// seconds, or without a zone offset (seen from CPEs without a clock setting),
// which is taken as UTC. UnknownTime parses to the zero time.Time.
func ParseDateTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	t, err := time.Parse("2006-01-02T15:04:05.999999999", s)
	if err != nil {
		return time.Time{}, fmt.Errorf("cwmp: invalid dateTime %q", s)
	}
	return t, nil
}

// appendDateTime writes t as RFC 3339 with nanoseconds trimmed, the zero
// time as UnknownTime.
func appendDateTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, UnknownTime...)
	}
	return t.AppendFormat(b, time.RFC3339Nano)
}
