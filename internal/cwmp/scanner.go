package cwmp

import (
	"fmt"
	"strings"
)

// Limits of the decoder. They bound the memory and stack an untrusted peer
// can make the decoder use; the input size itself is limited by the caller
// (the ACS reads bodies through an http.MaxBytesReader).
const (
	// MaxDepth is the deepest element nesting accepted. CWMP needs about 8
	// (Envelope, Body, DUStateChangeComplete, Results, Fault, FaultCode).
	MaxDepth = 32
	// MaxAttrs is the largest number of attributes, namespace declarations
	// included, on one element.
	MaxAttrs = 64
	// MaxElements is the largest number of elements in one envelope, about
	// 20 times what a full GetParameterValuesResponse of a large gateway has.
	MaxElements = 1 << 20
)

type tokenKind uint8

const (
	tokEOF tokenKind = iota
	tokStart
	tokEnd
	tokText
)

// attr is an attribute of the current start tag. value is raw: entities are
// expanded only when a caller asks for the value.
type attr struct {
	prefix, local, value string
	offset               int
}

// nsBinding is a namespace declaration in scope; depth is the nesting level
// of the element that declared it.
type nsBinding struct {
	prefix, uri string
	depth       int
}

// scanner is a pull tokenizer over one string. Tokens and their names,
// attribute values and text are substrings of src, so scanning allocates
// nothing once the buffers below have grown. It checks well-formedness
// (matching end tags, quoting, one root element) and the limits, skips
// comments, processing instructions and the XML declaration, and rejects
// markup declarations.
type scanner struct {
	src string
	pos int

	// The current token.
	kind   tokenKind
	prefix string // start and end tags
	local  string // start and end tags
	empty  bool   // the start tag was self-closing
	text   string // text: raw, or literal for CDATA
	cdata  bool
	// special is set for text holding '&' or CR, which needs unescape.
	special bool
	offset  int // where the token starts in src

	attrs []attr
	open  []string // qualified names of the open elements, outermost first
	ns    []nsBinding
	elems int
	// popEmpty means the last start tag was self-closing: it is closed at
	// the next call so that its namespace declarations are visible until then.
	popEmpty bool
	rootDone bool

	attrBuf [8]attr
	openBuf [MaxDepth]string
	nsBuf   [8]nsBinding
}

func (s *scanner) init(src string) {
	s.src = src
	s.attrs = s.attrBuf[:0]
	s.open = s.openBuf[:0]
	s.ns = s.nsBuf[:0]
}

func (s *scanner) syntaxError(offset int, format string, args ...any) error {
	return &SyntaxError{Offset: offset, Msg: fmt.Sprintf(format, args...)}
}

// depth is the number of open elements; inside a start tag's element it
// counts that element.
func (s *scanner) depth() int { return len(s.open) }

// next advances to the next token. At the end of the input it sets tokEOF,
// or fails if elements are still open.
func (s *scanner) next() error {
	if s.popEmpty {
		s.popEmpty = false
		s.closeElement()
	}
	for {
		if s.pos >= len(s.src) {
			if len(s.open) > 0 {
				return s.syntaxError(s.pos, "unexpected end of input inside <%s>", s.open[len(s.open)-1])
			}
			if !s.rootDone {
				return s.syntaxError(s.pos, "no root element")
			}
			s.kind = tokEOF
			return nil
		}
		if s.src[s.pos] != '<' {
			// One pass finds the end of the text and notes whether it
			// needs unescaping; CWMP texts are short, so a plain loop beats
			// several IndexByte calls.
			start, end, special := s.pos, s.pos, false
			for end < len(s.src) && s.src[end] != '<' {
				c := s.src[end]
				special = special || c == '&' || c == '\r'
				end++
			}
			s.pos = end
			text := s.src[start:end]
			if len(s.open) == 0 {
				if !isBlank(text) {
					return s.syntaxError(start, "text outside the root element")
				}
				continue
			}
			s.kind, s.text, s.cdata, s.special, s.offset = tokText, text, false, special, start
			return nil
		}
		rest := s.src[s.pos+1:]
		switch {
		case strings.HasPrefix(rest, "/"):
			return s.endTag()
		case strings.HasPrefix(rest, "?"):
			i := strings.Index(rest[1:], "?>")
			if i < 0 {
				return s.syntaxError(s.pos, "unterminated processing instruction")
			}
			s.pos += 1 + 1 + i + 2
		case strings.HasPrefix(rest, "!--"):
			i := strings.Index(rest[3:], "-->")
			if i < 0 {
				return s.syntaxError(s.pos, "unterminated comment")
			}
			s.pos += 1 + 3 + i + 3
		case strings.HasPrefix(rest, "![CDATA["):
			start := s.pos
			body := rest[len("![CDATA["):]
			i := strings.Index(body, "]]>")
			if i < 0 {
				return s.syntaxError(start, "unterminated CDATA section")
			}
			if len(s.open) == 0 {
				return s.syntaxError(start, "CDATA outside the root element")
			}
			s.pos = start + 1 + len("![CDATA[") + i + 3
			s.kind, s.text, s.cdata, s.special, s.offset = tokText, body[:i], true, false, start
			return nil
		case strings.HasPrefix(rest, "!"):
			return &SyntaxError{Offset: s.pos, Msg: "markup declaration " + clip(rest, 12), Err: ErrDTD}
		default:
			return s.startTag()
		}
	}
}

func (s *scanner) startTag() error {
	start := s.pos
	if s.rootDone {
		return s.syntaxError(start, "content after the root element")
	}
	name, p := s.name(start + 1)
	if name == "" {
		return s.syntaxError(start, "invalid start tag")
	}
	prefix, local, ok := splitQName(name)
	if !ok {
		return s.syntaxError(start, "invalid element name %q", clip(name, 40))
	}
	s.elems++
	if s.elems > MaxElements {
		return s.syntaxError(start, "more than %d elements", MaxElements)
	}
	if len(s.open) >= MaxDepth {
		return s.syntaxError(start, "elements nested deeper than %d", MaxDepth)
	}
	depth := len(s.open) + 1
	s.attrs = s.attrs[:0]
	nattrs := 0
	empty := false
	for {
		q := skipSpace(s.src, p)
		if q >= len(s.src) {
			return s.syntaxError(start, "unexpected end of input in start tag <%s>", clip(name, 40))
		}
		c := s.src[q]
		if c == '>' {
			p = q + 1
			break
		}
		if c == '/' {
			if q+1 < len(s.src) && s.src[q+1] == '>' {
				p = q + 2
				empty = true
				break
			}
			return s.syntaxError(q, "expected /> in start tag <%s>", clip(name, 40))
		}
		if q == p {
			return s.syntaxError(q, "expected white space before attribute in <%s>", clip(name, 40))
		}
		aname, r := s.name(q)
		if aname == "" {
			return s.syntaxError(q, "invalid attribute in <%s>", clip(name, 40))
		}
		r = skipSpace(s.src, r)
		if r >= len(s.src) || s.src[r] != '=' {
			return s.syntaxError(r, "expected = after attribute %q", clip(aname, 40))
		}
		r = skipSpace(s.src, r+1)
		if r >= len(s.src) || (s.src[r] != '"' && s.src[r] != '\'') {
			return s.syntaxError(r, "expected quoted value for attribute %q", clip(aname, 40))
		}
		quote, end, amp := s.src[r], r+1, false
		for end < len(s.src) && s.src[end] != quote {
			c := s.src[end]
			if c == '<' {
				return s.syntaxError(end, "'<' in value of attribute %q", clip(aname, 40))
			}
			amp = amp || c == '&'
			end++
		}
		if end >= len(s.src) {
			return s.syntaxError(r, "unterminated value of attribute %q", clip(aname, 40))
		}
		value := s.src[r+1 : end]
		if amp {
			if _, bad := unescape(value); bad >= 0 {
				return s.syntaxError(r+1+bad, "invalid entity or character reference")
			}
		}
		p = end + 1
		nattrs++
		if nattrs > MaxAttrs {
			return s.syntaxError(q, "more than %d attributes on <%s>", MaxAttrs, clip(name, 40))
		}
		aprefix, alocal, ok := splitQName(aname)
		if !ok {
			return s.syntaxError(q, "invalid attribute name %q", clip(aname, 40))
		}
		switch {
		case aprefix == "xmlns":
			s.ns = append(s.ns, nsBinding{prefix: alocal, uri: attrValue(value), depth: depth})
		case aprefix == "" && alocal == "xmlns":
			s.ns = append(s.ns, nsBinding{uri: attrValue(value), depth: depth})
		default:
			s.attrs = append(s.attrs, attr{prefix: aprefix, local: alocal, value: value, offset: r + 1})
		}
	}
	s.pos = p
	s.open = append(s.open, name)
	s.kind, s.prefix, s.local, s.empty, s.offset = tokStart, prefix, local, empty, start
	s.popEmpty = empty
	return nil
}

func (s *scanner) endTag() error {
	start := s.pos
	name, p := s.name(start + 2)
	p = skipSpace(s.src, p)
	if name == "" || p >= len(s.src) || s.src[p] != '>' {
		return s.syntaxError(start, "invalid end tag")
	}
	if len(s.open) == 0 {
		return s.syntaxError(start, "unexpected end tag </%s>", clip(name, 40))
	}
	if want := s.open[len(s.open)-1]; name != want {
		return s.syntaxError(start, "end tag </%s> does not match <%s>", clip(name, 40), clip(want, 40))
	}
	prefix, local, _ := splitQName(name)
	s.pos = p + 1
	s.kind, s.prefix, s.local, s.empty, s.offset = tokEnd, prefix, local, false, start
	s.closeElement()
	return nil
}

// closeElement pops the innermost open element and its namespace scope.
func (s *scanner) closeElement() {
	s.open = s.open[:len(s.open)-1]
	depth := len(s.open)
	for len(s.ns) > 0 && s.ns[len(s.ns)-1].depth > depth {
		s.ns = s.ns[:len(s.ns)-1]
	}
	if depth == 0 {
		s.rootDone = true
	}
}

// lookupNS returns the namespace URI bound to prefix ("" for the default
// namespace) in the current scope, or "" if it is unbound.
func (s *scanner) lookupNS(prefix string) string {
	for i := len(s.ns) - 1; i >= 0; i-- {
		if s.ns[i].prefix == prefix {
			return s.ns[i].uri
		}
	}
	return ""
}

// attr returns the raw value of the current start tag's attribute with the
// given local name, whatever its prefix.
func (s *scanner) attr(local string) (attr, bool) {
	for _, a := range s.attrs {
		if a.local == local {
			return a, true
		}
	}
	return attr{}, false
}

// name reads an XML name starting at p and returns it with the offset after it.
func (s *scanner) name(p int) (string, int) {
	start := p
	for p < len(s.src) && nameByte[s.src[p]] {
		p++
	}
	if p == start || !nameStart[s.src[start]] {
		return "", p
	}
	return s.src[start:p], p
}

// nameByte marks bytes that may appear in a name. Bytes of multi-byte UTF-8
// sequences are accepted as a whole: names are compared, never interpreted.
var nameByte, nameStart [256]bool

func init() {
	for c := 0; c < 256; c++ {
		b := byte(c)
		letter := b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '_' || b >= 0x80
		nameStart[c] = letter || b == ':'
		nameByte[c] = nameStart[c] || b >= '0' && b <= '9' || b == '-' || b == '.'
	}
}

// splitQName splits prefix:local; a name with an empty part or a second
// colon is not a valid qualified name.
func splitQName(name string) (prefix, local string, ok bool) {
	i := strings.IndexByte(name, ':')
	if i < 0 {
		return "", name, true
	}
	prefix, local = name[:i], name[i+1:]
	if prefix == "" || local == "" || strings.IndexByte(local, ':') >= 0 {
		return "", "", false
	}
	return prefix, local, true
}

func skipSpace(s string, p int) int {
	for p < len(s) && isSpaceByte(s[p]) {
		p++
	}
	return p
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isSpaceByte(s[i]) {
			return false
		}
	}
	return true
}

// attrValue expands a raw attribute value already checked by the scanner.
func attrValue(raw string) string {
	if strings.IndexByte(raw, '&') < 0 {
		return raw
	}
	v, _ := unescape(raw)
	return v
}

// clip shortens s for an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
