package iotemu

import (
	"encoding/hex"
	"encoding/json"
	"net"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"cpesuite/internal/iotemu/proto"
	"cpesuite/internal/platform/apperr"
)

// Settings is the emulator's configuration resource (spec: "Configuration").
type Settings struct {
	Protocol           string `json:"protocol"`
	ServerIP           string `json:"serverIp"`
	ServerPort         int    `json:"serverPort"`
	ClientID           string `json:"clientId"`
	SerialNumber       string `json:"serialNumber"`
	Manufacturer       string `json:"manufacturer"`
	ModelName          string `json:"modelName"`
	ClientIP           string `json:"clientIp"`
	ClientPort         int    `json:"clientPort"`
	ClientsCount       int    `json:"clientsCount"`
	ConcurrentClients  int    `json:"concurrentClients"`
	DelaySec           int    `json:"delaySec"`
	Secure             bool   `json:"secure"`
	SecurityMode       string `json:"securityMode"`
	PSKID              string `json:"pskId"`
	PSKKey             string `json:"pskKey"`
	AuthKeyStorePath   string `json:"authKeyStorePath"`
	AuthKeyStorePass   string `json:"authKeyStorePass"`
	TrustStorePath     string `json:"trustStorePath"`
	TrustStorePass     string `json:"trustStorePass"`
	AuthCertAlias      string `json:"authCertAlias"`
	AliasPass          string `json:"aliasPass"`
	MTP                string `json:"mtp"`
	GUIRenderingType   string `json:"guiRenderingType"`
	ParamUpdateEnabled bool   `json:"paramUpdateEnabled"`
	LoggingEnabled     bool   `json:"loggingEnabled"`
	FailResponse       bool   `json:"failResponse"`
	DBAddress          string `json:"dbAddress"`
	DBPort             int    `json:"dbPort"`
	DBLogin            string `json:"dbLogin"`
	DBPassword         string `json:"dbPassword"`
	DBCatalog          string `json:"dbCatalog"`
	DBCpeSerial        string `json:"dbCpeSerial"`
}

// Rendering types: history is recorded with FULL and LAZY only.
const (
	renderFull = "FULL"
	renderLazy = "LAZY"
	renderOff  = "OFF"
)

// mask is what a stored secret reads as.
const mask = "*"

// secretFields are the configuration fields GET /api/config masks.
var secretFields = []string{"pskKey", "authKeyStorePass", "trustStorePass", "aliasPass", "dbPassword"}

// runtimeFields may change while the emulator runs (POST /api/config/runtime).
var runtimeFields = []string{"guiRenderingType", "paramUpdateEnabled", "loggingEnabled", "failResponse"}

// mtpChoices is the USP transport selector's option list.
var mtpChoices = []string{"STOMP", "CoAP", "WebSocket", "MQTT"}

// defaultSettings work on a fresh machine: MQTT devices against the
// embedded broker that `cpesuite up` starts.
func defaultSettings(brokerPort int) Settings {
	return Settings{
		Protocol: "MQTT", ServerIP: "127.0.0.1", ServerPort: brokerPort,
		ClientID: "iot-emu", SerialNumber: "IOT0000", Manufacturer: "cpesuite", ModelName: "iot-emulator",
		ClientsCount: 1, ConcurrentClients: 50, SecurityMode: proto.SecurityNone,
		GUIRenderingType: renderLazy, ParamUpdateEnabled: true, LoggingEnabled: true,
	}
}

// masked returns s as GET /api/config shows it.
func (s Settings) masked() Settings {
	for _, p := range []*string{&s.PSKKey, &s.AuthKeyStorePass, &s.TrustStorePass, &s.AliasPass, &s.DBPassword} {
		if *p != "" {
			*p = mask
		}
	}
	s.Secure = s.SecurityMode != proto.SecurityNone
	return s
}

// idRE limits client ids and serial numbers: they appear in URL paths,
// MQTT topics, CoAP endpoint names and file contents.
var idRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)

func checkID(field, v string) error {
	if !idRE.MatchString(v) {
		return badRequest("%s %q may hold 1 to 128 letters, digits, '.', '_', ':' and '-', starting with a letter or digit", field, v)
	}
	return nil
}

// validate checks a complete configuration. avail are the loaded protocols.
func (s *Settings) validate(avail []string, maxDevices int) error {
	if !slices.Contains(avail, s.Protocol) {
		return protocolNotFound(s.Protocol)
	}
	if strings.TrimSpace(s.ServerIP) == "" || strings.ContainsAny(s.ServerIP, "/ ") {
		return badRequest("serverIp must be a host name or IP address")
	}
	if s.ServerPort < 1 || s.ServerPort > 65535 {
		return badRequest("serverPort must be from 1 to 65535")
	}
	if s.ClientIP != "" && net.ParseIP(s.ClientIP) == nil {
		return badRequest("clientIp must be an IP address or empty (any)")
	}
	if s.ClientPort < 0 || s.ClientPort > 65535 {
		return badRequest("clientPort must be from 0 (ephemeral) to 65535")
	}
	if s.ClientsCount < 1 || s.ClientsCount > maxDevices {
		return badRequest("clientsCount must be from 1 to %d", maxDevices)
	}
	if s.ClientPort > 0 && s.ClientPort+s.ClientsCount-1 > 65535 {
		return badRequest("clientPort %d plus clientsCount %d runs past port 65535", s.ClientPort, s.ClientsCount)
	}
	if s.ConcurrentClients < 1 || s.ConcurrentClients > 10000 {
		return badRequest("concurrentClients must be from 1 to 10000")
	}
	if s.DelaySec < 0 || s.DelaySec > 3600 {
		return badRequest("delaySec must be from 0 to 3600")
	}
	if err := checkID("clientId", s.ClientID); err != nil {
		return err
	}
	if err := checkID("serialNumber", s.SerialNumber); err != nil {
		return err
	}
	switch s.SecurityMode {
	case proto.SecurityNone, proto.SecurityPSK, proto.SecurityX509:
	default:
		return badRequest("securityMode must be one of NONE, PSK, X509")
	}
	if s.PSKKey != "" {
		if _, err := hex.DecodeString(s.PSKKey); err != nil {
			return badRequest("pskKey must be hexadecimal")
		}
	}
	if s.MTP != "" && !slices.Contains(mtpChoices, s.MTP) {
		return badRequest("mtp must be one of %s", strings.Join(mtpChoices, ", "))
	}
	switch s.GUIRenderingType {
	case renderFull, renderLazy, renderOff:
	default:
		return badRequest("guiRenderingType must be one of FULL, LAZY, OFF")
	}
	if s.DBPort < 0 || s.DBPort > 65535 {
		return badRequest("dbPort must be from 0 to 65535")
	}
	return nil
}

// settingsFields maps JSON names to struct field indexes.
var settingsFields = func() map[string]int {
	m := map[string]int{}
	t := reflect.TypeFor[Settings]()
	for i := range t.NumField() {
		m[strings.Split(t.Field(i).Tag.Get("json"), ",")[0]] = i
	}
	return m
}()

// apply merges a posted configuration body into s. only limits the keys
// accepted (nil: all). Absent fields keep their value; null is refused so
// nothing is applied by mistake; secrets follow the masking rules.
func (s *Settings) apply(body map[string]json.RawMessage, only []string) error {
	keys := make([]string, 0, len(body))
	for k := range body {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	next := *s
	v := reflect.ValueOf(&next).Elem()
	_, secureGiven := body["secure"]
	_, modeGiven := body["securityMode"]
	for _, k := range keys {
		i, ok := settingsFields[k]
		if !ok || (only != nil && !slices.Contains(only, k)) {
			return badRequest("unknown configuration field %q", k)
		}
		raw := body[k]
		if string(raw) == "null" {
			return badRequest("%s must not be null", k)
		}
		f := v.Field(i)
		if slices.Contains(secretFields, k) {
			var sv string
			if err := json.Unmarshal(raw, &sv); err != nil {
				return badRequest("%s must be a string", k)
			}
			if sv != mask {
				f.SetString(sv)
			}
			continue
		}
		ptr := reflect.New(f.Type())
		if err := json.Unmarshal(raw, ptr.Interface()); err != nil {
			return badRequest("%s must be %s", k, jsonKind(f.Kind()))
		}
		f.Set(ptr.Elem())
	}
	next.SecurityMode = strings.ToUpper(next.SecurityMode)
	next.GUIRenderingType = strings.ToUpper(next.GUIRenderingType)
	next.Protocol = strings.ToUpper(next.Protocol)
	// secure false selects plain transport whatever securityMode says and
	// keeps the PSK and certificate fields; secure true or absent keeps or
	// sets the mode.
	if secureGiven && !next.Secure {
		next.SecurityMode = proto.SecurityNone
	} else if secureGiven && next.Secure && next.SecurityMode == proto.SecurityNone {
		switch {
		case modeGiven:
			return badRequest("secure true contradicts securityMode NONE")
		case next.PSKID != "":
			next.SecurityMode = proto.SecurityPSK
		case next.AuthKeyStorePath != "":
			next.SecurityMode = proto.SecurityX509
		default:
			return badRequest("secure true needs a securityMode (PSK or X509)")
		}
	}
	next.Secure = next.SecurityMode != proto.SecurityNone
	*s = next
	return nil
}

func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.Int:
		return "an integer"
	case reflect.Bool:
		return "a boolean"
	}
	return "a string"
}

func protocolNotFound(name string) error {
	return apperr.Invalid(codeProtocolNotFound, "protocol %q is not available; see GET /api/protocols/available", name)
}
