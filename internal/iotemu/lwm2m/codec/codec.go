// Package codec holds the LwM2M payload codecs of the IoT emulator: TLV
// (LwM2M 1.0+), SenML JSON and SenML CBOR (LwM2M 1.1+), the single-resource
// plain text, opaque and CBOR formats, and the CoRE link format used by
// Register, Update and Discover.
//
// Decoders take untrusted input: they never panic, never allocate more than
// the input justifies and cap nesting.
package codec

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// IANA CoAP content-format numbers used by LwM2M.
const (
	FormatText       uint16 = 0     // text/plain
	FormatLinkFormat uint16 = 40    // application/link-format
	FormatOpaque     uint16 = 42    // application/octet-stream
	FormatCBOR       uint16 = 60    // application/cbor (single resource, LwM2M 1.1+)
	FormatSenMLJSON  uint16 = 110   // application/senml+json
	FormatSenMLCBOR  uint16 = 112   // application/senml+cbor
	FormatTLV        uint16 = 11542 // application/vnd.oma.lwm2m+tlv
)

// Kind is an LwM2M resource data type.
type Kind int

// Resource data types of the LwM2M object model.
const (
	KindString Kind = iota
	KindInteger
	KindUnsigned
	KindFloat
	KindBoolean
	KindOpaque
	KindTime
	KindObjLnk
	KindNone // executable resources: no value
)

var kindNames = [...]string{
	KindString:   "STRING",
	KindInteger:  "INTEGER",
	KindUnsigned: "UNSIGNED",
	KindFloat:    "FLOAT",
	KindBoolean:  "BOOLEAN",
	KindOpaque:   "OPAQUE",
	KindTime:     "TIME",
	KindObjLnk:   "OBJLNK",
	KindNone:     "NONE",
}

// String returns the kind's name as the LwM2M object model spells it.
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one typed value. Only the field matching Kind is meaningful.
type Value struct {
	Kind  Kind
	Str   string  // KindString
	Int   int64   // KindInteger, KindTime (Unix seconds)
	Uint  uint64  // KindUnsigned
	Float float64 // KindFloat
	Bool  bool    // KindBoolean
	Bytes []byte  // KindOpaque
	Link  ObjLnk  // KindObjLnk
}

// ObjLnk is an object link: a reference to an object instance.
type ObjLnk struct{ Object, Instance uint16 }

// String returns the link in the "3:0" form LwM2M uses in text and SenML.
func (l ObjLnk) String() string {
	return strconv.FormatUint(uint64(l.Object), 10) + ":" + strconv.FormatUint(uint64(l.Instance), 10)
}

// Record is one resource (or resource instance) value at a full path.
type Record struct {
	Path  Path
	Value Value
}

// KindOf tells a decoder the type of a resource, since TLV and plain text
// carry no types. Decoders call it with the record's own path, so for a
// resource instance the path has depth 4. It reports false for resources it
// does not know; a nil KindOf knows none.
type KindOf func(p Path) (Kind, bool)

func (k KindOf) lookup(p Path) (Kind, bool) {
	if k == nil {
		return 0, false
	}
	return k(p)
}

// ErrUnsupportedFormat is wrapped by Encode and Decode for content formats
// they cannot handle.
var ErrUnsupportedFormat = errors.New("unsupported content format")

// Encode encodes recs, which must all lie at or below base, in the given
// content format. The single-resource formats (text, opaque, CBOR) take
// exactly one record whose path is base.
func Encode(format uint16, base Path, recs []Record) ([]byte, error) {
	switch format {
	case FormatTLV:
		return EncodeTLV(base, recs)
	case FormatSenMLJSON:
		return EncodeSenMLJSON(base, recs)
	case FormatSenMLCBOR:
		return EncodeSenMLCBOR(base, recs)
	case FormatText, FormatOpaque, FormatCBOR:
		v, err := singleRecord(base, recs)
		if err != nil {
			return nil, err
		}
		switch format {
		case FormatText:
			if v.Kind == KindNone {
				return nil, fmt.Errorf("resource %s has no value to encode", base)
			}
			return EncodeText(v), nil
		case FormatOpaque:
			return EncodeOpaque(v)
		default:
			return encodeCBORValue(v)
		}
	case FormatLinkFormat:
		return nil, fmt.Errorf("content format %d carries links, not records (use EncodeLinks): %w", format, ErrUnsupportedFormat)
	default:
		return nil, fmt.Errorf("content format %d: %w", format, ErrUnsupportedFormat)
	}
}

func singleRecord(base Path, recs []Record) (Value, error) {
	if d := base.Depth(); d < 3 || !base.valid() {
		return Value{}, fmt.Errorf("path %s is not a resource or resource instance", base)
	}
	if len(recs) != 1 {
		return Value{}, fmt.Errorf("single resource format needs exactly one record, got %d", len(recs))
	}
	if recs[0].Path != base {
		return Value{}, fmt.Errorf("record path %s differs from request path %s", recs[0].Path, base)
	}
	return recs[0].Value, nil
}

// Decode decodes a payload in the given content format. For the
// single-resource formats (text, opaque, CBOR) base must be a resource or
// resource instance and the result is one record at base; for SenML every
// record must lie at or below base unless base is Root.
func Decode(format uint16, base Path, b []byte, kind KindOf) ([]Record, error) {
	switch format {
	case FormatTLV:
		return DecodeTLV(base, b, kind)
	case FormatSenMLJSON, FormatSenMLCBOR:
		var recs []Record
		var err error
		if format == FormatSenMLJSON {
			recs, err = DecodeSenMLJSON(b, kind)
		} else {
			recs, err = DecodeSenMLCBOR(b, kind)
		}
		if err != nil {
			return nil, err
		}
		if base.Depth() > 0 {
			for _, r := range recs {
				if !base.Contains(r.Path) {
					return nil, fmt.Errorf("record %s is outside request path %s", r.Path, base)
				}
			}
		}
		return recs, nil
	case FormatText, FormatOpaque, FormatCBOR:
		if d := base.Depth(); d < 3 || !base.valid() {
			return nil, fmt.Errorf("path %s is not a resource or resource instance", base)
		}
		k, known := kind.lookup(base)
		var v Value
		var err error
		switch format {
		case FormatText:
			if !known {
				// Plain text carries no type; a string loses nothing.
				k = KindString
			}
			v, err = DecodeText(b, k)
		case FormatOpaque:
			if known && k != KindOpaque {
				return nil, fmt.Errorf("resource %s is %s, not OPAQUE", base, k)
			}
			v = DecodeOpaque(b)
		default:
			v, err = decodeCBORValue(b, k, known)
		}
		if err != nil {
			return nil, fmt.Errorf("resource %s: %w", base, err)
		}
		return []Record{{Path: base, Value: v}}, nil
	case FormatLinkFormat:
		return nil, fmt.Errorf("content format %d carries links, not records (use ParseLinks): %w", format, ErrUnsupportedFormat)
	default:
		return nil, fmt.Errorf("content format %d: %w", format, ErrUnsupportedFormat)
	}
}

// ParseValue parses the API's string form of a value: opaque as standard
// base64, booleans "true"/"false" (or "1"/"0", the LwM2M spelling), time as
// Unix seconds, object links "3:0". Surrounding blanks are ignored except
// for strings.
func ParseValue(k Kind, s string) (Value, error) {
	if k != KindString {
		s = strings.TrimSpace(s)
	}
	switch k {
	case KindString:
		return Value{Kind: k, Str: s}, nil
	case KindInteger, KindTime:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return Value{}, fmt.Errorf("invalid %s %q", k, s)
		}
		return Value{Kind: k, Int: n}, nil
	case KindUnsigned:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return Value{}, fmt.Errorf("invalid %s %q", k, s)
		}
		return Value{Kind: k, Uint: n}, nil
	case KindFloat:
		f, err := parseDecimalFloat(s)
		if err != nil {
			return Value{}, err
		}
		return Value{Kind: k, Float: f}, nil
	case KindBoolean:
		switch s {
		case "true", "1":
			return Value{Kind: k, Bool: true}, nil
		case "false", "0":
			return Value{Kind: k, Bool: false}, nil
		}
		return Value{}, fmt.Errorf("invalid %s %q", k, s)
	case KindOpaque:
		b, err := decodeBase64Std(s)
		if err != nil {
			return Value{}, err
		}
		return Value{Kind: k, Bytes: b}, nil
	case KindObjLnk:
		l, err := parseObjLnk(s)
		if err != nil {
			return Value{}, err
		}
		return Value{Kind: k, Link: l}, nil
	case KindNone:
		return Value{Kind: k}, nil
	}
	return Value{}, fmt.Errorf("unknown kind %d", int(k))
}

// String returns the API's string form of v, the inverse of ParseValue.
func (v Value) String() string {
	switch v.Kind {
	case KindString:
		return v.Str
	case KindInteger, KindTime:
		return strconv.FormatInt(v.Int, 10)
	case KindUnsigned:
		return strconv.FormatUint(v.Uint, 10)
	case KindFloat:
		return formatFloat(v.Float)
	case KindBoolean:
		return strconv.FormatBool(v.Bool)
	case KindOpaque:
		return base64.StdEncoding.EncodeToString(v.Bytes)
	case KindObjLnk:
		return v.Link.String()
	}
	return ""
}

// formatFloat writes the shortest decimal that round-trips, in plain
// notation unless the exponent is extreme, so "0.1" rather than "1e-01"
// (the same rule JSON encoders use, so every format spells floats alike).
func formatFloat(f float64) string {
	abs := math.Abs(f)
	fmtc := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		fmtc = 'e'
	}
	s := strconv.FormatFloat(f, fmtc, -1, 64)
	if fmtc == 'e' {
		// Drop the exponent's leading zero: "1e-07" -> "1e-7".
		if n := len(s); n >= 4 && s[n-4] == 'e' && s[n-3] == '-' && s[n-2] == '0' {
			s = s[:n-2] + s[n-1:]
		}
	}
	return s
}

// parseDecimalFloat accepts only plain decimal notation: strconv.ParseFloat
// would also take "NaN", "Inf", hex floats and underscores, none of which an
// LwM2M peer may send.
func parseDecimalFloat(s string) (float64, error) {
	if !isDecimalFloat(s) {
		return 0, fmt.Errorf("invalid FLOAT %q", s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid FLOAT %q: out of range", s)
	}
	return f, nil
}

func isDecimalFloat(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && isDigit(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < len(s) && isDigit(s[i]) {
			i++
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// decodeBase64Std accepts standard base64 with or without padding, since
// peers disagree on padding but never on the alphabet.
func decodeBase64Std(s string) ([]byte, error) {
	enc := base64.StdEncoding.Strict()
	if len(s)%4 != 0 {
		enc = base64.RawStdEncoding.Strict()
	}
	b, err := enc.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("invalid base64: %w", err)
	}
	return b, nil
}

// decodeBase64URL accepts base64url without padding as RFC 8428 requires,
// and tolerates padding.
func decodeBase64URL(s string) ([]byte, error) {
	enc := base64.RawURLEncoding.Strict()
	if len(s)%4 == 0 && strings.HasSuffix(s, "=") {
		enc = base64.URLEncoding.Strict()
	}
	b, err := enc.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("invalid base64url: %w", err)
	}
	return b, nil
}

func parseObjLnk(s string) (ObjLnk, error) {
	o, i, ok := strings.Cut(s, ":")
	if !ok {
		return ObjLnk{}, fmt.Errorf("invalid OBJLNK %q", s)
	}
	oid, err1 := parseID(o)
	iid, err2 := parseID(i)
	if err1 != nil || err2 != nil {
		return ObjLnk{}, fmt.Errorf("invalid OBJLNK %q", s)
	}
	return ObjLnk{Object: uint16(oid), Instance: uint16(iid)}, nil
}

func validUTF8(s []byte) error {
	if !utf8.Valid(s) {
		return errors.New("string is not valid UTF-8")
	}
	return nil
}
