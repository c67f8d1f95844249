package cwmp

import "strings"

// Version is the minor number of the cwmp namespace of an envelope:
// CWMP10 is urn:dslforum-org:cwmp-1-0 and CWMP14 is urn:dslforum-org:cwmp-1-4.
// The zero Version is cwmp-1-0, the namespace every CPE and ACS understands.
//
// The published schemas for protocol versions 1.3 and 1.4 keep the cwmp-1-2
// namespace (the version is negotiated with the SupportedCWMPVersions and
// UseCWMPVersion headers), but CPEs exist that declare cwmp-1-3 and cwmp-1-4,
// so all five are recognised and an ACS answers in the one the CPE used.
type Version uint8

// The cwmp namespace versions.
const (
	CWMP10 Version = iota
	CWMP11
	CWMP12
	CWMP13
	CWMP14
)

// The namespaces of the envelope; the cwmp one is Version.Namespace.
const (
	NamespaceSOAPEnv = "http://schemas.xmlsoap.org/soap/envelope/"
	NamespaceSOAPEnc = "http://schemas.xmlsoap.org/soap/encoding/"
	NamespaceXSD     = "http://www.w3.org/2001/XMLSchema"
	NamespaceXSI     = "http://www.w3.org/2001/XMLSchema-instance"

	cwmpURNPrefix = "urn:dslforum-org:cwmp-1-"
)

var namespaces = [...]string{
	cwmpURNPrefix + "0",
	cwmpURNPrefix + "1",
	cwmpURNPrefix + "2",
	cwmpURNPrefix + "3",
	cwmpURNPrefix + "4",
}

// Namespace returns the cwmp namespace URN of v, or "" for an unknown version.
func (v Version) Namespace() string {
	if !v.Valid() {
		return ""
	}
	return namespaces[v]
}

// Valid reports whether v is one of CWMP10 to CWMP14.
func (v Version) Valid() bool { return v <= CWMP14 }

// String returns the short form used in the URN, such as "cwmp-1-2".
func (v Version) String() string {
	if !v.Valid() {
		return "cwmp-invalid"
	}
	return namespaces[v][len("urn:dslforum-org:"):]
}

// ParseNamespace returns the Version of a cwmp namespace URN. Surrounding
// white space is ignored because some CPEs pad attribute values.
func ParseNamespace(uri string) (Version, bool) {
	uri = strings.TrimSpace(uri)
	if len(uri) != len(cwmpURNPrefix)+1 || !strings.HasPrefix(uri, cwmpURNPrefix) {
		return 0, false
	}
	c := uri[len(uri)-1]
	if c < '0' || c > '4' {
		return 0, false
	}
	return Version(c - '0'), true
}
