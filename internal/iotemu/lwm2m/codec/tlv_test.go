package codec

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

// specDeviceTLV is the TLV example of the Device object instance /3/0 in
// the LwM2M Core TS (1.0 section 6.4.3.1, 1.1 section 7.4.3.1): the
// resources of the instance without the object instance level.
const specDeviceTLV = `
C8 00 14 4F 70 65 6E 20 4D 6F 62 69 6C 65 20 41 6C 6C 69 61 6E 63 65
C8 01 16 4C 69 67 68 74 77 65 69 67 68 74 20 4D 32 4D 20 43 6C 69 65 6E 74
C8 02 09 33 34 35 30 30 30 31 32 33
C3 03 31 2E 30
86 06 41 00 01 41 01 05
88 07 08 42 00 0E D8 42 01 13 88
87 08 41 00 7D 42 01 03 84
C1 09 64
C1 0A 0F
83 0B 41 00 00
C4 0D 51 82 42 8F
C6 0E 2B 30 32 3A 30 30
C1 10 55`

func TestTLVSpecDeviceExample(t *testing.T) {
	resources := mustHex(t, specDeviceTLV)
	// The same instance wrapped in its object instance TLV (121 bytes), as
	// the specification shows for a read of /3.
	instance := append(mustHex(t, "08 00 79"), resources...)
	if len(resources) != 0x79 {
		t.Fatalf("spec vector is %d bytes, want 121", len(resources))
	}
	want := deviceRecords(t)

	tests := []struct {
		name    string
		base    string
		payload []byte
	}{
		{"instance", "/3/0", resources},
		{"object", "/3", instance},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := mustPath(t, tt.base)
			got, err := EncodeTLV(base, want)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tt.payload) {
				t.Errorf("EncodeTLV\n got: % X\nwant: % X", got, tt.payload)
			}
			recs, err := DecodeTLV(base, tt.payload, deviceKinds)
			if err != nil {
				t.Fatal(err)
			}
			assertRecords(t, recs, want)
		})
	}
}

func TestTLVEncodeShapes(t *testing.T) {
	tests := []struct {
		name string
		base string
		recs []Record
		want string
	}{
		{
			name: "multiple-instance resource gives resource instance TLVs",
			base: "/3/0/6",
			recs: []Record{rec(t, "/3/0/6/0", integer(1)), rec(t, "/3/0/6/1", integer(5))},
			want: "41 00 01 41 01 05",
		},
		{
			name: "single resource gives one resource TLV",
			base: "/3/0/9",
			recs: []Record{rec(t, "/3/0/9", integer(100))},
			want: "C1 09 64",
		},
		{
			name: "resource instance gives one resource instance TLV",
			base: "/3/0/7/1",
			recs: []Record{rec(t, "/3/0/7/1", integer(5000))},
			want: "42 01 13 88",
		},
		{
			name: "16-bit identifier",
			base: "/3303/0",
			recs: []Record{rec(t, "/3303/0/5700", Value{Kind: KindFloat, Float: 31})},
			want: "E4 16 44 41 F8 00 00",
		},
		{
			name: "16-bit length",
			base: "/3/0/0",
			recs: []Record{rec(t, "/3/0/0", str(strings.Repeat("x", 256)))},
			want: "D0 00 01 00" + strings.Repeat(" 78", 256),
		},
		{
			name: "two object instances keep first-appearance order",
			base: "/1",
			recs: []Record{
				rec(t, "/1/1/0", integer(2)),
				rec(t, "/1/0/0", integer(1)),
				rec(t, "/1/1/1", integer(300)),
			},
			want: "07 01 C1 00 02 C2 01 01 2C 03 00 C1 00 01",
		},
		{
			name: "empty instance",
			base: "/3/0",
			want: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EncodeTLV(mustPath(t, tt.base), tt.recs)
			if err != nil {
				t.Fatal(err)
			}
			if want := mustHex(t, tt.want); !bytes.Equal(got, want) {
				t.Errorf("got % X, want % X", got, want)
			}
		})
	}
}

func TestTLVValueWidths(t *testing.T) {
	tests := []struct {
		v    Value
		want string
	}{
		{integer(0), "00"},
		{integer(127), "7F"},
		{integer(128), "00 80"},
		{integer(-128), "80"},
		{integer(-129), "FF 7F"},
		{integer(32768), "00 00 80 00"},
		{integer(1 << 31), "00 00 00 00 80 00 00 00"},
		{integer(math.MinInt64), "80 00 00 00 00 00 00 00"},
		{Value{Kind: KindUnsigned, Uint: 200}, "00 C8"},
		{Value{Kind: KindUnsigned, Uint: math.MaxUint64}, "FF FF FF FF FF FF FF FF"},
		{Value{Kind: KindFloat, Float: 1.5}, "3F C0 00 00"},
		{Value{Kind: KindFloat, Float: 0.1}, "3F B9 99 99 99 99 99 9A"},
		{Value{Kind: KindBoolean, Bool: true}, "01"},
		{Value{Kind: KindObjLnk, Link: ObjLnk{Object: 66, Instance: 1}}, "00 42 00 01"},
		{Value{Kind: KindTime, Int: 1367491215}, "51 82 42 8F"},
	}
	for _, tt := range tests {
		t.Run(tt.v.Kind.String()+"/"+tt.v.String(), func(t *testing.T) {
			got, err := encodeTLVValue(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if want := mustHex(t, tt.want); !bytes.Equal(got, want) {
				t.Errorf("got % X, want % X", got, want)
			}
			back, err := decodeTLVValue(got, tt.v.Kind)
			if err != nil {
				t.Fatal(err)
			}
			if !valueEqual(back, tt.v) {
				t.Errorf("decoded %+v, want %+v", back, tt.v)
			}
		})
	}
}

func TestTLVRoundTripEveryKind(t *testing.T) {
	for _, v := range everyKind {
		kind := func(Path) (Kind, bool) { return v.Kind, true }
		cases := []struct {
			base string
			recs []Record
		}{
			{"/9/0/1", []Record{rec(t, "/9/0/1", v)}},
			{"/9/0/1/7", []Record{rec(t, "/9/0/1/7", v)}},
			{"/9/0/1", []Record{rec(t, "/9/0/1/0", v), rec(t, "/9/0/1/300", v)}},
			{"/9/0", []Record{rec(t, "/9/0/1", v), rec(t, "/9/0/2/0", v)}},
			{"/9", []Record{rec(t, "/9/0/1", v), rec(t, "/9/1/2/0", v)}},
		}
		for _, c := range cases {
			base := mustPath(t, c.base)
			b, err := EncodeTLV(base, c.recs)
			if err != nil {
				t.Fatalf("%s %v: %v", c.base, v, err)
			}
			got, err := DecodeTLV(base, b, kind)
			if err != nil {
				t.Fatalf("%s %v: %v", c.base, v, err)
			}
			assertRecords(t, got, c.recs)
		}
	}
}

func TestTLVDecodeAcceptedForms(t *testing.T) {
	tests := []struct {
		name    string
		base    string
		payload string
		want    []Record
	}{
		{
			name:    "multiple resource TLV at its own path (Leshan's form)",
			base:    "/3/0/6",
			payload: "86 06 41 00 01 41 01 05",
			want:    []Record{rec(t, "/3/0/6/0", integer(1)), rec(t, "/3/0/6/1", integer(5))},
		},
		{
			name:    "bare resource instances",
			base:    "/3/0/6",
			payload: "41 00 01 41 01 05",
			want:    []Record{rec(t, "/3/0/6/0", integer(1)), rec(t, "/3/0/6/1", integer(5))},
		},
		{
			name:    "multi-instance resource with no instances",
			base:    "/3/0/6",
			payload: "",
			want:    nil,
		},
		{
			name:    "object instance TLV around a resource",
			base:    "/3/0/9",
			payload: "03 00 C1 09 64",
			want:    []Record{rec(t, "/3/0/9", integer(100))},
		},
		{
			name:    "object instance TLV around the resources of the request path",
			base:    "/3/0",
			payload: "06 00 C1 09 64 C1 0A 0F",
			want:    []Record{rec(t, "/3/0/9", integer(100)), rec(t, "/3/0/10", integer(15))},
		},
		{
			name:    "multiple resource TLV around a resource instance",
			base:    "/3/0/6/1",
			payload: "83 06 41 01 05",
			want:    []Record{rec(t, "/3/0/6/1", integer(5))},
		},
		{
			name:    "non-minimal identifier and length fields",
			base:    "/3/0",
			payload: "F8 00 09 00 00 01 64",
			want:    []Record{rec(t, "/3/0/9", integer(100))},
		},
		{
			name:    "unknown resource decodes as opaque",
			base:    "/3/0",
			payload: "C2 63 AB CD",
			want:    []Record{rec(t, "/3/0/99", Value{Kind: KindOpaque, Bytes: []byte{0xab, 0xcd}})},
		},
		{
			name:    "executable resource ignores its payload",
			base:    "/3/0",
			payload: "C1 04 01",
			want:    []Record{rec(t, "/3/0/4", Value{Kind: KindNone})},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeTLV(mustPath(t, tt.base), mustHex(t, tt.payload), deviceKinds)
			if err != nil {
				t.Fatal(err)
			}
			assertRecords(t, got, tt.want)
		})
	}
}

func TestTLVDecodeMalformed(t *testing.T) {
	tests := []struct {
		name    string
		base    string
		payload string
		is      error
	}{
		{name: "truncated header", base: "/3/0", payload: "C8"},
		{name: "truncated 16-bit identifier", base: "/3/0", payload: "E1 00"},
		{name: "truncated length field", base: "/3/0", payload: "D0 00 01"},
		{name: "truncated value", base: "/3/0", payload: "C8 00 14 4F 70 65 6E"},
		{name: "length overflow in 24-bit field", base: "/3/0", payload: "D8 00 FF FF FF 00"},
		{name: "nested length beyond container", base: "/3/0", payload: "83 06 48 00 FF"},
		{name: "integer of 3 bytes", base: "/3/0", payload: "C3 09 00 00 64"},
		{name: "empty integer", base: "/3/0", payload: "C0 09"},
		{name: "boolean 2", base: "/1/0", payload: "C1 06 02"},
		{name: "float of 2 bytes", base: "/9/0", payload: "C2 03 3F C0"},
		{name: "objlnk of 3 bytes", base: "/9/0", payload: "C3 05 00 01 02"},
		{name: "invalid UTF-8 string", base: "/3/0", payload: "C2 00 C3 28"},
		{name: "duplicate resource", base: "/3/0", payload: "C1 09 64 C1 09 63"},
		{name: "duplicate resource instance", base: "/3/0", payload: "86 06 41 00 01 41 00 05"},
		{name: "duplicate instance", base: "/3", payload: "00 00 00 00"},
		{name: "object instance inside object instance", base: "/3", payload: "02 00 00 01"},
		{name: "resource inside multiple resource", base: "/3/0", payload: "83 06 C1 00 01"},
		{name: "resource instance at instance level", base: "/3/0", payload: "41 06 01"},
		{name: "bare resources at object level", base: "/3", payload: "C1 09 64", is: ErrNoInstanceTLV},
		{name: "instance id differs from path", base: "/3/0", payload: "03 01 C1 09 64"},
		{name: "resource id differs from path", base: "/3/0/9", payload: "C1 0A 0F"},
		{name: "resource instance id differs from path", base: "/3/0/6/1", payload: "41 00 01"},
		{name: "two TLVs for a resource instance", base: "/3/0/6/1", payload: "41 01 01 41 01 02"},
		{name: "instance wrapper holding resource instances", base: "/3/0/6", payload: "03 00 41 00 01"},
	}
	kinds := func(p Path) (Kind, bool) {
		switch p.Object {
		case 1:
			return KindBoolean, true
		case 9:
			if p.Resource == 3 {
				return KindFloat, true
			}
			return KindObjLnk, true
		}
		return deviceKinds(p)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeTLV(mustPath(t, tt.base), mustHex(t, tt.payload), kinds)
			if err == nil {
				t.Fatalf("no error, got %v", got)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
		})
	}
}

func TestTLVEncodeErrors(t *testing.T) {
	tests := []struct {
		name string
		base Path
		recs []Record
	}{
		{"record outside base", mustPath(t, "/3/0"), []Record{rec(t, "/4/0/1", integer(1))}},
		{"record above resource level", mustPath(t, "/3"), []Record{rec(t, "/3/0", integer(1))}},
		{"duplicate record", mustPath(t, "/3/0"), []Record{rec(t, "/3/0/1", integer(1)), rec(t, "/3/0/1", integer(2))}},
		{"single and multiple mixed", mustPath(t, "/3/0"), []Record{rec(t, "/3/0/1", integer(1)), rec(t, "/3/0/1/0", integer(2))}},
		{"executable has no value", mustPath(t, "/3/0"), []Record{rec(t, "/3/0/4", Value{Kind: KindNone})}},
		{"root base", Root, nil},
		{"invalid base", Path{3, -1, 2, -1}, nil},
		{"resource instance without record", mustPath(t, "/3/0/6/0"), nil},
		{"value beyond 24-bit length", mustPath(t, "/3/0/0"), []Record{rec(t, "/3/0/0", Value{Kind: KindOpaque, Bytes: make([]byte, 1<<24)})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if b, err := EncodeTLV(tt.base, tt.recs); err == nil {
				t.Errorf("no error, got % X", b)
			}
		})
	}
}
