package tree

import "strings"

// Match returns the sorted names of leaf parameters matching pattern, in
// which "{i}" matches one numeric path segment and "*" any one segment (a
// trailing "*" also matches any rest of the name).
//
// A pattern ending in "." matches every leaf below it, as if it ended in
// ".*".
func (d *Tree) Match(pattern string) []string {
	if pattern == "" {
		return nil
	}
	if strings.HasSuffix(pattern, ".") {
		pattern += "*"
	}
	segs := strings.Split(pattern, ".")
	// The segments before the first wildcard narrow the walk to a range.
	prefix := ""
	for _, s := range segs[:len(segs)-1] {
		if s == "*" || s == instanceSeg {
			break
		}
		prefix += s + "."
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	var out []string
	d.walk(prefix, func(ti, ai int) bool {
		if !d.isLeaf(ti, ai) {
			return true
		}
		name := d.t.nodes[max(ti, 0)].name
		if ai >= 0 {
			name = d.ov.added[ai].name
		}
		if matchSegs(segs, name) {
			out = append(out, name)
		}
		return true
	})
	return out
}

func matchSegs(segs []string, name string) bool {
	for i, s := range segs {
		if name == "" {
			return false
		}
		seg, rest, _ := strings.Cut(name, ".")
		switch {
		case s == "*" && i == len(segs)-1:
			return true
		case s == "*":
		case s == instanceSeg:
			if !isDigits(seg) {
				return false
			}
		case s != seg:
			return false
		}
		name = rest
	}
	return name == ""
}
