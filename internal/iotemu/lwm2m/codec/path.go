package codec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Path is an LwM2M path /o/i/r/ri; -1 marks an absent level (so "/3/0" is
// {3,0,-1,-1}).
type Path struct{ Object, Instance, Resource, ResourceInstance int32 }

// Root is the path of the whole client, the base of the composite
// operations. ParsePath does not accept it: no single-target operation
// addresses "/".
var Root = Path{-1, -1, -1, -1}

// maxID is the largest identifier the 16-bit LwM2M id space holds.
const maxID = 65535

// ParsePath parses "/3", "/3/0", "/3/0/1" or "/3/0/1/2".
func ParsePath(s string) (Path, error) {
	if !strings.HasPrefix(s, "/") || len(s) == 1 {
		return Path{}, fmt.Errorf("invalid path %q", s)
	}
	p := Root
	ids := [4]*int32{&p.Object, &p.Instance, &p.Resource, &p.ResourceInstance}
	rest := s[1:]
	for i := 0; ; i++ {
		if i == len(ids) {
			return Path{}, fmt.Errorf("invalid path %q: more than 4 levels", s)
		}
		seg, tail, more := strings.Cut(rest, "/")
		id, err := parseID(seg)
		if err != nil {
			return Path{}, fmt.Errorf("invalid path %q: %w", s, err)
		}
		*ids[i] = int32(id)
		if !more {
			return p, nil
		}
		rest = tail
	}
}

// parseID parses one decimal identifier; strconv alone would accept signs.
func parseID(s string) (uint32, error) {
	if s == "" {
		return 0, errors.New("empty identifier")
	}
	if len(s) > 5 {
		return 0, fmt.Errorf("identifier %q out of range", s)
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, fmt.Errorf("identifier %q is not a number", s)
		}
	}
	n, _ := strconv.ParseUint(s, 10, 32)
	if n > maxID {
		return 0, fmt.Errorf("identifier %q out of range", s)
	}
	return uint32(n), nil
}

// String returns the path as "/3/0/1"; Root is "/".
func (p Path) String() string {
	d := p.Depth()
	if d == 0 {
		return "/"
	}
	var b strings.Builder
	ids := p.ids()
	for _, id := range ids[:d] {
		b.WriteByte('/')
		b.WriteString(strconv.FormatInt(int64(id), 10))
	}
	return b.String()
}

func (p Path) ids() [4]int32 {
	return [4]int32{p.Object, p.Instance, p.Resource, p.ResourceInstance}
}

// Depth returns the number of levels, 1 (object) to 4 (resource instance),
// or 0 for Root.
func (p Path) Depth() int {
	for i, id := range p.ids() {
		if id < 0 {
			return i
		}
	}
	return 4
}

// valid reports whether the levels below the depth are all absent and the
// present ones fit in 16 bits, which ParsePath guarantees but a Path
// literal may not.
func (p Path) valid() bool {
	ids := p.ids()
	d := p.Depth()
	for i, id := range ids {
		if i < d && id > maxID {
			return false
		}
		if i >= d && id != -1 {
			return false
		}
	}
	return true
}

// Contains reports whether q is p or lies below p.
func (p Path) Contains(q Path) bool {
	pd := p.Depth()
	if q.Depth() < pd {
		return false
	}
	pi, qi := p.ids(), q.ids()
	for i := 0; i < pd; i++ {
		if pi[i] != qi[i] {
			return false
		}
	}
	return true
}

// child returns p extended by one level.
func (p Path) child(id uint16) Path {
	switch p.Depth() {
	case 0:
		p.Object = int32(id)
	case 1:
		p.Instance = int32(id)
	case 2:
		p.Resource = int32(id)
	default:
		p.ResourceInstance = int32(id)
	}
	return p
}
