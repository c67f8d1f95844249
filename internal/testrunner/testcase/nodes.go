package testcase

import (
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Tags a case may carry, explicitly or resolved from plain scalars. The
// rest of YAML's tags (!!binary, !!merge, !!set, ...) and any local tag are
// refused: a case is data, not a serialised object graph.
var scalarTags = map[string]bool{
	"!!str": true, "!!int": true, "!!float": true, "!!bool": true, "!!null": true, "!!timestamp": true,
}

// checkNodes walks the whole tree before decoding and reports anchors,
// aliases (the billion-laughs attack and friends), merge keys and tags a
// case does not use. It reports false when any was found.
func checkNodes(n *yaml.Node, path *fieldPath, p *problems) bool {
	ok := true
	if n.Kind == yaml.AliasNode {
		p.atPath(path, n.Line, "aliases (*%s) are not allowed in a case document", n.Value)
		return false
	}
	if n.Anchor != "" {
		p.atPath(path, n.Line, "anchors (&%s) are not allowed in a case document", n.Anchor)
		ok = false
	}
	tag := n.ShortTag()
	switch n.Kind {
	case yaml.ScalarNode:
		if tag == "!!merge" {
			p.atPath(path, n.Line, "merge keys (<<) are not allowed in a case document")
			ok = false
		} else if !scalarTags[tag] {
			p.atPath(path, n.Line, "tag %s is not allowed in a case document", tag)
			ok = false
		}
	case yaml.MappingNode:
		if tag != "!!map" {
			p.atPath(path, n.Line, "tag %s is not allowed on a mapping", tag)
			ok = false
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			kp := path
			if k.Kind == yaml.ScalarNode {
				kp = path.key(k.Value)
			}
			ok = checkNodes(k, kp, p) && ok
			ok = checkNodes(v, kp, p) && ok
		}
	case yaml.SequenceNode:
		if tag != "!!seq" {
			p.atPath(path, n.Line, "tag %s is not allowed on a list", tag)
			ok = false
		}
		for i, c := range n.Content {
			ok = checkNodes(c, path.index(i), p) && ok
		}
	}
	return ok
}

// isNull reports whether n is a null scalar (~, null, or nothing at all).
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe names the kind of a node for "must be X, got Y" problems.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!int", "!!float":
			return "a number"
		case "!!bool":
			return "a boolean"
		case "!!null":
			return "null"
		}
		return "a string"
	}
	return "something else"
}

// keyPath appends a mapping key to a field path, quoting keys that are not
// plain words so a path stays unambiguous.
func keyPath(path, key string) string {
	return (&fieldPath{seg: path}).key(key).String()
}

// fieldPath is a field path spelled out only when a problem needs it: a
// deeply nested document would otherwise cost time quadratic in its depth.
// The nil *fieldPath is the document root.
type fieldPath struct {
	parent *fieldPath
	seg    string // ".key", "[3]", "[\"odd key\"]", or a whole path at the root
}

func (p *fieldPath) key(k string) *fieldPath {
	if isWord(k) {
		return &fieldPath{p, "." + k}
	}
	return &fieldPath{p, "[" + strconv.Quote(k) + "]"}
}

func (p *fieldPath) index(i int) *fieldPath {
	return &fieldPath{p, "[" + strconv.Itoa(i) + "]"}
}

func (p *fieldPath) String() string {
	var segs []string
	for q := p; q != nil; q = q.parent {
		segs = append(segs, q.seg)
	}
	slices.Reverse(segs)
	return strings.TrimPrefix(strings.Join(segs, ""), ".")
}

func isWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
