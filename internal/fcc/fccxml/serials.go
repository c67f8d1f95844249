package fccxml

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Serials returns the text of every element named serial at any depth
// (matched by local name; white space trimmed; blank ones skipped; document
// order and duplicates kept), for PUT /FCC/devices/import. A serial element
// must hold text only. The rules on untrusted input of the package apply
// (no DTD, no unknown entities, depth at most 64). At most max serials are
// accepted (max <= 0: no limit); one more is an error wrapping ErrInvalid
// naming the limit. A document without serials gives an empty, non-nil
// slice.
func Serials(r io.Reader, max int) ([]string, error) {
	p := newDecoder(r)
	out := []string{}
	elements := false
	for {
		tok, err := p.token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			elements = true
			if t.Name.Local != "serial" {
				continue
			}
			s, err := p.text("serial")
			if err != nil {
				return nil, err
			}
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			if max > 0 && len(out) == max {
				return nil, p.errorf("too many serials: the limit is %d", max)
			}
			out = append(out, s)
		case xml.CharData:
			// Text outside any element means this is not an XML
			// document at all (or a second document follows).
			if p.depth == 0 && len(bytes.TrimSpace(t)) != 0 {
				return nil, p.errorf("text outside the root element")
			}
		}
	}
	if !elements {
		return nil, p.errorf("the document holds no elements")
	}
	return out, nil
}

// SerialList parses a serial-list upload: plain text with one serial per
// line, or serials separated by commas, semicolons or white space. It is
// used by the multipart resolve when the file is not XML: when the content,
// after an optional UTF-8 byte order mark and white space, starts with '<'
// it is parsed with Serials instead.
//
// Text rules: a leading UTF-8 byte order mark is ignored; blank entries are
// skipped; double quotes around an entry are removed (spreadsheet CSV
// exports quote cells) but there is no other CSV quoting, so a quoted entry
// cannot hold a separator; when the first non-blank line consists of
// the single entry "serial" (any case) it is a header and skipped. The text
// must be UTF-8 without control characters other than tab, CR and LF, so a
// binary file (a spreadsheet, a UTF-16 text) is refused instead of yielding
// garbage serials. Order and duplicates are kept. The same max rule as
// Serials applies. The whole upload is read into memory; the caller bounds
// its size.
func SerialList(r io.Reader, max int) ([]string, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading serial list: %w", err)
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	if bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}) {
		return nil, fmt.Errorf("%w: the serial list is UTF-16 text; save it as UTF-8", ErrInvalid)
	}
	if rest := bytes.TrimLeftFunc(data, unicode.IsSpace); len(rest) > 0 && rest[0] == '<' {
		return Serials(bytes.NewReader(data), max)
	}

	out := []string{}
	header := true // the next non-blank line may be the header
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		if !utf8.ValidString(line) {
			return nil, fmt.Errorf("%w: the serial list is not UTF-8 text at line %d", ErrInvalid, n)
		}
		if strings.IndexFunc(line, func(r rune) bool { return unicode.IsControl(r) && r != '\t' && r != '\r' }) >= 0 {
			return nil, fmt.Errorf("%w: the serial list holds a control character at line %d; it is not a text file", ErrInvalid, n)
		}
		var entries []string
		for _, f := range strings.FieldsFunc(line, isSerialSeparator) {
			if f = strings.Trim(f, `"`); f != "" {
				entries = append(entries, f)
			}
		}
		if len(entries) == 0 {
			continue
		}
		if header {
			header = false
			if len(entries) == 1 && strings.EqualFold(entries[0], "serial") {
				continue
			}
		}
		for _, s := range entries {
			if max > 0 && len(out) == max {
				return nil, fmt.Errorf("%w: too many serials: the limit is %d at line %d", ErrInvalid, max, n)
			}
			out = append(out, s)
		}
	}
	return out, nil
}

func isSerialSeparator(r rune) bool {
	return r == ',' || r == ';' || unicode.IsSpace(r)
}
