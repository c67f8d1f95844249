package codec

import (
	"bytes"
	"encoding/hex"
	"math"
	"strings"
	"testing"
)

// mustHex decodes hex written with optional blanks between bytes.
func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatalf("bad hex in test: %v", err)
	}
	return b
}

func mustPath(t testing.TB, s string) Path {
	t.Helper()
	p, err := ParsePath(s)
	if err != nil {
		t.Fatalf("ParsePath(%q): %v", s, err)
	}
	return p
}

// valueEqual compares values field by field for their kind, treating NaN
// as equal to itself and nil bytes as equal to empty ones.
func valueEqual(a, b Value) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case KindString:
		return a.Str == b.Str
	case KindInteger, KindTime:
		return a.Int == b.Int
	case KindUnsigned:
		return a.Uint == b.Uint
	case KindFloat:
		return a.Float == b.Float && math.Signbit(a.Float) == math.Signbit(b.Float) ||
			math.IsNaN(a.Float) && math.IsNaN(b.Float)
	case KindBoolean:
		return a.Bool == b.Bool
	case KindOpaque:
		return bytes.Equal(a.Bytes, b.Bytes)
	case KindObjLnk:
		return a.Link == b.Link
	}
	return true
}

func recordsEqual(a, b []Record) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Path != b[i].Path || !valueEqual(a[i].Value, b[i].Value) {
			return false
		}
	}
	return true
}

func assertRecords(t *testing.T, got, want []Record) {
	t.Helper()
	if !recordsEqual(got, want) {
		t.Errorf("records differ\n got: %v\nwant: %v", got, want)
	}
}

// kindMap is a KindOf keyed by path string; resource instances fall back
// to their resource.
func kindMap(m map[string]Kind) KindOf {
	return func(p Path) (Kind, bool) {
		if k, ok := m[p.String()]; ok {
			return k, true
		}
		if p.Depth() == 4 {
			p.ResourceInstance = -1
			k, ok := m[p.String()]
			return k, ok
		}
		return 0, false
	}
}

// deviceKinds types the resources of the Device object (/3) as in the
// LwM2M registry.
func deviceKinds(p Path) (Kind, bool) {
	if p.Object != 3 || p.Depth() < 3 {
		return 0, false
	}
	switch p.Resource {
	case 0, 1, 2, 3, 14, 15, 16, 17, 18, 19:
		return KindString, true
	case 6, 7, 8, 9, 10, 11, 20, 21:
		return KindInteger, true
	case 13:
		return KindTime, true
	case 4, 5, 12:
		return KindNone, true
	}
	return 0, false
}

func str(s string) Value    { return Value{Kind: KindString, Str: s} }
func integer(n int64) Value { return Value{Kind: KindInteger, Int: n} }
func rec(t testing.TB, p string, v Value) Record {
	return Record{Path: mustPath(t, p), Value: v}
}

// deviceRecords is the Device object instance of the specification's data
// format examples (LwM2M Core TS 1.0 section 6.4.3, 1.1 section 7.4).
func deviceRecords(t testing.TB) []Record {
	return []Record{
		rec(t, "/3/0/0", str("Open Mobile Alliance")),
		rec(t, "/3/0/1", str("Lightweight M2M Client")),
		rec(t, "/3/0/2", str("345000123")),
		rec(t, "/3/0/3", str("1.0")),
		rec(t, "/3/0/6/0", integer(1)),
		rec(t, "/3/0/6/1", integer(5)),
		rec(t, "/3/0/7/0", integer(3800)),
		rec(t, "/3/0/7/1", integer(5000)),
		rec(t, "/3/0/8/0", integer(125)),
		rec(t, "/3/0/8/1", integer(900)),
		rec(t, "/3/0/9", integer(100)),
		rec(t, "/3/0/10", integer(15)),
		rec(t, "/3/0/11/0", integer(0)),
		rec(t, "/3/0/13", Value{Kind: KindTime, Int: 1367491215}),
		rec(t, "/3/0/14", str("+02:00")),
		rec(t, "/3/0/16", str("U")),
	}
}

// everyKind holds one value of each kind that carries a value, with edge
// values where a format has to choose a width.
var everyKind = []Value{
	{Kind: KindString, Str: "héllo, \"wörld\"\n<&>"},
	{Kind: KindString, Str: ""},
	{Kind: KindInteger, Int: -42},
	{Kind: KindInteger, Int: math.MinInt64},
	{Kind: KindInteger, Int: math.MaxInt64},
	{Kind: KindUnsigned, Uint: 200},
	{Kind: KindUnsigned, Uint: math.MaxUint64},
	{Kind: KindFloat, Float: 3.25},
	{Kind: KindFloat, Float: 0.1},
	{Kind: KindFloat, Float: -1e-300},
	{Kind: KindBoolean, Bool: true},
	{Kind: KindBoolean, Bool: false},
	{Kind: KindOpaque, Bytes: []byte{0, 1, 0xfe, 0xff}},
	{Kind: KindOpaque, Bytes: []byte{}},
	{Kind: KindTime, Int: 1367491215},
	{Kind: KindTime, Int: -1},
	{Kind: KindObjLnk, Link: ObjLnk{Object: 3, Instance: 0}},
	{Kind: KindObjLnk, Link: ObjLnk{Object: 65535, Instance: 65535}},
}
