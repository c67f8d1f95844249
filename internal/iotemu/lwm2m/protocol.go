// Package lwm2m is the IoT emulator's LwM2M client stack: one Device per
// emulated client, each with its own UDP (or DTLS) socket, registering
// with the configured LwM2M server and answering its Device Management and
// Information Reporting requests (OMA LwM2M Core TS 1.0, 1.1, 1.2).
//
// The stack is built for many thousands of devices in one process: the
// object catalog is shared read-only, values live in the session's
// param.Set, timers are time.AfterFunc rather than goroutines, and the
// CoAP connections share one periodic runner. What remains per device is
// the socket and go-coap's two goroutines per connection (reader and
// message loop).
package lwm2m

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"cpesuite/internal/iotemu/lwm2m/codec"
	"cpesuite/internal/iotemu/param"
	"cpesuite/internal/iotemu/proto"
)

// Option keys.
const (
	OptVersion          = "lwm2mVersion"
	OptLifetime         = "lifetime"
	OptBinding          = "binding"
	OptContentFormat    = "contentFormat"
	OptUpdatePeriod     = "updatePeriod"
	OptLateRegistration = "lateRegistration"
	OptLateDelay        = "lateRegistrationDelay"
	OptRequestTimeout   = "requestTimeout"
	OptEndpointPrefix   = "endpointPrefix"
)

// Content format choices of OptContentFormat.
const (
	FormatTLV       = "TLV"
	FormatSenMLJSON = "SENML_JSON"
	FormatSenMLCBOR = "SENML_CBOR"
)

var optionList = []proto.Option{
	{Key: OptVersion, Default: "1.1", Choices: []string{"1.0", "1.1", "1.2"},
		Description: "LwM2M enabler version the client registers with"},
	{Key: OptLifetime, Default: "300", Description: "registration lifetime in seconds"},
	{Key: OptBinding, Default: "U", Description: "binding mode (U, UQ, ...)"},
	{Key: OptContentFormat, Default: FormatTLV, Choices: []string{FormatTLV, FormatSenMLJSON, FormatSenMLCBOR},
		Description: "format of notifications and multi-resource reads when the server sends no Accept"},
	{Key: OptUpdatePeriod, Default: "0", Description: "seconds between registration updates; 0 = 90% of the lifetime"},
	{Key: OptLateRegistration, Default: "false", Choices: []string{"true", "false"},
		Description: "wait lateRegistrationDelay seconds after start before registering"},
	{Key: OptLateDelay, Default: "5", Description: "late registration delay in seconds"},
	{Key: OptRequestTimeout, Default: "5", Description: "seconds to wait for the server's answer"},
	{Key: OptEndpointPrefix, Default: "", Description: "prefix of the endpoint name (prepended to the client id)"},
}

// Protocol is the LwM2M stack; its zero value is ready to use.
type Protocol struct{}

var _ proto.Protocol = Protocol{}

// Name implements proto.Protocol.
func (Protocol) Name() string { return "LWM2M" }

// Options implements proto.Protocol.
func (Protocol) Options() []proto.Option {
	out := make([]proto.Option, len(optionList))
	copy(out, optionList)
	return out
}

// Transport implements proto.Protocol.
func (Protocol) Transport(cfg proto.Config) proto.Transport {
	sel := "UDP"
	if secure(cfg) {
		sel = "DTLS"
	}
	return proto.Transport{
		Key:          "transport",
		Options:      []string{"UDP", "DTLS"},
		Selected:     sel,
		SelectedPort: cfg.ServerPort,
		Ports:        map[string][]int{"UDP": {5683}, "DTLS": {5684}},
	}
}

// Params implements proto.Protocol.
func (Protocol) Params(cfg proto.Config) []param.Param { return catalogParams(cfg) }

// New implements proto.Protocol. It validates the options and the
// security material's presence but opens nothing.
func (Protocol) New(cfg proto.Config, host proto.Host) (proto.Device, error) {
	o, err := checkOptions(cfg.Options)
	if err != nil {
		return nil, err
	}
	switch cfg.SecurityMode {
	case "", proto.SecurityNone:
	case proto.SecurityPSK:
		if cfg.PSKID == "" || cfg.PSKKey == "" {
			return nil, fmt.Errorf("lwm2m: security mode PSK needs pskId and pskKey")
		}
	case proto.SecurityX509:
		if cfg.AuthKeyStorePath == "" {
			return nil, fmt.Errorf("lwm2m: security mode X509 needs authKeyStorePath")
		}
	default:
		return nil, fmt.Errorf("lwm2m: unknown security mode %q", cfg.SecurityMode)
	}
	return newDevice(cfg, host, o), nil
}

// opts are the parsed protocol options.
type opts struct {
	version        string
	lifetime       int
	binding        string
	format         uint16
	updatePeriod   time.Duration // 0 = 90% of the lifetime
	late           bool
	lateDelay      time.Duration
	requestTimeout time.Duration
	prefix         string
}

func optValue(m map[string]string, key string) string {
	if v, ok := m[key]; ok {
		return strings.TrimSpace(v)
	}
	for _, o := range optionList {
		if o.Key == key {
			return o.Default
		}
	}
	return ""
}

// seconds parses a duration in seconds; fractions are accepted so tests
// can run periods and time-outs in milliseconds.
func seconds(s string) (time.Duration, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1e7 {
		return 0, fmt.Errorf("%q is not a number of seconds", s)
	}
	return time.Duration(f * float64(time.Second)), nil
}

func checkOptions(m map[string]string) (opts, error) {
	var o opts
	var err error
	o.version = optValue(m, OptVersion)
	switch o.version {
	case "1.0", "1.1", "1.2":
	default:
		return o, fmt.Errorf("lwm2m: option %s: %q is not 1.0, 1.1 or 1.2", OptVersion, o.version)
	}
	if o.lifetime, err = strconv.Atoi(optValue(m, OptLifetime)); err != nil || o.lifetime <= 0 {
		return o, fmt.Errorf("lwm2m: option %s: %q is not a positive number of seconds", OptLifetime, optValue(m, OptLifetime))
	}
	o.binding = optValue(m, OptBinding)
	if !validBinding(o.binding) {
		return o, fmt.Errorf("lwm2m: option %s: invalid binding %q", OptBinding, o.binding)
	}
	switch v := optValue(m, OptContentFormat); v {
	case FormatTLV:
		o.format = codec.FormatTLV
	case FormatSenMLJSON:
		o.format = codec.FormatSenMLJSON
	case FormatSenMLCBOR:
		o.format = codec.FormatSenMLCBOR
	default:
		return o, fmt.Errorf("lwm2m: option %s: %q is not one of TLV, SENML_JSON, SENML_CBOR", OptContentFormat, v)
	}
	if o.updatePeriod, err = seconds(optValue(m, OptUpdatePeriod)); err != nil {
		return o, fmt.Errorf("lwm2m: option %s: %w", OptUpdatePeriod, err)
	}
	switch v := optValue(m, OptLateRegistration); v {
	case "true":
		o.late = true
	case "false", "":
	default:
		return o, fmt.Errorf("lwm2m: option %s: %q is not true or false", OptLateRegistration, v)
	}
	if o.lateDelay, err = seconds(optValue(m, OptLateDelay)); err != nil {
		return o, fmt.Errorf("lwm2m: option %s: %w", OptLateDelay, err)
	}
	if o.requestTimeout, err = seconds(optValue(m, OptRequestTimeout)); err != nil || o.requestTimeout == 0 {
		return o, fmt.Errorf("lwm2m: option %s: %q is not a positive number of seconds", OptRequestTimeout, optValue(m, OptRequestTimeout))
	}
	o.prefix = optValue(m, OptEndpointPrefix)
	return o, nil
}

// parseOptions is checkOptions for callers that cannot fail (Params):
// invalid values fall back to the defaults, and New reports them.
func parseOptions(m map[string]string) opts {
	o, err := checkOptions(m)
	if err != nil {
		o, _ = checkOptions(nil)
	}
	return o
}

// validBinding accepts the binding letters of 1.0 (U, S, Q) and 1.1+ (U,
// S, N, T, with Q as the queue mode flag), each at most once.
func validBinding(b string) bool {
	if b == "" {
		return false
	}
	seen := map[rune]bool{}
	for _, c := range b {
		if !strings.ContainsRune("USNTQ", c) || seen[c] {
			return false
		}
		seen[c] = true
	}
	return true
}
