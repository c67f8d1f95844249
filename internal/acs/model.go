// Package acs is cpesuite's TR-069 auto-configuration server: CWMP
// sessions with CPEs, the device registry, the per-device task queue,
// connection requests, TR-143 diagnostics and the management API.
package acs

import (
	"encoding/json"
	"time"
)

// DeviceKey is a CPE's identity in CWMP: the DeviceId of its Informs.
type DeviceKey struct {
	OUI          string `json:"oui"`
	ProductClass string `json:"productClass"`
	Serial       string `json:"serialNumber"`
}

// String renders the conventional OUI-ProductClass-Serial form.
func (k DeviceKey) String() string { return k.OUI + "-" + k.ProductClass + "-" + k.Serial }

// Protocol ids of acs_protocols. A product class without a protocol counts
// as TR069 (a TR-098 data model).
const (
	ProtocolTR069   = 1
	ProtocolTR181   = 2
	ProtocolUSP     = 3
	ProtocolUnknown = 4
)

// Data models a CPE can expose, detected from the root of its parameters.
const (
	DataModelTR098 = "TR-098"
	DataModelTR181 = "TR-181"
)

// Device is a row of the device registry with its catalogue joins.
type Device struct {
	ID               int64      `json:"id"`
	OUI              string     `json:"oui"`
	ProductClass     string     `json:"productClass"`
	Serial           string     `json:"serialNumber"`
	ModelID          *int64     `json:"modelId"`
	Manufacturer     string     `json:"manufacturer"`
	ModelName        string     `json:"modelName"`
	Protocol         string     `json:"protocol"`
	SupportedByACS   bool       `json:"supportedByAcs"`
	DomainID         *int64     `json:"domainId"`
	SoftwareVersion  string     `json:"softwareVersion"`
	HardwareVersion  string     `json:"hardwareVersion"`
	CWMPVersion      string     `json:"cwmpVersion"`
	DataModel        string     `json:"dataModel"`
	ConnReqURL       string     `json:"connectionRequestUrl"`
	ConnReqUsername  string     `json:"connectionRequestUsername"`
	ConnReqPassword  string     `json:"-"`
	AuthUsername     string     `json:"authUsername"`
	AuthPassword     string     `json:"-"`
	ExternalIP       string     `json:"externalIp"`
	PeriodicInterval int        `json:"periodicInformInterval"`
	LastEvents       string     `json:"lastEvents"`
	LastInformAt     *time.Time `json:"lastInform"`
	LastBootAt       *time.Time `json:"lastBoot"`
	LastContactAt    *time.Time `json:"lastContact"`
	Online           bool       `json:"online"`
	CreatedAt        time.Time  `json:"created"`
	UpdatedAt        time.Time  `json:"updated"`
}

// Key returns the device's CWMP identity.
func (d *Device) Key() DeviceKey { return DeviceKey{d.OUI, d.ProductClass, d.Serial} }

// ParamValue is one cached parameter value with its xsd type as the CPE
// gave it.
type ParamValue struct {
	Value string `json:"v"`
	Type  string `json:"t,omitempty"`
}

// Params maps parameter names to their last known values.
type Params map[string]ParamValue

// JSON encodes the map for the params column.
func (p Params) JSON() string {
	if len(p) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(map[string]ParamValue(p)) // a map of strings always encodes
	return string(b)
}

// InformUpdate is what one Inform changes in the registry.
type InformUpdate struct {
	Key              DeviceKey
	Manufacturer     string
	ModelName        string
	SoftwareVersion  string
	HardwareVersion  string
	CWMPVersion      string
	DataModel        string
	ConnReqURL       string
	ExternalIP       string
	PeriodicInterval int // 0: unknown, keep what is stored
	Events           []string
	Boot             bool
	Params           Params
	At               time.Time
	OnlineUntil      time.Time
}

// InformResult tells the session what the registry knows after an Inform.
type InformResult struct {
	DeviceID     int64
	Created      bool
	AuthUsername string
	AuthPassword string
}

// Domain is a node of the location tree that scopes devices.
type Domain struct {
	ID        int64     `json:"id"`
	ParentID  *int64    `json:"parentId"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created"`
}

// Manufacturer is a catalogue entry.
type Manufacturer struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// ProductClass is a device model: the (OUI, ProductClass) pair of Informs
// with its manufacturer, display name and protocol.
type ProductClass struct {
	ID             int64     `json:"id"`
	ManufacturerID *int64    `json:"manufacturerId"`
	Manufacturer   string    `json:"manufacturer"`
	OUI            string    `json:"oui"`
	ProductClass   string    `json:"productClass"`
	ModelName      string    `json:"modelName"`
	ProtocolID     *int      `json:"protocolId"`
	Protocol       string    `json:"protocol"`
	SupportedByACS bool      `json:"supportedByAcs"`
	CreatedAt      time.Time `json:"created"`
}

// Condition is a saved device selection, used by group updates and by
// campaigns (conditionId).
type Condition struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	DomainID  *int64    `json:"domainId"`
	Criteria  Criteria  `json:"criteria"`
	CreatedAt time.Time `json:"created"`
	UpdatedAt time.Time `json:"updated"`
}

// DeviceFilter selects devices; zero fields do not filter. All present
// fields combine with AND.
type DeviceFilter struct {
	Serial          string  // case-insensitive whole match
	SerialPrefix    string  // case-insensitive prefix
	ModelIDs        []int64 // product class ids
	ManufacturerIDs []int64
	DomainIDs       []int64 // nil: no restriction; empty non-nil: nothing
	Online          *bool
	SoftwareVersion string
	ProductClass    string
	OUI             string
}

// Page is a 1-based page request.
type Page struct {
	Number int
	Size   int
}
