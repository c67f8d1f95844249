package tree

import (
	"strconv"
	"strings"
)

// MaxNameLen is the longest parameter name accepted (TR-069 A.3.2.1 limits
// parameter names to 256 characters).
const MaxNameLen = 256

// instanceSeg is the segment that stands for any instance number in a
// template name.
const instanceSeg = "{i}"

// checkName validates the syntax of a full parameter or object name: one
// root segment, then segments of letters, digits, "_" and "-", instance
// numbers (1 to 4294967295, no leading zero) or "{i}" right after a table
// name. Instance numbers may precede the first "{i}" but not follow it:
// "InternetGatewayDevice.LANDevice.1.Hosts.Host.{i}.IPAddress" is the
// template of the hosts of LAN device 1, and every template is then one of
// the variants of the concrete names it describes.
func checkName(name string) string {
	if name == "" {
		return "empty name"
	}
	if len(name) > MaxNameLen {
		return "name longer than " + strconv.Itoa(MaxNameLen) + " characters"
	}
	object := name[len(name)-1] == '.'
	body := name
	if object {
		body = name[:len(name)-1]
	}
	segs := 0
	prevTable := false // the previous segment can be followed by an instance
	hasI := false
	last := ""
	for body != "" || segs == 0 {
		seg := body
		if i := strings.IndexByte(body, '.'); i >= 0 {
			seg, body = body[:i], body[i+1:]
			if body == "" {
				return "empty segment"
			}
		} else {
			body = ""
		}
		if seg == "" {
			return "empty segment"
		}
		isI, isNum := seg == instanceSeg, isDigits(seg)
		switch {
		case isI, isNum:
			if !prevTable {
				return "instance segment " + strconv.Quote(seg) + " must follow an object name"
			}
			if isNum {
				if hasI {
					return "instance number " + strconv.Quote(seg) + " after {i}"
				}
				if seg[0] == '0' {
					return "instance number " + strconv.Quote(seg) + " must be 1 or more without leading zero"
				}
				if _, err := strconv.ParseUint(seg, 10, 32); err != nil {
					return "instance number " + strconv.Quote(seg) + " out of range"
				}
			}
			hasI = hasI || isI
			prevTable = false
		default:
			for i := 0; i < len(seg); i++ {
				if c := seg[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
					return "invalid character " + strconv.QuoteRune(rune(c)) + " in segment " + strconv.Quote(seg)
				}
			}
			// The root is not a table: "Device.1." is no instance.
			prevTable = segs > 0
		}
		segs++
		last = seg
	}
	if !object {
		if segs < 2 {
			return "parameter name needs an object and a parameter segment"
		}
		if last == instanceSeg || isDigits(last) {
			return "parameter name ends with an instance segment; objects end with \".\""
		}
	}
	return ""
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// variants returns the template names that can describe the concrete
// name, most specific first: name itself, then name with its last instance
// number replaced by "{i}", then its last two, and so on up to all of them.
func variants(name string) []string {
	var nums [][2]int // start and end of each instance number segment
	start := 0
	for i := 0; i <= len(name); i++ {
		if i == len(name) || name[i] == '.' {
			if isDigits(name[start:i]) {
				nums = append(nums, [2]int{start, i})
			}
			start = i + 1
		}
	}
	out := make([]string, 0, len(nums)+1)
	out = append(out, name)
	for k := len(nums) - 1; k >= 0; k-- {
		var b strings.Builder
		b.Grow(len(name) + 3*(len(nums)-k))
		prev := 0
		for _, n := range nums[k:] {
			b.WriteString(name[prev:n[0]])
			b.WriteString(instanceSeg)
			prev = n[1]
		}
		b.WriteString(name[prev:])
		out = append(out, b.String())
	}
	return out
}

// parent returns the object a node belongs to: "A.B." for "A.B.C" and for
// "A.B.C."; "" for the root object.
func parent(name string) string {
	body := strings.TrimSuffix(name, ".")
	i := strings.LastIndexByte(body, '.')
	if i < 0 {
		return ""
	}
	return body[:i+1]
}

// ancestors calls fn for every object above name, outermost first: "A.",
// "A.B." for "A.B.C" (and for "A.B.C.").
func ancestors(name string, fn func(obj string)) {
	end := len(name)
	if strings.HasSuffix(name, ".") {
		end--
	}
	for i := 0; i < end; i++ {
		if name[i] == '.' {
			fn(name[:i+1])
		}
	}
}

// countNameFor returns the NumberOfEntries parameter of a table:
// "Device.Hosts.HostNumberOfEntries" for "Device.Hosts.Host.".
func countNameFor(table string) string {
	return strings.TrimSuffix(table, ".") + "NumberOfEntries"
}

// containsFold reports whether sub occurs in s, ignoring ASCII case; it
// does not allocate, as Search runs it over every parameter of a tree.
func containsFold(s, sub string) bool {
	if sub == "" {
		return true
	}
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}
