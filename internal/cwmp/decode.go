package cwmp

import (
	"strconv"
	"strings"
	"sync"
	"time"
)

// Decode parses one SOAP envelope. Empty or blank input is ErrEmpty.
//
// Errors are *SyntaxError (not well-formed, over a limit, or a DTD, which
// also matches ErrDTD), *EnvelopeError (not a SOAP 1.1 envelope with one
// body element in a cwmp namespace), *UnknownMethodError and *ValueError. With the last two the
// envelope is returned too, with its header and Version but a nil Body, so
// the receiver can answer a fault carrying the same cwmp:ID.
//
// Strings in the result share memory with one copy of data, so data may be
// reused as soon as Decode returns.
func Decode(data []byte) (*Envelope, error) {
	if isBlankBytes(data) {
		return nil, ErrEmpty
	}
	d := decoderPool.Get().(*decoder)
	d.s.init(string(data))
	env, err := d.envelope()
	// Zeroing drops every reference into the input before pooling.
	*d = decoder{}
	decoderPool.Put(d)
	return env, err
}

// decoderPool recycles decoders: the interface calls into the message types
// make a decoder escape, and at about 1.3 KB of buffers it is worth reusing.
var decoderPool = sync.Pool{New: func() any { return new(decoder) }}

// The ranks of the places the envelope's cwmp version is read from: the
// namespace bound to the RPC element wins over the fault detail, then the
// header elements, then any cwmp declaration on the Envelope.
const (
	rankNone = iota
	rankDecl
	rankHeader
	rankFault
	rankBody
)

// decoder walks the scanner's tokens with one method per shape of content:
// children for element content, text for simple content, skip for anything
// unknown. Each consumes the current element up to its end tag.
type decoder struct {
	s        scanner
	version  Version
	verRank  int
	valueErr *ValueError
}

func (d *decoder) envelope() (*Envelope, error) {
	if err := d.s.next(); err != nil {
		return nil, err
	}
	if d.s.local != "Envelope" {
		return nil, &EnvelopeError{Msg: "root element is <" + clip(d.s.local, 40) + ">"}
	}
	if ns := d.s.lookupNS(d.s.prefix); ns != NamespaceSOAPEnv {
		return nil, &EnvelopeError{Msg: "Envelope namespace is " + strconv.Quote(clip(ns, 80)) + ", want " + NamespaceSOAPEnv}
	}
	for _, b := range d.s.ns {
		if v, ok := ParseNamespace(b.uri); ok {
			d.setVersion(v, rankDecl)
			break
		}
	}
	env := &Envelope{}
	var body Message
	var unknown *UnknownMethodError
	bodies := 0
	err := d.children(func(name string) error {
		switch name {
		case "Header":
			return d.header(env)
		case "Body":
			bodies++
			if bodies > 1 {
				return &EnvelopeError{Msg: "more than one Body"}
			}
			return d.body(&body, &unknown)
		}
		return d.skip()
	})
	if err != nil {
		return nil, err
	}
	// The scanner rejects anything but comments, processing instructions
	// and white space after the root element.
	if err := d.s.next(); err != nil {
		return nil, err
	}
	if bodies == 0 {
		return nil, &EnvelopeError{Msg: "missing Body"}
	}
	env.Version = d.version
	switch {
	case unknown != nil:
		return env, unknown
	case d.valueErr != nil:
		return env, d.valueErr
	case body == nil:
		return nil, &EnvelopeError{Msg: "empty Body"}
	}
	env.Body = body
	return env, nil
}

func (d *decoder) header(env *Envelope) error {
	return d.children(func(name string) error {
		switch name {
		case "ID":
			d.noteVersion(rankHeader)
			env.IDMustUnderstand = d.mustUnderstand()
			return d.str(&env.ID)
		case "HoldRequests":
			d.noteVersion(rankHeader)
			b := new(bool)
			env.HoldRequests = b
			return d.boolean(b)
		case "NoMoreRequests":
			d.noteVersion(rankHeader)
			b := new(bool)
			env.NoMoreRequests = b
			return d.boolean(b)
		case "SessionTimeout":
			d.noteVersion(rankHeader)
			n := new(uint32)
			env.SessionTimeout = n
			return d.uint32(n)
		case "SupportedCWMPVersions":
			d.noteVersion(rankHeader)
			return d.str(&env.SupportedCWMPVersions)
		case "UseCWMPVersion":
			d.noteVersion(rankHeader)
			return d.str(&env.UseCWMPVersion)
		}
		return d.skip()
	})
}

func (d *decoder) body(dst *Message, unknown **UnknownMethodError) error {
	return d.children(func(name string) error {
		if *dst != nil || *unknown != nil {
			return &EnvelopeError{Msg: "more than one element in Body"}
		}
		if ns := d.s.lookupNS(d.s.prefix); !rpcNamespace(name, ns) {
			// Taking a foreign namespace for cwmp-1-0 would let any XML
			// that happens to use CWMP's local names pass as CWMP.
			return &EnvelopeError{Msg: "<" + clip(name, 40) + "> is in namespace " + strconv.Quote(clip(ns, 80)) +
				", want " + cwmpURNPrefix + "0 to " + cwmpURNPrefix + "4"}
		}
		d.noteVersion(rankBody)
		newMsg := methods[name]
		if newMsg == nil {
			*unknown = &UnknownMethodError{Name: name}
			return d.skip()
		}
		m := newMsg()
		if err := m.decodeXML(d); err != nil {
			return err
		}
		*dst = m
		return nil
	})
}

// rpcNamespace reports whether a Body element in namespace ns may be an
// RPC: a cwmp namespace, the SOAP envelope namespace for a plain SOAP Fault,
// or no namespace at all, which some CPE stacks write.
func rpcNamespace(name, ns string) bool {
	if ns == "" {
		return true
	}
	if _, ok := ParseNamespace(ns); ok {
		return true
	}
	return name == "Fault" && ns == NamespaceSOAPEnv
}

// noteVersion records the cwmp version of the namespace bound to the current
// element, if it is a cwmp namespace and rank beats what was seen so far.
func (d *decoder) noteVersion(rank int) {
	if rank <= d.verRank {
		return
	}
	if v, ok := ParseNamespace(d.s.lookupNS(d.s.prefix)); ok {
		d.setVersion(v, rank)
	}
}

func (d *decoder) setVersion(v Version, rank int) {
	if rank > d.verRank {
		d.version, d.verRank = v, rank
	}
}

func (d *decoder) mustUnderstand() bool {
	a, ok := d.s.attr("mustUnderstand")
	if !ok {
		return false
	}
	v := strings.TrimSpace(a.value)
	return v == "1" || v == "true"
}

// children calls fn with the local name of each child element of the
// current element; fn must consume that child. Text between children is
// ignored, as vendors indent freely.
func (d *decoder) children(fn func(name string) error) error {
	if d.s.empty {
		return nil
	}
	for {
		if err := d.s.next(); err != nil {
			return err
		}
		switch d.s.kind {
		case tokStart:
			if err := fn(d.s.local); err != nil {
				return err
			}
		case tokEnd:
			return nil
		case tokText:
			if err := d.checkText(); err != nil {
				return err
			}
		default:
			return d.s.syntaxError(d.s.pos, "unexpected end of input")
		}
	}
}

// skip consumes the current element and everything inside it.
func (d *decoder) skip() error {
	if d.s.empty {
		return nil
	}
	depth := d.s.depth()
	for {
		if err := d.s.next(); err != nil {
			return err
		}
		switch d.s.kind {
		case tokEnd:
			if d.s.depth() < depth {
				return nil
			}
		case tokText:
			if err := d.checkText(); err != nil {
				return err
			}
		case tokEOF:
			return d.s.syntaxError(d.s.pos, "unexpected end of input")
		}
	}
}

// checkText validates the references in text that is not otherwise read, so
// that a malformed document is rejected wherever the error is.
func (d *decoder) checkText() error {
	if !d.s.special {
		return nil
	}
	if _, bad := unescape(d.s.text); bad >= 0 {
		return d.s.syntaxError(d.s.offset+bad, "invalid entity or character reference")
	}
	return nil
}

// text returns the character data of the current element, concatenating
// text and CDATA sections. The common case of one plain text token is a
// substring of the input.
func (d *decoder) text() (string, error) {
	if d.s.empty {
		return "", nil
	}
	name := d.s.local
	if err := d.s.next(); err != nil {
		return "", err
	}
	if d.s.kind == tokEnd {
		return "", nil
	}
	var first string
	if d.s.kind == tokText {
		t, err := d.tokenText()
		if err != nil {
			return "", err
		}
		if err := d.s.next(); err != nil {
			return "", err
		}
		if d.s.kind == tokEnd {
			return t, nil
		}
		first = t
	}
	var b strings.Builder
	b.WriteString(first)
	for {
		switch d.s.kind {
		case tokText:
			t, err := d.tokenText()
			if err != nil {
				return "", err
			}
			b.WriteString(t)
		case tokStart:
			d.invalid(name, "simple content", "<"+d.s.local+">")
			if err := d.skip(); err != nil {
				return "", err
			}
		case tokEnd:
			return b.String(), nil
		default:
			return "", d.s.syntaxError(d.s.pos, "unexpected end of input")
		}
		if err := d.s.next(); err != nil {
			return "", err
		}
	}
}

func (d *decoder) tokenText() (string, error) {
	t := d.s.text
	if !d.s.special {
		return t, nil
	}
	u, bad := unescape(t)
	if bad >= 0 {
		return "", d.s.syntaxError(d.s.offset+bad, "invalid entity or character reference")
	}
	return u, nil
}

// invalid records the first ValueError; decoding goes on so that syntax
// errors later in the document still win.
func (d *decoder) invalid(element, typ, text string) {
	if d.valueErr == nil {
		d.valueErr = &ValueError{Element: element, Type: typ, Text: clip(text, 64)}
	}
}

func (d *decoder) str(dst *string) error {
	s, err := d.text()
	*dst = s
	return err
}

func (d *decoder) uint32(dst *uint32) error {
	name := d.s.local
	s, err := d.text()
	if err != nil {
		return err
	}
	t := strings.TrimSpace(s)
	if t == "" {
		*dst = 0
		return nil
	}
	n, perr := strconv.ParseUint(t, 10, 32)
	if perr != nil {
		d.invalid(name, "unsignedInt", s)
	}
	*dst = uint32(n)
	return nil
}

func (d *decoder) int32(dst *int32) error {
	name := d.s.local
	s, err := d.text()
	if err != nil {
		return err
	}
	t := strings.TrimSpace(s)
	if t == "" {
		*dst = 0
		return nil
	}
	n, perr := strconv.ParseInt(t, 10, 32)
	if perr != nil {
		d.invalid(name, "int", s)
	}
	*dst = int32(n)
	return nil
}

func (d *decoder) faultCode(dst *FaultCode) error {
	var n uint32
	err := d.uint32(&n)
	*dst = FaultCode(n)
	return err
}

func (d *decoder) boolean(dst *bool) error {
	name := d.s.local
	s, err := d.text()
	if err != nil {
		return err
	}
	if isBlank(s) {
		*dst = false
		return nil
	}
	b, perr := ParseBool(s)
	if perr != nil {
		d.invalid(name, "boolean", s)
	}
	*dst = b
	return nil
}

// dateTime is lenient on purpose: CPEs without a clock send all kinds of
// placeholders, and refusing their Inform would lock them out. Text that is
// not a dateTime reads as the zero time, which is TR-069's Unknown Time.
func (d *decoder) dateTime(dst *time.Time) error {
	s, err := d.text()
	if err != nil {
		return err
	}
	t, perr := ParseDateTime(s)
	if perr != nil {
		t = time.Time{}
	}
	*dst = t
	return nil
}

func (d *decoder) value(dst *Value) error {
	dst.Type = ""
	if a, ok := d.s.attr("type"); ok {
		dst.Type = attrValue(a.value)
	}
	return d.str(&dst.Text)
}

// arrayLen returns the length a SOAP-ENC:arrayType attribute announces, as a
// capacity hint capped by what the rest of the input could hold, so a lying
// peer cannot make the decoder allocate more than the input justifies.
func (d *decoder) arrayLen() int {
	a, ok := d.s.attr("arrayType")
	if !ok {
		return 0
	}
	v := strings.TrimSpace(a.value)
	i := strings.LastIndexByte(v, '[')
	if i < 0 || !strings.HasSuffix(v, "]") {
		return 0
	}
	n, err := strconv.Atoi(v[i+1 : len(v)-1])
	if err != nil || n <= 0 {
		return 0
	}
	return min(n, (len(d.s.src)-d.s.pos)/8)
}

func (d *decoder) stringArray(dst *[]string) error {
	if n := d.arrayLen(); n > 0 {
		*dst = make([]string, 0, n)
	}
	return d.children(func(string) error {
		*dst = append(*dst, "")
		return d.str(&(*dst)[len(*dst)-1])
	})
}

// item is a struct that appears as an array element.
type item[T any] interface {
	*T
	decodeXML(d *decoder) error
	appendFields(e *encoder)
}

// decodeArray reads a SOAP-ENC array; the names of the array's elements are
// not checked, as SOAP encoding gives them no meaning.
func decodeArray[T any, P item[T]](d *decoder, dst *[]T) error {
	if n := d.arrayLen(); n > 0 {
		*dst = make([]T, 0, n)
	}
	return d.children(func(string) error {
		var zero T
		*dst = append(*dst, zero)
		return P(&(*dst)[len(*dst)-1]).decodeXML(d)
	})
}

func isBlankBytes(b []byte) bool {
	for _, c := range b {
		if !isSpaceByte(c) {
			return false
		}
	}
	return true
}
