package lwm2mtest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// This file is the double's own link-format checker, written from the RFC
// 6690 grammar and independent of the client's codec, so that a lenient
// codec cannot approve its own output. RegisterLinkRules adds what wakaama's
// server (core/registration.c) refuses in a Register payload on top of the
// grammar.

// CheckLinkFormat checks s against the RFC 6690 §2 grammar to the letter:
//
//	Link            = link-value-list
//	link-value-list = [ link-value *[ "," link-value ]]
//	link-value      = "<" URI-Reference ">" *( ";" link-param )
//
// with the link-params RFC 6690 defines (rel, anchor, rev, hreflang,
// media, title, title*, type, rt, if, sz), ct from RFC 7252 §7.2.1, and
// link-extension for the rest. No white space is allowed outside quoted
// strings. It returns the first deviation found.
func CheckLinkFormat(s string) error {
	if s == "" {
		return nil
	}
	for i, n := 0, 0; ; n++ {
		end, err := checkLinkValue(s, i)
		if err != nil {
			return fmt.Errorf("link-value %d: %w", n, err)
		}
		if end == len(s) {
			return nil
		}
		if s[end] != ',' {
			return fmt.Errorf("offset %d: %q where ',' or the end must follow a link-value", end, s[end])
		}
		i = end + 1
		if i == len(s) {
			return errors.New("trailing ','")
		}
	}
}

// checkLinkValue checks the link-value starting at s[i] and returns the
// offset just past it.
func checkLinkValue(s string, i int) (int, error) {
	if s[i] != '<' {
		return 0, fmt.Errorf("offset %d: %q where '<' must start the link-value", i, s[i])
	}
	end := strings.IndexByte(s[i:], '>')
	if end < 0 {
		return 0, errors.New("no '>' closes the target")
	}
	end += i
	if err := checkURIReference(s[i+1 : end]); err != nil {
		return 0, fmt.Errorf("target <%s>: %w", s[i+1:end], err)
	}
	i = end + 1
	for i < len(s) && s[i] == ';' {
		next, err := checkLinkParam(s, i+1)
		if err != nil {
			return 0, err
		}
		i = next
	}
	return i, nil
}

// checkLinkParam checks the link-param starting at s[i].
func checkLinkParam(s string, i int) (int, error) {
	start := i
	for i < len(s) && isParmnameChar(s[i]) {
		i++
	}
	name := s[start:i]
	if name == "" {
		return 0, fmt.Errorf("offset %d: empty parmname", start)
	}
	star := i < len(s) && s[i] == '*'
	if star {
		i++
	}
	if i == len(s) || s[i] != '=' {
		// A link-extension may go without a value; ext-name-star may not.
		if star {
			return 0, fmt.Errorf("parameter %s* needs a value", name)
		}
		return i, nil
	}
	i++
	vstart := i
	var err error
	if i < len(s) && s[i] == '"' {
		i, err = quotedString(s, i)
	} else {
		for i < len(s) && isPtokenChar(s[i]) {
			i++
		}
		if i == vstart {
			err = fmt.Errorf("offset %d: empty value", vstart)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("parameter %s: %w", name, err)
	}
	if star {
		if err := checkExtValue(s[vstart:i]); err != nil {
			return 0, fmt.Errorf("parameter %s*: %w", name, err)
		}
		return i, nil
	}
	if err := checkParamValue(strings.ToLower(name), s[vstart:i]); err != nil {
		return 0, fmt.Errorf("parameter %s=%s: %w", name, s[vstart:i], err)
	}
	return i, nil
}

// checkParamValue checks the raw value v (quotes included) of a
// registered parameter; link-extensions take any ptoken or quoted-string,
// which the caller already checked.
func checkParamValue(name, v string) error {
	quoted := len(v) >= 2 && v[0] == '"'
	inner := v
	if quoted {
		inner = v[1 : len(v)-1]
	}
	switch name {
	case "rel", "rev", "rt", "if":
		return checkRelationTypes(v, quoted, inner)
	case "anchor":
		if !quoted {
			return errors.New("anchor must be a quoted URI-Reference")
		}
		return checkURIReference(inner)
	case "sz":
		if quoted || !isCardinal(v) {
			return errors.New("sz must be a cardinal")
		}
	case "ct":
		// RFC 7252 §7.2.1: cardinal / DQUOTE cardinal *( 1*SP cardinal ) DQUOTE.
		list := []string{v}
		if quoted {
			list = strings.Split(inner, " ")
		}
		for _, c := range list {
			if c == "" && quoted {
				continue
			}
			n, err := strconv.ParseUint(c, 10, 32)
			if !isCardinal(c) || err != nil || n > 65535 {
				return fmt.Errorf("%q is not a content format (a cardinal 0-65535)", c)
			}
		}
		if quoted && strings.TrimSpace(inner) != inner || inner == "" {
			return errors.New("empty or padded content format list")
		}
	case "title":
		if !quoted {
			return errors.New("title must be a quoted-string")
		}
	case "type":
		if !isMediaType(inner) {
			return errors.New("type must be a media-type")
		}
	case "hreflang":
		if quoted || !isLanguageTag(v) {
			return errors.New("hreflang must be a Language-Tag")
		}
	}
	return nil
}

// checkRelationTypes checks relation-types = relation-type / DQUOTE
// relation-type *( 1*SP relation-type ) DQUOTE.
func checkRelationTypes(v string, quoted bool, inner string) error {
	list := []string{v}
	if quoted {
		if inner == "" || inner[0] == ' ' || inner[len(inner)-1] == ' ' {
			return errors.New("empty or padded relation-type list")
		}
		list = strings.Fields(inner)
		if strings.ContainsAny(inner, "\t\r\n") {
			return errors.New("relation-types are separated by SP only")
		}
	}
	for _, r := range list {
		if !isRegRelType(r) && !isAbsoluteURI(r) {
			return fmt.Errorf("%q is neither a reg-rel-type nor a URI", r)
		}
	}
	return nil
}

// quotedString checks the quoted-string (RFC 2616 §2.2) starting at s[i]
// and returns the offset just past it.
func quotedString(s string, i int) (int, error) {
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return j + 1, nil
		case c == '\\':
			j++
			if j == len(s) || s[j] > 0x7f {
				return 0, errors.New("bad quoted-pair")
			}
		case c < 0x20 && c != '\t' || c == 0x7f:
			return 0, fmt.Errorf("control character %#x in a quoted-string", c)
		}
	}
	return 0, errors.New("unterminated quoted-string")
}

// checkURIReference checks RFC 3986's URI-Reference at the character
// level: only URI characters, well-formed percent-encoding, at most one
// fragment, and a scheme of the right form when there is one.
func checkURIReference(u string) error {
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case c == '%':
			if i+2 >= len(u) || !isHex(u[i+1]) || !isHex(u[i+2]) {
				return fmt.Errorf("bad percent-encoding at %d", i)
			}
			i += 2
		case !isURIChar(c):
			return fmt.Errorf("%q is not allowed in a URI", c)
		}
	}
	if strings.Count(u, "#") > 1 {
		return errors.New("more than one '#'")
	}
	first := strings.IndexAny(u, "/?#")
	if first < 0 {
		first = len(u)
	}
	if colon := strings.IndexByte(u[:first], ':'); colon >= 0 && !isScheme(u[:colon]) {
		return fmt.Errorf("%q is not a scheme (and a relative reference cannot have ':' in its first segment)", u[:colon])
	}
	return nil
}

func checkExtValue(v string) error {
	// ext-value = charset "'" [ language ] "'" value-chars (RFC 5987).
	parts := strings.SplitN(v, "'", 3)
	if len(parts) != 3 || parts[0] == "" {
		return errors.New("not an ext-value (charset'language'value)")
	}
	for i := 0; i < len(parts[2]); i++ {
		c := parts[2][i]
		if c == '%' {
			if i+2 >= len(parts[2]) || !isHex(parts[2][i+1]) || !isHex(parts[2][i+2]) {
				return errors.New("bad percent-encoding")
			}
			i += 2
			continue
		}
		if !isParmnameChar(c) {
			return fmt.Errorf("%q is not a value-char", c)
		}
	}
	return nil
}

func isScheme(s string) bool {
	if s == "" || !isAlpha(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isAlpha(c) && !isDigit(c) && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func isAbsoluteURI(s string) bool {
	colon := strings.IndexByte(s, ':')
	return colon > 0 && isScheme(s[:colon]) && checkURIReference(s) == nil
}

// isRegRelType is LOALPHA *( LOALPHA / DIGIT / "." / "-" ).
func isRegRelType(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z') && !isDigit(c) && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// isCardinal is "0" / %x31-39 *DIGIT.
func isCardinal(s string) bool {
	if s == "" || s[0] == '0' && len(s) > 1 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func isMediaType(s string) bool {
	t, sub, ok := strings.Cut(s, "/")
	return ok && isToken(t) && isToken(sub)
}

func isLanguageTag(s string) bool {
	for _, sub := range strings.Split(s, "-") {
		if sub == "" || len(sub) > 8 {
			return false
		}
		for i := 0; i < len(sub); i++ {
			if !isAlpha(sub[i]) && !isDigit(sub[i]) {
				return false
			}
		}
	}
	return true
}

// isToken is RFC 2616's token: CHARs except CTLs and separators.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	return true
}

// isURIChar: unreserved, reserved (gen-delims and sub-delims); '%' is
// handled by the caller.
func isURIChar(c byte) bool {
	return isAlpha(c) || isDigit(c) || strings.IndexByte("-._~:/?#[]@!$&'()*+,;=", c) >= 0
}

// isParmnameChar is RFC 5987's attr-char, RFC 6690's parmname character.
func isParmnameChar(c byte) bool {
	return isAlpha(c) || isDigit(c) || strings.IndexByte("!#$&+-.^_`|~", c) >= 0
}

// isPtokenChar is RFC 6690's ptokenchar.
func isPtokenChar(c byte) bool {
	return isAlpha(c) || isDigit(c) || strings.IndexByte("!#$%&'()*+-./:<=>?@[]^_`{|}~", c) >= 0
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// wakaamaContentFormats are the root link ct values wakaama's server takes
// (LwM2M JSON 11543, SenML JSON 110, SenML CBOR 112): TLV is its default
// and a client preferring TLV leaves ct out, as wakaama's own client does.
var wakaamaContentFormats = map[string]bool{"11543": true, "110": true, "112": true}

// RegisterLinkRules checks a Register payload that passed CheckLinkFormat
// the way wakaama's server reads it: every link is an object or object
// instance link (</3> or </3/0>, ids below 65535), except at most one
// root link (</> or an alternate path) which must carry attributes, each
// with a value; its rt may only be "oma.lwm2m" (quoted) and appear once;
// its ct may appear once and only as 110, 112 or 11543. It returns what
// such a server refuses.
func RegisterLinkRules(s string) []string {
	var found []string
	roots := 0
	for _, l := range splitLinks(s) {
		target, params := l.target, l.params
		if objectLink(target) {
			continue
		}
		roots++
		if roots > 1 {
			found = append(found, fmt.Sprintf("second non-object link <%s>", target))
			continue
		}
		if len(params) == 0 {
			found = append(found, fmt.Sprintf("root link <%s> without attributes", target))
		}
		rts, cts := 0, 0
		for _, p := range params {
			k, v, ok := strings.Cut(p, "=")
			if !ok {
				found = append(found, fmt.Sprintf("root link attribute %q without a value", p))
				continue
			}
			switch k {
			case "rt":
				rts++
				if v != `"oma.lwm2m"` {
					found = append(found, fmt.Sprintf(`root link rt=%s is not "oma.lwm2m"`, v))
				}
			case "ct":
				cts++
				if !wakaamaContentFormats[v] {
					found = append(found, fmt.Sprintf("root link ct=%s is not one of 110, 112, 11543", v))
				}
			}
		}
		if rts > 1 || cts > 1 {
			found = append(found, fmt.Sprintf("root link repeats rt (%d) or ct (%d)", rts, cts))
		}
	}
	return found
}

// objectLink reports whether target is </N> or </N/M> with ids below
// 65535 (wakaama's LWM2M_MAX_ID).
func objectLink(target string) bool {
	if !strings.HasPrefix(target, "/") {
		return false
	}
	parts := strings.Split(target[1:], "/")
	if len(parts) > 2 {
		return false
	}
	for _, p := range parts {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n >= 65535 {
			return false
		}
	}
	return true
}

type rawLink struct {
	target string
	params []string // raw "key=value" or "key", quotes kept
}

// splitLinks splits a payload that passed CheckLinkFormat into links and
// raw parameters, honouring quoted strings.
func splitLinks(s string) []rawLink {
	var out []rawLink
	var cur *rawLink
	field := func(f string) {
		if cur == nil {
			out = append(out, rawLink{target: strings.TrimSuffix(strings.TrimPrefix(f, "<"), ">")})
			cur = &out[len(out)-1]
			return
		}
		cur.params = append(cur.params, f)
	}
	start, inQuote, inTarget := 0, false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inQuote && c == '\\':
			i++
		case c == '"' && !inTarget:
			inQuote = !inQuote
		case c == '<' && !inQuote:
			inTarget = true
		case c == '>' && !inQuote:
			inTarget = false
		case inQuote || inTarget:
		case c == ';':
			field(s[start:i])
			start = i + 1
		case c == ',':
			field(s[start:i])
			cur = nil
			start = i + 1
		}
	}
	if start < len(s) {
		field(s[start:])
	}
	return out
}
