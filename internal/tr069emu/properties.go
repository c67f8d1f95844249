package tr069emu

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"reflect"
	"strconv"
	"strings"
	"time"

	"cpesuite/internal/tr069emu/cpe"
)

// Properties is EmulatorPropertiesDto: the load-test configuration, read and
// written through /api/properties and kept in emulator.properties.
type Properties struct {
	Protocol                 string `json:"protocol"`
	Host                     string `json:"host"`
	Port                     int    `json:"port"`
	URL                      string `json:"url"`
	Groups                   int    `json:"groups"`
	Concurrent               int    `json:"concurrent"`
	RegistrationGroup        int    `json:"registrationGroup"`
	Delay                    int    `json:"delay"`
	Spread                   int    `json:"spread"`
	StartDateTime            string `json:"startDateTime"`
	PeriodicInformEnabled    bool   `json:"periodicInformEnabled"`
	ConnectionRequestEnabled bool   `json:"connectionRequestEnabled"`
	WithoutInitialInform     bool   `json:"withoutInitialInform"`
	RandomRetryCount         bool   `json:"randomRetryCount"`
	TransferEmulation        bool   `json:"transferEmulation"`
	LoadingMode              bool   `json:"loadingMode"`
	FileLogEnabled           bool   `json:"fileLogEnabled"`
	TransferEmulationDelay   string `json:"transferEmulationDelay"`
	ParamsXML                string `json:"paramsXml"`

	TaskDelayGetParameterValues     int `json:"taskDelayGetParameterValues"`
	TaskDelaySetParameterValues     int `json:"taskDelaySetParameterValues"`
	TaskDelayGetParameterNames      int `json:"taskDelayGetParameterNames"`
	TaskDelayGetParameterAttributes int `json:"taskDelayGetParameterAttributes"`
	TaskDelaySetParameterAttributes int `json:"taskDelaySetParameterAttributes"`
	TaskDelayAddObject              int `json:"taskDelayAddObject"`
	TaskDelayDeleteObject           int `json:"taskDelayDeleteObject"`
	TaskDelayDownload               int `json:"taskDelayDownload"`
	TaskDelayUpload                 int `json:"taskDelayUpload"`
	TaskDelayReboot                 int `json:"taskDelayReboot"`
	TaskDelayFactoryReset           int `json:"taskDelayFactoryReset"`
	TaskDelayChangeDuState          int `json:"taskDelayChangeDuState"`
	TaskDelayGetRPCMethods          int `json:"taskDelayGetRpcMethods"`
	periodicSeconds                 int // GET/POST /api/periodic, kept in the same file
}

// DefaultTaskDelay is the delay of every RPC unless configured (seconds).
const DefaultTaskDelay = 11

// StartDateTimeLayout is DD-MM-YYYY HH24:MI:SS.
const StartDateTimeLayout = "02-01-2006 15:04:05"

// DefaultProperties are what a fresh emulator starts with.
func DefaultProperties() Properties {
	p := Properties{Protocol: "http", Host: "127.0.0.1", Port: 7547, URL: "/", Groups: 1, Concurrent: 10,
		RegistrationGroup: 10, Delay: 100, PeriodicInformEnabled: true, ConnectionRequestEnabled: true,
		TransferEmulationDelay: "0,0,0", ParamsXML: "tr181-base.xml", periodicSeconds: 300}
	p.setTaskDelays(DefaultTaskDelay)
	return p
}

// taskDelayFields maps the RPC method to its field, in one place.
func (p *Properties) taskDelayFields() map[string]*int {
	return map[string]*int{
		"GetParameterValues": &p.TaskDelayGetParameterValues, "SetParameterValues": &p.TaskDelaySetParameterValues,
		"GetParameterNames": &p.TaskDelayGetParameterNames, "GetParameterAttributes": &p.TaskDelayGetParameterAttributes,
		"SetParameterAttributes": &p.TaskDelaySetParameterAttributes, "AddObject": &p.TaskDelayAddObject,
		"DeleteObject": &p.TaskDelayDeleteObject, "Download": &p.TaskDelayDownload, "Upload": &p.TaskDelayUpload,
		"Reboot": &p.TaskDelayReboot, "FactoryReset": &p.TaskDelayFactoryReset, "ChangeDUState": &p.TaskDelayChangeDuState,
		"GetRPCMethods": &p.TaskDelayGetRPCMethods,
	}
}

func (p *Properties) setTaskDelays(s int) {
	for _, f := range p.taskDelayFields() {
		*f = s
	}
}

// ACSURL is the URL devices of the batch inform to.
func (p Properties) ACSURL() string {
	path := p.URL
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	return fmt.Sprintf("%s://%s%s", p.Protocol, net.JoinHostPort(strings.Trim(p.Host, "[]"), strconv.Itoa(p.Port)), path)
}

// transferDelays parses transferEmulationDelay: seconds for Download,
// Upload and ChangeDUState in that order; a shorter list repeats its last.
func parseTransferDelays(s string) ([3]time.Duration, error) {
	var out [3]time.Duration
	s = strings.TrimSpace(s)
	if s == "" {
		return out, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > 3 {
		return out, errf("transferEmulationDelay takes at most 3 comma separated delays (Download, Upload, ChangeDUState), got %d", len(parts))
	}
	last := 0
	for i := range out {
		if i < len(parts) {
			n, err := strconv.Atoi(strings.TrimSpace(parts[i]))
			if err != nil || n < 0 {
				return out, errf("transferEmulationDelay: %q is not a whole number of seconds", parts[i])
			}
			last = n
		}
		out[i] = time.Duration(last) * time.Second
	}
	return out, nil
}

// Validate checks the properties; the error names the field.
func (p Properties) Validate(maxDevices int) error {
	switch {
	case p.Protocol != "http" && p.Protocol != "https":
		return errf("protocol must be http or https, got %q", p.Protocol)
	case strings.TrimSpace(p.Host) == "" || strings.ContainsAny(p.Host, "/?#@ "):
		return errf("host %q is not a host name or address", p.Host)
	case p.Port < 1 || p.Port > 65535:
		return errf("port must be from 1 to 65535, got %d", p.Port)
	case strings.ContainsAny(p.URL, " ?#"):
		return errf("url %q is not a path", p.URL)
	case p.Groups < 1:
		return errf("groups must be at least 1, got %d", p.Groups)
	case p.Concurrent < 1:
		return errf("concurrent must be at least 1, got %d", p.Concurrent)
	case p.Groups*p.Concurrent > maxDevices || p.Groups > maxDevices || p.Concurrent > maxDevices:
		return errf("groups x concurrent = %d devices is more than the limit of %d", p.Groups*p.Concurrent, maxDevices)
	case p.RegistrationGroup < 0:
		return errf("registrationGroup must not be negative, got %d", p.RegistrationGroup)
	case p.Delay < 0:
		return errf("delay must not be negative, got %d", p.Delay)
	case p.Spread < 0:
		return errf("spread must not be negative, got %d", p.Spread)
	case p.periodicSeconds < 0:
		return errf("periodic must not be negative, got %d", p.periodicSeconds)
	}
	if p.StartDateTime != "" {
		if _, err := time.ParseInLocation(StartDateTimeLayout, p.StartDateTime, time.Local); err != nil {
			return errf("startDateTime %q must be DD-MM-YYYY HH24:MI:SS", p.StartDateTime)
		}
	}
	if _, err := parseTransferDelays(p.TransferEmulationDelay); err != nil {
		return err
	}
	if err := checkFileName(p.ParamsXML); err != nil {
		return err
	}
	for name, f := range (&p).taskDelayFields() {
		if *f < 0 {
			return errf("taskDelay%s must not be negative, got %d", strings.Replace(name, "ChangeDUState", "ChangeDuState", 1), *f)
		}
	}
	return nil
}

// settings derives the live device settings.
func (p Properties) settings() cpe.Settings {
	s := cpe.Settings{TaskDelays: map[string]time.Duration{}, TransferEmulation: p.TransferEmulation,
		RandomRetry: p.RandomRetryCount, LoadingMode: p.LoadingMode, SpeedDelay: SpeedDelay}
	for name, f := range (&p).taskDelayFields() {
		s.TaskDelays[name] = time.Duration(*f) * time.Second
	}
	s.TransferDelays, _ = parseTransferDelays(p.TransferEmulationDelay)
	return s
}

// SpeedDelay is what makeSpeedDelay adds to speed diagnostics.
const SpeedDelay = 3 * time.Second

// The properties file is a Java-style key=value file, one key per JSON
// field name, so the keys read the same in the API and the file.

func propKeys() []string {
	t := reflect.TypeFor[Properties]()
	var keys []string
	for i := range t.NumField() {
		if tag := t.Field(i).Tag.Get("json"); tag != "" {
			keys = append(keys, tag)
		}
	}
	return append(keys, "periodic")
}

// field returns a pointer to the field of key.
func (p *Properties) field(key string) any {
	if key == "periodic" {
		return &p.periodicSeconds
	}
	v := reflect.ValueOf(p).Elem()
	t := v.Type()
	for i := range t.NumField() {
		if t.Field(i).Tag.Get("json") == key {
			return v.Field(i).Addr().Interface()
		}
	}
	return nil
}

// encodeProperties writes the file.
func encodeProperties(p Properties) []byte {
	var b bytes.Buffer
	b.WriteString("# cpesuite TR-069 emulator properties (EmulatorPropertiesDto)\n")
	for _, k := range propKeys() {
		switch f := p.field(k).(type) {
		case *string:
			fmt.Fprintf(&b, "%s=%s\n", k, escapeProp(*f))
		case *int:
			fmt.Fprintf(&b, "%s=%d\n", k, *f)
		case *bool:
			fmt.Fprintf(&b, "%s=%t\n", k, *f)
		}
	}
	return b.Bytes()
}

func escapeProp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`).Replace(s)
}

func unescapeProp(s string) string {
	return strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\r`, "\r").Replace(s)
}

// decodeProperties reads the file over the defaults. missingDelays reports
// whether the file predates the taskDelay keys (they then keep the
// defaults). Unknown keys are ignored, bad values are errors naming the
// line.
func decodeProperties(data []byte) (p Properties, missingDelays bool, err error) {
	p = DefaultProperties()
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' || s[0] == '!' {
			continue
		}
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return p, false, fmt.Errorf("line %d: want key=value", line)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		seen[k] = true
		switch f := p.field(k).(type) {
		case *string:
			*f = unescapeProp(v)
		case *int:
			n, err := strconv.Atoi(v)
			if err != nil {
				return p, false, fmt.Errorf("line %d: %s=%q is not a whole number", line, k, v)
			}
			*f = n
		case *bool:
			b, err := strconv.ParseBool(v)
			if err != nil {
				return p, false, fmt.Errorf("line %d: %s=%q is not true or false", line, k, v)
			}
			*f = b
		}
	}
	if err := sc.Err(); err != nil {
		return p, false, err
	}
	for _, k := range propKeys() {
		if strings.HasPrefix(k, "taskDelay") && !seen[k] {
			missingDelays = true
		}
	}
	return p, missingDelays, nil
}
