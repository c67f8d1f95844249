// Package proto is the plug-in boundary between the IoT emulator's session
// and API (package iotemu) and its protocol stacks (lwm2m, mqttdev, coapdev,
// and later usp, fshhub, dusun). A stack implements Protocol; the session
// creates one Device per emulated client and talks to it only through the
// interfaces here, so a new stack plugs in without touching the API.
package proto

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"cpesuite/internal/iotemu/param"
)

// Connection is a device's view of its server, as the API reports it.
type Connection string

// Connection values (spec: "Device connection values").
const (
	Connected    Connection = "CONNECTED"
	Disconnected Connection = "DISCONNECTED"
	Unknown      Connection = "UNKNOWN"
)

// Security modes of Config.SecurityMode. NONE is plain transport; PSK and
// X509 select DTLS (LwM2M, CoAP) or TLS (MQTT, where PSK is refused).
const (
	SecurityNone = "NONE"
	SecurityPSK  = "PSK"
	SecurityX509 = "X509"
)

// Option describes one protocol option: its key, default, whether it is a
// secret (masked in every read), and its fixed choice list if it has one.
type Option struct {
	Key         string   `json:"key"`
	Default     string   `json:"default"`
	Secret      bool     `json:"secret"`
	Choices     []string `json:"choices,omitempty"`
	Description string   `json:"description,omitempty"`
}

// Transport is the transport selector of a protocol (spec: "Transport
// configuration"). The zero value is the empty selector of protocols
// without one.
type Transport struct {
	Key          string           `json:"key"`
	Options      []string         `json:"options"`
	Selected     string           `json:"selected"`
	SelectedPort int              `json:"selectedPort"`
	Ports        map[string][]int `json:"ports"`
}

// MarshalJSON writes the empty selector as {} and any other with every
// field, selectedPort 0 included: the spec's resource always carries it.
func (t Transport) MarshalJSON() ([]byte, error) {
	if t.Key == "" {
		return []byte("{}"), nil
	}
	type plain Transport
	return json.Marshal(plain(t))
}

// Config is everything one device needs to run, resolved by the session
// from the global configuration, the protocol options and, for a stored
// device, its template. Secrets are in clear here; stacks must never log
// PSKKey, the store passwords or secret options.
type Config struct {
	ClientID     string
	SerialNumber string
	Manufacturer string
	ModelName    string

	ServerIP   string
	ServerPort int
	ClientIP   string // local address to bind; "" = any
	ClientPort int    // local port to bind; 0 = ephemeral

	SecurityMode     string // SecurityNone, SecurityPSK or SecurityX509
	PSKID            string
	PSKKey           string // hex-encoded key
	AuthKeyStorePath string // PEM file with the client certificate chain and key
	AuthKeyStorePass string
	TrustStorePath   string // PEM file with trusted CA certificates
	TrustStorePass   string
	AuthCertAlias    string
	AliasPass        string

	// Options holds the protocol's options, every key of Protocol.Options
	// present (defaults filled in).
	Options map[string]string

	Logger *slog.Logger
}

// Entry is one protocol message for the emulator's log ring buffer. The
// session adds seq, time and deviceName.
type Entry struct {
	Direction      string // IN or OUT
	Event          string // e.g. REGISTER, UPDATE, READ, NOTIFY, PUBLISH
	MessageOptions string // e.g. CoAP options or MQTT topic and QoS
	Payload        string // decoded payload, human-readable
	RawMessage     string // wire bytes, hex or text
}

// Errors a Host returns from Write; stacks map them to their protocol's
// failure codes (for LwM2M: 4.04, 4.05, 4.00).
var (
	ErrReadOnly = errors.New("parameter is not writable")
	ErrFrozen   = errors.New("parameter is frozen by a rule")
)

// Host is the session's side of one device, handed to Protocol.New.
// All methods are safe for concurrent use.
type Host interface {
	// Params is the device's parameter set. Stacks read it freely and may
	// Put device-owned values (e.g. a firmware update state) directly.
	Params() *param.Set
	// Write applies a server-initiated write: it checks writability and
	// freezing, stores the value, records history and runs the rule. It
	// wraps param.ErrUnknown, param.ErrValue, ErrReadOnly or ErrFrozen.
	Write(name, value string) error
	// Log records a protocol message (a no-op while logging is disabled).
	Log(Entry)
	// SetStatus sets the free-text status line of the device list.
	SetStatus(string)
	// SetConnection sets the device's connection value.
	SetConnection(Connection)
	// FailResponse reports the runtime flag that makes devices answer
	// server requests with a failure.
	FailResponse() bool
}

// Device is one emulated client of a protocol stack.
type Device interface {
	// Start opens the device's sockets and begins talking to its server
	// (LwM2M: Register). It returns once the first attempt is made; the
	// outcome is reported through Host.SetConnection. An error means the
	// device could not start at all (e.g. the port is in use).
	Start(ctx context.Context) error
	// Stop ends the session with the server (LwM2M: Deregister) and frees
	// every port. It is idempotent.
	Stop(ctx context.Context) error
	// Heartbeat sends the protocol's keep-alive now (LwM2M: Update; MQTT:
	// a telemetry publish; CoAP: notify observers).
	Heartbeat(ctx context.Context) error
	// Changed tells the stack that a parameter changed locally (API write,
	// automatic update, rule, or a server write) so it can notify
	// observers or publish. It must not block.
	Changed(name, value string)
}

// Protocol is one protocol stack.
type Protocol interface {
	// Name is the protocol's API spelling: LWM2M, MQTT, COAP, USP, ...
	Name() string
	// Options lists the protocol options in display order.
	Options() []Option
	// Transport returns the transport selector for the configuration.
	Transport(cfg Config) Transport
	// Params returns the initial parameters of a new device.
	Params(cfg Config) []param.Param
	// New creates a device; it must not open sockets (Start does).
	New(cfg Config, host Host) (Device, error)
}

// Optional device capabilities; the API answers 409 where a device lacks one.
type (
	// Rebooter restarts the device as a reboot would (LwM2M: Execute /3/0/4).
	Rebooter interface {
		Reboot(ctx context.Context) error
	}
	// Bootstrapper runs the protocol's bootstrap sequence.
	Bootstrapper interface {
		Bootstrap(ctx context.Context) error
	}
	// Deregisterer ends a registration while keeping the device defined
	// (LwM2M DELETE /rd/{id}); it reports whether one was active.
	Deregisterer interface {
		Deregister(ctx context.Context) (bool, error)
	}
	// Updater sends a registration update (LwM2M Update); it reports
	// whether the device was registered.
	Updater interface {
		Update(ctx context.Context) (bool, error)
	}
)
