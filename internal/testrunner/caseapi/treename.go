package caseapi

import (
	"strings"
	"unicode/utf8"

	"cpesuite/internal/platform/apperr"
)

// MaxTreeNameLength is the longest tree file name in bytes; it is also the
// longest emulator_setup.tree_file a case may name.
const MaxTreeNameLength = 200

const treeExt = ".xml"

// ValidTreeName checks that name is a plain .xml file name of the tree
// folder. Every tree name that reaches the file system passes here first,
// which is what keeps uploads and deletes inside the folder: no '/', '\'
// or "..", no "." or ".." aliases (a leading dot is refused, which also
// hides the atomic writer's temporary files), no control characters or
// invalid UTF-8, at most 200 bytes, ending in .xml (any letter case, as
// testcase accepts for emulator_setup.tree_file).
func ValidTreeName(name string) error {
	bad := func(why string) error {
		return apperr.Invalid("INVALID_TREE_NAME", "invalid tree file name: %s", why)
	}
	switch {
	case name == "":
		return bad("empty")
	case len(name) > MaxTreeNameLength:
		return bad("longer than 200 bytes")
	case !utf8.ValidString(name) || hasControl(name):
		return bad("must not contain control characters")
	case strings.ContainsAny(name, `/\`):
		return bad(`must not contain '/' or '\'`)
	case strings.Contains(name, ".."):
		return bad("must not contain '..'")
	case strings.HasPrefix(name, "."):
		return bad("must not start with '.'")
	case len(name) <= len(treeExt) || !strings.EqualFold(name[len(name)-len(treeExt):], treeExt):
		return bad("must be an .xml file name")
	}
	return nil
}

// hasControl reports C0 and C1 control characters and DEL.
func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return true
		}
	}
	return false
}
