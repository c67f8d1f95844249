package cwmp

import (
	"errors"
	"reflect"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Encode returns the XML of env; see AppendEncode.
func Encode(env *Envelope) ([]byte, error) {
	e := encoderPool.Get().(*encoder)
	e.b = e.scratch[:0]
	err := e.envelope(env)
	var out []byte
	if err == nil {
		out = append(make([]byte, 0, len(e.b)), e.b...)
	}
	e.release()
	return out, err
}

// AppendEncode appends the XML of env to dst and returns the extended
// buffer. The output is indented for people reading logs; it declares the
// prefixes SOAP-ENV, SOAP-ENC, xsd, xsi and cwmp (bound to env.Version's
// namespace) on the Envelope. Strings that are not valid UTF-8 or hold
// characters XML cannot carry are written with U+FFFD in their place.
func AppendEncode(dst []byte, env *Envelope) ([]byte, error) {
	e := encoderPool.Get().(*encoder)
	e.scratch, e.b = e.b, dst
	err := e.envelope(env)
	dst = e.b
	e.b = e.scratch
	e.release()
	return dst, err
}

// encoderPool recycles encoders with a scratch buffer, so that Encode costs
// one allocation of the exact output size.
var encoderPool = sync.Pool{New: func() any { return &encoder{scratch: make([]byte, 0, 8192)} }}

// release returns e to the pool unless its scratch buffer grew too big to
// keep around.
func (e *encoder) release() {
	if cap(e.b) > cap(e.scratch) {
		e.scratch = e.b
	}
	e.b, e.depth, e.open = nil, 0, false
	if cap(e.scratch) <= 256<<10 {
		encoderPool.Put(e)
	}
}

func (e *encoder) envelope(env *Envelope) error {
	switch {
	case env == nil:
		return errors.New("cwmp: encode: nil envelope")
	case env.Body == nil || reflect.ValueOf(env.Body).IsNil():
		return errors.New("cwmp: encode: nil body")
	case !env.Version.Valid():
		return errors.New("cwmp: encode: invalid version " + strconv.Itoa(int(env.Version)))
	}
	e.raw(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<SOAP-ENV:Envelope xmlns:SOAP-ENV="` + NamespaceSOAPEnv +
		`" xmlns:SOAP-ENC="` + NamespaceSOAPEnc +
		`" xmlns:xsd="` + NamespaceXSD +
		`" xmlns:xsi="` + NamespaceXSI +
		`" xmlns:cwmp="`)
	e.raw(env.Version.Namespace())
	e.raw(`">`)
	e.depth = 1
	e.header(env)
	e.start("SOAP-ENV:Body")
	if f, ok := env.Body.(*Fault); ok {
		e.start("SOAP-ENV:Fault")
		f.appendXML(e)
		e.end("SOAP-ENV:Fault")
	} else {
		e.startMethod(env.Body.Method())
		env.Body.appendXML(e)
		e.endMethod(env.Body.Method())
	}
	e.end("SOAP-ENV:Body")
	e.depth = 0
	e.raw("\n</SOAP-ENV:Envelope>\n")
	return nil
}

func (e *encoder) header(env *Envelope) {
	hasID := env.ID != "" || env.IDMustUnderstand
	if !hasID && env.HoldRequests == nil && env.NoMoreRequests == nil && env.SessionTimeout == nil &&
		env.SupportedCWMPVersions == "" && env.UseCWMPVersion == "" {
		return
	}
	e.start("SOAP-ENV:Header")
	if hasID {
		mu := ""
		if env.IDMustUnderstand {
			mu = "1"
		}
		e.headerElem("ID", mu, env.ID)
	}
	if env.HoldRequests != nil {
		e.headerElem("HoldRequests", "1", boolText(*env.HoldRequests))
	}
	if env.NoMoreRequests != nil {
		e.headerElem("NoMoreRequests", "", boolText(*env.NoMoreRequests))
	}
	if env.SessionTimeout != nil {
		e.headerElem("SessionTimeout", "0", strconv.FormatUint(uint64(*env.SessionTimeout), 10))
	}
	if env.SupportedCWMPVersions != "" {
		e.headerElem("SupportedCWMPVersions", "0", env.SupportedCWMPVersions)
	}
	if env.UseCWMPVersion != "" {
		e.headerElem("UseCWMPVersion", "1", env.UseCWMPVersion)
	}
	e.end("SOAP-ENV:Header")
}

// headerElem writes <cwmp:name SOAP-ENV:mustUnderstand="mu">text</cwmp:name>,
// leaving the attribute out when mu is empty.
func (e *encoder) headerElem(name, mu, text string) {
	e.newline()
	e.raw("<cwmp:")
	e.raw(name)
	if mu != "" {
		e.raw(` SOAP-ENV:mustUnderstand="`)
		e.raw(mu)
		e.raw(`"`)
	}
	e.raw(">")
	e.text(text)
	e.raw("</cwmp:")
	e.raw(name)
	e.raw(">")
	e.open = false
}

// encoder appends indented XML. open is true right after a start tag, so an
// element without children closes on the same line.
type encoder struct {
	b       []byte
	scratch []byte // Encode's buffer, kept while AppendEncode borrows e.b
	depth   int
	open    bool
}

const indent = "                                                                " // 64 spaces

func (e *encoder) raw(s string) { e.b = append(e.b, s...) }

func (e *encoder) newline() {
	n := min(2*e.depth, len(indent))
	e.b = append(e.b, '\n')
	e.b = append(e.b, indent[:n]...)
}

func (e *encoder) start(name string) {
	e.newline()
	e.b = append(e.b, '<')
	e.b = append(e.b, name...)
	e.b = append(e.b, '>')
	e.depth++
	e.open = true
}

func (e *encoder) end(name string) {
	e.depth--
	if !e.open {
		e.newline()
	}
	e.b = append(e.b, "</"...)
	e.b = append(e.b, name...)
	e.b = append(e.b, '>')
	e.open = false
}

func (e *encoder) startMethod(method string) {
	e.newline()
	e.raw("<cwmp:")
	e.raw(method)
	e.raw(">")
	e.depth++
	e.open = true
}

func (e *encoder) endMethod(method string) {
	e.depth--
	if !e.open {
		e.newline()
	}
	e.raw("</cwmp:")
	e.raw(method)
	e.raw(">")
	e.open = false
}

// startArray writes <name SOAP-ENC:arrayType="itemType[n]">.
func (e *encoder) startArray(name, itemType string, n int) {
	e.newline()
	e.b = append(e.b, '<')
	e.b = append(e.b, name...)
	e.b = append(e.b, ` SOAP-ENC:arrayType="`...)
	e.b = append(e.b, itemType...)
	e.b = append(e.b, '[')
	e.b = strconv.AppendInt(e.b, int64(n), 10)
	e.b = append(e.b, "]\">"...)
	e.depth++
	e.open = true
}

// startTyped writes <name xsi:type="xsiType">.
func (e *encoder) startTyped(name, xsiType string) {
	e.newline()
	e.b = append(e.b, '<')
	e.b = append(e.b, name...)
	e.b = append(e.b, ` xsi:type="`...)
	e.b = append(e.b, xsiType...)
	e.b = append(e.b, "\">"...)
	e.depth++
	e.open = true
}

// leaf writes <name>; the caller writes the content and closes with endLeaf.
func (e *encoder) leaf(name string) {
	e.newline()
	e.b = append(e.b, '<')
	e.b = append(e.b, name...)
	e.b = append(e.b, '>')
}

func (e *encoder) endLeaf(name string) {
	e.b = append(e.b, "</"...)
	e.b = append(e.b, name...)
	e.b = append(e.b, '>')
	e.open = false
}

func (e *encoder) str(name, s string) {
	e.leaf(name)
	e.text(s)
	e.endLeaf(name)
}

func (e *encoder) uint(name string, n uint64) {
	e.leaf(name)
	e.b = strconv.AppendUint(e.b, n, 10)
	e.endLeaf(name)
}

func (e *encoder) int(name string, n int64) {
	e.leaf(name)
	e.b = strconv.AppendInt(e.b, n, 10)
	e.endLeaf(name)
}

// bool writes "1" or "0": every xsd:boolean parser accepts them, and CPEs
// whose parsers are not quite xsd:boolean ones are more likely to expect
// digits than words.
func (e *encoder) bool(name string, b bool) { e.str(name, boolText(b)) }

func boolText(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func (e *encoder) time(name string, t time.Time) {
	e.leaf(name)
	e.b = appendDateTime(e.b, t)
	e.endLeaf(name)
}

// value writes <name xsi:type="type">text</name>, without xsi:type when the
// value has none so that decoding gives back exactly what was encoded.
func (e *encoder) value(name string, v Value) {
	e.newline()
	e.b = append(e.b, '<')
	e.b = append(e.b, name...)
	if v.Type != "" {
		e.b = append(e.b, ` xsi:type="`...)
		e.b = appendEscaped(e.b, v.Type, true)
		e.b = append(e.b, '"')
	}
	e.b = append(e.b, '>')
	e.text(v.Text)
	e.endLeaf(name)
}

func (e *encoder) strings(name string, list []string) {
	e.startArray(name, "xsd:string", len(list))
	for _, s := range list {
		e.str("string", s)
	}
	e.end(name)
}

func (e *encoder) text(s string) { e.b = appendEscaped(e.b, s, false) }

// appendArray writes a SOAP-ENC array of structs, each in an element named
// itemName and typed cwmp:itemName.
func appendArray[T any, P item[T]](e *encoder, name, itemName string, items []T) {
	e.newline()
	e.b = append(e.b, '<')
	e.b = append(e.b, name...)
	e.b = append(e.b, ` SOAP-ENC:arrayType="cwmp:`...)
	e.b = append(e.b, itemName...)
	e.b = append(e.b, '[')
	e.b = strconv.AppendInt(e.b, int64(len(items)), 10)
	e.b = append(e.b, "]\">"...)
	e.depth++
	e.open = true
	for i := range items {
		e.start(itemName)
		P(&items[i]).appendFields(e)
		e.end(itemName)
	}
	e.end(name)
}

// escText and escAttr mark the ASCII bytes that need escaping in text and in
// double-quoted attribute values. Tab and newline survive in text but are
// normalised to spaces in attributes, so there they are written as
// references; CR is always a reference because parsers normalise it away.
var escText, escAttr [utf8.RuneSelf]bool

func init() {
	for c := 0; c < 0x20; c++ {
		escText[c] = c != '\t' && c != '\n'
		escAttr[c] = true
	}
	for _, c := range []byte{'<', '>', '&'} {
		escText[c] = true
		escAttr[c] = true
	}
	escAttr['"'] = true
}

// appendEscaped appends s escaped for text or, with inAttr, for a
// double-quoted attribute value.
func appendEscaped(b []byte, s string, inAttr bool) []byte {
	esc := &escText
	if inAttr {
		esc = &escAttr
	}
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !esc[c] {
				i++
				continue
			}
			b = append(b, s[last:i]...)
			switch c {
			case '<':
				b = append(b, "&lt;"...)
			case '>':
				b = append(b, "&gt;"...)
			case '&':
				b = append(b, "&amp;"...)
			case '"':
				b = append(b, "&quot;"...)
			case '\r':
				b = append(b, "&#xD;"...)
			case '\n':
				b = append(b, "&#xA;"...)
			case '\t':
				b = append(b, "&#x9;"...)
			default:
				b = append(b, "\uFFFD"...)
			}
			i++
			last = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || !isXMLChar(r) {
			b = append(b, s[last:i]...)
			b = append(b, "\uFFFD"...)
			i += size
			last = i
			continue
		}
		i += size
	}
	return append(b, s[last:]...)
}
