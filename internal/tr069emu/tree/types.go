package tree

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"cpesuite/internal/cwmp"
)

// Type is a TR-069 parameter type.
type Type uint8

// The parameter types of TR-069 (A.2.1 / TR-106 data types).
const (
	String Type = iota
	Int
	UnsignedInt
	Boolean
	DateTime
	Base64
	Long
	UnsignedLong
)

var typeNames = [...]string{
	String:       "string",
	Int:          "int",
	UnsignedInt:  "unsignedInt",
	Boolean:      "boolean",
	DateTime:     "dateTime",
	Base64:       "base64",
	Long:         "long",
	UnsignedLong: "unsignedLong",
}

var typeXSD = [...]string{
	String:       cwmp.TypeString,
	Int:          cwmp.TypeInt,
	UnsignedInt:  cwmp.TypeUnsignedInt,
	Boolean:      cwmp.TypeBoolean,
	DateTime:     cwmp.TypeDateTime,
	Base64:       cwmp.TypeBase64,
	Long:         cwmp.TypeLong,
	UnsignedLong: cwmp.TypeUnsignedLong,
}

// ParseType accepts "string", "xsd:string", "int", "unsignedInt", "boolean",
// "dateTime", "base64", "long", "unsignedLong", with or without the xsd:
// prefix, case-insensitively.
func ParseType(s string) (Type, error) {
	local := s
	if len(local) >= 4 && strings.EqualFold(local[:4], "xsd:") {
		local = local[4:]
	}
	for t, n := range typeNames {
		if strings.EqualFold(local, n) {
			return Type(t), nil
		}
	}
	return String, fmt.Errorf("unknown parameter type %q", s)
}

// XSD returns the xsi:type spelling, e.g. "xsd:unsignedInt".
func (t Type) XSD() string {
	if int(t) < len(typeXSD) {
		return typeXSD[t]
	}
	return cwmp.TypeString
}

// Name returns the spelling without prefix, e.g. "unsignedInt".
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "Type(" + strconv.Itoa(int(t)) + ")"
}

// Check reports whether v is a valid value of type t (range of int and
// unsignedInt, boolean spellings 0/1/true/false, ISO 8601 date-time, base64).
//
// Numbers must not carry white space: a value stored here is sent to the
// ACS as is, and ACSes parse strictly.
func (t Type) Check(v string) error {
	var err error
	switch t {
	case String:
		return nil
	case Int:
		_, err = strconv.ParseInt(v, 10, 32)
	case UnsignedInt:
		_, err = strconv.ParseUint(v, 10, 32)
	case Long:
		_, err = strconv.ParseInt(v, 10, 64)
	case UnsignedLong:
		_, err = strconv.ParseUint(v, 10, 64)
	case Boolean:
		_, err = cwmp.ParseBool(v)
	case DateTime:
		_, err = cwmp.ParseDateTime(v)
	case Base64:
		_, err = base64.StdEncoding.DecodeString(v)
	default:
		return fmt.Errorf("unknown type %d", t)
	}
	if err != nil {
		return fmt.Errorf("%q is not a valid %s", v, t)
	}
	return nil
}

// sameValue reports whether a and b are the same value of type t, so that
// writing "true" over "1" is not reported as a change (nor stored).
func (t Type) sameValue(a, b string) bool {
	if a == b {
		return true
	}
	switch t {
	case Boolean:
		x, err1 := cwmp.ParseBool(a)
		y, err2 := cwmp.ParseBool(b)
		return err1 == nil && err2 == nil && x == y
	case Int, Long:
		x, err1 := strconv.ParseInt(a, 10, 64)
		y, err2 := strconv.ParseInt(b, 10, 64)
		return err1 == nil && err2 == nil && x == y
	case UnsignedInt, UnsignedLong:
		x, err1 := strconv.ParseUint(a, 10, 64)
		y, err2 := strconv.ParseUint(b, 10, 64)
		return err1 == nil && err2 == nil && x == y
	case DateTime:
		x, err1 := cwmp.ParseDateTime(a)
		y, err2 := cwmp.ParseDateTime(b)
		return err1 == nil && err2 == nil && x.Equal(y)
	}
	return false
}

// Param is one node of the tree as readers see it. Objects have names that
// end with "." and no value.
type Param struct {
	Name         string
	Value        string
	Type         Type
	Writable     bool
	Notification int // 0 off, 1 passive, 2 active
	Object       bool
}

// Error is a failure of a tree operation, carrying the CWMP fault the CPE
// answers with (9005 invalid name, 9007 invalid value, 9008 not writable,
// 9003 invalid arguments, 9004 resources exceeded).
type Error struct {
	Code cwmp.FaultCode
	Name string // the parameter or object concerned, may be empty
	Msg  string
}

// Error is written to be usable as a CWMP FaultString: the engine sends it
// to the ACS as is, so it carries no package prefix.
func (e *Error) Error() string {
	if e.Name == "" {
		return e.Msg
	}
	return e.Name + ": " + e.Msg
}

func errorf(code cwmp.FaultCode, name, format string, args ...any) *Error {
	return &Error{Code: code, Name: name, Msg: fmt.Sprintf(format, args...)}
}

// FormatError is a tree file that could not be loaded; Line is 1-based, 0
// when not known.
type FormatError struct {
	Line int
	Msg  string
}

func (e *FormatError) Error() string {
	if e.Line > 0 {
		return "tree file: line " + strconv.Itoa(e.Line) + ": " + e.Msg
	}
	return "tree file: " + e.Msg
}

// Set is one value to write.
type Set struct {
	Name  string
	Value string
	Type  string // xsi:type as received; "" keeps the parameter's type
}

// Change is one parameter whose value changed.
type Change struct {
	Name         string
	Value        string
	Notification int
}

// SetOptions says how a write is checked.
type SetOptions struct {
	// CheckWritable refuses read-only parameters (9008): set for the ACS,
	// not for the operator's API edits.
	CheckWritable bool
	// CheckType refuses an xsi:type that differs from the parameter's (9006).
	CheckType bool
}

// SetFaults is the error of SetValues: one fault per refused parameter, as
// SetParameterValuesFault entries.
type SetFaults struct {
	Faults []cwmp.SPVFault
}

func (e *SetFaults) Error() string {
	switch len(e.Faults) {
	case 0:
		return "no parameter set"
	case 1:
		f := e.Faults[0]
		return fmt.Sprintf("%s: %s (%d)", f.ParameterName, f.FaultString, f.FaultCode)
	}
	f := e.Faults[0]
	return fmt.Sprintf("%d parameters refused, first %s: %s (%d)", len(e.Faults), f.ParameterName, f.FaultString, f.FaultCode)
}

var _ error = (*Error)(nil)
var _ error = (*FormatError)(nil)
var _ error = (*SetFaults)(nil)
