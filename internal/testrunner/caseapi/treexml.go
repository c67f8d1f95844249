package caseapi

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"cpesuite/internal/platform/apperr"
)

var utf8BOM = []byte("\xef\xbb\xbf")

// checkTreeXML accepts a well-formed XML document with exactly one root
// element and nothing but whitespace, comments and processing instructions
// around it. Any <!...> directive (DOCTYPE, ENTITY, ...) is refused: a tree
// has no use for a DTD, and refusing it rules out entity expansion and
// external-entity tricks against whatever reads the tree later, not only
// against this check (encoding/xml itself expands no custom entities).
func checkTreeXML(data []byte) error {
	data = bytes.TrimPrefix(data, utf8BOM)
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.CharsetReader = charsetReader
	roots, depth := 0, 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return invalidTree("%s", strings.TrimPrefix(err.Error(), "xml: "))
		}
		switch tok := tok.(type) {
		case xml.Directive:
			return apperr.Invalid("TREE_DTD_REFUSED", "tree file must not contain a DOCTYPE or other <!...> declaration (line %d)", line(dec, data))
		case xml.StartElement:
			if depth == 0 {
				roots++
				if roots > 1 {
					return invalidTree("more than one root element (<%s> on line %d)", tok.Name.Local, line(dec, data))
				}
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if depth == 0 && len(bytes.TrimSpace(tok)) > 0 {
				return invalidTree("text outside the root element (line %d)", line(dec, data))
			}
		}
	}
	if roots == 0 {
		return invalidTree("no root element")
	}
	return nil
}

func invalidTree(format string, args ...any) error {
	return apperr.Invalid("INVALID_TREE_XML", "tree file is not well-formed XML: "+format, args...)
}

// line is the 1-based line the decoder has reached.
func line(dec *xml.Decoder, data []byte) int {
	off := min(int(dec.InputOffset()), len(data))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// charsetReader reads the single-byte encodings old tree exports declare
// besides UTF-8; anything else is refused with a message saying so.
func charsetReader(label string, in io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "us-ascii", "ascii", "iso-8859-1", "iso8859-1", "latin1", "latin-1":
		return &latin1Reader{r: in}, nil
	}
	return nil, fmt.Errorf("encoding %q is not supported; use UTF-8", label)
}

// latin1Reader decodes ISO-8859-1 (a superset of US-ASCII) into UTF-8.
// A byte above 0x7f becomes two, so what does not fit p waits in pending.
type latin1Reader struct {
	r       io.Reader
	pending []byte
}

func (l *latin1Reader) Read(p []byte) (int, error) {
	if len(l.pending) == 0 {
		buf := make([]byte, len(p))
		n, err := l.r.Read(buf)
		out := make([]byte, 0, 2*n)
		for _, b := range buf[:n] {
			if b < 0x80 {
				out = append(out, b)
			} else {
				out = append(out, 0xc0|b>>6, 0x80|b&0x3f)
			}
		}
		l.pending = out
		if n == 0 {
			return 0, err
		}
	}
	n := copy(p, l.pending)
	l.pending = l.pending[n:]
	return n, nil
}
