package fccxml

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds on untrusted input. The caller bounds the bytes; these bound what
// a document of legal size can make us build or walk.
const (
	maxDepth           = 64
	maxText            = 64 << 10 // bytes of one element's text
	maxConfigs         = 100      // far above any configured max-configs-per-test
	maxSettings        = 256      // settings per block
	maxCampaignSerials = 1_000_000
)

// utf8BOM is skipped at the start of every input: editors on Windows write it.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// decoder wraps xml.Decoder with the rules every reader here shares:
// no directives (so no DTD), no unknown entities, bounded depth and text, and
// errors that wrap ErrInvalid with a line number.
type decoder struct {
	d     *xml.Decoder
	src   *source
	depth int
}

func newDecoder(r io.Reader) *decoder {
	src := &source{r: bufio.NewReader(r)}
	src.skipBOM()
	d := xml.NewDecoder(src)
	// Strict with a nil Entity map: only the five predefined entities are
	// known, any other reference is a syntax error. Nothing is ever
	// expanded from a DTD because Directive tokens are refused.
	d.Strict = true
	d.Entity = nil
	d.AutoClose = nil
	// CharsetReader stays nil, so an encoding other than UTF-8 is refused.
	return &decoder{d: d, src: src}
}

// source records the first error of the underlying reader, so that a read
// failure (an oversized upload, a dropped connection) is not reported as a
// bad document.
type source struct {
	r   *bufio.Reader
	err error
}

func (s *source) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

// ReadByte lets xml.Decoder use source without another buffer of its own.
func (s *source) ReadByte() (byte, error) {
	b, err := s.r.ReadByte()
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return b, err
}

func (s *source) skipBOM() {
	if b, err := s.r.Peek(len(utf8BOM)); err == nil && bytes.Equal(b, utf8BOM) {
		_, _ = s.r.Discard(len(utf8BOM)) // cannot fail after a successful Peek
	} else if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
}

// line is the current line of the input, for messages.
func (p *decoder) line() int {
	line, _ := p.d.InputPos()
	return line
}

// errorf returns an ErrInvalid error whose message ends with the line.
func (p *decoder) errorf(format string, args ...any) error {
	return p.errorfAt(p.line(), format, args...)
}

// errorfAt is errorf with a line remembered earlier.
func (p *decoder) errorfAt(line int, format string, args ...any) error {
	return fmt.Errorf("%w: %s at line %d", ErrInvalid, fmt.Sprintf(format, args...), line)
}

// token returns the next token. It returns io.EOF only at the clean end of
// the input.
func (p *decoder) token() (xml.Token, error) {
	tok, err := p.d.Token()
	if err != nil {
		return nil, p.wrap(err)
	}
	switch t := tok.(type) {
	case xml.Directive:
		if bytes.HasPrefix(bytes.TrimSpace(t), []byte("DOCTYPE")) {
			return nil, p.errorf("a document type declaration (DTD) is not allowed")
		}
		return nil, p.errorf("markup declarations (<!...>) are not allowed")
	case xml.StartElement:
		p.depth++
		if p.depth > maxDepth {
			return nil, p.errorf("elements nest deeper than %d levels", maxDepth)
		}
	case xml.EndElement:
		p.depth--
	}
	return tok, nil
}

// wrap classifies an error of xml.Decoder.
func (p *decoder) wrap(err error) error {
	if p.src.err != nil {
		return fmt.Errorf("reading XML document: %w", p.src.err)
	}
	if err == io.EOF {
		return io.EOF
	}
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("%w: %s at line %d", ErrInvalid, se.Msg, se.Line)
	}
	// Other decoder errors (an unsupported encoding declaration, a bad
	// namespace) carry no line of their own.
	return fmt.Errorf("%w: %s at line %d", ErrInvalid, strings.TrimPrefix(err.Error(), "xml: "), p.line())
}

// eof reports an unexpected end of input inside an element. The decoder
// itself reports unclosed elements, so this is a safety net.
func (p *decoder) eof(err error) error {
	if err == io.EOF {
		return p.errorf("unexpected end of document")
	}
	return err
}

// children walks the content of the element just opened (named parent),
// calling fn for each child element; fn must consume the child up to and
// including its end. Text between children must be white space; comments
// and processing instructions are ignored.
func (p *decoder) children(parent string, fn func(xml.StartElement) error) error {
	for {
		tok, err := p.token()
		if err != nil {
			return p.eof(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if err := fn(t); err != nil {
				return err
			}
		case xml.EndElement:
			return nil
		case xml.CharData:
			if len(bytes.TrimSpace(t)) != 0 {
				return p.errorf("unexpected text in <%s>", parent)
			}
		}
	}
}

// text reads the text of the element just opened (named name) up to and
// including its end. The element must not hold elements.
func (p *decoder) text(name string) (string, error) {
	var b []byte
	for {
		tok, err := p.token()
		if err != nil {
			return "", p.eof(err)
		}
		switch t := tok.(type) {
		case xml.CharData:
			if len(b)+len(t) > maxText {
				return "", p.errorf("text of <%s> is longer than %d bytes", name, maxText)
			}
			b = append(b, t...)
		case xml.StartElement:
			return "", p.errorf("<%s> holds text only, found element <%s>", name, t.Name.Local)
		case xml.EndElement:
			return string(b), nil
		}
	}
}

// unknown is the error for an element that has no place in parent.
func (p *decoder) unknown(se xml.StartElement, parent string) error {
	return p.errorf("unknown element <%s> in <%s>", se.Name.Local, parent)
}

// integer reads the text of the element just opened as a non-negative
// decimal integer of at most bits bits: digits only, surrounding white space
// allowed; no sign, no empty text.
func (p *decoder) integer(name string, bits int) (int64, error) {
	s, err := p.text(name)
	if err != nil {
		return 0, err
	}
	t := strings.TrimSpace(s)
	if t == "" || strings.IndexFunc(t, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return 0, p.errorf("<%s> must be a non-negative integer, found %s", name, quote(t))
	}
	n, err := strconv.ParseInt(t, 10, bits)
	if err != nil {
		return 0, p.errorf("<%s> value %s is out of range", name, quote(t))
	}
	return n, nil
}

// quote renders a value of the input for a message, cut short so that a
// hostile document cannot make the message large.
func quote(s string) string {
	const max = 40
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "..."
	}
	return strconv.Quote(s)
}
