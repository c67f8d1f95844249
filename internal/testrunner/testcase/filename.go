package testcase

import (
	"strings"
	"unicode/utf8"

	"cpesuite/internal/platform/apperr"
)

// MaxFileNameLength is the longest case file name, in bytes.
const MaxFileNameLength = 200

// ValidFileName checks that name is a plain case file name of the store's
// folder: it ends in .yaml or .yml, and has no path separator, "..", NUL or
// control character, no leading dot, and at most 200 bytes. Every file name
// that reaches the store passes here first, which is what makes path
// traversal impossible.
func ValidFileName(name string) error {
	bad := func(why string) error {
		return apperr.Invalid("INVALID_FILE_NAME", "invalid case file name: %s", why)
	}
	switch {
	case name == "":
		return bad("empty")
	case len(name) > MaxFileNameLength:
		return bad("longer than 200 bytes")
	case strings.ContainsAny(name, `/\`) || strings.Contains(name, ".."):
		return bad(`must not contain '/', '\' or '..'`)
	case hasControl(name):
		return bad("must not contain control characters")
	case strings.HasPrefix(name, "."):
		return bad("must not start with '.'")
	case !hasCaseExt(name):
		return bad("must end in .yaml or .yml")
	}
	return nil
}

func hasCaseExt(name string) bool {
	return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")
}

// FileNameFor gives the file name a new case is stored under: its id in
// lower case with anything but letters, digits, '_' and '-' turned into
// '-' (dots too, so no ".." or leading dot can appear), plus ".yaml".
func FileNameFor(c *Case) string {
	const ext = ".yaml"
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(c.ID) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= MaxFileNameLength-len(ext) {
			break
		}
	}
	slug := strings.Trim(b.String(), "-")
	if slug == "" || !utf8.ValidString(slug) {
		slug = "case"
	}
	return slug + ext
}
