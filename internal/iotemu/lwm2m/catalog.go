package lwm2m

import (
	"encoding/base64"
	"net"
	"strconv"
	"strings"
	"time"

	"cpesuite/internal/iotemu/lwm2m/codec"
	"cpesuite/internal/iotemu/param"
	"cpesuite/internal/iotemu/proto"
)

// Operations a resource allows, as the OMA object definitions spell them.
const (
	opR  = "R"
	opW  = "W"
	opRW = "RW"
	opE  = "E"
)

// resDef is one resource of the catalog. Every object has exactly one
// instance (0), so a resource definition is also the definition of the
// resource in that instance.
type resDef struct {
	id   uint16
	name string
	kind codec.Kind
	ops  string
	// instances lists the resource instance ids of a multiple-instance
	// resource; nil for a single-instance resource.
	instances []uint16
	// secret resources (the Security object's keys) are never params.
	secret bool
	// value returns the initial value (API string form) of instance i.
	value func(cfg proto.Config, i int) string
}

func (r *resDef) readable() bool   { return strings.Contains(r.ops, opR) }
func (r *resDef) writable() bool   { return strings.Contains(r.ops, opW) }
func (r *resDef) executable() bool { return r.ops == opE }
func (r *resDef) multi() bool      { return r.instances != nil }

// isParam reports whether the resource is exposed as a parameter:
// executables carry no value, secrets must never leave the stack, and the
// firmware package is write-only and discarded (a parameter would hold
// megabytes of base64 that nobody can read back).
func (r *resDef) isParam(obj uint16) bool {
	return !r.executable() && !r.secret && !(obj == objFirmware && r.id == resFwPackage)
}

type objDef struct {
	id   uint16
	name string
	res  []resDef
}

func (o *objDef) resource(id int32) *resDef {
	for i := range o.res {
		if int32(o.res[i].id) == id {
			return &o.res[i]
		}
	}
	return nil
}

// Object and resource ids the stack acts on.
const (
	objSecurity     = 0
	objServer       = 1
	objDevice       = 3
	objConnectivity = 4
	objFirmware     = 5
	objLocation     = 6
	objTemperature  = 3303

	resServerLifetime      = 1
	resServerBinding       = 7
	resServerUpdateTrigger = 8
	resDevReboot           = 4
	resDevFactoryReset     = 5
	resDevCurrentTime      = 13
	resFwPackage           = 0
	resFwPackageURI        = 1
	resFwUpdate            = 2
	resFwState             = 3
	resFwResult            = 5
	resTempValue           = 5700
	resTempMin             = 5601
	resTempMax             = 5602
	resTempReset           = 5605

	shortServerID = 123
)

// Names of the parameters the stack itself reads or updates.
const (
	nameLifetime   = "Server.0.Lifetime"
	nameBinding    = "Server.0.Binding"
	nameFwState    = "FirmwareUpdate.0.State"
	nameFwResult   = "FirmwareUpdate.0.UpdateResult"
	nameFwURI      = "FirmwareUpdate.0.PackageURI"
	nameFwVersion  = "Device.0.FirmwareVersion"
	namePkgVersion = "FirmwareUpdate.0.PkgVersion"
	nameTempValue  = "Temperature.0.SensorValue"
	nameTime       = "Device.0.CurrentTime"
	nameTempMin    = "Temperature.0.MinMeasuredValue"
	nameTempMax    = "Temperature.0.MaxMeasuredValue"
	nameIPAddress  = "ConnectivityMonitoring.0.IPAddresses.0"
)

func fixed(s string) func(proto.Config, int) string {
	return func(proto.Config, int) string { return s }
}

func perInstance(vs ...string) func(proto.Config, int) string {
	return func(_ proto.Config, i int) string { return vs[i] }
}

func nowValue(proto.Config, int) string { return strconv.FormatInt(time.Now().Unix(), 10) }

// catalog is the object model every device shares read-only; per-device
// values live in the session's param.Set. Types and operations follow the
// OMA object definitions of LwM2M 1.0 (Appendix E) and IPSO 3303: a
// server's Write of a read-only resource such as Temperature's Sensor
// Value is refused with 4.05, while the API (and automatic updates and
// rules) may still change any parameter.
var catalog = []objDef{
	{id: objSecurity, name: "Security", res: []resDef{
		{id: 0, name: "ServerURI", kind: codec.KindString, ops: opR, value: func(cfg proto.Config, _ int) string {
			scheme := "coap"
			if secure(cfg) {
				scheme = "coaps"
			}
			return scheme + "://" + net.JoinHostPort(cfg.ServerIP, strconv.Itoa(cfg.ServerPort))
		}},
		{id: 1, name: "BootstrapServer", kind: codec.KindBoolean, ops: opR, value: fixed("false")},
		{id: 2, name: "SecurityMode", kind: codec.KindInteger, ops: opR, value: func(cfg proto.Config, _ int) string {
			switch cfg.SecurityMode {
			case proto.SecurityPSK:
				return "0"
			case proto.SecurityX509:
				return "2"
			}
			return "3" // NoSec
		}},
		{id: 3, name: "PublicKeyOrIdentity", kind: codec.KindOpaque, ops: opR, value: func(cfg proto.Config, _ int) string {
			if cfg.SecurityMode != proto.SecurityPSK {
				return ""
			}
			return base64.StdEncoding.EncodeToString([]byte(cfg.PSKID))
		}},
		{id: 5, name: "SecretKey", kind: codec.KindOpaque, ops: opR, secret: true},
		{id: 10, name: "ShortServerID", kind: codec.KindInteger, ops: opR, value: fixed(strconv.Itoa(shortServerID))},
	}},
	{id: objServer, name: "Server", res: []resDef{
		{id: 0, name: "ShortServerID", kind: codec.KindInteger, ops: opR, value: fixed(strconv.Itoa(shortServerID))},
		{id: resServerLifetime, name: "Lifetime", kind: codec.KindInteger, ops: opRW, value: func(cfg proto.Config, _ int) string {
			return strconv.Itoa(parseOptions(cfg.Options).lifetime)
		}},
		{id: 6, name: "NotificationStoring", kind: codec.KindBoolean, ops: opRW, value: fixed("true")},
		{id: resServerBinding, name: "Binding", kind: codec.KindString, ops: opRW, value: func(cfg proto.Config, _ int) string {
			return parseOptions(cfg.Options).binding
		}},
		{id: resServerUpdateTrigger, name: "RegistrationUpdateTrigger", kind: codec.KindNone, ops: opE},
	}},
	{id: objDevice, name: "Device", res: []resDef{
		{id: 0, name: "Manufacturer", kind: codec.KindString, ops: opR, value: func(cfg proto.Config, _ int) string { return cfg.Manufacturer }},
		{id: 1, name: "ModelNumber", kind: codec.KindString, ops: opR, value: func(cfg proto.Config, _ int) string { return cfg.ModelName }},
		{id: 2, name: "SerialNumber", kind: codec.KindString, ops: opR, value: func(cfg proto.Config, _ int) string { return cfg.SerialNumber }},
		{id: 3, name: "FirmwareVersion", kind: codec.KindString, ops: opR, value: fixed("1.0.0")},
		{id: resDevReboot, name: "Reboot", kind: codec.KindNone, ops: opE},
		{id: resDevFactoryReset, name: "FactoryReset", kind: codec.KindNone, ops: opE},
		// 1 = internal battery, 5 = USB.
		{id: 6, name: "AvailablePowerSources", kind: codec.KindInteger, ops: opR, instances: []uint16{0, 1}, value: perInstance("1", "5")},
		{id: 9, name: "BatteryLevel", kind: codec.KindInteger, ops: opR, value: fixed("100")},
		{id: 10, name: "MemoryFree", kind: codec.KindInteger, ops: opR, value: fixed("512")},
		{id: 11, name: "ErrorCode", kind: codec.KindInteger, ops: opR, instances: []uint16{0}, value: fixed("0")},
		{id: resDevCurrentTime, name: "CurrentTime", kind: codec.KindTime, ops: opRW, value: nowValue},
		{id: 14, name: "UTCOffset", kind: codec.KindString, ops: opRW, value: fixed("+00:00")},
		{id: 15, name: "Timezone", kind: codec.KindString, ops: opRW, value: fixed("Etc/UTC")},
		{id: 16, name: "SupportedBindingAndModes", kind: codec.KindString, ops: opR, value: fixed("U")},
		{id: 17, name: "DeviceType", kind: codec.KindString, ops: opR, value: fixed("sensor")},
		{id: 19, name: "SoftwareVersion", kind: codec.KindString, ops: opR, value: fixed("1.0.0")},
	}},
	{id: objConnectivity, name: "ConnectivityMonitoring", res: []resDef{
		// 6 = LTE-FDD, 21 = WLAN.
		{id: 0, name: "NetworkBearer", kind: codec.KindInteger, ops: opR, value: fixed("6")},
		{id: 1, name: "AvailableNetworkBearer", kind: codec.KindInteger, ops: opR, instances: []uint16{0, 1}, value: perInstance("6", "21")},
		{id: 2, name: "RadioSignalStrength", kind: codec.KindInteger, ops: opR, value: fixed("-70")},
		{id: 3, name: "LinkQuality", kind: codec.KindInteger, ops: opR, value: fixed("10")},
		{id: 4, name: "IPAddresses", kind: codec.KindString, ops: opR, instances: []uint16{0}, value: func(cfg proto.Config, _ int) string {
			if cfg.ClientIP != "" {
				return cfg.ClientIP
			}
			return "0.0.0.0"
		}},
	}},
	{id: objFirmware, name: "FirmwareUpdate", res: []resDef{
		{id: resFwPackage, name: "Package", kind: codec.KindOpaque, ops: opW},
		{id: resFwPackageURI, name: "PackageURI", kind: codec.KindString, ops: opRW, value: fixed("")},
		{id: resFwUpdate, name: "Update", kind: codec.KindNone, ops: opE},
		{id: resFwState, name: "State", kind: codec.KindInteger, ops: opR, value: fixed(strconv.Itoa(fwIdle))},
		{id: resFwResult, name: "UpdateResult", kind: codec.KindInteger, ops: opR, value: fixed("0")},
		{id: 6, name: "PkgName", kind: codec.KindString, ops: opR, value: fixed("")},
		{id: 7, name: "PkgVersion", kind: codec.KindString, ops: opR, value: fixed("")},
		// 2 = push and pull.
		{id: 9, name: "FirmwareUpdateDeliveryMethod", kind: codec.KindInteger, ops: opR, value: fixed("2")},
	}},
	{id: objLocation, name: "Location", res: []resDef{
		{id: 0, name: "Latitude", kind: codec.KindFloat, ops: opR, value: fixed("50.0755")},
		{id: 1, name: "Longitude", kind: codec.KindFloat, ops: opR, value: fixed("14.4378")},
		{id: 2, name: "Altitude", kind: codec.KindFloat, ops: opR, value: fixed("235")},
		{id: 5, name: "Timestamp", kind: codec.KindTime, ops: opR, value: nowValue},
	}},
	{id: objTemperature, name: "Temperature", res: []resDef{
		{id: resTempValue, name: "SensorValue", kind: codec.KindFloat, ops: opR, value: fixed("21.5")},
		{id: resTempMin, name: "MinMeasuredValue", kind: codec.KindFloat, ops: opR, value: fixed("21.5")},
		{id: resTempMax, name: "MaxMeasuredValue", kind: codec.KindFloat, ops: opR, value: fixed("21.5")},
		{id: 5701, name: "SensorUnits", kind: codec.KindString, ops: opR, value: fixed("Cel")},
		{id: resTempReset, name: "ResetMinAndMaxMeasuredValues", kind: codec.KindNone, ops: opE},
	}},
}

// Firmware Update states (/5/0/3).
const (
	fwIdle        = 0
	fwDownloading = 1
	fwDownloaded  = 2
	fwUpdating    = 3
)

func secure(cfg proto.Config) bool {
	return cfg.SecurityMode != "" && cfg.SecurityMode != proto.SecurityNone
}

// index maps names and paths both ways; built once, shared by all devices.
var (
	nameToPath = map[string]codec.Path{}
	pathToName = map[codec.Path]string{}
)

func init() {
	for oi := range catalog {
		o := &catalog[oi]
		for ri := range o.res {
			r := &o.res[ri]
			if !r.isParam(o.id) {
				continue
			}
			base := o.name + ".0." + r.name
			if !r.multi() {
				p := codec.Path{Object: int32(o.id), Instance: 0, Resource: int32(r.id), ResourceInstance: -1}
				nameToPath[base] = p
				pathToName[p] = base
				continue
			}
			for _, i := range r.instances {
				n := base + "." + strconv.Itoa(int(i))
				p := codec.Path{Object: int32(o.id), Instance: 0, Resource: int32(r.id), ResourceInstance: int32(i)}
				nameToPath[n] = p
				pathToName[p] = n
			}
		}
	}
}

// PathOf returns the LwM2M path of a parameter name such as
// "Device.0.Manufacturer" (/3/0/0) or "Device.0.ErrorCode.0" (/3/0/11/0).
func PathOf(name string) (codec.Path, bool) {
	p, ok := nameToPath[name]
	return p, ok
}

// NameOf returns the parameter name of a resource or resource instance
// path; it reports false for paths that are not parameters (objects,
// instances, multiple-instance resources as a whole, executables, secrets).
func NameOf(p codec.Path) (string, bool) {
	n, ok := pathToName[p]
	return n, ok
}

func findObject(id int32) *objDef {
	for i := range catalog {
		if int32(catalog[i].id) == id {
			return &catalog[i]
		}
	}
	return nil
}

// lookup resolves a path of depth 3 or 4 to its resource definition.
func lookup(p codec.Path) (*objDef, *resDef) {
	o := findObject(p.Object)
	if o == nil || p.Instance != 0 {
		return o, nil
	}
	return o, o.resource(p.Resource)
}

// KindOf is the catalog's codec.KindOf: decoders use it for TLV and plain
// text, which carry no types. Exported for the test server.
func KindOf(p codec.Path) (codec.Kind, bool) {
	if p.Depth() < 3 {
		return 0, false
	}
	_, r := lookup(p)
	if r == nil {
		return 0, false
	}
	return r.kind, true
}

func paramType(k codec.Kind) param.Type {
	switch k {
	case codec.KindInteger, codec.KindUnsigned:
		return param.Integer
	case codec.KindFloat:
		return param.Float
	case codec.KindBoolean:
		return param.Boolean
	case codec.KindOpaque:
		return param.Opaque
	case codec.KindTime:
		return param.Time
	}
	return param.String
}

// catalogParams returns the initial parameters for cfg in catalog order.
func catalogParams(cfg proto.Config) []param.Param {
	ps := make([]param.Param, 0, len(nameToPath))
	for oi := range catalog {
		o := &catalog[oi]
		for ri := range o.res {
			r := &o.res[ri]
			if !r.isParam(o.id) {
				continue
			}
			// Security resources are read-only for everybody: the server
			// cannot even read them and the API must not rewrite them.
			writable := r.writable() && o.id != objSecurity
			base := o.name + ".0." + r.name
			if !r.multi() {
				ps = append(ps, param.Param{Name: base, Value: r.value(cfg, 0), Type: paramType(r.kind), Writable: writable})
				continue
			}
			for i, ri := range r.instances {
				ps = append(ps, param.Param{Name: base + "." + strconv.Itoa(int(ri)), Value: r.value(cfg, i), Type: paramType(r.kind), Writable: writable})
			}
		}
	}
	return ps
}

// registrationLinks is the Register payload's object list: every object
// with its instance, except Security which the spec forbids listing
// (Core 1.1 §6.1.7.1 / 1.0 §5.3.1). From 1.1 the root link advertises a
// preferred SenML format with ct=; TLV is the format a server assumes
// without one, and strict servers refuse ct=11542 (wakaama's takes only
// 110, 112 and 11543 and answers 4.00), so a TLV client leaves ct out, as
// wakaama's own client does. 1.0 only defines ct= on the root link for
// LwM2M JSON, which the stack does not support, so 1.0 sends no root link.
func registrationLinks(version string, format uint16) string {
	var b strings.Builder
	if version != "1.0" {
		b.WriteString(`</>;rt="oma.lwm2m"`)
		if format != codec.FormatTLV {
			b.WriteString(";ct=")
			b.WriteString(strconv.Itoa(int(format)))
		}
	}
	for oi := range catalog {
		o := &catalog[oi]
		if o.id == objSecurity {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString("</")
		b.WriteString(strconv.Itoa(int(o.id)))
		b.WriteString("/0>")
	}
	return b.String()
}
