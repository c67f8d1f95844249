package codec

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"time"

	"github.com/fxamacker/cbor/v2"
)

// EncodeText encodes v in the LwM2M plain text format: booleans "0"/"1",
// floats in their shortest form, opaque as standard base64, object links
// "3:0", time as Unix seconds. KindNone encodes as an empty payload.
func EncodeText(v Value) []byte {
	switch v.Kind {
	case KindString:
		return []byte(v.Str)
	case KindBoolean:
		if v.Bool {
			return []byte("1")
		}
		return []byte("0")
	case KindNone:
		return []byte{}
	}
	return []byte(v.String())
}

// DecodeText decodes a plain text payload holding a value of kind k.
func DecodeText(b []byte, k Kind) (Value, error) {
	s := string(b)
	switch k {
	case KindString:
		if err := validUTF8(b); err != nil {
			return Value{}, err
		}
		return Value{Kind: k, Str: s}, nil
	case KindBoolean:
		switch s {
		case "1":
			return Value{Kind: k, Bool: true}, nil
		case "0":
			return Value{Kind: k, Bool: false}, nil
		}
		return Value{}, fmt.Errorf("invalid %s %q: want 0 or 1", k, truncate(s))
	case KindInteger, KindTime:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return Value{}, fmt.Errorf("invalid %s %q", k, truncate(s))
		}
		return Value{Kind: k, Int: n}, nil
	case KindUnsigned:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return Value{}, fmt.Errorf("invalid %s %q", k, truncate(s))
		}
		return Value{Kind: k, Uint: n}, nil
	case KindFloat:
		f, err := parseDecimalFloat(s)
		if err != nil {
			return Value{}, fmt.Errorf("invalid %s %q", k, truncate(s))
		}
		return Value{Kind: k, Float: f}, nil
	case KindOpaque:
		raw, err := decodeBase64Std(s)
		if err != nil {
			return Value{}, err
		}
		return Value{Kind: k, Bytes: raw}, nil
	case KindObjLnk:
		l, err := parseObjLnk(s)
		if err != nil {
			return Value{}, fmt.Errorf("invalid %s %q", k, truncate(s))
		}
		return Value{Kind: k, Link: l}, nil
	case KindNone:
		return Value{Kind: k}, nil
	}
	return Value{}, fmt.Errorf("unknown kind %d", int(k))
}

// truncate keeps error messages short when a peer sends a large payload.
func truncate(s string) string {
	const limit = 64
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "..."
}

// EncodeOpaque returns the bytes of an opaque value (not a copy).
func EncodeOpaque(v Value) ([]byte, error) {
	if v.Kind != KindOpaque {
		return nil, fmt.Errorf("opaque format carries only OPAQUE values, not %s", v.Kind)
	}
	return v.Bytes, nil
}

// DecodeOpaque returns the payload as an opaque value; the bytes are
// copied, since transports reuse their buffers.
func DecodeOpaque(b []byte) Value {
	return Value{Kind: KindOpaque, Bytes: append([]byte{}, b...)}
}

// cborEnc encodes floats in the shortest CBOR form that keeps the value
// exactly, which is what constrained peers expect.
var cborEnc = func() cbor.EncMode {
	em, err := cbor.EncOptions{ShortestFloat: cbor.ShortestFloat16}.EncMode()
	if err != nil {
		panic(err)
	}
	return em
}()

// cborDec rejects duplicate map keys and bounds nesting; SenML needs two
// levels (a pack of records), a single value none.
var cborDec = func() cbor.DecMode {
	dm, err := cbor.DecOptions{
		DupMapKey:        cbor.DupMapKeyEnforcedAPF,
		MaxNestedLevels:  maxNesting,
		MaxArrayElements: 65536,
		MaxMapPairs:      65536,
		IntDec:           cbor.IntDecConvertNone,
		TimeTagToAny:     cbor.TimeTagToTime,
	}.DecMode()
	if err != nil {
		panic(err)
	}
	return dm
}()

// maxNesting caps the nesting of decoded JSON and CBOR.
const maxNesting = 16

// encodeCBORValue encodes one value in the LwM2M 1.1 CBOR format: time as
// an epoch-based date/time (tag 1), object links as "3:0" text.
func encodeCBORValue(v Value) ([]byte, error) {
	var x any
	switch v.Kind {
	case KindString:
		x = v.Str
	case KindInteger:
		x = v.Int
	case KindUnsigned:
		x = v.Uint
	case KindFloat:
		x = v.Float
	case KindBoolean:
		x = v.Bool
	case KindOpaque:
		x = v.Bytes
		if v.Bytes == nil {
			x = []byte{}
		}
	case KindTime:
		x = cbor.Tag{Number: 1, Content: v.Int}
	case KindObjLnk:
		x = v.Link.String()
	case KindNone:
		return nil, errors.New("cbor: executable resource has no value to encode")
	default:
		return nil, fmt.Errorf("cbor: unknown kind %d", int(v.Kind))
	}
	b, err := cborEnc.Marshal(x)
	if err != nil {
		return nil, fmt.Errorf("cbor: %w", err)
	}
	return b, nil
}

// decodeCBORValue decodes a single CBOR value. Without a known kind it
// guesses from the CBOR type.
func decodeCBORValue(b []byte, k Kind, known bool) (Value, error) {
	var x any
	if err := cborDec.Unmarshal(b, &x); err != nil {
		return Value{}, fmt.Errorf("cbor: %w", err)
	}
	if !known {
		switch x.(type) {
		case string:
			k = KindString
		case uint64, int64:
			k = KindInteger
			if u, ok := x.(uint64); ok && u > math.MaxInt64 {
				k = KindUnsigned
			}
		case float64:
			k = KindFloat
		case bool:
			k = KindBoolean
		case []byte:
			k = KindOpaque
		case time.Time:
			k = KindTime
		default:
			return Value{}, fmt.Errorf("cbor: unexpected %T value", x)
		}
	}
	switch k {
	case KindString:
		if s, ok := x.(string); ok {
			return Value{Kind: k, Str: s}, nil
		}
	case KindBoolean:
		if bv, ok := x.(bool); ok {
			return Value{Kind: k, Bool: bv}, nil
		}
	case KindOpaque:
		if raw, ok := x.([]byte); ok {
			return Value{Kind: k, Bytes: raw}, nil
		}
	case KindObjLnk:
		if s, ok := x.(string); ok {
			l, err := parseObjLnk(s)
			if err != nil {
				return Value{}, fmt.Errorf("cbor: %w", err)
			}
			return Value{Kind: k, Link: l}, nil
		}
	case KindTime:
		// Tag 1 is what the specification asks for; a bare number is what
		// SenML uses for time, so accept it here as well.
		if t, ok := x.(time.Time); ok {
			return Value{Kind: k, Int: t.Unix()}, nil
		}
		n, ok := cborNumber(x)
		if ok {
			return n.toValue(k, true)
		}
	case KindInteger, KindUnsigned, KindFloat:
		n, ok := cborNumber(x)
		if ok {
			return n.toValue(k, true)
		}
	case KindNone:
		return Value{Kind: k}, nil
	default:
		return Value{}, fmt.Errorf("cbor: unknown kind %d", int(k))
	}
	return Value{}, fmt.Errorf("cbor: %s resource cannot take a %s", k, cborTypeName(x))
}

// number is a numeric SenML or CBOR value before the resource kind decides
// what it means.
type number struct {
	form numForm
	i    int64
	u    uint64
	f    float64
}

type numForm int

const (
	numInt   numForm = iota // integer fitting int64
	numUint                 // integer above math.MaxInt64
	numFloat                // anything written with a fraction or exponent
)

func cborNumber(x any) (number, bool) {
	switch n := x.(type) {
	case uint64:
		if n > math.MaxInt64 {
			return number{form: numUint, u: n}, true
		}
		return number{form: numInt, i: int64(n)}, true
	case int64:
		return number{form: numInt, i: n}, true
	case float64:
		return number{form: numFloat, f: n}, true
	}
	return number{}, false
}

// jsonNumber classifies a JSON number literal, which encoding/json has
// already checked for syntax.
func jsonNumber(lit string) (number, error) {
	isInt := true
	for i := 0; i < len(lit); i++ {
		if c := lit[i]; c == '.' || c == 'e' || c == 'E' {
			isInt = false
			break
		}
	}
	if isInt {
		if i, err := strconv.ParseInt(lit, 10, 64); err == nil {
			return number{form: numInt, i: i}, nil
		}
		if u, err := strconv.ParseUint(lit, 10, 64); err == nil {
			return number{form: numUint, u: u}, nil
		}
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return number{}, fmt.Errorf("number %s out of range", truncate(lit))
	}
	return number{form: numFloat, f: f}, nil
}

// twoTo63 and twoTo64 bound the floats that convert exactly to int64 and
// uint64.
const (
	twoTo63 = 1 << 63
	twoTo64 = 1 << 64
)

// toValue interprets n as a value of kind k; when the kind is not known
// the number's own form decides.
func (n number) toValue(k Kind, known bool) (Value, error) {
	if !known {
		switch n.form {
		case numInt:
			return Value{Kind: KindInteger, Int: n.i}, nil
		case numUint:
			return Value{Kind: KindUnsigned, Uint: n.u}, nil
		default:
			return Value{Kind: KindFloat, Float: n.f}, nil
		}
	}
	switch k {
	case KindInteger, KindTime:
		switch n.form {
		case numInt:
			return Value{Kind: k, Int: n.i}, nil
		case numFloat:
			if n.f == math.Trunc(n.f) && n.f >= -twoTo63 && n.f < twoTo63 {
				return Value{Kind: k, Int: int64(n.f)}, nil
			}
		}
		return Value{}, fmt.Errorf("%s value %s out of range or not integral", k, n)
	case KindUnsigned:
		switch n.form {
		case numInt:
			if n.i >= 0 {
				return Value{Kind: k, Uint: uint64(n.i)}, nil
			}
		case numUint:
			return Value{Kind: k, Uint: n.u}, nil
		case numFloat:
			if n.f == math.Trunc(n.f) && n.f >= 0 && n.f < twoTo64 {
				return Value{Kind: k, Uint: uint64(n.f)}, nil
			}
		}
		return Value{}, fmt.Errorf("%s value %s out of range or not integral", k, n)
	case KindFloat:
		switch n.form {
		case numInt:
			return Value{Kind: k, Float: float64(n.i)}, nil
		case numUint:
			return Value{Kind: k, Float: float64(n.u)}, nil
		default:
			return Value{Kind: k, Float: n.f}, nil
		}
	}
	return Value{}, fmt.Errorf("%s resource cannot take a number", k)
}

func (n number) String() string {
	switch n.form {
	case numInt:
		return strconv.FormatInt(n.i, 10)
	case numUint:
		return strconv.FormatUint(n.u, 10)
	}
	return formatFloat(n.f)
}

func cborTypeName(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case string:
		return "text string"
	case []byte:
		return "byte string"
	case uint64, int64, big.Int, *big.Int:
		return "integer"
	case float64:
		return "float"
	case bool:
		return "boolean"
	case time.Time:
		return "date/time"
	case []any:
		return "array"
	case map[any]any:
		return "map"
	case cbor.Tag:
		return "tagged value"
	}
	return fmt.Sprintf("%T", x)
}

// base64URL is what SenML JSON uses for data values.
var base64URL = base64.RawURLEncoding
