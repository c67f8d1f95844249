package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// EncodeSenMLJSON encodes recs as a SenML JSON pack (RFC 8428, LwM2M 1.1):
// numbers and time as "v", strings "vs", booleans "vb", opaque "vd"
// (base64url without padding), object links "vlo" ("3:0"); a KindNone
// record carries only its name. See planSenML for the naming.
func EncodeSenMLJSON(base Path, recs []Record) ([]byte, error) {
	plan, err := planSenML(base, recs)
	if err != nil {
		return nil, fmt.Errorf("senml json: %w", err)
	}
	out := []byte{'['}
	for i, r := range plan {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, '{')
		sep := false
		field := func(label string) {
			if sep {
				out = append(out, ',')
			}
			sep = true
			out = append(out, '"')
			out = append(out, label...)
			out = append(out, '"', ':')
		}
		if r.bn != "" {
			field("bn")
			out = appendJSONString(out, r.bn)
		}
		if r.n != "" {
			field("n")
			out = appendJSONString(out, r.n)
		}
		v := r.value
		switch v.Kind {
		case KindInteger, KindTime:
			field("v")
			out = strconv.AppendInt(out, v.Int, 10)
		case KindUnsigned:
			field("v")
			out = strconv.AppendUint(out, v.Uint, 10)
		case KindFloat:
			if err := checkFloat(v.Float); err != nil {
				return nil, fmt.Errorf("senml json: %s: %w", recs[i].Path, err)
			}
			field("v")
			out = append(out, formatFloat(v.Float)...)
		case KindBoolean:
			field("vb")
			out = strconv.AppendBool(out, v.Bool)
		case KindString:
			if !utf8.ValidString(v.Str) {
				return nil, fmt.Errorf("senml json: %s: string is not valid UTF-8", recs[i].Path)
			}
			field("vs")
			out = appendJSONString(out, v.Str)
		case KindOpaque:
			field("vd")
			out = append(out, '"')
			out = base64URL.AppendEncode(out, v.Bytes)
			out = append(out, '"')
		case KindObjLnk:
			field("vlo")
			out = appendJSONString(out, v.Link.String())
		case KindNone:
		default:
			return nil, fmt.Errorf("senml json: %s: unknown kind %d", recs[i].Path, int(v.Kind))
		}
		out = append(out, '}')
	}
	return append(out, ']'), nil
}

// appendJSONString quotes s for JSON. Unlike encoding/json it leaves <, >
// and & alone: the payload is not HTML.
func appendJSONString(out []byte, s string) []byte {
	const hex = "0123456789abcdef"
	out = append(out, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c == '\n':
			out = append(out, '\\', 'n')
		case c == '\r':
			out = append(out, '\\', 'r')
		case c == '\t':
			out = append(out, '\\', 't')
		case c < 0x20:
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			out = append(out, c)
		}
	}
	return append(out, '"')
}

// DecodeSenMLJSON decodes a SenML JSON pack into records with full paths
// (bn + n). kind only disambiguates numbers and checks that a value label
// fits the resource; unknown resources take their type from the label.
// Unknown labels are ignored unless they end in "_" (must understand).
func DecodeSenMLJSON(b []byte, kind KindOf) ([]Record, error) {
	recs, err := parseSenMLJSON(b)
	if err != nil {
		return nil, fmt.Errorf("senml json: %w", err)
	}
	out, err := resolve(recs, kind)
	if err != nil {
		return nil, fmt.Errorf("senml json: %w", err)
	}
	return out, nil
}

func parseSenMLJSON(b []byte) ([]senmlRecord, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := expectDelim(dec, '['); err != nil {
		return nil, err
	}
	var recs []senmlRecord
	for dec.More() {
		if err := expectDelim(dec, '{'); err != nil {
			return nil, fmt.Errorf("record %d: %w", len(recs), err)
		}
		r, err := parseSenMLJSONRecord(dec)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", len(recs), err)
		}
		recs = append(recs, r)
	}
	if err := expectDelim(dec, ']'); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the pack")
	}
	return recs, nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, got %v", want, tok)
	}
	return nil
}

// parseSenMLJSONRecord reads the members of one record after its '{'.
func parseSenMLJSONRecord(dec *json.Decoder) (senmlRecord, error) {
	var r senmlRecord
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return r, err
		}
		label, ok := tok.(string)
		if !ok {
			return r, fmt.Errorf("want a label, got %v", tok)
		}
		if seen[label] {
			return r, fmt.Errorf("duplicate label %q", label)
		}
		seen[label] = true
		if err := parseSenMLJSONField(dec, &r, label); err != nil {
			return r, fmt.Errorf("label %q: %w", label, err)
		}
	}
	return r, expectDelim(dec, '}')
}

func parseSenMLJSONField(dec *json.Decoder, r *senmlRecord, label string) error {
	switch label {
	case "bn", "n", "vs", "vd", "vlo", "u", "bu":
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		s, ok := tok.(string)
		if !ok {
			return fmt.Errorf("want a string, got %v", tok)
		}
		switch label {
		case "bn":
			r.bn, r.hasBN = s, true
		case "n":
			r.n = s
		case "vs", "vlo":
			r.str = s
			return r.setValue(label)
		case "vd":
			data, err := decodeBase64URL(s)
			if err != nil {
				return err
			}
			r.data = data
			return r.setValue(label)
		}
		return nil
	case "v", "bv", "bver", "t", "bt", "s", "bs", "ut":
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		lit, ok := tok.(json.Number)
		if !ok {
			return fmt.Errorf("want a number, got %v", tok)
		}
		n, err := jsonNumber(string(lit))
		if err != nil {
			return err
		}
		switch label {
		case "v":
			r.num = n
			return r.setValue(label)
		case "bv":
			return checkBaseValue(n)
		case "bver":
			return checkVersion(n)
		}
		return nil
	case "vb":
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		bv, ok := tok.(bool)
		if !ok {
			return fmt.Errorf("want a boolean, got %v", tok)
		}
		r.boolean = bv
		return r.setValue(label)
	}
	if mustUnderstand(label) {
		return errors.New("must-understand label not supported")
	}
	return skipJSONValue(dec)
}

// skipJSONValue consumes one value of an ignored label, refusing nesting
// deeper than maxNesting (the pack and the record take two levels).
func skipJSONValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '[', '{':
				depth++
				if depth+2 > maxNesting {
					return errors.New("value nested too deeply")
				}
			default:
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}
