package httpauth

import (
	"errors"
	"strings"
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
