package cwmp

import (
	"errors"
	"fmt"
)

// ErrEmpty is returned by Decode for input that is empty or only white space.
// In CWMP an empty HTTP POST is a signal (the CPE has nothing more to send),
// not an envelope, so callers test for it with errors.Is.
var ErrEmpty = errors.New("cwmp: empty message")

// ErrDTD is wrapped by the SyntaxError returned for a document type
// declaration or any other markup declaration (<!DOCTYPE, <!ENTITY, ...).
// CWMP never uses them and they are the door to entity expansion attacks.
var ErrDTD = errors.New("cwmp: DTD and entity declarations are not allowed")

// SyntaxError reports input that is not well-formed XML, or that exceeds one
// of the decoder's limits, at a byte offset.
type SyntaxError struct {
	Offset int
	Msg    string
	// Err is ErrDTD for markup declarations and nil otherwise.
	Err error
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("cwmp: xml syntax error at offset %d: %s", e.Offset, e.Msg)
}

// Unwrap returns ErrDTD for markup declarations.
func (e *SyntaxError) Unwrap() error { return e.Err }

// EnvelopeError reports well-formed XML that is not a SOAP 1.1 envelope with
// exactly one body element: a wrong root element or namespace, a missing or
// empty Body, more than one RPC in it, or an RPC in a namespace that is not
// urn:dslforum-org:cwmp-1-0 to cwmp-1-4.
type EnvelopeError struct {
	Msg string
}

func (e *EnvelopeError) Error() string { return "cwmp: not a cwmp envelope: " + e.Msg }

// UnknownMethodError reports a body element that is not a CWMP RPC this
// package knows. Decode returns it together with the envelope (header and
// Version filled, Body nil), so that an ACS can answer fault 8000 and a CPE
// fault 9000 with the same cwmp:ID.
type UnknownMethodError struct {
	Name string
}

func (e *UnknownMethodError) Error() string { return "cwmp: method not supported: " + e.Name }

// ValueError reports an element whose text is not a valid value of its
// schema type, such as "abc" in an xsd:unsignedInt. Like UnknownMethodError
// it comes with the envelope so the receiver can answer an invalid-arguments
// fault (8003 or 9003) with the same cwmp:ID.
type ValueError struct {
	Element string // local name of the element
	Type    string // schema type expected, such as "unsignedInt"
	Text    string
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("cwmp: invalid %s %q in <%s>", e.Type, e.Text, e.Element)
}
