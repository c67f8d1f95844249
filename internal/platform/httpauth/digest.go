package httpauth

import (
	"errors"
	"strings"
)

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

// ComputeResponse returns the "response" value for d (RFC 7616 §3.4.1):
// the digest over the credentials, d's nonce, nonce count, client nonce and
// qop, and the request's method and d.URI. The client side uses it to fill
// d.Response; the server side to check it. Only qop "auth" and the legacy
// RFC 2069 form (empty QOP) are supported.
func (d DigestAuthorization) ComputeResponse(method, password string) (string, error) {
	alg, ok := ParseAlgorithm(d.Algorithm)
	if !ok {
		return "", errors.New("httpauth: unsupported digest algorithm")
	}
	if err := checkQOP(d.QOP, alg); err != nil {
		return "", err
	}
	var buf [128]byte
	return string(appendResponse(buf[:0], alg, &d, method, password)), nil
}

// checkQOP refuses the combinations appendResponse cannot compute.
func checkQOP(qop string, alg Algorithm) error {
	switch {
	case strings.EqualFold(qop, "auth"):
		return nil
	case qop == "" && !alg.sess():
		// RFC 2069: no qop, nc or cnonce. -sess needs a cnonce, hence the
		// condition.
		return nil
	case qop == "":
		return errors.New("httpauth: -sess algorithm without qop")
	default:
		return errors.New("httpauth: unsupported qop (only auth)")
	}
}

// appendResponse appends the hex response digest to dst. The caller has
// validated alg and the qop. Intermediate values live in fixed arrays so
// that a verification allocates nothing here.
func appendResponse(dst []byte, alg Algorithm, d *DigestAuthorization, method, password string) []byte {
	var scratch [256]byte
	var ha1Buf, ha2Buf [64]byte

	// HA1 = H(username ":" realm ":" password), and for -sess
	// H(HA1 ":" nonce ":" cnonce) (RFC 7616 §3.4.2).
	b := append(scratch[:0], d.Username...)
	b = append(b, ':')
	b = append(b, d.Realm...)
	b = append(b, ':')
	b = append(b, password...)
	ha1 := alg.appendHash(ha1Buf[:0], b)
	if alg.sess() {
		b = append(scratch[:0], ha1...)
		b = append(b, ':')
		b = append(b, d.Nonce...)
		b = append(b, ':')
		b = append(b, d.CNonce...)
		ha1 = alg.appendHash(ha1Buf[:0], b)
	}

	// HA2 = H(method ":" uri) for qop=auth (RFC 7616 §3.4.3).
	b = append(scratch[:0], method...)
	b = append(b, ':')
	b = append(b, d.URI...)
	ha2 := alg.appendHash(ha2Buf[:0], b)

	// response = H(HA1 ":" nonce ":" nc ":" cnonce ":" qop ":" HA2), or
	// without the nc, cnonce and qop fields in the RFC 2069 form.
	b = append(scratch[:0], ha1...)
	b = append(b, ':')
	b = append(b, d.Nonce...)
	b = append(b, ':')
	if d.QOP != "" {
		b = append(b, d.NC...)
		b = append(b, ':')
		b = append(b, d.CNonce...)
		b = append(b, ':')
		b = append(b, d.QOP...)
		b = append(b, ':')
	}
	b = append(b, ha2...)
	return alg.appendHash(dst, b)
}
