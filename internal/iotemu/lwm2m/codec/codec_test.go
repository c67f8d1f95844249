package codec

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

func TestParsePath(t *testing.T) {
	tests := []struct {
		in    string
		want  Path
		depth int
		err   bool
	}{
		{in: "/3", want: Path{3, -1, -1, -1}, depth: 1},
		{in: "/3/0", want: Path{3, 0, -1, -1}, depth: 2},
		{in: "/3/0/1", want: Path{3, 0, 1, -1}, depth: 3},
		{in: "/3/0/1/2", want: Path{3, 0, 1, 2}, depth: 4},
		{in: "/65535/65535/65535/65535", want: Path{65535, 65535, 65535, 65535}, depth: 4},
		{in: "", err: true},
		{in: "/", err: true},
		{in: "3/0", err: true},
		{in: "//", err: true},
		{in: "/3//1", err: true},
		{in: "/3/", err: true},
		{in: "/65536", err: true},
		{in: "/100000", err: true},
		{in: "/3/x", err: true},
		{in: "/3/-1", err: true},
		{in: "/3/+1", err: true},
		{in: "/3/ 1", err: true},
		{in: "/1/2/3/4/5", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParsePath(tt.in)
			if tt.err {
				if err == nil {
					t.Fatalf("no error, got %v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || got.Depth() != tt.depth || got.String() != tt.in {
				t.Errorf("got %#v depth %d string %q", got, got.Depth(), got.String())
			}
		})
	}
}

func TestPathContains(t *testing.T) {
	tests := []struct {
		p, q string
		want bool
	}{
		{"/3", "/3", true},
		{"/3", "/3/0/1/2", true},
		{"/3/0", "/3/0/1", true},
		{"/3/0", "/3/1/1", false},
		{"/3/0/1", "/3/0", false},
		{"/3/0/1", "/3/0/10", false},
		{"/3", "/30", false},
	}
	for _, tt := range tests {
		if got := mustPath(t, tt.p).Contains(mustPath(t, tt.q)); got != tt.want {
			t.Errorf("%s contains %s = %v, want %v", tt.p, tt.q, got, tt.want)
		}
	}
	if !Root.Contains(mustPath(t, "/3/0")) || Root.String() != "/" || Root.Depth() != 0 {
		t.Error("Root is not the root")
	}
}

func TestText(t *testing.T) {
	tests := []struct {
		v    Value
		want string
	}{
		{str("Open Mobile Alliance"), "Open Mobile Alliance"},
		{integer(-42), "-42"},
		{Value{Kind: KindUnsigned, Uint: math.MaxUint64}, "18446744073709551615"},
		{Value{Kind: KindFloat, Float: 0.1}, "0.1"},
		{Value{Kind: KindFloat, Float: 1e6}, "1000000"},
		{Value{Kind: KindFloat, Float: 1e21}, "1e+21"},
		{Value{Kind: KindFloat, Float: -2.5e-7}, "-2.5e-7"},
		{Value{Kind: KindBoolean, Bool: true}, "1"},
		{Value{Kind: KindBoolean, Bool: false}, "0"},
		{Value{Kind: KindOpaque, Bytes: []byte{0, 1, 0xfe, 0xff}}, "AAH+/w=="},
		{Value{Kind: KindTime, Int: 1367491215}, "1367491215"},
		{Value{Kind: KindObjLnk, Link: ObjLnk{Object: 3, Instance: 0}}, "3:0"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got := EncodeText(tt.v)
			if string(got) != tt.want {
				t.Errorf("EncodeText = %q, want %q", got, tt.want)
			}
			back, err := DecodeText(got, tt.v.Kind)
			if err != nil {
				t.Fatal(err)
			}
			if !valueEqual(back, tt.v) {
				t.Errorf("DecodeText = %+v, want %+v", back, tt.v)
			}
		})
	}
	for _, v := range everyKind {
		back, err := DecodeText(EncodeText(v), v.Kind)
		if err != nil || !valueEqual(back, v) {
			t.Errorf("round trip of %+v: %+v, %v", v, back, err)
		}
	}
}

func TestDecodeTextMalformed(t *testing.T) {
	tests := []struct {
		in string
		k  Kind
	}{
		{"2", KindBoolean},
		{"true", KindBoolean},
		{"", KindInteger},
		{"1.5", KindInteger},
		{" 1", KindInteger},
		{"9223372036854775808", KindInteger},
		{"-1", KindUnsigned},
		{"NaN", KindFloat},
		{"Inf", KindFloat},
		{"0x1p-2", KindFloat},
		{"1_000", KindFloat},
		{"1e", KindFloat},
		{".", KindFloat},
		{"1e999", KindFloat},
		{"AA*=", KindOpaque},
		{"AAB=", KindOpaque},
		{"3:", KindObjLnk},
		{"3:0:1", KindObjLnk},
		{"70000:0", KindObjLnk},
		{"\xc3\x28", KindString},
		{"1", Kind(99)},
	}
	for _, tt := range tests {
		t.Run(tt.k.String()+"/"+tt.in, func(t *testing.T) {
			if v, err := DecodeText([]byte(tt.in), tt.k); err == nil {
				t.Errorf("no error, got %+v", v)
			}
		})
	}
}

func TestOpaque(t *testing.T) {
	in := []byte{1, 2, 3}
	v := DecodeOpaque(in)
	in[0] = 9
	if v.Kind != KindOpaque || !bytes.Equal(v.Bytes, []byte{1, 2, 3}) {
		t.Errorf("DecodeOpaque = %+v, want a copy of the input", v)
	}
	b, err := EncodeOpaque(v)
	if err != nil || !bytes.Equal(b, []byte{1, 2, 3}) {
		t.Errorf("EncodeOpaque = %v, %v", b, err)
	}
	if _, err := EncodeOpaque(str("x")); err == nil {
		t.Error("EncodeOpaque of a string: no error")
	}
}

func TestCBORValue(t *testing.T) {
	tests := []struct {
		v    Value
		want string
	}{
		{str("U"), "61 55"},
		{integer(-5), "24"},
		{Value{Kind: KindUnsigned, Uint: math.MaxUint64}, "1b ff ff ff ff ff ff ff ff"},
		{Value{Kind: KindFloat, Float: 1.5}, "f9 3e 00"},
		{Value{Kind: KindFloat, Float: 0.1}, "fb 3f b9 99 99 99 99 99 9a"},
		{Value{Kind: KindBoolean, Bool: true}, "f5"},
		{Value{Kind: KindOpaque, Bytes: []byte{0, 1}}, "42 00 01"},
		{Value{Kind: KindOpaque}, "40"},
		{Value{Kind: KindTime, Int: 1367491215}, "c1 1a 51 82 42 8f"},
		{Value{Kind: KindObjLnk, Link: ObjLnk{Object: 3, Instance: 0}}, "63 33 3a 30"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			base := mustPath(t, "/9/0/1")
			got, err := Encode(FormatCBOR, base, []Record{{Path: base, Value: tt.v}})
			if err != nil {
				t.Fatal(err)
			}
			if want := mustHex(t, tt.want); !bytes.Equal(got, want) {
				t.Errorf("got % x, want % x", got, want)
			}
			kind := func(Path) (Kind, bool) { return tt.v.Kind, true }
			recs, err := Decode(FormatCBOR, base, got, kind)
			if err != nil {
				t.Fatal(err)
			}
			assertRecords(t, recs, []Record{{Path: base, Value: tt.v}})
		})
	}

	// Without a known kind the CBOR type decides.
	guesses := []struct {
		in   string
		want Value
	}{
		{"c1 1a 51 82 42 8f", Value{Kind: KindTime, Int: 1367491215}},
		{"c0 74 32 30 31 33 2d 30 35 2d 30 32 54 31 30 3a 34 30 3a 31 35 5a", Value{Kind: KindTime, Int: 1367491215}},
		{"18 64", integer(100)},
		{"1b ff ff ff ff ff ff ff ff", Value{Kind: KindUnsigned, Uint: math.MaxUint64}},
		{"f9 3e 00", Value{Kind: KindFloat, Float: 1.5}},
		{"61 55", str("U")},
		{"42 00 01", Value{Kind: KindOpaque, Bytes: []byte{0, 1}}},
		{"f4", Value{Kind: KindBoolean}},
	}
	for _, g := range guesses {
		got, err := decodeCBORValue(mustHex(t, g.in), 0, false)
		if err != nil || !valueEqual(got, g.want) {
			t.Errorf("%s: got %+v, %v; want %+v", g.in, got, err, g.want)
		}
	}
	// A plain number is accepted for a time resource.
	if got, err := decodeCBORValue(mustHex(t, "1a 51 82 42 8f"), KindTime, true); err != nil || got.Int != 1367491215 {
		t.Errorf("untagged time: %+v, %v", got, err)
	}

	bad := []struct {
		in string
		k  Kind
	}{
		{"", KindString},
		{"61", KindString},
		{"61 55 00", KindString},
		{"18 64", KindString},
		{"61 55", KindInteger},
		{"f9 3e 00", KindInteger},
		{"20", KindUnsigned},
		{"f5", KindOpaque},
		{"61 55", KindObjLnk},
		{"f6", KindBoolean},
		{"81 01", KindInteger},
		{"f6", Kind(99)},
	}
	for _, b := range bad {
		if got, err := decodeCBORValue(mustHex(t, b.in), b.k, true); err == nil {
			t.Errorf("%s as %s: no error, got %+v", b.in, b.k, got)
		}
	}
	if got, err := decodeCBORValue(mustHex(t, "f6"), 0, false); err == nil {
		t.Errorf("null without kind: no error, got %+v", got)
	}
}

func TestEncodeDecodeDispatch(t *testing.T) {
	base := mustPath(t, "/3/0/9")
	recs := []Record{{Path: base, Value: integer(100)}}
	kind := KindOf(deviceKinds)
	formats := []struct {
		format uint16
		want   string
	}{
		{FormatText, "100"},
		{FormatTLV, "\xc1\x09\x64"},
		{FormatSenMLJSON, `[{"n":"/3/0/9","v":100}]`},
		{FormatCBOR, "\x18\x64"},
	}
	for _, f := range formats {
		b, err := Encode(f.format, base, recs)
		if err != nil {
			t.Fatalf("format %d: %v", f.format, err)
		}
		if string(b) != f.want {
			t.Errorf("format %d: got %q, want %q", f.format, b, f.want)
		}
		got, err := Decode(f.format, base, b, kind)
		if err != nil {
			t.Fatalf("format %d: %v", f.format, err)
		}
		assertRecords(t, got, recs)
	}

	opaque := []Record{rec(t, "/5/0/0", Value{Kind: KindOpaque, Bytes: []byte{1, 2}})}
	b, err := Encode(FormatOpaque, opaque[0].Path, opaque)
	if err != nil || !bytes.Equal(b, []byte{1, 2}) {
		t.Errorf("opaque: %v, %v", b, err)
	}
	got, err := Decode(FormatOpaque, opaque[0].Path, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	assertRecords(t, got, opaque)

	// Plain text of an unknown resource is a string.
	got, err = Decode(FormatText, mustPath(t, "/9/0/1"), []byte("42"), nil)
	if err != nil {
		t.Fatal(err)
	}
	assertRecords(t, got, []Record{rec(t, "/9/0/1", str("42"))})

	for _, format := range []uint16{FormatLinkFormat, 11543, 1} {
		if _, err := Encode(format, base, recs); !errors.Is(err, ErrUnsupportedFormat) {
			t.Errorf("Encode format %d: %v, want ErrUnsupportedFormat", format, err)
		}
		if _, err := Decode(format, base, nil, kind); !errors.Is(err, ErrUnsupportedFormat) {
			t.Errorf("Decode format %d: %v, want ErrUnsupportedFormat", format, err)
		}
	}

	errs := []struct {
		name string
		run  func() error
	}{
		{"text needs a resource path", func() error {
			_, err := Decode(FormatText, mustPath(t, "/3/0"), []byte("1"), kind)
			return err
		}},
		{"text needs exactly one record", func() error {
			_, err := Encode(FormatText, base, append(recs, recs...))
			return err
		}},
		{"text record must be at base", func() error {
			_, err := Encode(FormatText, base, []Record{rec(t, "/3/0/10", integer(1))})
			return err
		}},
		{"text of an executable resource", func() error {
			_, err := Encode(FormatText, mustPath(t, "/3/0/4"), []Record{rec(t, "/3/0/4", Value{Kind: KindNone})})
			return err
		}},
		{"opaque of an integer resource", func() error {
			_, err := Decode(FormatOpaque, base, []byte{1}, kind)
			return err
		}},
		{"opaque encoding of an integer", func() error {
			_, err := Encode(FormatOpaque, base, recs)
			return err
		}},
		{"cbor of an executable resource", func() error {
			_, err := Encode(FormatCBOR, mustPath(t, "/3/0/4"), []Record{rec(t, "/3/0/4", Value{Kind: KindNone})})
			return err
		}},
		{"senml record outside the request path", func() error {
			_, err := Decode(FormatSenMLJSON, mustPath(t, "/3/0"), []byte(`[{"n":"/4/0/1","v":1}]`), kind)
			return err
		}},
	}
	for _, e := range errs {
		if e.run() == nil {
			t.Errorf("%s: no error", e.name)
		}
	}

	// Composite operations decode against Root.
	got, err = Decode(FormatSenMLCBOR, Root, mustHex(t, "81 a1 00 64 2f 33 2f 30"), kind)
	if err != nil {
		t.Fatal(err)
	}
	assertRecords(t, got, []Record{rec(t, "/3/0", Value{Kind: KindNone})})
}

func TestParseValueAndString(t *testing.T) {
	tests := []struct {
		k    Kind
		in   string
		want Value
		out  string // String(), when it differs from in
	}{
		{k: KindString, in: " spaced ", want: str(" spaced ")},
		{k: KindInteger, in: "-42", want: integer(-42)},
		{k: KindInteger, in: " 7 ", want: integer(7), out: "7"},
		{k: KindUnsigned, in: "18446744073709551615", want: Value{Kind: KindUnsigned, Uint: math.MaxUint64}},
		{k: KindFloat, in: "22.4", want: Value{Kind: KindFloat, Float: 22.4}},
		{k: KindFloat, in: "1e3", want: Value{Kind: KindFloat, Float: 1000}, out: "1000"},
		{k: KindBoolean, in: "true", want: Value{Kind: KindBoolean, Bool: true}},
		{k: KindBoolean, in: "0", want: Value{Kind: KindBoolean}, out: "false"},
		{k: KindOpaque, in: "AAH+/w==", want: Value{Kind: KindOpaque, Bytes: []byte{0, 1, 0xfe, 0xff}}},
		{k: KindOpaque, in: "AAH+/w", want: Value{Kind: KindOpaque, Bytes: []byte{0, 1, 0xfe, 0xff}}, out: "AAH+/w=="},
		{k: KindOpaque, in: "", want: Value{Kind: KindOpaque, Bytes: []byte{}}},
		{k: KindTime, in: "1367491215", want: Value{Kind: KindTime, Int: 1367491215}},
		{k: KindObjLnk, in: "3:0", want: Value{Kind: KindObjLnk, Link: ObjLnk{Object: 3}}},
		{k: KindNone, in: "", want: Value{Kind: KindNone}},
	}
	for _, tt := range tests {
		t.Run(tt.k.String()+"/"+tt.in, func(t *testing.T) {
			got, err := ParseValue(tt.k, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !valueEqual(got, tt.want) {
				t.Errorf("ParseValue = %+v, want %+v", got, tt.want)
			}
			out := tt.out
			if out == "" {
				out = tt.in
			}
			if got.String() != out {
				t.Errorf("String = %q, want %q", got.String(), out)
			}
		})
	}
	bad := []struct {
		k  Kind
		in string
	}{
		{KindInteger, "1.5"},
		{KindInteger, "x"},
		{KindUnsigned, "-1"},
		{KindFloat, "NaN"},
		{KindFloat, "Inf"},
		{KindBoolean, "yes"},
		{KindOpaque, "!!"},
		{KindTime, "2013-05-02"},
		{KindObjLnk, "3"},
		{Kind(99), ""},
	}
	for _, b := range bad {
		if v, err := ParseValue(b.k, b.in); err == nil {
			t.Errorf("ParseValue(%s, %q): no error, got %+v", b.k, b.in, v)
		}
	}
	for _, v := range everyKind {
		back, err := ParseValue(v.Kind, v.String())
		if err != nil || !valueEqual(back, v) {
			t.Errorf("round trip of %+v: %+v, %v", v, back, err)
		}
	}
}
