package tree

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"cpesuite/internal/cwmp"
)

// Writing. Strings kept in the overlay are copied (strings.Clone) or built
// here: a value sliced from a decoded SOAP body would otherwise keep the
// whole body alive for the life of the device.

func (d *Tree) overlay() *overlay {
	if d.ov == nil {
		d.ov = &overlay{}
	}
	return d.ov
}

// editMod applies f to the mod of template leaf ti, creating it from the
// template first, and drops it again when f leaves it equal to the
// template, so that writing a value back costs nothing.
func (d *Tree) editMod(ti int, f func(m *mod)) {
	ov := d.overlay()
	i, ok := ov.modOf(ti)
	if !ok {
		e := &d.t.nodes[ti]
		ov.mods = slices.Insert(ov.mods, i, mod{idx: int32(ti), typ: e.typ, notif: e.notif, value: e.value})
	}
	m := &ov.mods[i]
	f(m)
	if e := &d.t.nodes[ti]; m.typ == e.typ && m.notif == e.notif && m.value == e.value {
		ov.mods = slices.Delete(ov.mods, i, i+1)
	}
}

// setValue stores a value (and type) for a visible leaf.
func (d *Tree) setValue(ti, ai int, value string, typ Type) {
	if ai >= 0 {
		e := &d.ov.added[ai]
		e.value, e.typ = value, typ
		return
	}
	d.editMod(ti, func(m *mod) { m.value, m.typ = value, typ })
}

func faultFor(code cwmp.FaultCode, name, msg string) cwmp.SPVFault {
	return cwmp.SPVFault{ParameterName: name, FaultCode: code, FaultString: code.String() + ": " + msg}
}

// SetValues writes all values or none (TR-069 SetParameterValues is
// atomic). Unknown names are 9005, values that do not fit the type 9007,
// read-only parameters 9008 (with CheckWritable). The error is *SetFaults.
// Changes lists the parameters whose value actually changed.
//
// Every refused parameter gets its fault, checked in the order 9005, 9003
// (the same name twice, which TR-069 forbids), 9008, 9006, 9007. A
// non-empty Type becomes the parameter's type; with CheckType it must be
// the current one (compared without prefix, case-insensitively). A value
// equal to the stored one in its type ("true" over "1") is no change and
// is not stored.
func (d *Tree) SetValues(vals []Set, opts SetOptions) ([]Change, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	type target struct {
		ti, ai int
		typ    Type
	}
	targets := make([]target, len(vals))
	var faults []cwmp.SPVFault
	// A linear scan finds repeated names in the usual small requests; a
	// set keeps a large one from costing quadratic time.
	var seen map[string]bool
	if len(vals) > 16 {
		seen = make(map[string]bool, len(vals))
	}
	for k, s := range vals {
		var repeated bool
		if seen != nil {
			repeated = seen[s.Name]
			seen[s.Name] = true
		} else {
			repeated = slices.ContainsFunc(vals[:k], func(o Set) bool { return o.Name == s.Name })
		}
		ti, ai, ok := d.node(s.Name)
		if !ok || !d.isLeaf(ti, ai) {
			faults = append(faults, faultFor(cwmp.FaultInvalidParameterName, s.Name, "no such parameter"))
			continue
		}
		if repeated {
			faults = append(faults, faultFor(cwmp.FaultCPEInvalidArguments, s.Name, "parameter given more than once"))
			continue
		}
		p := d.paramAt(ti, ai)
		if opts.CheckWritable && !p.Writable {
			faults = append(faults, faultFor(cwmp.FaultNonWritableParameter, s.Name, "parameter is read-only"))
			continue
		}
		typ := p.Type
		if s.Type != "" {
			t, err := ParseType(s.Type)
			if err != nil {
				faults = append(faults, faultFor(cwmp.FaultInvalidParameterType, s.Name, err.Error()))
				continue
			}
			if opts.CheckType && t != p.Type {
				faults = append(faults, faultFor(cwmp.FaultInvalidParameterType, s.Name, "type is "+p.Type.XSD()+", not "+s.Type))
				continue
			}
			typ = t
		}
		if err := typ.Check(s.Value); err != nil {
			faults = append(faults, faultFor(cwmp.FaultInvalidParameterValue, s.Name, err.Error()))
			continue
		}
		targets[k] = target{ti, ai, typ}
	}
	if len(faults) > 0 {
		return nil, &SetFaults{Faults: faults}
	}
	var changes []Change
	for k, s := range vals {
		tg := targets[k]
		p := d.paramAt(tg.ti, tg.ai)
		same := tg.typ.sameValue(p.Value, s.Value)
		if same && tg.typ == p.Type {
			continue
		}
		v := strings.Clone(s.Value)
		d.setValue(tg.ti, tg.ai, v, tg.typ)
		if !same {
			changes = append(changes, Change{Name: p.Name, Value: v, Notification: p.Notification})
		}
	}
	return changes, nil
}

// SetNotification changes the notification attribute of a parameter, or of
// every parameter below a partial path. notification must be 0, 1 or 2
// (otherwise *Error 9003); "" is the whole tree. Unknown: *Error 9005.
func (d *Tree) SetNotification(name string, notification int) error {
	if notification < 0 || notification > 2 {
		return errorf(cwmp.FaultCPEInvalidArguments, name, "notification must be 0, 1 or 2, not %d", notification)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	n := uint8(notification)
	set := func(ti, ai int) {
		if ai >= 0 {
			d.ov.added[ai].notif = n
			return
		}
		if d.t.nodes[ti].notif == n && d.ov == nil {
			return
		}
		d.editMod(ti, func(m *mod) { m.notif = n })
	}
	if name != "" {
		ti, ai, ok := d.node(name)
		if !ok {
			return errorf(cwmp.FaultInvalidParameterName, name, "no such parameter or object")
		}
		if d.isLeaf(ti, ai) {
			set(ti, ai)
			return nil
		}
	}
	// Collect first: editMod changes the slices walk reads.
	type ref struct{ ti, ai int }
	var refs []ref
	d.walk(name, func(ti, ai int) bool {
		if d.isLeaf(ti, ai) {
			refs = append(refs, ref{ti, ai})
		}
		return true
	})
	for _, r := range refs {
		set(r.ti, r.ai)
	}
	return nil
}

// instances returns the instance numbers present in table (ending in
// "."). It jumps over each instance's subtree, so that adding to a table
// costs a binary search per instance rather than a visit per node.
func (d *Tree) instances(table string) []uint32 {
	var out []uint32
	scan := func(es []entry, template bool) {
		lo, hi := prefixRange(es, table)
		for i := lo; i < hi; {
			rest := es[i].name[len(table):]
			seg, _, dot := strings.Cut(rest, ".")
			n, err := strconv.ParseUint(seg, 10, 32)
			if !dot || !isDigits(seg) || err != nil {
				i++
				continue
			}
			inst := es[i].name[:len(table)+len(seg)+1]
			// Nodes added under a template instance do not make one: the
			// instance object itself, which sorts first, must be here.
			self := es[i].name == inst
			_, end := prefixRange(es[i:hi], inst)
			i += end
			if !self {
				continue
			}
			if template {
				if _, hidden := d.hiddenBy(inst); hidden {
					continue
				}
			}
			out = append(out, uint32(n))
		}
	}
	scan(d.t.nodes, true)
	if d.ov != nil {
		scan(d.ov.added, false)
	}
	return out
}

// updateCount refreshes the table's NumberOfEntries parameter, if the tree
// has one.
func (d *Tree) updateCount(table string) {
	ti, ai, ok := d.node(countNameFor(table))
	if !ok || !d.isLeaf(ti, ai) {
		return
	}
	p := d.paramAt(ti, ai)
	switch p.Type {
	case UnsignedInt, Int, Long, UnsignedLong:
	default:
		return
	}
	d.setValue(ti, ai, strconv.Itoa(len(d.instances(table))), p.Type)
}

// AddObject creates the next instance of the multi-instance object path
// (ending in "."), with the parameters of its {i} template at their
// template values, and returns the instance number. Not a multi-instance
// object: *Error 9005.
//
// The new instance holds every node of the template below "path{i}." whose
// name has no further "{i}"; nested tables are created empty. Its number is
// one more than the highest existing one, so the number of a deleted last
// instance is used again (the engine relies on it to rebuild
// PerConnectionResult tables from 1). The table's NumberOfEntries
// parameter, if any, is updated. The writable attribute of the table is not
// checked: the engine does that for the ACS, the operator may add anyway.
// More than 20,000 added nodes in the tree: *Error 9004.
func (d *Tree) AddObject(path string) (uint32, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !strings.HasSuffix(path, ".") {
		return 0, errorf(cwmp.FaultInvalidParameterName, path, "object name must end with \".\"")
	}
	ti, ai, ok := d.node(path)
	if !ok {
		return 0, errorf(cwmp.FaultInvalidParameterName, path, "no such object")
	}
	var skel []entry
	for _, v := range variants(path) {
		if skel = d.t.skel[v+instanceSeg+"."]; skel != nil {
			break
		}
	}
	if d.isLeaf(ti, ai) || skel == nil {
		return 0, errorf(cwmp.FaultInvalidParameterName, path, "not a multi-instance object")
	}
	n := uint32(0)
	for _, i := range d.instances(path) {
		if i >= n {
			if i == math.MaxUint32 {
				return 0, errorf(cwmp.FaultCPEResourcesExceeded, path, "no instance number left")
			}
			n = i + 1
		}
	}
	n = max(n, 1)
	ov := d.overlay()
	if len(ov.added)+len(skel) > maxAdded {
		return 0, errorf(cwmp.FaultCPEResourcesExceeded, path, "more than %d added parameters and objects", maxAdded)
	}
	prefix := path + strconv.FormatUint(uint64(n), 10) + "."
	if len(prefix)+maxRel(skel) > MaxNameLen {
		return 0, errorf(cwmp.FaultCPEResourcesExceeded, path, "names of the new instance would exceed %d characters", MaxNameLen)
	}
	// One string holds every name of the instance: one allocation instead
	// of one per node, freed together when the instance is deleted.
	var b strings.Builder
	total := 0
	for _, e := range skel {
		total += len(prefix) + len(e.name)
	}
	b.Grow(total)
	for _, e := range skel {
		b.WriteString(prefix)
		b.WriteString(e.name)
	}
	all := b.String()
	nodes := make([]entry, len(skel))
	off := 0
	for i, e := range skel {
		l := len(prefix) + len(e.name)
		e.name = all[off : off+l]
		off += l
		nodes[i] = e
	}
	// No added node has the new prefix yet, so the instance is one block.
	// If the prefix is that of a deleted template instance, it stays in
	// deleted: the template's nodes remain hidden, the added ones are not.
	at, _ := findEntry(ov.added, prefix)
	ov.added = slices.Insert(ov.added, at, nodes...)
	d.updateCount(path)
	return n, nil
}

func maxRel(skel []entry) int {
	m := 0
	for _, e := range skel {
		m = max(m, len(e.name))
	}
	return m
}

// DeleteObject removes an object instance path (ending in ".") and
// everything under it. Unknown: *Error 9005.
//
// A path that is not an instance ("Device.Hosts.") is also *Error 9005, as
// TR-069 A.3.2.7 only deletes instances. As with AddObject, writability is
// the caller's to check. The table's NumberOfEntries parameter, if any, is
// updated.
func (d *Tree) DeleteObject(path string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	table := parent(path)
	if !strings.HasSuffix(path, ".") || table == "" || !isDigits(path[len(table):len(path)-1]) {
		return errorf(cwmp.FaultInvalidParameterName, path, "not an object instance")
	}
	if _, _, ok := d.node(path); !ok {
		return errorf(cwmp.FaultInvalidParameterName, path, "no such object")
	}
	ov := d.overlay()
	lo, hi := prefixRange(ov.added, path)
	ov.added = slices.Delete(ov.added, lo, hi)
	if tlo, thi := prefixRange(d.t.nodes, path); tlo < thi {
		mlo, _ := ov.modOf(tlo)
		mhi, _ := ov.modOf(thi)
		ov.mods = slices.Delete(ov.mods, mlo, mhi)
		ov.deleted = slices.DeleteFunc(ov.deleted, func(p string) bool { return strings.HasPrefix(p, path) })
		p := strings.Clone(path)
		at, _ := slices.BinarySearch(ov.deleted, p)
		ov.deleted = slices.Insert(ov.deleted, at, p)
	}
	d.updateCount(table)
	return nil
}

// AddParameter adds a leaf whose type, writability and notification come
// from the template entry of the same name with instance numbers generalised
// to {i}; its parent object must exist. No template entry: *Error 9005.
//
// The most specific template wins: "A.1.B.{i}.X" before "A.{i}.B.{i}.X"
// for "A.1.B.2.X".
//
// A name that already exists is *Error 9003 (use SetValues), a value that
// does not fit the type *Error 9007.
func (d *Tree) AddParameter(name, value string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if msg := checkName(name); msg != "" || strings.HasSuffix(name, ".") {
		if msg == "" {
			msg = "a parameter name does not end with \".\""
		}
		return errorf(cwmp.FaultInvalidParameterName, name, "%s", msg)
	}
	if _, _, ok := d.node(name); ok {
		return errorf(cwmp.FaultCPEInvalidArguments, name, "parameter exists already")
	}
	pti, pai, ok := d.node(parent(name))
	if !ok || d.isLeaf(pti, pai) {
		return errorf(cwmp.FaultInvalidParameterName, name, "parent object %s does not exist", parent(name))
	}
	ti, found := -1, false
	for _, v := range variants(name)[1:] {
		if ti, found = findEntry(d.t.tmpl, v); found {
			break
		}
	}
	if !found || d.t.tmpl[ti].object() {
		return errorf(cwmp.FaultInvalidParameterName, name, "no template entry for this name")
	}
	e := d.t.tmpl[ti]
	if err := e.typ.Check(value); err != nil {
		return errorf(cwmp.FaultInvalidParameterValue, name, "%s", err.Error())
	}
	ov := d.overlay()
	if len(ov.added) >= maxAdded {
		return errorf(cwmp.FaultCPEResourcesExceeded, name, "more than %d added parameters and objects", maxAdded)
	}
	e.name, e.value = strings.Clone(name), strings.Clone(value)
	e.flags &^= flagInform
	at, _ := findEntry(ov.added, e.name)
	ov.added = slices.Insert(ov.added, at, e)
	return nil
}
