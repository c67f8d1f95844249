package tree

import (
	"slices"
	"sort"
	"strings"
	"sync"

	"cpesuite/internal/cwmp"
)

// Tree is one device's view of a Template: the template plus this device's
// changed values and attributes, added instances and deleted objects. It is
// safe for concurrent use.
//
// A tree that was never written costs one small allocation: the overlay
// holding its differences is created by the first write.
type Tree struct {
	mu      sync.RWMutex
	t       *Template
	resolve func(name string) (string, bool)
	ov      *overlay
}

// overlay is what a device changed. Everything is a sorted slice rather
// than a map: a few dozen differences per device are the rule, and a slice
// costs a fraction of a map's memory and merges with the template in name
// order without sorting.
type overlay struct {
	// mods are template leaves whose value, type or notification differ
	// from the template, by template index.
	mods []mod
	// added are the nodes of added instances and parameters, sorted by
	// name. Their values are changed in place.
	added []entry
	// deleted are object prefixes hiding the template nodes under them;
	// none is under another. They never hide added nodes.
	deleted []string
}

type mod struct {
	idx   int32
	typ   Type
	notif uint8
	value string
}

// maxAdded bounds the nodes one device can add, so that an ACS looping on
// AddObject cannot take the memory of the whole process (9004): some 2 MB
// per device at most.
const maxAdded = 20_000

// New returns a tree with no differences from t.
func New(t *Template) *Tree { return &Tree{t: t} }

// Template returns the template the tree is built on.
func (d *Tree) Template() *Template { return d.t }

// Clone returns an independent copy with the same differences. The
// resolver is not copied: it belongs to the device that installed it.
func (d *Tree) Clone() *Tree {
	d.mu.RLock()
	defer d.mu.RUnlock()
	c := &Tree{t: d.t}
	if d.ov != nil {
		c.ov = &overlay{
			mods:    slices.Clone(d.ov.mods),
			added:   slices.Clone(d.ov.added),
			deleted: slices.Clone(d.ov.deleted),
		}
	}
	return c
}

// SetResolver installs a function consulted for the current value of a
// parameter before the stored one (uptime, local time); ok=false falls
// through to the stored value.
//
// The resolver is called without the tree's lock held, so it may read the
// tree; it must be safe for concurrent use.
func (d *Tree) SetResolver(fn func(name string) (value string, ok bool)) {
	d.mu.Lock()
	d.resolve = fn
	d.mu.Unlock()
}

// Overrides is the number of entries the tree keeps beside its template
// (for memory accounting).
func (d *Tree) Overrides() int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.ov == nil {
		return 0
	}
	return len(d.ov.mods) + len(d.ov.added) + len(d.ov.deleted)
}

// Reading. The helpers below run with the lock held.

// hiddenBy returns the deleted prefix hiding name, if any. Deleted prefixes
// do not nest, so only the greatest one not after name can be its prefix.
func (d *Tree) hiddenBy(name string) (string, bool) {
	if d.ov == nil || len(d.ov.deleted) == 0 {
		return "", false
	}
	del := d.ov.deleted
	i := sort.Search(len(del), func(i int) bool { return del[i] > name })
	if i > 0 && strings.HasPrefix(name, del[i-1]) {
		return del[i-1], true
	}
	return "", false
}

// modOf returns the position of template node idx in mods, or where it
// would be inserted.
func (ov *overlay) modOf(idx int) (int, bool) {
	i := sort.Search(len(ov.mods), func(i int) bool { return int(ov.mods[i].idx) >= idx })
	return i, i < len(ov.mods) && int(ov.mods[i].idx) == idx
}

// tparam is template node i as this device sees it.
func (d *Tree) tparam(i int) Param {
	p := d.t.nodes[i].param()
	if d.ov != nil && !p.Object {
		if m, ok := d.ov.modOf(i); ok {
			md := &d.ov.mods[m]
			p.Value, p.Type, p.Notification = md.value, md.typ, int(md.notif)
		}
	}
	return p
}

// node locates a visible node: ti is its template index or -1, ai its index
// in added or -1.
func (d *Tree) node(name string) (ti, ai int, ok bool) {
	if d.ov != nil {
		if i, ok := findEntry(d.ov.added, name); ok {
			return -1, i, true
		}
	}
	if i, ok := findEntry(d.t.nodes, name); ok {
		if _, hidden := d.hiddenBy(name); !hidden {
			return i, -1, true
		}
	}
	return -1, -1, false
}

func (d *Tree) paramAt(ti, ai int) Param {
	if ai >= 0 {
		return d.ov.added[ai].param()
	}
	return d.tparam(ti)
}

// walk calls fn for every visible node whose name starts with prefix, in
// name order, merging the template with the added nodes and skipping the
// deleted ones; fn returns false to stop. fn sees the template index (or
// -1) and the added index (or -1) of each node.
func (d *Tree) walk(prefix string, fn func(ti, ai int) bool) {
	lo, hi := prefixRange(d.t.nodes, prefix)
	var added []entry
	alo, ahi := 0, 0
	if d.ov != nil {
		added = d.ov.added
		alo, ahi = prefixRange(added, prefix)
	}
	i, a := lo, alo
	for i < hi || a < ahi {
		if a < ahi && (i >= hi || added[a].name <= d.t.nodes[i].name) {
			if i < hi && added[a].name == d.t.nodes[i].name {
				i++ // cannot happen through the API; the added node wins
			}
			if !fn(-1, a) {
				return
			}
			a++
			continue
		}
		if p, hidden := d.hiddenBy(d.t.nodes[i].name); hidden {
			// Skip the whole deleted subtree at once.
			_, end := prefixRange(d.t.nodes, p)
			i = max(end, i+1)
			continue
		}
		if !fn(i, -1) {
			return
		}
		i++
	}
}

func (d *Tree) isLeaf(ti, ai int) bool {
	if ai >= 0 {
		return !d.ov.added[ai].object()
	}
	return !d.t.nodes[ti].object()
}

// leaves appends every visible leaf under prefix.
func (d *Tree) leaves(out []Param, prefix string) []Param {
	d.walk(prefix, func(ti, ai int) bool {
		if d.isLeaf(ti, ai) {
			out = append(out, d.paramAt(ti, ai))
		}
		return true
	})
	return out
}

// rlock takes the read lock and returns the resolver to apply, after
// unlocking, with resolved.
func (d *Tree) rlock() func(string) (string, bool) {
	d.mu.RLock()
	return d.resolve
}

// resolved replaces the stored values of leaves by the resolver's. It runs
// without the lock so that a resolver may read the tree.
func resolved(ps []Param, fn func(string) (string, bool)) []Param {
	if fn == nil {
		return ps
	}
	for i := range ps {
		if !ps[i].Object {
			if v, ok := fn(ps[i].Name); ok {
				ps[i].Value = v
			}
		}
	}
	return ps
}

// Get returns one parameter or object.
func (d *Tree) Get(name string) (Param, bool) {
	res := d.rlock()
	ti, ai, ok := d.node(name)
	var p Param
	if ok {
		p = d.paramAt(ti, ai)
	}
	d.mu.RUnlock()
	if ok && !p.Object && res != nil {
		if v, ok := res(name); ok {
			p.Value = v
		}
	}
	return p, ok
}

// Values answers GetParameterValues: each name is a parameter or a partial
// path ending in "." (all leaves below it; "" is the whole tree). An unknown
// name is *Error 9005.
func (d *Tree) Values(names []string) ([]Param, error) {
	res := d.rlock()
	var out []Param
	for _, n := range names {
		if n != "" {
			ti, ai, ok := d.node(n)
			if !ok {
				d.mu.RUnlock()
				return nil, errorf(cwmp.FaultInvalidParameterName, n, "no such parameter or object")
			}
			if d.isLeaf(ti, ai) {
				out = append(out, d.paramAt(ti, ai))
				continue
			}
		}
		out = d.leaves(out, n)
	}
	d.mu.RUnlock()
	return resolved(out, res), nil
}

// Names answers GetParameterNames: path "" or a partial path lists objects
// (names ending in ".") and parameters below it, all levels or, with
// nextLevel, the immediate children only; a parameter path lists itself
// (nextLevel true on a parameter is *Error 9003). Unknown: *Error 9005.
//
// As TR-069 A.3.2.3 asks, a partial path without nextLevel lists the object
// itself first, and "" with nextLevel lists the root object only. Values
// are the stored ones: the resolver is not consulted.
func (d *Tree) Names(path string, nextLevel bool) ([]Param, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if path == "" {
		if nextLevel {
			ti, ai, _ := d.node(d.t.root)
			return []Param{d.paramAt(ti, ai)}, nil
		}
		return d.names("", false), nil
	}
	ti, ai, ok := d.node(path)
	if !ok {
		return nil, errorf(cwmp.FaultInvalidParameterName, path, "no such parameter or object")
	}
	if d.isLeaf(ti, ai) {
		if nextLevel {
			return nil, errorf(cwmp.FaultCPEInvalidArguments, path, "NextLevel true on a parameter")
		}
		return []Param{d.paramAt(ti, ai)}, nil
	}
	return d.names(path, nextLevel), nil
}

func (d *Tree) names(path string, nextLevel bool) []Param {
	var out []Param
	d.walk(path, func(ti, ai int) bool {
		name := d.t.nodes[max(ti, 0)].name
		if ai >= 0 {
			name = d.ov.added[ai].name
		}
		if nextLevel {
			rest := name[len(path):]
			if rest == "" {
				return true
			}
			if i := strings.IndexByte(rest, '.'); i >= 0 && i != len(rest)-1 {
				return true
			}
		}
		out = append(out, d.paramAt(ti, ai))
		return true
	})
	return out
}

// List returns every leaf parameter whose name starts with prefix, sorted.
func (d *Tree) List(prefix string) []Param {
	res := d.rlock()
	out := d.leaves(nil, prefix)
	d.mu.RUnlock()
	return resolved(out, res)
}

// Search returns up to limit leaf parameters whose name contains
// nameContains and whose value contains valueContains (case-insensitive;
// empty matches all), in name order. A limit of 0 or less means 100.
func (d *Tree) Search(nameContains, valueContains string, limit int) []Param {
	if limit <= 0 {
		limit = 100
	}
	res := d.rlock()
	var cands []Param
	d.walk("", func(ti, ai int) bool {
		if !d.isLeaf(ti, ai) {
			return true
		}
		p := d.paramAt(ti, ai)
		if !containsFold(p.Name, nameContains) {
			return true
		}
		cands = append(cands, p)
		// Without a value filter the first limit names are the answer;
		// with one, values are only known once resolved, after unlocking.
		return valueContains != "" || len(cands) < limit
	})
	d.mu.RUnlock()
	cands = resolved(cands, res)
	if valueContains == "" {
		return cands
	}
	out := cands[:0]
	for _, p := range cands {
		if containsFold(p.Value, valueContains) {
			out = append(out, p)
			if len(out) == limit {
				break
			}
		}
	}
	return slices.Clip(out)
}

// InformParams returns the parameters marked inform="true" in the tree file
// (the Inform's forced list: DeviceSummary or SpecVersion, versions,
// ProvisioningCode, ConnectionRequestURL, ParameterKey, ExternalIPAddress),
// with current values, in file order. Those under a deleted object are
// left out.
func (d *Tree) InformParams() []Param {
	res := d.rlock()
	out := make([]Param, 0, len(d.t.inform))
	for _, i := range d.t.inform {
		if _, hidden := d.hiddenBy(d.t.nodes[i].name); !hidden {
			out = append(out, d.tparam(int(i)))
		}
	}
	d.mu.RUnlock()
	return resolved(out, res)
}
