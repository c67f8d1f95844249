package passwd

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Policy limits for passwords chosen by people. The maximum exists so that
// a request cannot make the service hash megabytes; it is in characters
// rather than bytes so that it does not penalise non-Latin scripts.
const (
	MinLength = 12
	MaxLength = 128
)

// PolicyError reports a password refused by Check. Reason is an English
// sentence that names the broken rule and is safe to show to the user: it
// never contains the password.
type PolicyError struct{ Reason string }

func (e *PolicyError) Error() string { return e.Reason }

// Check enforces the policy for passwords chosen by people (first-login
// rotation, resets with an explicit password): 12 to 128 characters, at
// least three of the four classes lower-case letter, upper-case letter,
// digit and other character, and not containing the username (ignoring
// case) when the username has three characters or more, since shorter
// names occur in ordinary words by chance. It returns a *PolicyError for
// the first rule broken.
func Check(password, username string) error {
	if !utf8.ValidString(password) {
		return &PolicyError{Reason: "The password contains invalid characters."}
	}
	n := utf8.RuneCountInString(password)
	if n < MinLength {
		return &PolicyError{Reason: fmt.Sprintf("The password must be at least %d characters long.", MinLength)}
	}
	if n > MaxLength {
		return &PolicyError{Reason: fmt.Sprintf("The password must be at most %d characters long.", MaxLength)}
	}
	var lower, upper, digit, other int
	for _, r := range password {
		switch {
		case unicode.IsLower(r):
			lower = 1
		case unicode.IsUpper(r):
			upper = 1
		case unicode.IsDigit(r):
			digit = 1
		default:
			other = 1
		}
	}
	if lower+upper+digit+other < 3 {
		return &PolicyError{Reason: "The password must contain at least three of these: lower-case letters, upper-case letters, digits and other characters."}
	}
	if utf8.RuneCountInString(username) >= 3 &&
		strings.Contains(strings.ToLower(password), strings.ToLower(username)) {
		return &PolicyError{Reason: "The password must not contain the username."}
	}
	return nil
}
