package cwmp

import (
	"strings"
	"unicode/utf8"
)

// maxRefLen bounds how far unescape looks for the ';' of a reference, so a
// run of bare '&'s costs linear rather than quadratic time.
const maxRefLen = 16

// unescape expands the five predefined entities and character references and
// normalises CR LF and lone CR to LF, as an XML processor must. Any other
// entity is an error: without a DTD none can be defined. It returns the index
// of the offending '&' as bad, or -1.
func unescape(s string) (out string, bad int) {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '\r':
			b = append(b, '\n')
			i++
			if i < len(s) && s[i] == '\n' {
				i++
			}
		case '&':
			end := strings.IndexByte(s[i+1:min(len(s), i+1+maxRefLen)], ';')
			if end < 0 {
				return "", i
			}
			ref := s[i+1 : i+1+end]
			switch ref {
			case "lt":
				b = append(b, '<')
			case "gt":
				b = append(b, '>')
			case "amp":
				b = append(b, '&')
			case "apos":
				b = append(b, '\'')
			case "quot":
				b = append(b, '"')
			default:
				r, ok := charRef(ref)
				if !ok {
					return "", i
				}
				b = utf8.AppendRune(b, r)
			}
			i += 1 + end + 1
		default:
			j := i + 1
			for j < len(s) && s[j] != '&' && s[j] != '\r' {
				j++
			}
			b = append(b, s[i:j]...)
			i = j
		}
	}
	return string(b), -1
}

// charRef decodes the inside of a character reference such as "#65" or
// "#x41". Code points that are not XML characters are rejected.
func charRef(ref string) (rune, bool) {
	if len(ref) < 2 || ref[0] != '#' {
		return 0, false
	}
	digits, base := ref[1:], rune(10)
	if digits[0] == 'x' {
		digits, base = digits[1:], 16
	}
	if digits == "" {
		return 0, false
	}
	var r rune
	for i := 0; i < len(digits); i++ {
		d := rune(digitVal(digits[i]))
		if d >= base {
			return 0, false
		}
		r = r*base + d
		if r > utf8.MaxRune {
			return 0, false
		}
	}
	return r, isXMLChar(r)
}

func digitVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 255
}

// isXMLChar reports whether r may appear in an XML 1.0 document.
func isXMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= utf8.MaxRune
}
