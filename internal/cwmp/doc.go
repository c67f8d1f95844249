// Package cwmp is the TR-069 (CWMP, Amendment 6) wire protocol shared by the
// ACS and the CPE emulators: the SOAP 1.1 envelope with its cwmp headers, one
// Go type per RPC and response, SOAP faults with the CWMP fault codes, and a
// codec tuned for the hot path of an ACS.
//
// Decode reads an envelope from untrusted bytes. It has its own small XML
// scanner rather than encoding/xml because an ACS decodes an Inform per CPE
// session and encoding/xml's reflection and token allocations dominate that
// cost. The scanner works on one string copy of the input and hands out
// substrings of it, so a field costs nothing unless it needs unescaping.
// Elements are matched on local names, so any prefix a vendor chooses works;
// the cwmp namespace version is taken from the namespace actually bound to the
// RPC element and echoed by the caller through Envelope.Version.
//
// The decoder is strict where safety needs it and lenient where real CPEs
// differ: a DOCTYPE or entity declaration is an error (ErrDTD), only the five
// predefined entities and character references are expanded, depth and
// counts are bounded (MaxDepth, MaxAttrs, MaxElements) and work is linear in
// the input. Unknown child elements are skipped, a missing xsi:type is kept as
// an empty Value.Type, and array element names are not checked.
//
// Encode writes the canonical form: the SOAP-ENV, SOAP-ENC, xsd, xsi and cwmp
// prefixes, the cwmp namespace of Envelope.Version, SOAP-ENC:arrayType on
// arrays and xsi:type on every typed value.
package cwmp
