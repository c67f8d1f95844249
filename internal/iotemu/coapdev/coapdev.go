// Package coapdev is the CoAP protocol stack of the IoT emulator: every
// emulated device is a constrained CoAP server (RFC 7252) exposing the
// generic sensor parameters as resources, with Observe (RFC 7641) and a
// CoRE link-format directory (RFC 6690). Devices serve plain UDP or, with a
// security mode, DTLS 1.2 (PSK or X.509).
//
// There is no registration step in plain CoAP: a device does not know
// whether anybody will ever talk to it, so its connection is always
// proto.Unknown.
package coapdev

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"cpesuite/internal/iotemu/param"
	"cpesuite/internal/iotemu/proto"
)

// Option keys.
const (
	OptContentFormat    = "contentFormat"
	OptObservePeriodSec = "observePeriodSec"
	OptResourcePrefix   = "resourcePrefix"
)

// Content format choices of OptContentFormat.
const (
	FormatText = "text"
	FormatJSON = "json"
)

// Transport choices.
const (
	TransportUDP  = "UDP"
	TransportDTLS = "DTLS"
)

// Default ports of RFC 7252 (coap and coaps).
const (
	DefaultPort     = 5683
	DefaultDTLSPort = 5684
)

// Protocol is the CoAP stack. The zero value is ready to use; it must not
// be copied after first use because it tracks the running devices so that
// Transport can report the port a device actually bound.
type Protocol struct {
	mu      sync.Mutex
	running map[string]*Device // by ClientID, only while serving
}

var (
	_ proto.Protocol = (*Protocol)(nil)
	_ proto.Device   = (*Device)(nil)
)

// Name is the protocol's API spelling.
func (*Protocol) Name() string { return "COAP" }

// Options lists the protocol options in display order.
func (*Protocol) Options() []proto.Option {
	return []proto.Option{
		{
			Key: OptContentFormat, Default: FormatText, Choices: []string{FormatText, FormatJSON},
			Description: "representation of a parameter resource when the client sends no Accept option",
		},
		{
			Key: OptObservePeriodSec, Default: "0",
			Description: "when > 0, every observation is also notified at this period even without a change",
		},
		{
			Key: OptResourcePrefix, Default: "params",
			Description: "URI path under which the parameters are served (/<prefix>/<name>)",
		},
	}
}

// Transport returns the transport selector: DTLS for any security mode,
// UDP otherwise. SelectedPort is the bound port while the device runs, so
// an ephemeral port (ClientPort 0) is reported as the real one.
func (p *Protocol) Transport(cfg proto.Config) proto.Transport {
	sel := TransportUDP
	if securityMode(cfg) != proto.SecurityNone {
		sel = TransportDTLS
	}
	port := cfg.ClientPort
	if d := p.lookup(cfg.ClientID); d != nil {
		if bound := addrPort(d.Addr()); bound > 0 {
			port = bound
		}
	}
	return proto.Transport{
		Key:          "transport",
		Options:      []string{TransportUDP, TransportDTLS},
		Selected:     sel,
		SelectedPort: port,
		Ports:        map[string][]int{TransportUDP: {DefaultPort}, TransportDTLS: {DefaultDTLSPort}},
	}
}

// Params returns the generic sensor parameters.
func (*Protocol) Params(cfg proto.Config) []param.Param {
	return param.Sensor(cfg.SerialNumber, cfg.Manufacturer, cfg.ModelName)
}

// New validates cfg and creates a stopped device.
func (p *Protocol) New(cfg proto.Config, host proto.Host) (proto.Device, error) {
	return p.newDevice(cfg, host)
}

func (p *Protocol) newDevice(cfg proto.Config, host proto.Host) (*Device, error) {
	if host == nil {
		return nil, errors.New("coapdev: nil host")
	}
	opts, err := parseOptions(cfg.Options)
	if err != nil {
		return nil, err
	}
	d := &Device{
		proto:       p,
		cfg:         cfg,
		host:        host,
		opts:        opts,
		log:         cfg.Logger,
		ackTimeout:  defaultAckTimeout,
		idleTimeout: defaultIdleTimeout,
	}
	if d.log == nil {
		d.log = discardLogger
	}
	switch securityMode(cfg) {
	case proto.SecurityNone:
	case proto.SecurityPSK:
		if cfg.PSKID == "" {
			return nil, errors.New("coapdev: PSK security needs a PSK identity")
		}
		key, err := hex.DecodeString(cfg.PSKKey)
		if err != nil || len(key) == 0 {
			// The decoder's error quotes the offending character of the
			// key; the key is a secret, so it is not wrapped.
			return nil, errors.New("coapdev: PSK key must be non-empty hex")
		}
		d.pskKey = key
	case proto.SecurityX509:
		if cfg.AuthKeyStorePath == "" {
			return nil, errors.New("coapdev: X509 security needs a key store (PEM certificate and key)")
		}
	default:
		return nil, fmt.Errorf("coapdev: unknown security mode %q", cfg.SecurityMode)
	}
	return d, nil
}

type devOptions struct {
	json   bool          // default representation is JSON
	period time.Duration // periodic notification, 0 = only on change
	prefix []string      // path segments of the parameter collection
}

func parseOptions(m map[string]string) (devOptions, error) {
	get := func(k, def string) string {
		if v, ok := m[k]; ok {
			return v
		}
		return def
	}
	var o devOptions
	switch cf := get(OptContentFormat, FormatText); cf {
	case FormatText:
	case FormatJSON:
		o.json = true
	default:
		return o, fmt.Errorf("coapdev: %s must be %q or %q, not %q", OptContentFormat, FormatText, FormatJSON, cf)
	}
	ps := strings.TrimSpace(get(OptObservePeriodSec, "0"))
	n, err := strconv.Atoi(ps)
	if err != nil || n < 0 {
		return o, fmt.Errorf("coapdev: %s must be a non-negative integer, not %q", OptObservePeriodSec, ps)
	}
	o.period = time.Duration(n) * time.Second
	prefix := strings.Trim(get(OptResourcePrefix, "params"), "/")
	if prefix == "" {
		return o, fmt.Errorf("coapdev: %s must not be empty", OptResourcePrefix)
	}
	o.prefix = strings.Split(prefix, "/")
	for _, s := range o.prefix {
		if s == "" || s == "." || s == ".." {
			return o, fmt.Errorf("coapdev: %s %q has an empty or relative segment", OptResourcePrefix, prefix)
		}
	}
	return o, nil
}

// securityMode treats an unset mode as NONE: the session always resolves
// it, but a zero Config should still mean plain CoAP.
func securityMode(cfg proto.Config) string {
	if cfg.SecurityMode == "" {
		return proto.SecurityNone
	}
	return cfg.SecurityMode
}

func (p *Protocol) register(id string, d *Device) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running == nil {
		p.running = make(map[string]*Device)
	}
	p.running[id] = d
}

func (p *Protocol) unregister(id string, d *Device) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running[id] == d {
		delete(p.running, id)
	}
}

func (p *Protocol) lookup(id string) *Device {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.running[id]
}

func addrPort(a net.Addr) int {
	if a == nil {
		return 0
	}
	if u, ok := a.(*net.UDPAddr); ok {
		return u.Port
	}
	_, ps, err := net.SplitHostPort(a.String())
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(ps)
	return n
}
