package fccxml

import (
	"strconv"
	"strings"
	"time"
)

// maxFileNamePart is the length the campaign name is cut to in FileName.
const maxFileNamePart = 80

// FileName is the export attachment name: fcc-<name>-<yyyyMMdd-HHmmss>.xml
// with the UTC time of now.
//
// The name is reduced to ASCII letters [A-Za-z], digits, dot, underscore and
// dash; every run of other characters, non-ASCII letters included, becomes
// one dash. A dash of the name next to such a run merges into that one dash
// ("a - b" gives "a-b"), while dashes of the name alone are kept ("a--b"
// stays). Leading and trailing dashes are trimmed, the result is cut to 80
// characters and trimmed of trailing dashes again. When nothing is left, the
// campaign id in decimal takes the name's place. The result is therefore
// plain ASCII, safe in a Content-Disposition header without encoding.
func FileName(name string, id int64, now time.Time) string {
	var b strings.Builder
	dash := false // the last byte written is a dash
	run := false  // inside a run of replaced characters
	for _, r := range name {
		switch {
		case r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_':
			b.WriteRune(r)
			dash, run = false, false
		case r == '-':
			if !run {
				b.WriteByte('-')
				dash = true
			}
		default:
			if !dash {
				b.WriteByte('-')
				dash = true
			}
			run = true
		}
	}
	part := strings.Trim(b.String(), "-")
	if len(part) > maxFileNamePart {
		part = strings.TrimRight(part[:maxFileNamePart], "-")
	}
	if part == "" {
		part = strconv.FormatInt(id, 10)
	}
	return "fcc-" + part + "-" + now.UTC().Format("20060102-150405") + ".xml"
}
