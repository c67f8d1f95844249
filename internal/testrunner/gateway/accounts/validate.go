package accounts

import (
	"errors"
	"regexp"
	"strings"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/passwd"
	"cpesuite/internal/testrunner/identity"
)

// namePattern is the shape of usernames and stand names: safe in URLs,
// file names and log lines without quoting.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// userKey is the stored key that makes usernames unique regardless of
// case. Usernames are ASCII, so lower-casing is exact.
func userKey(username string) string { return strings.ToLower(username) }

func validUsername(username string) error {
	if !namePattern.MatchString(username) {
		return apperr.Invalid("INVALID_USERNAME",
			"username must be 1 to 64 characters of letters, digits, '.', '_' and '-', starting with a letter or digit")
	}
	return nil
}

// validRole returns the role to store: editor when role is empty.
func validRole(role string) (string, error) {
	switch role {
	case "":
		return identity.RoleEditor, nil
	case identity.RoleAdmin, identity.RoleEditor:
		return role, nil
	}
	return "", apperr.Invalid("INVALID_ROLE", "role must be %q or %q", identity.RoleAdmin, identity.RoleEditor)
}

func validStand(stand string) error {
	if stand != "" && !namePattern.MatchString(stand) {
		return apperr.Invalid("INVALID_STAND",
			"stand must be 1 to 64 characters of letters, digits, '.', '_' and '-', starting with a letter or digit")
	}
	return nil
}

// validPassword applies the policy for chosen passwords; the policy's
// reason is safe to show because it never quotes the password.
func validPassword(password, username string) error {
	if password == "" {
		return apperr.Invalid("PASSWORD_REQUIRED", "password is required")
	}
	if err := passwd.Check(password, username); err != nil {
		var pe *passwd.PolicyError
		if errors.As(err, &pe) {
			return apperr.Invalid("WEAK_PASSWORD", "%s", pe.Reason)
		}
		return apperr.Invalid("WEAK_PASSWORD", "password refused by the policy")
	}
	return nil
}
