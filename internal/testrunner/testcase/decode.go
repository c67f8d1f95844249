package testcase

import (
	"math"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// decoder fills a Case from a checked node tree. It is driven by the yaml
// tags of the model types, so a field added to model.go is decoded without
// touching this file, and it reports every unknown field, duplicate key and
// value of the wrong type with its path and line instead of stopping at the
// first.
type decoder struct {
	p *problems
}

func (d *decoder) decodeCase(root *yaml.Node) *Case {
	c := &Case{}
	d.value(root, "", reflect.ValueOf(c).Elem())
	return c
}

// value decodes n into v. A null leaves v at its zero value, which is what
// an omitted field gives too.
func (d *decoder) value(n *yaml.Node, path string, v reflect.Value) {
	if isNull(n) {
		return
	}
	switch v.Kind() {
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			d.p.at(path, n.Line, "must be a string, got %s", describe(n))
			return
		}
		v.SetString(n.Value)
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
			d.p.at(path, n.Line, "must be true or false, got %s", describe(n))
			return
		}
		v.SetBool(b)
	case reflect.Pointer:
		elem := reflect.New(v.Type().Elem())
		d.value(n, path, elem.Elem())
		v.Set(elem)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.p.at(path, n.Line, "must be a list, got %s", describe(n))
			return
		}
		if len(n.Content) == 0 {
			return // nil, as when omitted, so a round trip keeps it equal
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			ip := indexPath(path, i)
			d.p.lines[ip] = item.Line
			d.value(item, ip, s.Index(i))
		}
		v.Set(s)
	case reflect.Struct:
		d.structure(n, path, v)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			d.p.at(path, n.Line, "must be a mapping, got %s", describe(n))
			return
		}
		if m, ok := d.any(n, &fieldPath{seg: path}).(map[string]any); ok && len(m) > 0 {
			v.Set(reflect.ValueOf(m))
		}
	default:
		// The model only uses the kinds above; a new kind needs code here.
		panic("testcase: no decoder for " + v.Type().String())
	}
}

// structure decodes a mapping into the struct v field by field.
func (d *decoder) structure(n *yaml.Node, path string, v reflect.Value) {
	if n.Kind != yaml.MappingNode {
		d.p.at(path, n.Line, "must be a mapping, got %s", describe(n))
		return
	}
	fields := yamlFields(v.Type())
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.p.note(path, k.Line, "keys must be strings, got %s", describe(k))
			continue
		}
		fp := keyPath(path, k.Value)
		idx, known := fields[k.Value]
		switch {
		case seen[k.Value]:
			d.p.at(fp, k.Line, "duplicate key")
		case !known:
			d.p.at(fp, k.Line, "unknown field")
		default:
			seen[k.Value] = true
			d.p.lines[fp] = k.Line
			d.value(val, fp, v.Field(idx))
		}
	}
}

// any decodes free-form tool arguments into the JSON data model: maps with
// string keys, lists, strings, booleans, numbers and null.
func (d *decoder) any(n *yaml.Node, path *fieldPath) any {
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				d.p.atPath(path, k.Line, "keys must be strings, got %s", describe(k))
				continue
			}
			kp := path.key(k.Value)
			if _, dup := m[k.Value]; dup {
				d.p.atPath(kp, k.Line, "duplicate key")
				continue
			}
			m[k.Value] = d.any(val, kp)
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, item := range n.Content {
			s[i] = d.any(item, path.index(i))
		}
		return s
	}
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			d.p.atPath(path, n.Line, "not a valid boolean")
		}
		return b
	case "!!int":
		var x any
		if err := n.Decode(&x); err != nil {
			d.p.atPath(path, n.Line, "not a valid integer")
			return nil
		}
		if f, ok := x.(float64); ok {
			return d.number(f, path, n.Line)
		}
		return x
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			d.p.atPath(path, n.Line, "not a valid number")
			return nil
		}
		return d.number(f, path, n.Line)
	}
	// Strings, and timestamps kept as the text the author wrote.
	return n.Value
}

// maxExactInt is the largest integer a float64 (and so JSON) holds exactly.
const maxExactInt = 1 << 53

// number keeps a float JSON can carry. Whole numbers become ints, because
// a float 1 is written "1" and read back as an int: normalising here makes
// Parse(Marshal(c)) equal c.
func (d *decoder) number(f float64, path *fieldPath, line int) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		d.p.atPath(path, line, "must be a finite number (arguments are sent as JSON)")
		return nil
	}
	if f == math.Trunc(f) && math.Abs(f) <= maxExactInt {
		return int(f)
	}
	return f
}

// yamlFields maps the yaml names of a struct's fields to their indexes.
func yamlFields(t reflect.Type) map[string]int {
	m := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		if name := yamlName(t.Field(i)); name != "" {
			m[name] = i
		}
	}
	return m
}

func yamlName(f reflect.StructField) string {
	tag := f.Tag.Get("yaml")
	if tag == "-" || !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		return strings.ToLower(f.Name)
	}
	return name
}
