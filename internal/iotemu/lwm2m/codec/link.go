package codec

import (
	"errors"
	"fmt"
	"strings"
)

// Link is one CoRE link (RFC 6690), as in the Register/Update body and
// Discover answers.
type Link struct {
	Target string      // e.g. "/3/0" (without angle brackets)
	Params []LinkParam // ordered, e.g. ver="1.1", ct=11543, rt="oma.lwm2m"
}

// LinkParam is one link parameter. A valueless parameter (";obs") has an
// empty Value and Quoted false; RFC 6690 has no empty unquoted value, so
// the two cannot be confused with `;k=""`, which has Quoted true.
type LinkParam struct {
	Key, Value string
	Quoted     bool
}

// EncodeLinks writes links in the CoRE link format, e.g.
// `</>;rt="oma.lwm2m";ct=110,</1/0>,</3/0>`. An unquoted value that is not
// a valid token is quoted anyway, so the output always parses.
func EncodeLinks(ls []Link) string {
	var b strings.Builder
	for i, l := range ls {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('<')
		b.WriteString(l.Target)
		b.WriteByte('>')
		for _, p := range l.Params {
			b.WriteByte(';')
			b.WriteString(p.Key)
			switch {
			case p.Quoted || !isPtoken(p.Value):
				b.WriteString(`="`)
				for j := 0; j < len(p.Value); j++ {
					if c := p.Value[j]; c == '"' || c == '\\' {
						b.WriteByte('\\')
					}
					b.WriteByte(p.Value[j])
				}
				b.WriteByte('"')
			case p.Value != "":
				b.WriteByte('=')
				b.WriteString(p.Value)
			}
		}
	}
	return b.String()
}

// ParseLinks parses the CoRE link format strictly: every target in angle
// brackets, links separated by single commas, no blanks outside quoted
// strings, which may contain ',' and ';' and backslash escapes. An empty
// string holds no links.
func ParseLinks(s string) ([]Link, error) {
	if s == "" {
		return nil, nil
	}
	var ls []Link
	for i := 0; ; {
		l, n, err := parseLink(s[i:])
		if err != nil {
			return nil, fmt.Errorf("link %d at offset %d: %w", len(ls), i, err)
		}
		ls = append(ls, l)
		i += n
		if i == len(s) {
			return ls, nil
		}
		if s[i] != ',' {
			return nil, fmt.Errorf("offset %d: want ',' between links, got %q", i, s[i])
		}
		i++
	}
}

// parseLink parses one link at the start of s and returns its length.
func parseLink(s string) (Link, int, error) {
	if s == "" || s[0] != '<' {
		return Link{}, 0, errors.New("want '<'")
	}
	end := strings.IndexByte(s, '>')
	if end < 0 {
		return Link{}, 0, errors.New("unterminated target")
	}
	target := s[1:end]
	if target == "" {
		return Link{}, 0, errors.New("empty target")
	}
	for i := 0; i < len(target); i++ {
		if c := target[i]; c <= ' ' || c == '<' || c == '"' || c == 0x7f {
			return Link{}, 0, fmt.Errorf("invalid character %q in target", c)
		}
	}
	l := Link{Target: target}
	i := end + 1
	for i < len(s) && s[i] == ';' {
		i++
		start := i
		for i < len(s) && isParmnameChar(s[i]) {
			i++
		}
		if i == start {
			return Link{}, 0, fmt.Errorf("offset %d: empty parameter name", start)
		}
		p := LinkParam{Key: s[start:i]}
		if i < len(s) && s[i] == '=' {
			i++
			if i < len(s) && s[i] == '"' {
				v, n, err := parseQuoted(s[i:])
				if err != nil {
					return Link{}, 0, fmt.Errorf("parameter %q: %w", p.Key, err)
				}
				p.Value, p.Quoted = v, true
				i += n
			} else {
				vstart := i
				for i < len(s) && isPtokenChar(s[i]) {
					i++
				}
				if i == vstart {
					return Link{}, 0, fmt.Errorf("parameter %q: empty value", p.Key)
				}
				p.Value = s[vstart:i]
			}
		}
		l.Params = append(l.Params, p)
	}
	if i < len(s) && s[i] != ',' {
		return Link{}, 0, fmt.Errorf("offset %d: unexpected %q", i, s[i])
	}
	return l, i, nil
}

// parseQuoted parses a quoted-string at the start of s and returns its
// unescaped content and its length.
func parseQuoted(s string) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), i + 1, nil
		case '\\':
			i++
			if i == len(s) {
				return "", 0, errors.New("unterminated quoted string")
			}
			b.WriteByte(s[i])
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, errors.New("unterminated quoted string")
}

// isParmnameChar is RFC 5987's attr-char, which RFC 6690 uses for
// parameter names.
func isParmnameChar(c byte) bool {
	if isAlnum(c) {
		return true
	}
	return strings.IndexByte("!#$&+-.^_`|~", c) >= 0
}

// isPtokenChar is RFC 6690's ptokenchar: the printable characters except
// blanks, '"', ',', ';' and '\'.
func isPtokenChar(c byte) bool {
	if isAlnum(c) {
		return true
	}
	return strings.IndexByte("!#$%&'()*+-./:<=>?@[]^_`{|}~", c) >= 0
}

// isPtoken reports whether s is a non-empty run of ptokenchars, or empty
// (a valueless parameter).
func isPtoken(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isPtokenChar(s[i]) {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}
