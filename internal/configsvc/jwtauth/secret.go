package jwtauth

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// MinKeyLen is the shortest accepted HMAC key: RFC 7518 section 3.2
// requires a key at least as long as the SHA-256 output.
const MinKeyLen = 32

// secretEncodings are tried in turn because operators produce the secret
// with whatever tool is at hand (openssl, base64, a password manager), and
// the variants cannot be confused: a string valid in two of them decodes to
// the same bytes in both.
var secretEncodings = []*base64.Encoding{
	base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding,
}

// DecodeSecret decodes the JWT_SECRET variable: standard or URL-safe
// base64, padded or not, with surrounding blanks ignored. The key must be
// at least MinKeyLen bytes long. Error messages name the variable and are
// meant for the operator; they never repeat the value, which is a secret.
func DecodeSecret(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("JWT_SECRET is empty")
	}
	for _, enc := range secretEncodings {
		key, err := enc.DecodeString(s)
		if err != nil {
			continue
		}
		if len(key) < MinKeyLen {
			return nil, fmt.Errorf("JWT_SECRET decodes to %d bytes; at least %d are required", len(key), MinKeyLen)
		}
		return key, nil
	}
	return nil, fmt.Errorf("JWT_SECRET is not valid base64")
}
