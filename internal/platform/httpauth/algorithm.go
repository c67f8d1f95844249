package httpauth

import (
	"crypto/md5"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"strings"
)

// Algorithm is a Digest algorithm as named on the wire (RFC 7616 §6.1).
type Algorithm string

// The Digest algorithms this package supports. The "-sess" variants mix the
// client nonce into the secret (RFC 7616 §3.4.2).
const (
	MD5            Algorithm = "MD5"
	MD5Sess        Algorithm = "MD5-sess"
	SHA256         Algorithm = "SHA-256"
	SHA256Sess     Algorithm = "SHA-256-sess"
	SHA512_256     Algorithm = "SHA-512-256"
	SHA512_256Sess Algorithm = "SHA-512-256-sess"
)

// allAlgorithms is ordered strongest first, plain before -sess: the order in
// which a server lists its challenges (RFC 7616 §3.7) and a client prefers
// them.
var allAlgorithms = []Algorithm{SHA512_256, SHA512_256Sess, SHA256, SHA256Sess, MD5, MD5Sess}

// ParseAlgorithm returns the Algorithm named s, compared without regard to
// case because implementations disagree on it; an empty s means MD5, the
// RFC's default. ok is false for an unsupported algorithm.
func ParseAlgorithm(s string) (a Algorithm, ok bool) {
	if s == "" {
		return MD5, true
	}
	for _, a := range allAlgorithms {
		if strings.EqualFold(s, string(a)) {
			return a, true
		}
	}
	return "", false
}

// Valid reports whether a is one of the supported algorithms, spelled
// exactly as the constants are.
func (a Algorithm) Valid() bool {
	return a.rank() > 0
}

// rank orders algorithms by preference; 0 means unsupported.
func (a Algorithm) rank() int {
	for i, b := range allAlgorithms {
		if a == b {
			return len(allAlgorithms) - i
		}
	}
	return 0
}

// sess reports whether a is a "-sess" variant.
func (a Algorithm) sess() bool {
	return strings.HasSuffix(string(a), "-sess")
}

// appendHash appends the lowercase hex digest of data under a's hash
// function. It uses the one-shot Sum functions, which keep everything on the
// stack; a hash.Hash would cost an allocation per call on the hot path.
func (a Algorithm) appendHash(dst, data []byte) []byte {
	switch a {
	case MD5, MD5Sess:
		s := md5.Sum(data)
		return hex.AppendEncode(dst, s[:])
	case SHA256, SHA256Sess:
		s := sha256.Sum256(data)
		return hex.AppendEncode(dst, s[:])
	case SHA512_256, SHA512_256Sess:
		s := sha512.Sum512_256(data)
		return hex.AppendEncode(dst, s[:])
	}
	panic("httpauth: appendHash on unsupported algorithm " + string(a))
}
