package mqttdev

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"cpesuite/internal/iotemu/param"
	"cpesuite/internal/iotemu/proto"
)

// Option keys.
const (
	OptMQTTVersion      = "mqttVersion"
	OptUsername         = "username"
	OptPassword         = "password"
	OptTopicPrefix      = "topicPrefix"
	OptQoS              = "qos"
	OptPublishPeriodSec = "publishPeriodSec"
	OptKeepAliveSec     = "keepAliveSec"
	OptCleanSession     = "cleanSession"
	OptRetainTelemetry  = "retainTelemetry"
)

// options is shared by every call of Options; callers get a copy.
var options = []proto.Option{
	{Key: OptMQTTVersion, Default: "3.1.1", Choices: []string{"3.1.1", "5"},
		Description: "MQTT protocol version"},
	{Key: OptUsername, Default: "",
		Description: "user name sent in CONNECT (empty: none)"},
	{Key: OptPassword, Default: "", Secret: true,
		Description: "password sent in CONNECT (empty: none)"},
	{Key: OptTopicPrefix, Default: "cpesuite/devices",
		Description: "topics are <prefix>/<clientId>/telemetry, set, ack, state and param/<name>"},
	{Key: OptQoS, Default: "1", Choices: []string{"0", "1", "2"},
		Description: "QoS of every publish and of the set subscription"},
	{Key: OptPublishPeriodSec, Default: "10",
		Description: "seconds between telemetry publishes; 0 disables periodic telemetry"},
	{Key: OptKeepAliveSec, Default: "30",
		Description: "MQTT keep-alive in seconds; 0 disables it"},
	{Key: OptCleanSession, Default: "true", Choices: []string{"true", "false"},
		Description: "MQTT 3.1.1 clean session / MQTT 5 clean start"},
	{Key: OptRetainTelemetry, Default: "false", Choices: []string{"true", "false"},
		Description: "publish telemetry and param/<name> with the retain flag"},
}

// Protocol is the MQTT stack.
type Protocol struct{}

var _ proto.Protocol = Protocol{}

// Name implements proto.Protocol.
func (Protocol) Name() string { return "MQTT" }

// Options implements proto.Protocol.
func (Protocol) Options() []proto.Option {
	out := make([]proto.Option, len(options))
	copy(out, options)
	return out
}

// Transport implements proto.Protocol: MQTT has no transport selector (the
// server port and security mode pick TCP or TLS).
func (Protocol) Transport(proto.Config) proto.Transport { return proto.Transport{} }

// Params implements proto.Protocol.
func (Protocol) Params(cfg proto.Config) []param.Param {
	return param.Sensor(cfg.SerialNumber, cfg.Manufacturer, cfg.ModelName)
}

// New implements proto.Protocol. It validates the configuration so that a
// device that can never work is refused at creation, not at every connect.
func (Protocol) New(cfg proto.Config, host proto.Host) (proto.Device, error) {
	s, err := parseSettings(cfg)
	if err != nil {
		return nil, err
	}
	return newDevice(cfg, s, host), nil
}

// settings are a device's parsed options; read-only after New.
type settings struct {
	v5        bool
	username  string
	password  string
	prefix    string
	qos       byte
	period    time.Duration
	keepAlive uint16
	clean     bool
	retain    bool
}

func (s *settings) versionName() string {
	if s.v5 {
		return "MQTT 5"
	}
	return "MQTT 3.1.1"
}

// opt returns the option's value, or its default when the session left it
// out (it should not, but a missing key must not become an empty prefix).
func opt(cfg proto.Config, key string) string {
	if v, ok := cfg.Options[key]; ok {
		return v
	}
	for _, o := range options {
		if o.Key == key {
			return o.Default
		}
	}
	return ""
}

func parseSettings(cfg proto.Config) (*settings, error) {
	var s settings
	var errs []error
	bad := func(key, v, why string) {
		errs = append(errs, fmt.Errorf("mqtt option %s=%q: %s", key, v, why))
	}
	parseBool := func(key string) bool {
		v := opt(cfg, key)
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad(key, v, "want true or false")
		}
		return b
	}

	switch v := opt(cfg, OptMQTTVersion); v {
	case "3.1.1":
	case "5":
		s.v5 = true
	default:
		bad(OptMQTTVersion, v, "want 3.1.1 or 5")
	}
	s.username = opt(cfg, OptUsername)
	s.password = opt(cfg, OptPassword)

	s.prefix = strings.TrimRight(opt(cfg, OptTopicPrefix), "/")
	if s.prefix == "" || strings.ContainsAny(s.prefix, "+#\x00") {
		bad(OptTopicPrefix, s.prefix, "want a non-empty topic without + or #")
	}

	switch v := opt(cfg, OptQoS); v {
	case "0", "1", "2":
		s.qos = v[0] - '0'
	default:
		bad(OptQoS, v, "want 0, 1 or 2")
	}

	if v := opt(cfg, OptPublishPeriodSec); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 86400 {
			bad(OptPublishPeriodSec, v, "want whole seconds from 0 to 86400")
		}
		s.period = time.Duration(n) * time.Second
	}
	if v := opt(cfg, OptKeepAliveSec); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 65535 {
			bad(OptKeepAliveSec, v, "want whole seconds from 0 to 65535")
		}
		s.keepAlive = uint16(n)
	}
	s.clean = parseBool(OptCleanSession)
	s.retain = parseBool(OptRetainTelemetry)

	// The client id is a topic level of every topic of the device.
	if cfg.ClientID == "" || strings.ContainsAny(cfg.ClientID, "/+#\x00") {
		errs = append(errs, fmt.Errorf("mqtt client id %q: want a non-empty id without /, + or #", cfg.ClientID))
	}
	switch cfg.SecurityMode {
	case "", proto.SecurityNone, proto.SecurityX509:
	case proto.SecurityPSK:
		errs = append(errs, errors.New("mqtt: security mode PSK is not supported (Go's TLS has no TLS-PSK cipher suites); use NONE or X509"))
	default:
		errs = append(errs, fmt.Errorf("mqtt: unknown security mode %q", cfg.SecurityMode))
	}
	if cfg.ServerIP == "" {
		errs = append(errs, errors.New("mqtt: no server address"))
	}
	if cfg.ServerPort < 0 || cfg.ServerPort > 65535 {
		errs = append(errs, fmt.Errorf("mqtt: server port %d out of range", cfg.ServerPort))
	}
	if cfg.ClientIP != "" && net.ParseIP(cfg.ClientIP) == nil {
		errs = append(errs, fmt.Errorf("mqtt: client address %q is not an IP address", cfg.ClientIP))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &s, nil
}
