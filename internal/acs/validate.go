package acs

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"cpesuite/internal/cwmp"
)

// Limits of CWMP fields, in characters, from TR-069 Amendment 6 Annex A
// (the string(N) of each argument). Fields without one get a cap that no
// real CPE reaches, so that one hostile message cannot fail a batch or fill
// the registry: PostgreSQL refuses invalid UTF-8 and index rows over about
// 2.7 KB, and one refused row used to fail every Inform committed with it.
const (
	maxManufacturer    = 64
	maxProductClass    = 64
	maxSerialNumber    = 64
	maxEventCode       = 64
	maxCommandKey      = 32
	maxEvents          = 64
	maxParamName       = 256
	maxValueType       = 64
	maxFaultString     = 256
	maxURL             = 1024 // AnnounceURL, TransferURL
	maxFileType        = 64
	maxTargetFileName  = 256
	maxFileTypeArgs    = 16
	maxFileTypeArgName = 64
	maxFileTypeArgVal  = 256
	// maxStringValue caps a string or base64 value without a known size:
	// data models give string(65535) as their largest.
	maxStringValue = 65535
)

// valueCaps are the longest texts of the fixed-size xsd types, with room
// for the white space CPEs pad values with.
var valueCaps = map[string]int{
	"boolean":      16,
	"int":          32,
	"unsignedInt":  32,
	"long":         32,
	"unsignedLong": 32,
	"dateTime":     64,
}

// knownParamCaps are string(N) sizes the data models (TR-098, TR-181) give
// the parameters the registry keeps in columns, by the name after the root
// object.
var knownParamCaps = map[string]int{
	"DeviceInfo.Manufacturer":               64,
	"DeviceInfo.ManufacturerOUI":            6,
	"DeviceInfo.ProductClass":               64,
	"DeviceInfo.SerialNumber":               64,
	"DeviceInfo.ModelName":                  64,
	"DeviceInfo.SoftwareVersion":            64,
	"DeviceInfo.HardwareVersion":            64,
	"ManagementServer.URL":                  256,
	"ManagementServer.ConnectionRequestURL": 256,
	"ManagementServer.ParameterKey":         32,
}

// maxExternalIP is the size of an IPAddress (TR-181 string(45)), for the
// ExternalIPAddress parameter of any WAN connection.
const maxExternalIP = 45

// fieldError names a CWMP field that breaks its limits. Its text is safe
// to log and to send: it never carries the offending value.
type fieldError struct {
	field   string
	problem string
}

func (e *fieldError) Error() string { return e.field + ": " + e.problem }

func invalidField(field, problem string) error {
	return &fieldError{field: clipField(field), problem: problem}
}

// badString returns what is wrong with v as a string(max), or "". Labels
// are only built once something is wrong: this runs for every parameter of
// every Inform.
func badString(v string, max int) string {
	if !utf8.ValidString(v) {
		return "not valid UTF-8"
	}
	if len(v) > max { // more bytes than max may still be few enough runes
		if n := utf8.RuneCountInString(v); n > max {
			return fmt.Sprintf("%d characters, at most %d allowed", n, max)
		}
	}
	return ""
}

// field pairs a label with a value and its limit.
type field struct {
	name  string
	value string
	max   int
}

func checkFields(fields ...field) error {
	for _, f := range fields {
		if p := badString(f.value, f.max); p != "" {
			return invalidField(f.name, p)
		}
	}
	return nil
}

func checkParams(list []cwmp.ParameterValueStruct) error {
	for i, p := range list {
		if prob := badString(p.Name, maxParamName); prob != "" {
			return invalidField("ParameterList["+strconv.Itoa(i)+"].Name", prob)
		}
		if prob := badString(p.Value.Type, maxValueType); prob != "" {
			return invalidField("ParameterList["+strconv.Itoa(i)+"].Value type ("+p.Name+")", prob)
		}
		if prob := badString(p.Value.Text, valueCap(p.Name, p.Value)); prob != "" {
			return invalidField("ParameterList["+strconv.Itoa(i)+"].Value ("+p.Name+")", prob)
		}
	}
	return nil
}

func checkNames(list []string) error {
	for i, n := range list {
		if prob := badString(n, maxParamName); prob != "" {
			return invalidField("ParameterList["+strconv.Itoa(i)+"].Name", prob)
		}
	}
	return nil
}

// valueCap is the longest text accepted for the value of parameter name.
func valueCap(name string, v cwmp.Value) int {
	_, rest, _ := strings.Cut(name, ".")
	if strings.HasPrefix(rest, "DeviceInfo.") || strings.HasPrefix(rest, "ManagementServer.") {
		if n, ok := knownParamCaps[rest]; ok {
			return n
		}
	}
	if strings.HasSuffix(rest, ".ExternalIPAddress") {
		return maxExternalIP
	}
	if n, ok := valueCaps[v.Kind()]; ok {
		return n
	}
	return maxStringValue
}

// clipField bounds a field label that embeds a parameter name.
func clipField(s string) string {
	const max = 160
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// validateInform checks an Inform before anything of it is stored.
func validateInform(inf *cwmp.Inform) error {
	id := inf.DeviceID
	if !isOUI(id.OUI) {
		return invalidField("DeviceId.OUI", "want exactly 6 hexadecimal characters")
	}
	if err := checkFields(
		field{"DeviceId.Manufacturer", id.Manufacturer, maxManufacturer},
		field{"DeviceId.ProductClass", id.ProductClass, maxProductClass},
		field{"DeviceId.SerialNumber", id.SerialNumber, maxSerialNumber},
	); err != nil {
		return err
	}
	if id.SerialNumber == "" {
		return invalidField("DeviceId.SerialNumber", "empty")
	}
	if len(inf.Event) > maxEvents {
		return invalidField("Event", fmt.Sprintf("%d events, at most %d allowed", len(inf.Event), maxEvents))
	}
	for i, e := range inf.Event {
		if prob := badString(e.EventCode, maxEventCode); prob != "" {
			return invalidField("Event["+strconv.Itoa(i)+"].EventCode", prob)
		}
		if prob := badString(e.CommandKey, maxCommandKey); prob != "" {
			return invalidField("Event["+strconv.Itoa(i)+"].CommandKey", prob)
		}
	}
	return checkParams(inf.ParameterList)
}

// validateRequest checks the CPE requests that may come after the Inform.
func validateRequest(m cwmp.Message) error {
	switch m := m.(type) {
	case *cwmp.TransferComplete:
		return checkFields(
			field{"CommandKey", m.CommandKey, maxCommandKey},
			field{"FaultStruct.FaultString", m.FaultStruct.FaultString, maxFaultString})
	case *cwmp.AutonomousTransferComplete:
		return checkFields(
			field{"AnnounceURL", m.AnnounceURL, maxURL},
			field{"TransferURL", m.TransferURL, maxURL},
			field{"FileType", m.FileType, maxFileType},
			field{"TargetFileName", m.TargetFileName, maxTargetFileName},
			field{"FaultStruct.FaultString", m.FaultStruct.FaultString, maxFaultString})
	case *cwmp.RequestDownload:
		if len(m.FileTypeArg) > maxFileTypeArgs {
			return invalidField("FileTypeArg", fmt.Sprintf("%d arguments, at most %d allowed", len(m.FileTypeArg), maxFileTypeArgs))
		}
		if err := checkFields(field{"FileType", m.FileType, maxFileType}); err != nil {
			return err
		}
		for i, a := range m.FileTypeArg {
			f := "FileTypeArg[" + strconv.Itoa(i) + "]"
			if err := checkFields(field{f + ".Name", a.Name, maxFileTypeArgName}, field{f + ".Value", a.Value, maxFileTypeArgVal}); err != nil {
				return err
			}
		}
	}
	return nil
}

// validateResponse checks the parts of a CPE's answer that reach the
// parameter cache or a task's result.
func validateResponse(m cwmp.Message) error {
	switch m := m.(type) {
	case *cwmp.GetParameterValuesResponse:
		return checkParams(m.ParameterList)
	case *cwmp.GetParameterNamesResponse:
		names := make([]string, len(m.ParameterList))
		for i, p := range m.ParameterList {
			names[i] = p.Name
		}
		return checkNames(names)
	case *cwmp.GetParameterAttributesResponse:
		names := make([]string, len(m.ParameterList))
		for i, p := range m.ParameterList {
			names[i] = p.Name
		}
		return checkNames(names)
	case *cwmp.Fault:
		if err := checkFields(field{"FaultString", m.FaultString, maxFaultString}); err != nil {
			return err
		}
		for i, f := range m.SetParameterValuesFaults {
			l := "SetParameterValuesFault[" + strconv.Itoa(i) + "]"
			if err := checkFields(field{l + ".ParameterName", f.ParameterName, maxParamName}, field{l + ".FaultString", f.FaultString, maxFaultString}); err != nil {
				return err
			}
		}
	}
	return nil
}

func isOUI(s string) bool {
	if len(s) != 6 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'F' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// logClip bounds a CPE-supplied string for a log line: a hostile CPE must
// not be able to write kilobytes into the log with one field.
func logClip(s string) string {
	const max = 128
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}
