package httpauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
)

// basicAuthorization returns the Authorization value for Basic credentials
// (RFC 7617 §2). The user-id cannot contain a colon, since the server splits
// at the first one; refusing it here beats a confusing 401.
func basicAuthorization(username, password string) (string, error) {
	if strings.Contains(username, ":") {
		return "", errors.New("httpauth: a basic user-id must not contain a colon")
	}
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(username+":"+password)), nil
}

// parseBasic decodes the credentials of a Basic Authorization value whose
// scheme has already been matched; rest is what follows the scheme.
func parseBasic(rest string) (username, password string, ok bool) {
	rest = strings.Trim(rest, " \t")
	if rest == "" || len(rest) > maxHeaderLen {
		return "", "", false
	}
	raw, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		// Some clients drop the padding.
		if raw, err = base64.RawStdEncoding.DecodeString(rest); err != nil {
			return "", "", false
		}
	}
	// The user-id ends at the first colon; the password may contain more.
	return strings.Cut(string(raw), ":")
}

// verifyBasic checks Basic credentials. Passwords are compared through
// their SHA-256 so that the comparison takes the same time whatever their
// lengths, and an unknown user costs the same as a wrong password.
func (v *Verifier) verifyBasic(r *http.Request, rest string) (string, error) {
	user, pass, ok := parseBasic(rest)
	if !ok {
		return "", badCredentials("malformed basic credentials")
	}
	stored, found, err := v.lookup(r, user)
	if err != nil {
		return "", err
	}
	got := sha256.Sum256([]byte(pass))
	want := sha256.Sum256([]byte(stored))
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 || !found {
		return "", badCredentials("wrong basic credentials")
	}
	return user, nil
}
