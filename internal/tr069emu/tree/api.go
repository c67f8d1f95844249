// Package tree is the parameter tree of an emulated CPE: an immutable
// Template loaded from a tree file and shared by every device, and a Tree,
// one per device, that keeps only that device's differences from it.
//
// SKELETON: the exported signatures below are the contract the emulator
// engine is written against. Bodies are filled in by the implementation.
package tree

import (
	"io"

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

// ParseType accepts "string", "xsd:string", "int", "unsignedInt", "boolean",
// "dateTime", "base64", "long", "unsignedLong", with or without the xsd:
// prefix, case-insensitively.
func ParseType(s string) (Type, error) { panic("unimplemented") }

// XSD returns the xsi:type spelling, e.g. "xsd:unsignedInt".
func (t Type) XSD() string { panic("unimplemented") }

// Name returns the spelling without prefix, e.g. "unsignedInt".
func (t Type) String() string { panic("unimplemented") }

// Check reports whether v is a valid value of type t (range of int and
// unsignedInt, boolean spellings 0/1/true/false, ISO 8601 date-time, base64).
func (t Type) Check(v string) error { panic("unimplemented") }

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

func (e *Error) Error() string { panic("unimplemented") }

// FormatError is a tree file that could not be loaded; Line is 1-based, 0
// when not known.
type FormatError struct {
	Line int
	Msg  string
}

func (e *FormatError) Error() string { panic("unimplemented") }

// Template is an immutable parameter tree loaded from a tree file.
type Template struct{}

// MaxFileBytes is the largest tree file Parse accepts.
const MaxFileBytes = 8 << 20

// Parse reads a tree file (see FORMAT.md). It refuses DTDs and entity
// declarations, files over maxBytes, unknown types, duplicate names, values
// that do not fit their type, and names outside one root.
func Parse(r io.Reader, maxBytes int64) (*Template, error) { panic("unimplemented") }

// Base returns the shipped base tree of a data model: "TR-098" or "TR-181".
func Base(dataModel string) (*Template, error) { panic("unimplemented") }

// BaseFiles returns the file names and bytes of the shipped base trees,
// written to the tree folder on first start.
func BaseFiles() map[string][]byte { panic("unimplemented") }

// Name is the tree's name attribute.
func (t *Template) Name() string { panic("unimplemented") }

// DataModel is "TR-098" (root InternetGatewayDevice.) or "TR-181" (root Device.).
func (t *Template) DataModel() string { panic("unimplemented") }

// Root is "InternetGatewayDevice." or "Device.".
func (t *Template) Root() string { panic("unimplemented") }

// Len is the number of leaf parameters.
func (t *Template) Len() int { panic("unimplemented") }

// Tree is one device's view of a Template: the template plus this device's
// changed values and attributes, added instances and deleted objects. It is
// safe for concurrent use.
type Tree struct{}

// New returns a tree with no differences from t.
func New(t *Template) *Tree { panic("unimplemented") }

// Template returns the template the tree is built on.
func (d *Tree) Template() *Template { panic("unimplemented") }

// Clone returns an independent copy with the same differences.
func (d *Tree) Clone() *Tree { panic("unimplemented") }

// SetResolver installs a function consulted for the current value of a
// parameter before the stored one (uptime, local time); ok=false falls
// through to the stored value.
func (d *Tree) SetResolver(fn func(name string) (value string, ok bool)) { panic("unimplemented") }

// Get returns one parameter or object.
func (d *Tree) Get(name string) (Param, bool) { panic("unimplemented") }

// Values answers GetParameterValues: each name is a parameter or a partial
// path ending in "." (all leaves below it; "" is the whole tree). An unknown
// name is *Error 9005.
func (d *Tree) Values(names []string) ([]Param, error) { panic("unimplemented") }

// Names answers GetParameterNames: path "" or a partial path lists objects
// (names ending in ".") and parameters below it, all levels or, with
// nextLevel, the immediate children only; a parameter path lists itself
// (nextLevel true on a parameter is *Error 9003). Unknown: *Error 9005.
func (d *Tree) Names(path string, nextLevel bool) ([]Param, error) { panic("unimplemented") }

// List returns every leaf parameter whose name starts with prefix, sorted.
func (d *Tree) List(prefix string) []Param { panic("unimplemented") }

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

func (e *SetFaults) Error() string { panic("unimplemented") }

// SetValues writes all values or none (TR-069 SetParameterValues is
// atomic). Unknown names are 9005, values that do not fit the type 9007,
// read-only parameters 9008 (with CheckWritable). The error is *SetFaults.
// Changes lists the parameters whose value actually changed.
func (d *Tree) SetValues(vals []Set, opts SetOptions) ([]Change, error) { panic("unimplemented") }

// SetNotification changes the notification attribute of a parameter, or of
// every parameter below a partial path. notification must be 0, 1 or 2.
func (d *Tree) SetNotification(name string, notification int) error { panic("unimplemented") }

// AddObject creates the next instance of the multi-instance object path
// (ending in "."), with the parameters of its {i} template at their
// template values, and returns the instance number. Not a multi-instance
// object: *Error 9005.
func (d *Tree) AddObject(path string) (uint32, error) { panic("unimplemented") }

// DeleteObject removes an object instance path (ending in ".") and
// everything under it. Unknown: *Error 9005.
func (d *Tree) DeleteObject(path string) error { panic("unimplemented") }

// AddParameter adds a leaf whose type, writability and notification come
// from the template entry of the same name with instance numbers generalised
// to {i}; its parent object must exist. No template entry: *Error 9005.
func (d *Tree) AddParameter(name, value string) error { panic("unimplemented") }

// Match returns the sorted names of leaf parameters matching pattern, in
// which "{i}" matches one numeric path segment and "*" any one segment (a
// trailing "*" also matches any rest of the name).
func (d *Tree) Match(pattern string) []string { panic("unimplemented") }

// Search returns up to limit leaf parameters whose name contains
// nameContains and whose value contains valueContains (case-insensitive;
// empty matches all), in name order.
func (d *Tree) Search(nameContains, valueContains string, limit int) []Param { panic("unimplemented") }

// Overrides is the number of entries the tree keeps beside its template
// (for memory accounting).
func (d *Tree) Overrides() int { panic("unimplemented") }

// InformParams returns the parameters marked inform="true" in the tree file
// (the Inform's forced list: DeviceSummary or SpecVersion, versions,
// ProvisioningCode, ConnectionRequestURL, ParameterKey, ExternalIPAddress),
// with current values, in file order.
func (d *Tree) InformParams() []Param { panic("unimplemented") }
