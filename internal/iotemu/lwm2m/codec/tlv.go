package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// TLV identifier types, bits 7-6 of the type byte (LwM2M Core TS, TLV
// data format).
const (
	tlvObjectInstance   byte = 0b00
	tlvResourceInstance byte = 0b01
	tlvMultipleResource byte = 0b10
	tlvResource         byte = 0b11
)

// tlvMaxLen is the largest value the 24-bit length field can describe.
const tlvMaxLen = 1<<24 - 1

// ErrNoInstanceTLV is wrapped by DecodeTLV when base is an object and the
// payload holds resource TLVs without an object instance TLV around them,
// as a Create that leaves the instance id to the client does. The caller
// picks an instance id and decodes again with base /o/i.
var ErrNoInstanceTLV = errors.New("tlv payload has no object instance level")

func tlvTypeName(t byte) string {
	switch t {
	case tlvObjectInstance:
		return "object instance"
	case tlvResourceInstance:
		return "resource instance"
	case tlvMultipleResource:
		return "multiple resource"
	default:
		return "resource"
	}
}

// tlv is one decoded TLV. value aliases the input.
type tlv struct {
	typ   byte
	id    uint16
	value []byte
}

// readTLVs splits b into consecutive TLVs without interpreting values.
// Each TLV takes at least two bytes, so the result is bounded by the input.
func readTLVs(b []byte) ([]tlv, error) {
	var out []tlv
	for off := 0; off < len(b); {
		t := b[off]
		hdr := 1
		idLen := 1
		if t&0x20 != 0 {
			idLen = 2
		}
		lenType := int(t>>3) & 0x3
		if len(b)-off < hdr+idLen+lenType {
			return nil, fmt.Errorf("tlv at offset %d: truncated header", off)
		}
		var id uint16
		if idLen == 1 {
			id = uint16(b[off+hdr])
		} else {
			id = binary.BigEndian.Uint16(b[off+hdr:])
		}
		hdr += idLen
		n := int(t & 0x7)
		if lenType > 0 {
			n = 0
			for _, c := range b[off+hdr : off+hdr+lenType] {
				n = n<<8 | int(c)
			}
			hdr += lenType
		}
		if n > len(b)-off-hdr {
			return nil, fmt.Errorf("tlv at offset %d: length %d exceeds the %d bytes left", off, n, len(b)-off-hdr)
		}
		out = append(out, tlv{typ: t >> 6, id: id, value: b[off+hdr : off+hdr+n]})
		off += hdr + n
	}
	return out, nil
}

// DecodeTLV decodes a TLV payload addressed to base into records with full
// paths. It accepts what the specification and common peers produce:
//
//   - base /o: object instance TLVs (ErrNoInstanceTLV for bare resources);
//   - base /o/i: resource and multiple resource TLVs, or one object instance
//     TLV with id i around them;
//   - base /o/i/r: one resource TLV with id r, one multiple resource TLV with
//     id r, or resource instance TLVs, optionally inside an object instance
//     TLV with id i;
//   - base /o/i/r/ri: one resource instance TLV with id ri, optionally inside
//     a multiple resource TLV with id r.
//
// Values of resources kind does not know decode as KindOpaque.
func DecodeTLV(base Path, b []byte, kind KindOf) ([]Record, error) {
	if !base.valid() || base.Depth() == 0 {
		return nil, fmt.Errorf("tlv: invalid base path %s", base)
	}
	top, err := readTLVs(b)
	if err != nil {
		return nil, fmt.Errorf("tlv: %w", err)
	}
	d := &tlvDecoder{kind: kind}
	switch base.Depth() {
	case 1:
		err = d.instances(base, top)
	case 2:
		if len(top) == 1 && top[0].typ == tlvObjectInstance {
			top, err = unwrap(top[0], uint16(base.Instance))
			if err != nil {
				break
			}
		}
		err = d.resources(base, top)
	case 3:
		if len(top) == 1 && top[0].typ == tlvObjectInstance {
			top, err = unwrap(top[0], uint16(base.Instance))
			if err != nil {
				break
			}
			if len(top) != 1 || top[0].typ == tlvResourceInstance {
				err = fmt.Errorf("object instance tlv for %s must hold exactly one resource tlv", base)
				break
			}
		}
		err = d.resourceAt(base, top)
	case 4:
		if len(top) == 1 && top[0].typ == tlvMultipleResource {
			top, err = unwrap(top[0], uint16(base.Resource))
			if err != nil {
				break
			}
		}
		err = d.resourceInstanceAt(base, top)
	}
	if err != nil {
		return nil, fmt.Errorf("tlv: %w", err)
	}
	return d.out, nil
}

// unwrap returns the children of a container TLV after checking its id
// against the request path.
func unwrap(t tlv, want uint16) ([]tlv, error) {
	if t.id != want {
		return nil, fmt.Errorf("%s tlv id %d does not match the request path id %d", tlvTypeName(t.typ), t.id, want)
	}
	return readTLVs(t.value)
}

type tlvDecoder struct {
	kind KindOf
	out  []Record
}

func (d *tlvDecoder) instances(obj Path, ts []tlv) error {
	seen := make(map[uint16]bool, len(ts))
	for _, t := range ts {
		if t.typ != tlvObjectInstance {
			if t.typ == tlvResource || t.typ == tlvMultipleResource {
				return fmt.Errorf("object %s: %w", obj, ErrNoInstanceTLV)
			}
			return fmt.Errorf("object %s: unexpected %s tlv", obj, tlvTypeName(t.typ))
		}
		if seen[t.id] {
			return fmt.Errorf("object %s: duplicate instance %d", obj, t.id)
		}
		seen[t.id] = true
		children, err := readTLVs(t.value)
		if err != nil {
			return fmt.Errorf("instance %s: %w", obj.child(t.id), err)
		}
		if err := d.resources(obj.child(t.id), children); err != nil {
			return err
		}
	}
	return nil
}

func (d *tlvDecoder) resources(inst Path, ts []tlv) error {
	seen := make(map[uint16]bool, len(ts))
	for _, t := range ts {
		p := inst.child(t.id)
		if seen[t.id] {
			return fmt.Errorf("duplicate resource %s", p)
		}
		seen[t.id] = true
		if err := d.resource(p, t); err != nil {
			return err
		}
	}
	return nil
}

// resource decodes a resource or multiple resource TLV at p.
func (d *tlvDecoder) resource(p Path, t tlv) error {
	switch t.typ {
	case tlvResource:
		return d.value(p, t.value)
	case tlvMultipleResource:
		children, err := readTLVs(t.value)
		if err != nil {
			return fmt.Errorf("resource %s: %w", p, err)
		}
		return d.resourceInstances(p, children)
	default:
		return fmt.Errorf("%s: unexpected %s tlv where a resource belongs", p, tlvTypeName(t.typ))
	}
}

func (d *tlvDecoder) resourceInstances(res Path, ts []tlv) error {
	seen := make(map[uint16]bool, len(ts))
	for _, t := range ts {
		p := res.child(t.id)
		if t.typ != tlvResourceInstance {
			return fmt.Errorf("%s: unexpected %s tlv where a resource instance belongs", p, tlvTypeName(t.typ))
		}
		if seen[t.id] {
			return fmt.Errorf("duplicate resource instance %s", p)
		}
		seen[t.id] = true
		if err := d.value(p, t.value); err != nil {
			return err
		}
	}
	return nil
}

func (d *tlvDecoder) resourceAt(res Path, ts []tlv) error {
	if len(ts) == 1 && (ts[0].typ == tlvResource || ts[0].typ == tlvMultipleResource) {
		if ts[0].id != uint16(res.Resource) {
			return fmt.Errorf("%s tlv id %d does not match the request path %s", tlvTypeName(ts[0].typ), ts[0].id, res)
		}
		return d.resource(res, ts[0])
	}
	// Bare resource instances: how a multiple-instance resource read
	// answers, and the only form with no instances at all (empty payload).
	return d.resourceInstances(res, ts)
}

func (d *tlvDecoder) resourceInstanceAt(ri Path, ts []tlv) error {
	if len(ts) != 1 {
		return fmt.Errorf("resource instance %s needs exactly one tlv, got %d", ri, len(ts))
	}
	t := ts[0]
	if t.typ != tlvResourceInstance {
		return fmt.Errorf("%s: unexpected %s tlv where a resource instance belongs", ri, tlvTypeName(t.typ))
	}
	if t.id != uint16(ri.ResourceInstance) {
		return fmt.Errorf("resource instance tlv id %d does not match the request path %s", t.id, ri)
	}
	return d.value(ri, t.value)
}

func (d *tlvDecoder) value(p Path, b []byte) error {
	k, known := d.kind.lookup(p)
	if !known {
		k = KindOpaque
	}
	v, err := decodeTLVValue(b, k)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	d.out = append(d.out, Record{Path: p, Value: v})
	return nil
}

func decodeTLVValue(b []byte, k Kind) (Value, error) {
	switch k {
	case KindString:
		if err := validUTF8(b); err != nil {
			return Value{}, err
		}
		return Value{Kind: k, Str: string(b)}, nil
	case KindInteger, KindTime:
		switch len(b) {
		case 1:
			return Value{Kind: k, Int: int64(int8(b[0]))}, nil
		case 2:
			return Value{Kind: k, Int: int64(int16(binary.BigEndian.Uint16(b)))}, nil
		case 4:
			return Value{Kind: k, Int: int64(int32(binary.BigEndian.Uint32(b)))}, nil
		case 8:
			return Value{Kind: k, Int: int64(binary.BigEndian.Uint64(b))}, nil
		}
		return Value{}, fmt.Errorf("%s value of %d bytes, want 1, 2, 4 or 8", k, len(b))
	case KindUnsigned:
		switch len(b) {
		case 1:
			return Value{Kind: k, Uint: uint64(b[0])}, nil
		case 2:
			return Value{Kind: k, Uint: uint64(binary.BigEndian.Uint16(b))}, nil
		case 4:
			return Value{Kind: k, Uint: uint64(binary.BigEndian.Uint32(b))}, nil
		case 8:
			return Value{Kind: k, Uint: binary.BigEndian.Uint64(b)}, nil
		}
		return Value{}, fmt.Errorf("%s value of %d bytes, want 1, 2, 4 or 8", k, len(b))
	case KindFloat:
		switch len(b) {
		case 4:
			return Value{Kind: k, Float: float64(math.Float32frombits(binary.BigEndian.Uint32(b)))}, nil
		case 8:
			return Value{Kind: k, Float: math.Float64frombits(binary.BigEndian.Uint64(b))}, nil
		}
		return Value{}, fmt.Errorf("%s value of %d bytes, want 4 or 8", k, len(b))
	case KindBoolean:
		if len(b) != 1 || b[0] > 1 {
			return Value{}, fmt.Errorf("%s value must be one byte 0 or 1", k)
		}
		return Value{Kind: k, Bool: b[0] == 1}, nil
	case KindOpaque:
		return Value{Kind: k, Bytes: append([]byte{}, b...)}, nil
	case KindObjLnk:
		if len(b) != 4 {
			return Value{}, fmt.Errorf("%s value of %d bytes, want 4", k, len(b))
		}
		return Value{Kind: k, Link: ObjLnk{Object: binary.BigEndian.Uint16(b), Instance: binary.BigEndian.Uint16(b[2:])}}, nil
	case KindNone:
		// An executable resource has no value; whatever the peer sent is
		// meaningless to it.
		return Value{Kind: k}, nil
	}
	return Value{}, fmt.Errorf("unknown kind %d", int(k))
}

// EncodeTLV encodes records, all at or below base and all resources (depth
// 3) or resource instances (depth 4), as the depth of base requires: base
// /o gives object instance TLVs, /o/i resource TLVs, /o/i/r of a
// multiple-instance resource resource instance TLVs, /o/i/r of a single
// resource one resource TLV, /o/i/r/ri one resource instance TLV. A record
// at depth 4 makes its resource a multiple resource.
func EncodeTLV(base Path, recs []Record) ([]byte, error) {
	if !base.valid() || base.Depth() == 0 {
		return nil, fmt.Errorf("tlv: invalid base path %s", base)
	}
	seen := make(map[Path]bool, len(recs))
	for _, r := range recs {
		if !r.Path.valid() || !base.Contains(r.Path) {
			return nil, fmt.Errorf("tlv: record %s is not below %s", r.Path, base)
		}
		if d := r.Path.Depth(); d < 3 {
			return nil, fmt.Errorf("tlv: record %s is not a resource or resource instance", r.Path)
		}
		if seen[r.Path] {
			return nil, fmt.Errorf("tlv: duplicate record %s", r.Path)
		}
		seen[r.Path] = true
	}
	var out []byte
	var err error
	switch base.Depth() {
	case 1:
		for _, g := range groupBy(recs, func(p Path) int32 { return p.Instance }) {
			var inner []byte
			if inner, err = encodeResources(nil, g.recs); err != nil {
				break
			}
			if out, err = appendTLV(out, tlvObjectInstance, uint16(g.id), inner); err != nil {
				break
			}
		}
	case 2:
		out, err = encodeResources(nil, recs)
	case 3:
		if len(recs) == 1 && recs[0].Path.Depth() == 3 {
			out, err = encodeResources(nil, recs)
			break
		}
		for _, r := range recs {
			if r.Path.Depth() != 4 {
				return nil, fmt.Errorf("tlv: record %s mixes a single value with resource instances", r.Path)
			}
			if out, err = appendValueTLV(out, tlvResourceInstance, r); err != nil {
				break
			}
		}
	case 4:
		if len(recs) != 1 {
			return nil, fmt.Errorf("tlv: resource instance %s needs exactly one record, got %d", base, len(recs))
		}
		out, err = appendValueTLV(nil, tlvResourceInstance, recs[0])
	}
	if err != nil {
		return nil, fmt.Errorf("tlv: %w", err)
	}
	return out, nil
}

type recGroup struct {
	id   int32
	recs []Record
}

// groupBy groups records by one path level, in order of first appearance,
// so the output follows the caller's order.
func groupBy(recs []Record, level func(Path) int32) []recGroup {
	var groups []recGroup
	idx := make(map[int32]int)
	for _, r := range recs {
		id := level(r.Path)
		i, ok := idx[id]
		if !ok {
			i = len(groups)
			idx[id] = i
			groups = append(groups, recGroup{id: id})
		}
		groups[i].recs = append(groups[i].recs, r)
	}
	return groups
}

// encodeResources appends the resource and multiple resource TLVs of the
// records of one object instance.
func encodeResources(out []byte, recs []Record) ([]byte, error) {
	for _, g := range groupBy(recs, func(p Path) int32 { return p.Resource }) {
		if len(g.recs) == 1 && g.recs[0].Path.Depth() == 3 {
			var err error
			if out, err = appendValueTLV(out, tlvResource, g.recs[0]); err != nil {
				return nil, err
			}
			continue
		}
		var inner []byte
		for _, r := range g.recs {
			if r.Path.Depth() != 4 {
				return nil, fmt.Errorf("record %s mixes a single value with resource instances", r.Path)
			}
			var err error
			if inner, err = appendValueTLV(inner, tlvResourceInstance, r); err != nil {
				return nil, err
			}
		}
		var err error
		if out, err = appendTLV(out, tlvMultipleResource, uint16(g.id), inner); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func appendValueTLV(out []byte, typ byte, r Record) ([]byte, error) {
	v, err := encodeTLVValue(r.Value)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.Path, err)
	}
	id := r.Path.Resource
	if typ == tlvResourceInstance {
		id = r.Path.ResourceInstance
	}
	return appendTLV(out, typ, uint16(id), v)
}

func appendTLV(out []byte, typ byte, id uint16, value []byte) ([]byte, error) {
	n := len(value)
	if n > tlvMaxLen {
		return nil, fmt.Errorf("%s tlv %d: value of %d bytes exceeds the 24-bit length field", tlvTypeName(typ), id, n)
	}
	t := typ << 6
	if id > 0xff {
		t |= 0x20
	}
	var lenBytes int
	switch {
	case n <= 7:
		t |= byte(n)
	case n <= 0xff:
		t |= 1 << 3
		lenBytes = 1
	case n <= 0xffff:
		t |= 2 << 3
		lenBytes = 2
	default:
		t |= 3 << 3
		lenBytes = 3
	}
	out = append(out, t)
	if id > 0xff {
		out = binary.BigEndian.AppendUint16(out, id)
	} else {
		out = append(out, byte(id))
	}
	for i := lenBytes - 1; i >= 0; i-- {
		out = append(out, byte(n>>(8*i)))
	}
	return append(out, value...), nil
}

func encodeTLVValue(v Value) ([]byte, error) {
	switch v.Kind {
	case KindString:
		return []byte(v.Str), nil
	case KindInteger, KindTime:
		return appendTLVInt(nil, v.Int), nil
	case KindUnsigned:
		if v.Uint > math.MaxInt64 {
			return binary.BigEndian.AppendUint64(nil, v.Uint), nil
		}
		// Peers that read unsigned integers as signed (LwM2M 1.0 had no
		// unsigned type) still get the right value when the top bit is clear.
		return appendTLVInt(nil, int64(v.Uint)), nil
	case KindFloat:
		if f32 := float32(v.Float); float64(f32) == v.Float {
			return binary.BigEndian.AppendUint32(nil, math.Float32bits(f32)), nil
		}
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(v.Float)), nil
	case KindBoolean:
		if v.Bool {
			return []byte{1}, nil
		}
		return []byte{0}, nil
	case KindOpaque:
		return v.Bytes, nil
	case KindObjLnk:
		b := binary.BigEndian.AppendUint16(nil, v.Link.Object)
		return binary.BigEndian.AppendUint16(b, v.Link.Instance), nil
	case KindNone:
		return nil, errors.New("executable resource has no value to encode")
	}
	return nil, fmt.Errorf("unknown kind %d", int(v.Kind))
}

// appendTLVInt uses the shortest of the 1, 2, 4 and 8 byte two's complement
// forms the specification allows.
func appendTLVInt(out []byte, n int64) []byte {
	switch {
	case n >= math.MinInt8 && n <= math.MaxInt8:
		return append(out, byte(n))
	case n >= math.MinInt16 && n <= math.MaxInt16:
		return binary.BigEndian.AppendUint16(out, uint16(n))
	case n >= math.MinInt32 && n <= math.MaxInt32:
		return binary.BigEndian.AppendUint32(out, uint32(n))
	}
	return binary.BigEndian.AppendUint64(out, uint64(n))
}
