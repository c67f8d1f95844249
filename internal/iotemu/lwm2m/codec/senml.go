package codec

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// senmlRecord is one SenML record reduced to the labels LwM2M gives a
// meaning; the JSON and CBOR decoders fill it, resolve turns it into a
// Record.
type senmlRecord struct {
	bn, n    string
	hasBN    bool
	valLabel string // "v", "vs", "vb", "vd", "vlo" or "" for none
	num      number
	str      string
	boolean  bool
	data     []byte
}

// senmlMaxVersion is the SenML version RFC 8428 defines; a pack that
// declares a later one may use features this decoder would misread.
const senmlMaxVersion = 10

// setValue records the record's value label, of which there may be one.
func (r *senmlRecord) setValue(label string) error {
	if r.valLabel != "" {
		return fmt.Errorf("record has both %q and %q", r.valLabel, label)
	}
	r.valLabel = label
	return nil
}

// checkVersion validates a bver label.
func checkVersion(n number) error {
	if n.form != numInt || n.i < 1 || n.i > senmlMaxVersion {
		return fmt.Errorf("unsupported SenML version %s", n)
	}
	return nil
}

// checkBaseValue validates a bv label: a base value shifts every following
// number, which LwM2M never uses, so only the neutral 0 is accepted rather
// than silently misreading values.
func checkBaseValue(n number) error {
	zero := (n.form == numInt && n.i == 0) || (n.form == numFloat && n.f == 0)
	if !zero {
		return errors.New(`base value "bv" is not supported`)
	}
	return nil
}

// mustUnderstand reports whether an unknown label may not be ignored
// (RFC 8428 section 4.4: labels ending in "_").
func mustUnderstand(label string) bool {
	return strings.HasSuffix(label, "_")
}

// resolve turns decoded SenML records into LwM2M records: the base name
// sticks until the next bn, the full name must be an LwM2M path, and a
// record without a value (as in Read-Composite requests) yields KindNone at
// any depth.
func resolve(recs []senmlRecord, kind KindOf) ([]Record, error) {
	out := make([]Record, 0, len(recs))
	bn := ""
	for i, r := range recs {
		if r.hasBN {
			bn = r.bn
		}
		name := bn + r.n
		p, err := ParsePath(name)
		if err != nil {
			return nil, fmt.Errorf("record %d: name: %w", i, err)
		}
		if r.valLabel == "" {
			out = append(out, Record{Path: p, Value: Value{Kind: KindNone}})
			continue
		}
		if p.Depth() < 3 {
			return nil, fmt.Errorf("record %d: %s carries a value but is not a resource or resource instance", i, p)
		}
		k, known := kind.lookup(p)
		v, err := r.value(k, known)
		if err != nil {
			return nil, fmt.Errorf("record %d: %s: %w", i, p, err)
		}
		out = append(out, Record{Path: p, Value: v})
	}
	return out, nil
}

func (r *senmlRecord) value(k Kind, known bool) (Value, error) {
	want := func(label string, kinds ...Kind) error {
		if !known {
			return nil
		}
		for _, w := range kinds {
			if k == w {
				return nil
			}
		}
		return fmt.Errorf("%s resource cannot take %q", k, label)
	}
	switch r.valLabel {
	case "v":
		if err := want("v", KindInteger, KindUnsigned, KindFloat, KindTime); err != nil {
			return Value{}, err
		}
		return r.num.toValue(k, known)
	case "vs":
		if err := want("vs", KindString); err != nil {
			return Value{}, err
		}
		return Value{Kind: KindString, Str: r.str}, nil
	case "vb":
		if err := want("vb", KindBoolean); err != nil {
			return Value{}, err
		}
		return Value{Kind: KindBoolean, Bool: r.boolean}, nil
	case "vd":
		if err := want("vd", KindOpaque); err != nil {
			return Value{}, err
		}
		return Value{Kind: KindOpaque, Bytes: r.data}, nil
	case "vlo":
		if err := want("vlo", KindObjLnk); err != nil {
			return Value{}, err
		}
		l, err := parseObjLnk(r.str)
		if err != nil {
			return Value{}, err
		}
		return Value{Kind: KindObjLnk, Link: l}, nil
	}
	return Value{}, fmt.Errorf("unknown value label %q", r.valLabel)
}

// senmlOut is one record as the encoders write it.
type senmlOut struct {
	bn    string // written when not empty
	n     string // written when not empty
	value Value
}

// planSenML checks recs against base and names them: when every record
// lies strictly below base, the first record carries bn "<base>/" and all
// names are relative (as in the specification's examples); otherwise every
// name is the full path.
func planSenML(base Path, recs []Record) ([]senmlOut, error) {
	if !base.valid() {
		return nil, fmt.Errorf("invalid base path %s", base)
	}
	bd := base.Depth()
	relative := bd > 0
	for _, r := range recs {
		if !r.Path.valid() || r.Path.Depth() == 0 || !base.Contains(r.Path) {
			return nil, fmt.Errorf("record %s is not below %s", r.Path, base)
		}
		if r.Value.Kind != KindNone && r.Path.Depth() < 3 {
			return nil, fmt.Errorf("record %s carries a value but is not a resource or resource instance", r.Path)
		}
		if r.Path.Depth() == bd {
			relative = false
		}
	}
	out := make([]senmlOut, len(recs))
	prefix := base.String() + "/"
	for i, r := range recs {
		out[i].value = r.Value
		full := r.Path.String()
		if !relative {
			out[i].n = full
			continue
		}
		if i == 0 {
			out[i].bn = prefix
		}
		out[i].n = full[len(prefix):]
	}
	return out, nil
}

// checkFloat rejects what JSON cannot carry.
func checkFloat(f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("float %v cannot be encoded", f)
	}
	return nil
}
