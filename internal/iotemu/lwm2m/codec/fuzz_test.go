package codec

import (
	"reflect"
	"testing"
)

// fuzzKinds gives every resource a kind derived from its id, so decoded
// records re-encode and decode to the same values.
func fuzzKinds(p Path) (Kind, bool) {
	return Kind(int(p.Resource) % int(KindNone)), true
}

// fuzzBases are the request paths FuzzDecodeTLV chooses from.
var fuzzBases = []Path{
	{3, -1, -1, -1},
	{3, 0, -1, -1},
	{3, 0, 6, -1},
	{3, 0, 6, 1},
	{3, 0, 9, -1},
}

func FuzzDecodeTLV(f *testing.F) {
	f.Add(mustHex(f, specDeviceTLV), uint8(1))
	f.Add(mustHex(f, "86 06 41 00 01 41 01 05"), uint8(2))
	f.Fuzz(func(t *testing.T, b []byte, sel uint8) {
		base := fuzzBases[int(sel)%len(fuzzBases)]
		recs, err := DecodeTLV(base, b, fuzzKinds)
		if err != nil {
			return
		}
		enc, err := EncodeTLV(base, recs)
		if err != nil {
			t.Fatalf("re-encoding %v: %v", recs, err)
		}
		back, err := DecodeTLV(base, enc, fuzzKinds)
		if err != nil {
			t.Fatalf("decoding re-encoded % X: %v", enc, err)
		}
		if !recordsEqual(back, recs) {
			t.Fatalf("round trip changed records\nbefore: %v\n after: %v", recs, back)
		}
	})
}

func FuzzDecodeSenMLJSON(f *testing.F) {
	f.Add([]byte(specDeviceSenMLJSON))
	f.Add([]byte(`[{"bn":"/9/0/","n":"4","vd":"AAH-_w"},{"n":"7","vlo":"3:0","x":[{}]}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := DecodeSenMLJSON(b, fuzzKinds)
		if err != nil {
			return
		}
		enc, err := EncodeSenMLJSON(Root, recs)
		if err != nil {
			t.Fatalf("re-encoding %v: %v", recs, err)
		}
		back, err := DecodeSenMLJSON(enc, fuzzKinds)
		if err != nil {
			t.Fatalf("decoding re-encoded %s: %v", enc, err)
		}
		if !recordsEqual(back, recs) {
			t.Fatalf("round trip changed records\nbefore: %v\n after: %v", recs, back)
		}
	})
}

func FuzzDecodeSenMLCBOR(f *testing.F) {
	f.Add(mustHex(f, specDeviceSenMLCBOR))
	f.Add(mustHex(f, "83 a2 00 66 2f 39 2f 30 2f 31 08 42 00 01 a2 00 66 2f 39 2f 30 2f 32 63 76 6c 6f 63 33 3a 31 a2 00 66 2f 39 2f 30 2f 33 02 24"))
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := DecodeSenMLCBOR(b, fuzzKinds)
		if err != nil {
			return
		}
		enc, err := EncodeSenMLCBOR(Root, recs)
		if err != nil {
			t.Fatalf("re-encoding %v: %v", recs, err)
		}
		back, err := DecodeSenMLCBOR(enc, fuzzKinds)
		if err != nil {
			t.Fatalf("decoding re-encoded % x: %v", enc, err)
		}
		if !recordsEqual(back, recs) {
			t.Fatalf("round trip changed records\nbefore: %v\n after: %v", recs, back)
		}
	})
}

func FuzzParseLinks(f *testing.F) {
	f.Add(`</>;rt="oma.lwm2m";ct=110,</1/0>,</3/0>`)
	f.Add(`</a>;title="x, y; \"z\" \\";obs`)
	f.Fuzz(func(t *testing.T, s string) {
		ls, err := ParseLinks(s)
		if err != nil {
			return
		}
		enc := EncodeLinks(ls)
		back, err := ParseLinks(enc)
		if err != nil {
			t.Fatalf("parsing re-encoded %q: %v", enc, err)
		}
		if !reflect.DeepEqual(back, ls) {
			t.Fatalf("round trip changed links\nbefore: %#v\n after: %#v", ls, back)
		}
	})
}
