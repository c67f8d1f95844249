package httpauth

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// The lexical pieces of RFC 9110 §5.6 and RFC 8187 that both parsers and
// the header writers share.

// readParam reads "token BWS = BWS ( token / quoted-string )" at s[i] and
// returns the index after it.
func readParam(s string, i int) (name, value string, next int, err error) {
	j := scanToken(s, i)
	if j == i {
		return "", "", 0, syntaxError("expected parameter name")
	}
	name = s[i:j]
	j = skipOWS(s, j)
	if j == len(s) || s[j] != '=' {
		return "", "", 0, syntaxError("expected '=' after parameter name")
	}
	j = skipOWS(s, j+1)
	if j < len(s) && s[j] == '"' {
		value, next, err = readQuoted(s, j)
		return name, value, next, err
	}
	k := scanToken(s, j)
	if k == j {
		return "", "", 0, syntaxError("expected parameter value")
	}
	return name, s[j:k], k, nil
}

// readQuoted reads the quoted-string starting at s[i] == '"' and returns its
// unescaped content. The common case without escapes returns a substring
// and allocates nothing.
func readQuoted(s string, i int) (value string, next int, err error) {
	i++
	start := i
	escaped := false
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			value = s[start:i]
			if escaped {
				value = unescapeQuoted(value)
			}
			return value, i + 1, nil
		case c == '\\':
			if i+1 == len(s) || !isQuotedChar(s[i+1]) {
				return "", 0, syntaxError("bad quoted-pair")
			}
			escaped = true
			i += 2
		case isQuotedChar(c):
			i++
		default:
			return "", 0, syntaxError("control character in quoted-string")
		}
	}
	return "", 0, syntaxError("unterminated quoted-string")
}

// unescapeQuoted removes the backslashes of quoted-pairs; readQuoted has
// already checked that every backslash is followed by a character.
func unescapeQuoted(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// writeQuoted writes s as a quoted-string, escaping '"' and '\'.
func writeQuoted(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
}

func writeTokenOrQuoted(b *strings.Builder, s string) {
	if s != "" && scanToken(s, 0) == len(s) {
		b.WriteString(s)
		return
	}
	writeQuoted(b, s)
}

// decodeExtValue decodes an RFC 8187 ext-value (charset'language'value) as
// used by username*. Only UTF-8 is accepted, as RFC 7616 §4 requires.
func decodeExtValue(v string) (string, error) {
	charset, rest, ok := strings.Cut(v, "'")
	if !ok || !strings.EqualFold(charset, "UTF-8") {
		return "", syntaxError("username* is not UTF-8 ext-value")
	}
	_, enc, ok := strings.Cut(rest, "'")
	if !ok {
		return "", syntaxError("username* is not an ext-value")
	}
	s, err := url.PathUnescape(enc)
	if err != nil || !utf8.ValidString(s) {
		return "", syntaxError("username* has bad percent-encoding")
	}
	return s, nil
}

// needsExtValue reports whether s cannot be carried in a quoted-string:
// it has control characters. Other non-ASCII text goes into the
// quoted-string as raw UTF-8 (obs-text), which far more servers understand
// than username*. Invalid UTF-8 cannot be an ext-value, so it stays raw too.
func needsExtValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return utf8.ValidString(s)
		}
	}
	return false
}

// encodeExtValue percent-encodes everything outside RFC 8187 attr-char.
func encodeExtValue(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isAttrChar(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

func skipOWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// skipListSeparators skips whitespace and commas: RFC 9110 §5.6.1 asks
// recipients to accept empty list elements.
func skipListSeparators(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == ',') {
		i++
	}
	return i
}

func scanToken(s string, i int) int {
	for i < len(s) && isTchar(s[i]) {
		i++
	}
	return i
}

// isTchar reports whether c is an RFC 9110 tchar. A table, because the
// parsers ask it for every byte of every header.
func isTchar(c byte) bool {
	return tchars[c]
}

var tchars = func() (t [256]bool) {
	for c := range 256 {
		t[c] = isAlnum(byte(c)) || strings.IndexByte("!#$%&'*+-.^_`|~", byte(c)) >= 0
	}
	return t
}()

func isToken68Char(c byte) bool {
	return isAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/'
}

func isAttrChar(c byte) bool {
	return isAlnum(c) || strings.IndexByte("!#$&+-.^_`|~", c) >= 0
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isQuotedChar reports whether c may appear in a quoted-string, either as
// qdtext or after a backslash: HTAB, SP, VCHAR and obs-text.
func isQuotedChar(c byte) bool {
	return c == '\t' || (c >= 0x20 && c != 0x7f)
}
