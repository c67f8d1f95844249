package codec

import "fmt"

// SenML CBOR labels (RFC 8428 section 6); LwM2M's object link label has no
// integer and travels as the text "vlo".
const (
	cborBaseVersion = -1
	cborBaseName    = -2
	cborBaseTime    = -3
	cborBaseUnit    = -4
	cborBaseValue   = -5
	cborBaseSum     = -6
	cborName        = 0
	cborUnit        = 1
	cborValue       = 2
	cborStringValue = 3
	cborBoolValue   = 4
	cborSum         = 5
	cborTime        = 6
	cborUpdateTime  = 7
	cborDataValue   = 8
)

// senmlCBORRecord fixes the label order to bn, n, value, as in the
// specification's example; pointers keep empty strings and byte strings.
type senmlCBORRecord struct {
	BaseName    string  `cbor:"-2,keyasint,omitempty"`
	Name        string  `cbor:"0,keyasint,omitempty"`
	Value       any     `cbor:"2,keyasint,omitempty"`
	StringValue *string `cbor:"3,keyasint,omitempty"`
	BoolValue   *bool   `cbor:"4,keyasint,omitempty"`
	DataValue   *[]byte `cbor:"8,keyasint,omitempty"`
	ObjLnkValue *string `cbor:"vlo,omitempty"`
}

// EncodeSenMLCBOR encodes recs as a SenML CBOR pack (RFC 8428, LwM2M 1.1)
// with the same labels as EncodeSenMLJSON; opaque values are byte strings.
func EncodeSenMLCBOR(base Path, recs []Record) ([]byte, error) {
	plan, err := planSenML(base, recs)
	if err != nil {
		return nil, fmt.Errorf("senml cbor: %w", err)
	}
	pack := make([]senmlCBORRecord, len(plan))
	for i, r := range plan {
		c := &pack[i]
		c.BaseName, c.Name = r.bn, r.n
		v := r.value
		switch v.Kind {
		case KindInteger, KindTime:
			c.Value = v.Int
		case KindUnsigned:
			c.Value = v.Uint
		case KindFloat:
			c.Value = v.Float
		case KindBoolean:
			c.BoolValue = &v.Bool
		case KindString:
			c.StringValue = &v.Str
		case KindOpaque:
			data := v.Bytes
			if data == nil {
				data = []byte{}
			}
			c.DataValue = &data
		case KindObjLnk:
			s := v.Link.String()
			c.ObjLnkValue = &s
		case KindNone:
		default:
			return nil, fmt.Errorf("senml cbor: %s: unknown kind %d", recs[i].Path, int(v.Kind))
		}
	}
	b, err := cborEnc.Marshal(pack)
	if err != nil {
		return nil, fmt.Errorf("senml cbor: %w", err)
	}
	return b, nil
}

// DecodeSenMLCBOR decodes a SenML CBOR pack; see DecodeSenMLJSON.
func DecodeSenMLCBOR(b []byte, kind KindOf) ([]Record, error) {
	var pack []map[any]any
	if err := cborDec.Unmarshal(b, &pack); err != nil {
		return nil, fmt.Errorf("senml cbor: %w", err)
	}
	recs := make([]senmlRecord, len(pack))
	for i, m := range pack {
		if err := parseSenMLCBORRecord(m, &recs[i]); err != nil {
			return nil, fmt.Errorf("senml cbor: record %d: %w", i, err)
		}
	}
	out, err := resolve(recs, kind)
	if err != nil {
		return nil, fmt.Errorf("senml cbor: %w", err)
	}
	return out, nil
}

func parseSenMLCBORRecord(m map[any]any, r *senmlRecord) error {
	for k, x := range m {
		var label int64
		switch k := k.(type) {
		case uint64:
			if k > cborDataValue {
				continue
			}
			label = int64(k)
		case int64:
			label = k
		case string:
			if k == "vlo" {
				s, ok := x.(string)
				if !ok {
					return fmt.Errorf("label vlo: want a text string, got %s", cborTypeName(x))
				}
				r.str = s
				if err := r.setValue("vlo"); err != nil {
					return err
				}
				continue
			}
			if mustUnderstand(k) {
				return fmt.Errorf("label %q: must-understand label not supported", k)
			}
			continue
		default:
			continue
		}
		if err := parseSenMLCBORField(r, label, x); err != nil {
			return fmt.Errorf("label %d: %w", label, err)
		}
	}
	return nil
}

func parseSenMLCBORField(r *senmlRecord, label int64, x any) error {
	str := func() (string, error) {
		s, ok := x.(string)
		if !ok {
			return "", fmt.Errorf("want a text string, got %s", cborTypeName(x))
		}
		return s, nil
	}
	num := func() (number, error) {
		n, ok := cborNumber(x)
		if !ok {
			return number{}, fmt.Errorf("want a number, got %s", cborTypeName(x))
		}
		return n, nil
	}
	var err error
	switch label {
	case cborBaseName:
		r.bn, err = str()
		r.hasBN = true
	case cborName:
		r.n, err = str()
	case cborUnit, cborBaseUnit:
		_, err = str()
	case cborStringValue:
		if r.str, err = str(); err == nil {
			err = r.setValue("vs")
		}
	case cborValue:
		if r.num, err = num(); err == nil {
			err = r.setValue("v")
		}
	case cborBoolValue:
		b, ok := x.(bool)
		if !ok {
			return fmt.Errorf("want a boolean, got %s", cborTypeName(x))
		}
		r.boolean = b
		err = r.setValue("vb")
	case cborDataValue:
		b, ok := x.([]byte)
		if !ok {
			return fmt.Errorf("want a byte string, got %s", cborTypeName(x))
		}
		r.data = b
		err = r.setValue("vd")
	case cborBaseValue:
		var n number
		if n, err = num(); err == nil {
			err = checkBaseValue(n)
		}
	case cborBaseVersion:
		var n number
		if n, err = num(); err == nil {
			err = checkVersion(n)
		}
	case cborBaseTime, cborBaseSum, cborSum, cborTime, cborUpdateTime:
		_, err = num()
	default:
		// Unregistered labels carry nothing LwM2M needs.
	}
	return err
}
