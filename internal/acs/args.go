package acs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Task arguments, one struct per kind. They are stored as JSON on the
// task and validated when enqueued, so a session never meets a task it
// cannot turn into an RPC.

// NamesArgs: GetParameterValues, GetParameterAttributes.
type NamesArgs struct {
	Names []string `json:"names"`
}

// SetValue is one parameter of a SetParameterValues.
type SetValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Type  string `json:"type,omitempty"` // xsd type; default xsd:string
}

// SetValuesArgs: SetParameterValues.
type SetValuesArgs struct {
	Values       []SetValue `json:"values"`
	ParameterKey string     `json:"parameterKey,omitempty"`
}

// NamesPathArgs: GetParameterNames.
type NamesPathArgs struct {
	Path      string `json:"path"`
	NextLevel bool   `json:"nextLevel"`
}

// SetAttribute is one entry of a SetParameterAttributes.
type SetAttribute struct {
	Name               string   `json:"name"`
	NotificationChange bool     `json:"notificationChange"`
	Notification       int      `json:"notification"`
	AccessListChange   bool     `json:"accessListChange"`
	AccessList         []string `json:"accessList,omitempty"`
}

// SetAttributesArgs: SetParameterAttributes.
type SetAttributesArgs struct {
	Attributes []SetAttribute `json:"attributes"`
}

// ObjectArgs: AddObject, DeleteObject.
type ObjectArgs struct {
	ObjectName   string `json:"objectName"`
	ParameterKey string `json:"parameterKey,omitempty"`
}

// CommandKeyArgs: Reboot.
type CommandKeyArgs struct {
	CommandKey string `json:"commandKey,omitempty"`
}

// ScheduleInformArgs: ScheduleInform.
type ScheduleInformArgs struct {
	DelaySeconds uint32 `json:"delaySeconds"`
	CommandKey   string `json:"commandKey,omitempty"`
}

// TransferArgs: Download and Upload.
type TransferArgs struct {
	CommandKey     string `json:"commandKey,omitempty"`
	FileType       string `json:"fileType"`
	URL            string `json:"url"`
	Username       string `json:"username,omitempty"`
	Password       string `json:"password,omitempty"`
	FileSize       uint32 `json:"fileSize,omitempty"`
	TargetFileName string `json:"targetFileName,omitempty"`
	DelaySeconds   uint32 `json:"delaySeconds,omitempty"`
	SuccessURL     string `json:"successUrl,omitempty"`
	FailureURL     string `json:"failureUrl,omitempty"`
}

// DiagnosticsArgs: DownloadDiagnostics, UploadDiagnostics, IPPing. Empty
// fields take the ACS's defaults (the speedtest target's URLs).
type DiagnosticsArgs struct {
	URL                  string `json:"url,omitempty"`       // download/upload
	Interface            string `json:"interface,omitempty"` // data model path of the interface, optional
	DSCP                 int    `json:"dscp,omitempty"`
	TestFileLength       uint32 `json:"testFileLength,omitempty"` // upload bytes
	Host                 string `json:"host,omitempty"`           // ping
	NumberOfRepetitions  uint32 `json:"numberOfRepetitions,omitempty"`
	TimeoutMs            uint32 `json:"timeoutMs,omitempty"`
	DataBlockSize        uint32 `json:"dataBlockSize,omitempty"`
	NumberOfConnections  uint32 `json:"numberOfConnections,omitempty"`
	EnablePerConnResults bool   `json:"enablePerConnectionResults,omitempty"`
	// TimeBasedTestDuration (seconds, 1-999) makes a TR-181 transfer
	// time-based (TR-143 Amendment 1); TR-098 has no such parameter.
	TimeBasedTestDuration uint32 `json:"timeBasedTestDuration,omitempty"`
}

// xsdTypes are the value types SetParameterValues accepts.
var xsdTypes = []string{"xsd:string", "xsd:int", "xsd:unsignedInt", "xsd:long", "xsd:unsignedLong", "xsd:boolean", "xsd:dateTime", "xsd:base64", "xsd:hexBinary"}

// ValidateArgs decodes raw (strictly: unknown fields refused) into the
// kind's argument struct, checks it, and returns the normalised JSON.
func ValidateArgs(kind TaskKind, raw json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage("{}")
	}
	var v interface{ validate() error }
	switch kind {
	case KindGetParameterValues, KindGetParameterAttributes:
		v = &NamesArgs{}
	case KindSetParameterValues:
		v = &SetValuesArgs{}
	case KindGetParameterNames:
		v = &NamesPathArgs{}
	case KindSetParameterAttributes:
		v = &SetAttributesArgs{}
	case KindAddObject, KindDeleteObject:
		v = &ObjectArgs{}
	case KindReboot:
		v = &CommandKeyArgs{}
	case KindFactoryReset:
		v = &noArgs{}
	case KindScheduleInform:
		v = &ScheduleInformArgs{}
	case KindDownload, KindUpload:
		v = &TransferArgs{}
	case KindDownloadDiagnostics, KindUploadDiagnostics, KindIPPing:
		v = &DiagnosticsArgs{}
	default:
		return nil, fmt.Errorf("unknown task kind %q", kind)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return nil, fmt.Errorf("%s arguments: %v", kind, err)
	}
	if err := v.validate(); err != nil {
		return nil, fmt.Errorf("%s arguments: %v", kind, err)
	}
	if t, ok := v.(*TransferArgs); ok {
		if err := t.validateKind(kind); err != nil {
			return nil, fmt.Errorf("%s arguments: %v", kind, err)
		}
	}
	if d, ok := v.(*DiagnosticsArgs); ok {
		if err := d.validateKind(kind); err != nil {
			return nil, fmt.Errorf("%s arguments: %v", kind, err)
		}
	}
	out, err := json.Marshal(v)
	return out, err
}

type noArgs struct{}

func (noArgs) validate() error { return nil }

// maxNameLen is TR-069's limit on parameter names (256 characters).
const maxNameLen = 256

func checkName(field, name string, object bool) error {
	switch {
	case name == "":
		return fmt.Errorf("%s must not be empty", field)
	case len(name) > maxNameLen:
		return fmt.Errorf("%s is longer than %d characters", field, maxNameLen)
	case strings.ContainsAny(name, " <>&\"'\t\r\n"):
		return fmt.Errorf("%s %q contains characters not allowed in a parameter name", field, name)
	case object && !strings.HasSuffix(name, "."):
		return fmt.Errorf("%s %q must end with a dot (an object path)", field, name)
	}
	return nil
}

func (a *NamesArgs) validate() error {
	if len(a.Names) == 0 {
		return fmt.Errorf("names must list at least one parameter or object path")
	}
	for i, n := range a.Names {
		if err := checkName(fmt.Sprintf("names[%d]", i), n, false); err != nil {
			return err
		}
	}
	return nil
}

func (a *SetValuesArgs) validate() error {
	if len(a.Values) == 0 {
		return fmt.Errorf("values must list at least one parameter")
	}
	seen := map[string]bool{}
	for i := range a.Values {
		v := &a.Values[i]
		if err := checkName(fmt.Sprintf("values[%d].name", i), v.Name, false); err != nil {
			return err
		}
		if strings.HasSuffix(v.Name, ".") {
			return fmt.Errorf("values[%d].name %q is an object path, not a parameter", i, v.Name)
		}
		if seen[v.Name] {
			return fmt.Errorf("values[%d].name %q is set twice", i, v.Name)
		}
		seen[v.Name] = true
		if v.Type == "" {
			v.Type = "xsd:string"
		}
		if !slices.Contains(xsdTypes, v.Type) {
			return fmt.Errorf("values[%d].type %q is not one of %s", i, v.Type, strings.Join(xsdTypes, ", "))
		}
	}
	if len(a.ParameterKey) > 32 {
		return fmt.Errorf("parameterKey is longer than 32 characters")
	}
	return nil
}

func (a *NamesPathArgs) validate() error {
	if a.Path == "" {
		return nil // the whole tree
	}
	return checkName("path", a.Path, false)
}

func (a *SetAttributesArgs) validate() error {
	if len(a.Attributes) == 0 {
		return fmt.Errorf("attributes must list at least one parameter")
	}
	for i, at := range a.Attributes {
		if err := checkName(fmt.Sprintf("attributes[%d].name", i), at.Name, false); err != nil {
			return err
		}
		if at.Notification < 0 || at.Notification > 6 {
			return fmt.Errorf("attributes[%d].notification must be 0 to 6", i)
		}
	}
	return nil
}

func (a *ObjectArgs) validate() error {
	if err := checkName("objectName", a.ObjectName, true); err != nil {
		return err
	}
	if len(a.ParameterKey) > 32 {
		return fmt.Errorf("parameterKey is longer than 32 characters")
	}
	return nil
}

func (a *CommandKeyArgs) validate() error {
	if len(a.CommandKey) > 32 {
		return fmt.Errorf("commandKey is longer than 32 characters")
	}
	return nil
}

func (a *ScheduleInformArgs) validate() error {
	if a.DelaySeconds == 0 {
		return fmt.Errorf("delaySeconds must be at least 1")
	}
	if len(a.CommandKey) > 32 {
		return fmt.Errorf("commandKey is longer than 32 characters")
	}
	return nil
}

func checkURL(field, raw string, required bool) error {
	if raw == "" {
		if required {
			return fmt.Errorf("%s is required", field)
		}
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "ftp") || u.Host == "" {
		return fmt.Errorf("%s %q is not an http, https or ftp URL", field, raw)
	}
	if len(raw) > 256 {
		return fmt.Errorf("%s is longer than 256 characters", field)
	}
	return nil
}

func (a *TransferArgs) validate() error {
	if err := checkURL("url", a.URL, true); err != nil {
		return err
	}
	if a.FileType == "" {
		return fmt.Errorf(`fileType is required (e.g. "1 Firmware Upgrade Image")`)
	}
	if len(a.CommandKey) > 32 {
		return fmt.Errorf("commandKey is longer than 32 characters")
	}
	if err := checkURL("successUrl", a.SuccessURL, false); err != nil {
		return err
	}
	return checkURL("failureUrl", a.FailureURL, false)
}

func (a *TransferArgs) validateKind(kind TaskKind) error {
	if kind == KindUpload && (a.FileSize != 0 || a.TargetFileName != "" || a.SuccessURL != "" || a.FailureURL != "") {
		return fmt.Errorf("fileSize, targetFileName, successUrl and failureUrl apply to Download only")
	}
	return nil
}

func (a *DiagnosticsArgs) validate() error {
	if err := checkURL("url", a.URL, false); err != nil {
		return err
	}
	if a.DSCP < 0 || a.DSCP > 63 {
		return fmt.Errorf("dscp must be 0 to 63")
	}
	if a.Interface != "" {
		if err := checkName("interface", a.Interface, false); err != nil {
			return err
		}
	}
	if a.TimeBasedTestDuration > 999 {
		return fmt.Errorf("timeBasedTestDuration must be 1 to 999 seconds")
	}
	if len(a.Host) > 256 || strings.ContainsAny(a.Host, " /<>&\"'") {
		return fmt.Errorf("host %q is not a host name or address", a.Host)
	}
	return nil
}

func (a *DiagnosticsArgs) validateKind(kind TaskKind) error {
	switch kind {
	case KindIPPing:
		if a.URL != "" || a.TestFileLength != 0 || a.NumberOfConnections != 0 || a.TimeBasedTestDuration != 0 {
			return fmt.Errorf("url, testFileLength, numberOfConnections and timeBasedTestDuration do not apply to IPPing")
		}
	default:
		if a.Host != "" || a.NumberOfRepetitions != 0 || a.TimeoutMs != 0 || a.DataBlockSize != 0 {
			return fmt.Errorf("host, numberOfRepetitions, timeoutMs and dataBlockSize apply to IPPing only")
		}
		if kind == KindDownloadDiagnostics && a.TestFileLength != 0 {
			return fmt.Errorf("testFileLength applies to UploadDiagnostics only")
		}
	}
	return nil
}
