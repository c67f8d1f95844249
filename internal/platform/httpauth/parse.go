package httpauth

import (
	"errors"
	"net/url"
	"strings"
	"unicode/utf8"
)

// maxHeaderLen bounds the header values the parsers look at. Real
// challenges and Digest credentials are a few hundred bytes; the bound keeps
// a hostile peer from making us scan megabytes.
const maxHeaderLen = 16 << 10

// syntaxError builds a parse error. Like badCredentials it carries a fixed
// phrase and never echoes the input.
func syntaxError(reason string) error {
	return errors.New("httpauth: malformed header: " + reason)
}

// Challenge is one challenge from a WWW-Authenticate header (RFC 9110 §11.3).
type Challenge struct {
	// Scheme is the auth-scheme as sent; compare it with strings.EqualFold.
	Scheme string
	// Token68 is the single token68 some schemes use instead of parameters.
	Token68 string
	// Params holds the auth-params by lowercase name, quoted-string values
	// unescaped.
	Params map[string]string
}

// Param returns the parameter called name, matched without regard to case.
func (c Challenge) Param(name string) string {
	return c.Params[strings.ToLower(name)]
}

// ParseChallenges parses the values of the WWW-Authenticate headers of a
// response; each value may hold several challenges. It is lenient where
// RFC 9110 lets recipients be (empty list elements, spaces around "="), and
// returns every challenge it could parse together with an error describing
// the values it could not, so that a client can still answer a good
// challenge sent next to a broken one.
func ParseChallenges(headerValues []string) ([]Challenge, error) {
	var out []Challenge
	var errs []error
	for _, v := range headerValues {
		var err error
		out, err = appendChallenges(out, v)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// appendChallenges parses one header value. The grammar is ambiguous about
// where one challenge's parameters end and the next challenge begins; the
// rule used is RFC 9110's: a list element "token =" is a parameter, a bare
// token or "token SP ..." starts a new challenge.
func appendChallenges(out []Challenge, s string) ([]Challenge, error) {
	if len(s) > maxHeaderLen {
		return out, syntaxError("value too long")
	}
	i := 0
	for {
		i = skipListSeparators(s, i)
		if i == len(s) {
			return out, nil
		}
		j := scanToken(s, i)
		if j == i {
			return out, syntaxError("expected auth-scheme")
		}
		c := Challenge{Scheme: s[i:j]}
		i = skipOWS(s, j)
		if i == len(s) || s[i] == ',' {
			out = append(out, c)
			continue
		}
		if i == j {
			return out, syntaxError("expected space after auth-scheme")
		}
		if end, ok := scanToken68(s, i); ok {
			c.Token68 = s[i:end]
			out = append(out, c)
			i = end
			continue
		}
		c.Params = make(map[string]string, 6)
		for {
			name, value, next, err := readParam(s, i)
			if err != nil {
				return out, err
			}
			name = strings.ToLower(name)
			if _, dup := c.Params[name]; dup {
				return out, syntaxError("duplicate parameter")
			}
			c.Params[name] = value
			i = skipOWS(s, next)
			if i < len(s) && s[i] != ',' {
				return out, syntaxError("expected comma")
			}
			i = skipListSeparators(s, i)
			if i == len(s) || !startsParam(s, i) {
				break
			}
		}
		out = append(out, c)
	}
}

// startsParam reports whether the list element at s[i] is "token BWS =",
// that is an auth-param rather than the start of another challenge.
func startsParam(s string, i int) bool {
	j := scanToken(s, i)
	if j == i {
		return false
	}
	j = skipOWS(s, j)
	return j < len(s) && s[j] == '='
}

// scanToken68 reports whether a token68 (RFC 9110 §11.2) starts at s[i] and
// fills the rest of the list element, and where it ends.
func scanToken68(s string, i int) (end int, ok bool) {
	j := i
	for j < len(s) && isToken68Char(s[j]) {
		j++
	}
	if j == i {
		return 0, false
	}
	for j < len(s) && s[j] == '=' {
		j++
	}
	end = j
	j = skipOWS(s, j)
	if j < len(s) && s[j] != ',' {
		return 0, false
	}
	return end, true
}

// DigestAuthorization is the content of an "Authorization: Digest ..."
// header (RFC 7616 §3.4). Values are unquoted; Username is decoded from
// username* when the client used that form.
type DigestAuthorization struct {
	Username  string
	Realm     string
	URI       string
	Algorithm string // as sent; empty means MD5
	Nonce     string
	NC        string // nonce count, 8 hex digits
	CNonce    string
	QOP       string
	Response  string
	Opaque    string
	Userhash  bool
}

// Bits recording which Digest parameters were seen, to refuse duplicates:
// two "uri" parameters could otherwise mean different things to a proxy and
// to us.
const (
	seenUsername = 1 << iota
	seenUsernameStar
	seenRealm
	seenURI
	seenAlgorithm
	seenNonce
	seenNC
	seenCNonce
	seenQOP
	seenResponse
	seenOpaque
	seenUserhash
)

// ParseDigestAuthorization parses the value of an Authorization header that
// uses the Digest scheme. It checks syntax only: duplicate parameters,
// username together with username*, and a userhash that is not a boolean
// are errors; unknown parameters are ignored; whether the values are
// acceptable is the Verifier's business.
func ParseDigestAuthorization(value string) (DigestAuthorization, error) {
	var d DigestAuthorization
	if len(value) > maxHeaderLen {
		return d, syntaxError("value too long")
	}
	i := skipOWS(value, 0)
	j := scanToken(value, i)
	if !strings.EqualFold(value[i:j], "Digest") {
		return d, syntaxError("not a Digest authorization")
	}
	i = skipOWS(value, j)
	if i == j && i < len(value) {
		return d, syntaxError("expected space after auth-scheme")
	}
	var seen uint32
	for {
		i = skipListSeparators(value, i)
		if i == len(value) {
			break
		}
		name, v, next, err := readParam(value, i)
		if err != nil {
			return DigestAuthorization{}, err
		}
		var bit uint32
		switch {
		case strings.EqualFold(name, "username"):
			bit, d.Username = seenUsername, v
		case strings.EqualFold(name, "username*"):
			bit = seenUsernameStar
			if d.Username, err = decodeExtValue(v); err != nil {
				return DigestAuthorization{}, err
			}
		case strings.EqualFold(name, "realm"):
			bit, d.Realm = seenRealm, v
		case strings.EqualFold(name, "uri"):
			bit, d.URI = seenURI, v
		case strings.EqualFold(name, "algorithm"):
			bit, d.Algorithm = seenAlgorithm, v
		case strings.EqualFold(name, "nonce"):
			bit, d.Nonce = seenNonce, v
		case strings.EqualFold(name, "nc"):
			bit, d.NC = seenNC, v
		case strings.EqualFold(name, "cnonce"):
			bit, d.CNonce = seenCNonce, v
		case strings.EqualFold(name, "qop"):
			bit, d.QOP = seenQOP, v
		case strings.EqualFold(name, "response"):
			bit, d.Response = seenResponse, v
		case strings.EqualFold(name, "opaque"):
			bit, d.Opaque = seenOpaque, v
		case strings.EqualFold(name, "userhash"):
			bit = seenUserhash
			switch {
			case strings.EqualFold(v, "true"):
				d.Userhash = true
			case strings.EqualFold(v, "false"):
				d.Userhash = false
			default:
				return DigestAuthorization{}, syntaxError("userhash is not a boolean")
			}
		}
		if seen&bit != 0 {
			return DigestAuthorization{}, syntaxError("duplicate parameter")
		}
		seen |= bit
		i = skipOWS(value, next)
		if i < len(value) && value[i] != ',' {
			return DigestAuthorization{}, syntaxError("expected comma")
		}
	}
	if seen&seenUsername != 0 && seen&seenUsernameStar != 0 {
		return DigestAuthorization{}, syntaxError("both username and username*")
	}
	return d, nil
}

// String formats d as an Authorization header value. Parsing the result
// gives d back. A username that cannot travel in a quoted-string (control
// characters) is sent as username* (RFC 7616 §4).
func (d DigestAuthorization) String() string {
	var b strings.Builder
	b.Grow(256)
	b.WriteString("Digest ")
	if needsExtValue(d.Username) {
		b.WriteString("username*=UTF-8''")
		b.WriteString(encodeExtValue(d.Username))
	} else {
		b.WriteString("username=")
		writeQuoted(&b, d.Username)
	}
	b.WriteString(", realm=")
	writeQuoted(&b, d.Realm)
	b.WriteString(", uri=")
	writeQuoted(&b, d.URI)
	// RFC 7616 writes algorithm, qop and nc as tokens; some servers refuse
	// them quoted, so quote only what is not a token.
	if d.Algorithm != "" {
		b.WriteString(", algorithm=")
		writeTokenOrQuoted(&b, d.Algorithm)
	}
	b.WriteString(", nonce=")
	writeQuoted(&b, d.Nonce)
	if d.NC != "" {
		b.WriteString(", nc=")
		writeTokenOrQuoted(&b, d.NC)
	}
	if d.CNonce != "" {
		b.WriteString(", cnonce=")
		writeQuoted(&b, d.CNonce)
	}
	if d.QOP != "" {
		b.WriteString(", qop=")
		writeTokenOrQuoted(&b, d.QOP)
	}
	b.WriteString(", response=")
	writeQuoted(&b, d.Response)
	if d.Opaque != "" {
		b.WriteString(", opaque=")
		writeQuoted(&b, d.Opaque)
	}
	if d.Userhash {
		b.WriteString(", userhash=true")
	}
	return b.String()
}

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

// isTchar reports whether c is an RFC 9110 tchar.
func isTchar(c byte) bool {
	if isAlnum(c) {
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

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
