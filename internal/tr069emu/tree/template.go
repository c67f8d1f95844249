package tree

import (
	"slices"
	"sort"
	"strings"
)

// entry is one node of a template, or one node a device added. It is kept
// small because templates hold hundreds of thousands of them at most and
// devices hold the nodes of the instances they added.
type entry struct {
	name  string
	value string
	typ   Type
	notif uint8
	flags uint8
}

const (
	flagWritable = 1 << iota
	flagInform
	flagObject
)

func (e *entry) object() bool   { return e.flags&flagObject != 0 }
func (e *entry) writable() bool { return e.flags&flagWritable != 0 }

func (e *entry) param() Param {
	return Param{Name: e.name, Value: e.value, Type: e.typ, Writable: e.writable(),
		Notification: int(e.notif), Object: e.object()}
}

// Template is an immutable parameter tree loaded from a tree file.
//
// Its concrete nodes (leaves and objects, the objects implied by the leaves
// included) sit in one slice sorted by name, so that a name is a binary
// search and every partial path is a contiguous range. Names holding "{i}"
// sit apart: they are not part of any device's tree, they describe what
// AddObject and AddParameter create.
type Template struct {
	name      string
	dataModel string
	root      string
	nodes     []entry // concrete leaves and objects, sorted by name
	tmpl      []entry // "{i}" leaves and objects, sorted by name
	leaves    int
	inform    []int32 // indexes into nodes, in file order
	// skel holds, per table template ("X.{i}."), the nodes of one new
	// instance relative to the instance object ("" is the object itself),
	// sorted, so AddObject only concatenates names.
	skel map[string][]entry
}

// Name is the tree's name attribute.
func (t *Template) Name() string { return t.name }

// DataModel is "TR-098" (root InternetGatewayDevice.) or "TR-181" (root Device.).
func (t *Template) DataModel() string { return t.dataModel }

// Root is "InternetGatewayDevice." or "Device.".
func (t *Template) Root() string { return t.root }

// Len is the number of leaf parameters.
func (t *Template) Len() int { return t.leaves }

// Lookup returns a node of the template as the file gives it: a concrete
// parameter or object, or a "{i}" template entry such as
// "Device.Hosts.Host.{i}.IPAddress".
func (t *Template) Lookup(name string) (Param, bool) {
	if i, ok := findEntry(t.nodes, name); ok {
		return t.nodes[i].param(), true
	}
	if i, ok := findEntry(t.tmpl, name); ok {
		return t.tmpl[i].param(), true
	}
	return Param{}, false
}

// Tables returns the multi-instance objects AddObject accepts, as template
// names ("Device.Hosts.Host.{i}."), sorted.
func (t *Template) Tables() []string {
	out := make([]string, 0, len(t.skel))
	for k := range t.skel {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func findEntry(es []entry, name string) (int, bool) {
	i := sort.Search(len(es), func(i int) bool { return es[i].name >= name })
	return i, i < len(es) && es[i].name == name
}

// prefixRange returns the range of es whose names start with prefix; names
// sharing a prefix are contiguous in a sorted slice.
func prefixRange(es []entry, prefix string) (lo, hi int) {
	lo = sort.Search(len(es), func(i int) bool { return es[i].name >= prefix })
	if prefix == "" {
		return lo, len(es)
	}
	hi = lo + sort.Search(len(es)-lo, func(i int) bool { return !strings.HasPrefix(es[lo+i].name, prefix) })
	return lo, hi
}

// rawEntry is an element of a tree file, before the template is built.
type rawEntry struct {
	entry
	line     int
	declared bool // an <Object> element rather than implied by a leaf
}

// build turns the entries of a file into a template: it adds the implied
// objects, the empty tables of every existing instance, the writability of
// objects, the skeletons of new instances, and refuses names that are both
// a parameter and an object.
func build(name, dataModel, root string, raws []rawEntry) (*Template, error) {
	concrete := map[string]*rawEntry{}
	templ := map[string]*rawEntry{}
	setFor := func(n string) map[string]*rawEntry {
		if strings.Contains(n, instanceSeg) {
			return templ
		}
		return concrete
	}
	var informNames []string
	for i := range raws {
		r := &raws[i]
		setFor(r.name)[r.name] = r
		if r.flags&flagInform != 0 {
			informNames = append(informNames, r.name)
		}
	}
	implied := func(obj string) {
		set := setFor(obj)
		if _, ok := set[obj]; !ok {
			set[obj] = &rawEntry{entry: entry{name: obj, flags: flagObject}}
		}
	}
	for i := range raws {
		ancestors(raws[i].name, implied)
	}
	// Every leaf, and every object that is not implied, must not also be
	// the other kind under the same name, nor in generalised form.
	for i := range raws {
		r := &raws[i]
		if r.object() {
			continue
		}
		if o, ok := setFor(r.name)[r.name+"."]; ok {
			return nil, &FormatError{Line: max(r.line, o.line), Msg: "name " + r.name + " is both a parameter and an object"}
		}
		for _, g := range variants(r.name)[1:] {
			if _, ok := templ[g+"."]; ok {
				return nil, &FormatError{Line: r.line, Msg: "name " + r.name + " is a parameter but its template " + g + ". is an object"}
			}
		}
	}

	t := &Template{name: name, dataModel: dataModel, root: root, skel: map[string][]entry{}}
	t.tmpl = sortedEntries(templ)

	// Tables exist, empty, in every instance of their parent: the template
	// "A.{i}.B.{i}.X" makes "A.1.B." an object of a concrete "A.1.".
	work := make([]string, 0, len(concrete))
	for n, r := range concrete {
		if r.object() {
			work = append(work, n)
		}
	}
	for len(work) > 0 {
		o := work[len(work)-1]
		work = work[:len(work)-1]
		add := func(obj string) {
			if len(obj) > len(o) {
				if _, ok := concrete[obj]; !ok {
					concrete[obj] = &rawEntry{entry: entry{name: obj, flags: flagObject}}
					work = append(work, obj)
				}
			}
		}
		for _, g := range variants(o) {
			lo, hi := prefixRange(t.tmpl, g)
			for _, e := range t.tmpl[lo:hi] {
				rest := e.name[len(g):]
				if k := strings.Index(rest, instanceSeg); k > 0 {
					table := o + rest[:k]
					ancestors(table, add)
					add(table)
				}
			}
		}
	}

	// Writability of objects that no <Object> element describes: an
	// instance "A.{i}." can be deleted, and its table "A." added to, when
	// the file declares "A.{i}." writable.
	tmplWritable := func(n string) (bool, bool) {
		if i, ok := findEntry(t.tmpl, n); ok {
			return t.tmpl[i].writable(), true
		}
		return false, false
	}
	for i := range t.tmpl {
		e := &t.tmpl[i]
		if !e.object() || templ[e.name].declared || strings.HasSuffix(e.name, "."+instanceSeg+".") {
			continue
		}
		if w, _ := tmplWritable(e.name + instanceSeg + "."); w {
			e.flags |= flagWritable
		}
	}
	for n, r := range concrete {
		if !r.object() || r.declared {
			continue
		}
		if writableByTemplate(n, tmplWritable) {
			r.flags |= flagWritable
		}
	}
	t.nodes = sortedEntries(concrete)
	for i := range t.nodes {
		if !t.nodes[i].object() {
			t.leaves++
		}
	}
	for _, n := range informNames {
		i, _ := findEntry(t.nodes, n)
		t.inform = append(t.inform, int32(i))
	}
	for i := range t.tmpl {
		if e := &t.tmpl[i]; e.object() && strings.HasSuffix(e.name, "."+instanceSeg+".") {
			t.skel[e.name] = t.skeleton(e.name)
		}
	}
	return t, nil
}

// writableByTemplate decides the writability of a concrete object no
// <Object> element describes: an instance takes that of its "{i}" object
// (it can be deleted), a table that of its "{i}" entries (it can be added
// to).
func writableByTemplate(obj string, tmplWritable func(string) (bool, bool)) bool {
	vs := variants(obj)
	for _, v := range vs[1:] {
		if w, ok := tmplWritable(v); ok {
			return w
		}
	}
	for _, v := range vs {
		if w, ok := tmplWritable(v + instanceSeg + "."); ok {
			return w
		}
	}
	return false
}

func sortedEntries(m map[string]*rawEntry) []entry {
	out := make([]entry, 0, len(m))
	for _, r := range m {
		out = append(out, r.entry)
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	return out
}

// skeleton lists the nodes of a new instance of the table template key
// ("X.{i}."): every leaf and object below it whose name has no further
// "{i}", plus the (empty) nested tables, named relative to the instance.
func (t *Template) skeleton(key string) []entry {
	rel := map[string]entry{}
	addObj := func(r string) {
		if _, ok := rel[r]; ok {
			return
		}
		e, _ := t.Lookup(key + r)
		rel[r] = entry{name: r, flags: flagObject | boolFlag(e.Writable, flagWritable)}
	}
	lo, hi := prefixRange(t.tmpl, key)
	for _, e := range t.tmpl[lo:hi] {
		r := e.name[len(key):]
		if k := strings.Index(r, instanceSeg); k >= 0 {
			r = r[:k]
			if r == "" {
				continue
			}
			addObj(r)
		} else if e.object() {
			addObj(r)
		} else {
			e.name = r
			rel[r] = e
		}
		ancestors(r, addObj)
	}
	out := make([]entry, 0, len(rel))
	for _, e := range rel {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	return out
}

func boolFlag(b bool, f uint8) uint8 {
	if b {
		return f
	}
	return 0
}
