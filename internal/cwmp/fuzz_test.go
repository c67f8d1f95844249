package cwmp

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// FuzzDecode feeds arbitrary bytes to Decode. Seeds are the golden files,
// the vendor-style envelopes and testdata/fuzz/FuzzDecode (kept crashers and
// interesting inputs). Properties: Decode never panics; an envelope comes
// back exactly with success, UnknownMethodError and ValueError; and whatever
// decodes, encodes, decodes again and encodes to the same bytes.
func FuzzDecode(f *testing.F) {
	for _, dir := range []string{"golden", "vendor"} {
		files, err := filepath.Glob(filepath.Join("testdata", dir, "*.xml"))
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := Decode(data)
		var unknown *UnknownMethodError
		var value *ValueError
		withEnv := err == nil || errors.As(err, &unknown) || errors.As(err, &value)
		if withEnv != (env != nil) {
			t.Fatalf("Decode returned envelope %v with error %v", env != nil, err)
		}
		if err != nil {
			if env != nil && env.Body != nil {
				t.Fatalf("envelope with a Body and error %v", err)
			}
			return
		}
		out, err := Encode(env)
		if err != nil {
			t.Fatalf("Encode of a decoded envelope: %v", err)
		}
		env2, err := Decode(out)
		if err != nil {
			t.Fatalf("Decode of our own output: %v\n%s", err, out)
		}
		if env2.Version != env.Version || env2.Body.Method() != env.Body.Method() {
			t.Fatalf("version or method changed: %v %s -> %v %s", env.Version, env.Body.Method(), env2.Version, env2.Body.Method())
		}
		out2, err := Encode(env2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("encoding is not stable:\n%s\n---\n%s", out, out2)
		}
	})
}

// FuzzTextRoundTrip checks the escaping: any string XML can carry comes back
// from Encode and Decode unchanged, in text and in attribute values.
func FuzzTextRoundTrip(f *testing.F) {
	for _, s := range []string{"", "a&b", "<x>", "]]>", "\r\n", "\t", "\"'", "é", "\x00", "\xff", "&#65;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		env := NewEnvelope(CWMP12, s, &GetParameterValuesResponse{
			ParameterList: []ParameterValueStruct{{Name: s, Value: Value{Type: s, Text: s}}},
		})
		out, err := Encode(env)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Decode(out)
		if err != nil {
			t.Fatalf("Decode of our own output: %v\n%q", err, out)
		}
		p := back.Body.(*GetParameterValuesResponse).ParameterList[0]
		want := sanitized(s)
		if back.ID != want || p.Name != want || p.Value.Text != want || p.Value.Type != want {
			t.Fatalf("%q came back as ID %q, name %q, value %#v; want %q", s, back.ID, p.Name, p.Value, want)
		}
	})
}

// sanitized is what the encoder promises for s: every rune XML cannot carry
// replaced by U+FFFD.
func sanitized(s string) string {
	var b []byte
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || !isXMLChar(r) {
			r = utf8.RuneError
		}
		b = utf8.AppendRune(b, r)
		i += size
	}
	return string(b)
}
