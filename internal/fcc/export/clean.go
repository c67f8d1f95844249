package export

import "unicode/utf8"

// appendClean appends s without the code points XML 1.0 cannot carry: C0
// controls other than tab, line feed and carriage return, U+FFFE, U+FFFF,
// and bytes that are not UTF-8 (which is where a lone surrogate ends up
// in a Go string). CSV gets the same cleaning so the two formats of one
// export hold equal cells, and a NUL never reaches a spreadsheet.
func appendClean(d []byte, s string) []byte {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < utf8.RuneSelf || c == '\t' || c == '\n' || c == '\r' {
			i++
			continue
		}
		break
	}
	if i == len(s) {
		return append(d, s...)
	}
	d = append(d, s[:i]...)
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 || c == '\t' || c == '\n' || c == '\r' {
				d = append(d, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !(r == utf8.RuneError && n == 1) && r != 0xFFFE && r != 0xFFFF {
			d = append(d, s[i:i+n]...)
		}
		i += n
	}
	return d
}
