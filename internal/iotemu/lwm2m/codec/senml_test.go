package codec

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// specDeviceSenMLJSON is the SenML JSON example of the Device object
// instance /3/0 in the LwM2M Core TS 1.1 (section 7.4.4), blanks removed.
const specDeviceSenMLJSON = `[{"bn":"/3/0/","n":"0","vs":"Open Mobile Alliance"},` +
	`{"n":"1","vs":"Lightweight M2M Client"},` +
	`{"n":"2","vs":"345000123"},` +
	`{"n":"3","vs":"1.0"},` +
	`{"n":"6/0","v":1},` +
	`{"n":"6/1","v":5},` +
	`{"n":"7/0","v":3800},` +
	`{"n":"7/1","v":5000},` +
	`{"n":"8/0","v":125},` +
	`{"n":"8/1","v":900},` +
	`{"n":"9","v":100},` +
	`{"n":"10","v":15},` +
	`{"n":"11/0","v":0},` +
	`{"n":"13","v":1367491215},` +
	`{"n":"14","vs":"+02:00"},` +
	`{"n":"16","vs":"U"}]`

// specDeviceSenMLCBOR is the same pack in SenML CBOR, as the LwM2M Core TS
// 1.1.1 shows it (section 7.4.5).
const specDeviceSenMLCBOR = `
90 a3 21 65 2f 33 2f 30 2f 00 61 30 03 74 4f 70 65 6e 20 4d 6f 62 69 6c 65 20 41 6c 6c 69 61 6e 63 65
a2 00 61 31 03 76 4c 69 67 68 74 77 65 69 67 68 74 20 4d 32 4d 20 43 6c 69 65 6e 74
a2 00 61 32 03 69 33 34 35 30 30 30 31 32 33
a2 00 61 33 03 63 31 2e 30
a2 00 63 36 2f 30 02 01
a2 00 63 36 2f 31 02 05
a2 00 63 37 2f 30 02 19 0e d8
a2 00 63 37 2f 31 02 19 13 88
a2 00 63 38 2f 30 02 18 7d
a2 00 63 38 2f 31 02 19 03 84
a2 00 61 39 02 18 64
a2 00 62 31 30 02 0f
a2 00 64 31 31 2f 30 02 00
a2 00 62 31 33 02 1a 51 82 42 8f
a2 00 62 31 34 03 66 2b 30 32 3a 30 30
a2 00 62 31 36 03 61 55`

func TestSenMLSpecDeviceExample(t *testing.T) {
	want := deviceRecords(t)
	base := mustPath(t, "/3/0")

	gotJSON, err := EncodeSenMLJSON(base, want)
	if err != nil {
		t.Fatal(err)
	}
	if string(gotJSON) != specDeviceSenMLJSON {
		t.Errorf("EncodeSenMLJSON\n got: %s\nwant: %s", gotJSON, specDeviceSenMLJSON)
	}
	recs, err := DecodeSenMLJSON([]byte(specDeviceSenMLJSON), deviceKinds)
	if err != nil {
		t.Fatal(err)
	}
	assertRecords(t, recs, want)

	wantCBOR := mustHex(t, specDeviceSenMLCBOR)
	gotCBOR, err := EncodeSenMLCBOR(base, want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotCBOR, wantCBOR) {
		t.Errorf("EncodeSenMLCBOR\n got: % x\nwant: % x", gotCBOR, wantCBOR)
	}
	recs, err = DecodeSenMLCBOR(wantCBOR, deviceKinds)
	if err != nil {
		t.Fatal(err)
	}
	assertRecords(t, recs, want)
}

// TestSenMLJSONSpecStyleExamples decodes packs shaped like the other SenML
// examples of the LwM2M Core TS 1.1: composite operations with full names,
// a base name that is a whole path, time-stamped values and object links.
func TestSenMLJSONSpecStyleExamples(t *testing.T) {
	kinds := kindMap(map[string]Kind{
		"/3311/0/5850": KindBoolean,
		"/3311/1/5851": KindInteger,
		"/3303/0/5700": KindFloat,
		"/66/0/1":      KindObjLnk,
		"/3/0/0":       KindString,
	})
	tests := []struct {
		name string
		pack string
		want []Record
	}{
		{
			name: "read-composite request names objects, instances and resources",
			pack: `[{"n":"/3/0/0"},{"n":"/1/0"},{"n":"/5"}]`,
			want: []Record{
				rec(t, "/3/0/0", Value{Kind: KindNone}),
				rec(t, "/1/0", Value{Kind: KindNone}),
				rec(t, "/5", Value{Kind: KindNone}),
			},
		},
		{
			name: "write-composite request",
			pack: `[{"n":"/3311/0/5850","vb":false},{"n":"/3311/1/5851","v":20}]`,
			want: []Record{
				rec(t, "/3311/0/5850", Value{Kind: KindBoolean, Bool: false}),
				rec(t, "/3311/1/5851", integer(20)),
			},
		},
		{
			name: "base name is the resource, time series",
			pack: `[{"bn":"/3303/0/5700","bt":25462634,"v":22.4,"t":-5},{"t":-30,"v":22.9},{"t":-50,"v":24.1}]`,
			want: []Record{
				rec(t, "/3303/0/5700", Value{Kind: KindFloat, Float: 22.4}),
				rec(t, "/3303/0/5700", Value{Kind: KindFloat, Float: 22.9}),
				rec(t, "/3303/0/5700", Value{Kind: KindFloat, Float: 24.1}),
			},
		},
		{
			name: "base name changes within the pack",
			pack: `[{"bn":"/3311/","n":"0/5850","vb":true},{"bn":"/66/0/","n":"1","vlo":"3:0"}]`,
			want: []Record{
				rec(t, "/3311/0/5850", Value{Kind: KindBoolean, Bool: true}),
				rec(t, "/66/0/1", Value{Kind: KindObjLnk, Link: ObjLnk{Object: 3}}),
			},
		},
		{
			name: "unknown resources take their type from the label",
			pack: `[{"n":"/9/0/1","v":7},{"n":"/9/0/2","v":7.5},{"n":"/9/0/3","v":18446744073709551615},` +
				`{"n":"/9/0/4","vs":"x"},{"n":"/9/0/5","vb":true},{"n":"/9/0/6","vd":"AAH-_w"}]`,
			want: []Record{
				rec(t, "/9/0/1", integer(7)),
				rec(t, "/9/0/2", Value{Kind: KindFloat, Float: 7.5}),
				rec(t, "/9/0/3", Value{Kind: KindUnsigned, Uint: math.MaxUint64}),
				rec(t, "/9/0/4", str("x")),
				rec(t, "/9/0/5", Value{Kind: KindBoolean, Bool: true}),
				rec(t, "/9/0/6", Value{Kind: KindOpaque, Bytes: []byte{0, 1, 0xfe, 0xff}}),
			},
		},
		{
			name: "integral float for an integer resource",
			pack: `[{"n":"/3311/1/5851","v":2.0e1}]`,
			want: []Record{rec(t, "/3311/1/5851", integer(20))},
		},
		{
			name: "unknown labels are ignored, also nested ones",
			pack: `[{"n":"/3/0/0","vs":"x","u":"Cel","ut":5,"s":1,"bver":10,"bv":0,"foo":{"a":[1,{"b":null}]},"bar":"baz"}]`,
			want: []Record{rec(t, "/3/0/0", str("x"))},
		},
		{
			name: "padded base64url data is tolerated",
			pack: `[{"n":"/9/0/6","vd":"AAH-_w=="}]`,
			want: []Record{rec(t, "/9/0/6", Value{Kind: KindOpaque, Bytes: []byte{0, 1, 0xfe, 0xff}})},
		},
		{
			name: "empty pack",
			pack: ` [ ] `,
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeSenMLJSON([]byte(tt.pack), kinds)
			if err != nil {
				t.Fatal(err)
			}
			assertRecords(t, got, tt.want)
		})
	}
}

func TestSenMLJSONMalformed(t *testing.T) {
	kinds := kindMap(map[string]Kind{
		"/3/0/9":  KindInteger,
		"/3/0/0":  KindString,
		"/3/0/20": KindUnsigned,
	})
	tests := []struct {
		name string
		pack string
	}{
		{"not JSON", `[{"n":`},
		{"object instead of pack", `{"n":"/3/0/0","vs":"x"}`},
		{"record is not an object", `[["/3/0/0"]]`},
		{"trailing comma", `[{"n":"/3/0/0","vs":"x"},]`},
		{"trailing data", `[{"n":"/3/0/0","vs":"x"}] []`},
		{"string in v", `[{"n":"/3/0/9","v":"100"}]`},
		{"number in vs", `[{"n":"/3/0/0","vs":1}]`},
		{"number in vb", `[{"n":"/3/5/0","vb":1}]`},
		{"null in v", `[{"n":"/3/0/9","v":null}]`},
		{"number in n", `[{"n":3}]`},
		{"bad base64url", `[{"n":"/9/0/6","vd":"AA*"}]`},
		{"standard base64 alphabet in vd", `[{"n":"/9/0/6","vd":"AAH+/w"}]`},
		{"bad object link", `[{"n":"/9/0/7","vlo":"3-0"}]`},
		{"object link id out of range", `[{"n":"/9/0/7","vlo":"3:65536"}]`},
		{"two values", `[{"n":"/9/0/1","v":1,"vs":"1"}]`},
		{"duplicate label", `[{"n":"/9/0/1","n":"/9/0/2","v":1}]`},
		{"must-understand label", `[{"n":"/9/0/1","v":1,"foo_":1}]`},
		{"later SenML version", `[{"bver":11,"n":"/9/0/1","v":1}]`},
		{"base value", `[{"bv":1,"n":"/9/0/1","v":1}]`},
		{"wrong type for known time label", `[{"n":"/9/0/1","v":1,"t":"now"}]`},
		{"no name", `[{"v":1}]`},
		{"name is not a path", `[{"n":"temperature","v":1}]`},
		{"base name without name gives trailing slash", `[{"bn":"/3/0/","v":1}]`},
		{"value above resource level", `[{"n":"/3/0","v":1}]`},
		{"string for an integer resource", `[{"n":"/3/0/9","vs":"100"}]`},
		{"number for a string resource", `[{"n":"/3/0/0","v":1}]`},
		{"fraction for an integer resource", `[{"n":"/3/0/9","v":1.5}]`},
		{"integer overflow", `[{"n":"/3/0/9","v":9223372036854775808}]`},
		{"negative unsigned", `[{"n":"/3/0/20","v":-1}]`},
		{"float overflow", `[{"n":"/9/0/2","v":1e400}]`},
		{"deep nesting in an ignored label", `[{"n":"/9/0/1","v":1,"x":` + strings.Repeat("[", 20) + strings.Repeat("]", 20) + `}]`},
		{"very deep nesting", strings.Repeat("[", 100000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := DecodeSenMLJSON([]byte(tt.pack), kinds); err == nil {
				t.Errorf("no error, got %v", got)
			}
		})
	}
}

func TestSenMLCBORDecode(t *testing.T) {
	kinds := kindMap(map[string]Kind{"/3/0/9": KindInteger, "/3/0/13": KindTime})
	tests := []struct {
		name string
		pack string
		want []Record
	}{
		{
			// [{-2: "/3/0/", 0: "9", 2: 100.0, 1: "%", 99: [1], "x": {}}]
			name: "integral float, unknown labels ignored",
			pack: "81 a6 21 65 2f 33 2f 30 2f 00 61 39 02 f9 56 40 01 61 25 18 63 81 01 61 78 a0",
			want: []Record{rec(t, "/3/0/9", integer(100))},
		},
		{
			// [{0: "/9/0/1", 8: h'0001'}, {0: "/9/0/2", "vlo": "3:1"}, {0: "/9/0/3", 2: -5}]
			name: "byte string, object link, negative integer",
			pack: "83 a2 00 66 2f 39 2f 30 2f 31 08 42 00 01 a2 00 66 2f 39 2f 30 2f 32 63 76 6c 6f 63 33 3a 31 a2 00 66 2f 39 2f 30 2f 33 02 24",
			want: []Record{
				rec(t, "/9/0/1", Value{Kind: KindOpaque, Bytes: []byte{0, 1}}),
				rec(t, "/9/0/2", Value{Kind: KindObjLnk, Link: ObjLnk{Object: 3, Instance: 1}}),
				rec(t, "/9/0/3", integer(-5)),
			},
		},
		{
			// [{0: "/3/0/13", 2: 1367491215, 6: -5, -3: 1.5}]
			name: "time",
			pack: "81 a4 00 67 2f 33 2f 30 2f 31 33 02 1a 51 82 42 8f 06 24 22 f9 3e 00",
			want: []Record{rec(t, "/3/0/13", Value{Kind: KindTime, Int: 1367491215})},
		},
		{
			// indefinite-length array and map
			name: "indefinite lengths",
			pack: "9f bf 00 66 2f 39 2f 30 2f 31 04 f5 ff ff",
			want: []Record{rec(t, "/9/0/1", Value{Kind: KindBoolean, Bool: true})},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeSenMLCBOR(mustHex(t, tt.pack), kinds)
			if err != nil {
				t.Fatal(err)
			}
			assertRecords(t, got, tt.want)
		})
	}
}

func TestSenMLCBORMalformed(t *testing.T) {
	kinds := kindMap(map[string]Kind{"/3/0/9": KindInteger})
	tests := []struct {
		name string
		pack string
	}{
		{"empty input", ""},
		{"truncated", "81 a2 00 66 2f 39 2f 30"},
		{"map instead of pack", "a1 00 61 30"},
		{"trailing bytes", "80 00"},
		{"text in v", "81 a2 00 66 2f 33 2f 30 2f 39 02 61 31"},
		{"bytes in vs", "81 a2 00 66 2f 33 2f 30 2f 30 03 41 31"},
		{"text in vd", "81 a2 00 66 2f 39 2f 30 2f 31 08 61 31"},
		{"integer in vb", "81 a2 00 66 2f 39 2f 30 2f 31 04 01"},
		{"integer in n", "81 a2 00 01 02 01"},
		{"integer in vlo", "81 a2 00 66 2f 39 2f 30 2f 31 63 76 6c 6f 01"},
		{"bignum in v", "81 a2 00 66 2f 33 2f 30 2f 39 02 c2 41 01"},
		{"negative integer beyond int64", "81 a2 00 66 2f 33 2f 30 2f 39 02 3b ff ff ff ff ff ff ff ff"},
		{"duplicate key", "81 a3 00 66 2f 39 2f 30 2f 31 02 01 02 02"},
		{"two values", "81 a3 00 66 2f 39 2f 30 2f 31 02 01 04 f5"},
		{"must-understand label", "81 a3 00 66 2f 39 2f 30 2f 31 02 01 62 78 5f 01"},
		{"invalid UTF-8 in name", "81 a2 00 62 c3 28 02 01"},
		{"string value for integer resource", "81 a2 00 66 2f 33 2f 30 2f 39 03 61 31"},
		{"deep nesting", "81 a2 00 66 2f 39 2f 30 2f 31 18 63" + strings.Repeat(" 81", 20) + " 01"},
		{"later SenML version", "81 a3 20 0b 00 66 2f 39 2f 30 2f 31 02 01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := DecodeSenMLCBOR(mustHex(t, tt.pack), kinds); err == nil {
				t.Errorf("no error, got %v", got)
			}
		})
	}
}

func TestSenMLRoundTripEveryKind(t *testing.T) {
	codecs := []struct {
		name   string
		encode func(Path, []Record) ([]byte, error)
		decode func([]byte, KindOf) ([]Record, error)
	}{
		{"json", EncodeSenMLJSON, DecodeSenMLJSON},
		{"cbor", EncodeSenMLCBOR, DecodeSenMLCBOR},
	}
	values := append([]Value{{Kind: KindNone}}, everyKind...)
	for _, c := range codecs {
		for _, v := range values {
			kind := func(Path) (Kind, bool) { return v.Kind, true }
			cases := []struct {
				base Path
				recs []Record
			}{
				{mustPath(t, "/9/0/1"), []Record{rec(t, "/9/0/1", v)}},
				{mustPath(t, "/9/0/1"), []Record{rec(t, "/9/0/1/0", v), rec(t, "/9/0/1/1", v)}},
				{mustPath(t, "/9/0"), []Record{rec(t, "/9/0/1", v), rec(t, "/9/0/2/3", v)}},
				{Root, []Record{rec(t, "/9/0/1", v), rec(t, "/10/1/2/3", v)}},
			}
			for _, tc := range cases {
				b, err := c.encode(tc.base, tc.recs)
				if err != nil {
					t.Fatalf("%s %s %+v: %v", c.name, tc.base, v, err)
				}
				got, err := c.decode(b, kind)
				if err != nil {
					t.Fatalf("%s %s %+v: %v (payload %q)", c.name, tc.base, v, err, b)
				}
				assertRecords(t, got, tc.recs)
			}
		}
	}
}

func TestSenMLEncodeNaming(t *testing.T) {
	tests := []struct {
		name string
		base Path
		recs []Record
		want string
	}{
		{
			name: "single resource carries its full name",
			base: mustPath(t, "/3/0/0"),
			recs: []Record{rec(t, "/3/0/0", str("x"))},
			want: `[{"n":"/3/0/0","vs":"x"}]`,
		},
		{
			name: "resource instances below the base",
			base: mustPath(t, "/3/0/6"),
			recs: []Record{rec(t, "/3/0/6/0", integer(1)), rec(t, "/3/0/6/1", integer(5))},
			want: `[{"bn":"/3/0/6/","n":"0","v":1},{"n":"1","v":5}]`,
		},
		{
			name: "composite answer from the root",
			base: Root,
			recs: []Record{rec(t, "/3/0/9", integer(100)), rec(t, "/1/0/1", integer(300))},
			want: `[{"n":"/3/0/9","v":100},{"n":"/1/0/1","v":300}]`,
		},
		{
			name: "name-only records",
			base: Root,
			recs: []Record{rec(t, "/3/0", Value{Kind: KindNone})},
			want: `[{"n":"/3/0"}]`,
		},
		{
			name: "every value label",
			base: mustPath(t, "/9/0"),
			recs: []Record{
				rec(t, "/9/0/1", Value{Kind: KindFloat, Float: 1e-7}),
				rec(t, "/9/0/2", Value{Kind: KindUnsigned, Uint: math.MaxUint64}),
				rec(t, "/9/0/3", Value{Kind: KindBoolean, Bool: true}),
				rec(t, "/9/0/4", Value{Kind: KindOpaque, Bytes: []byte{0, 1, 0xfe, 0xff}}),
				rec(t, "/9/0/5", Value{Kind: KindObjLnk, Link: ObjLnk{Object: 66, Instance: 1}}),
				rec(t, "/9/0/6", str("a\"\\\x01<>")),
			},
			want: `[{"bn":"/9/0/","n":"1","v":1e-7},{"n":"2","v":18446744073709551615},{"n":"3","vb":true},` +
				`{"n":"4","vd":"AAH-_w"},{"n":"5","vlo":"66:1"},{"n":"6","vs":"a\"\\\u0001<>"}]`,
		},
		{
			name: "empty pack",
			base: mustPath(t, "/3/0"),
			want: `[]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EncodeSenMLJSON(tt.base, tt.recs)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestSenMLEncodeErrors(t *testing.T) {
	tests := []struct {
		name string
		base Path
		recs []Record
		cbor bool // also fails in CBOR
	}{
		{"record outside base", mustPath(t, "/3/0"), []Record{rec(t, "/4/0/1", integer(1))}, true},
		{"value above resource level", Root, []Record{rec(t, "/3/0", integer(1))}, true},
		{"invalid record path", Root, []Record{{Path: Path{3, -1, 1, -1}, Value: integer(1)}}, true},
		{"NaN", Root, []Record{rec(t, "/3/0/1", Value{Kind: KindFloat, Float: math.NaN()})}, false},
		{"infinity", Root, []Record{rec(t, "/3/0/1", Value{Kind: KindFloat, Float: math.Inf(1)})}, false},
		{"invalid UTF-8", Root, []Record{rec(t, "/3/0/1", str("\xc3\x28"))}, false},
		{"unknown kind", Root, []Record{rec(t, "/3/0/1", Value{Kind: 99})}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if b, err := EncodeSenMLJSON(tt.base, tt.recs); err == nil {
				t.Errorf("json: no error, got %s", b)
			}
			if _, err := EncodeSenMLCBOR(tt.base, tt.recs); (err != nil) != tt.cbor {
				t.Errorf("cbor: error %v, want error %v", err, tt.cbor)
			}
		})
	}
}
