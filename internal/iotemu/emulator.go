package iotemu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"cpesuite/internal/iotemu/autoupdate"
	"cpesuite/internal/iotemu/proto"
	"cpesuite/internal/iotemu/rule"
	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/fsx"
)

// AllProtocols are the protocols of the spec, loaded or not.
var AllProtocols = []string{"LWM2M", "USP", "MQTT", "FSH_HUB", "DUSUN", "COAP"}

// File names in the data directory.
const (
	optionsFile  = "connection-options.json"
	storedFile   = "stored-devices.json"
	snapshotFile = "snapshot.json"
	ruleFile     = "rule.js"
)

// logRingSize is the log ring buffer's length (spec: about 500).
const logRingSize = 500

// persisted is the connection options file.
type persisted struct {
	Settings Settings                     `json:"settings"`
	Options  map[string]string            `json:"options"`
	Saved    map[string]map[string]string `json:"savedOptions"`
	Auto     map[string]autoupdate.Config `json:"globalAutoupdate,omitempty"`
}

// Emulator is the IoT emulator's session: configuration, devices and the
// shared services (log ring, rule, stored templates).
type Emulator struct {
	cfg    Config
	log    *slog.Logger
	protos map[string]proto.Protocol
	logs   *ring
	seq    atomic.Uint64 // device seeds

	rt      atomic.Pointer[Settings] // copy read by devices without the lock
	ruleEng atomic.Pointer[rule.Engine]
	ruleErr atomic.Pointer[RuleFailure]

	mu          sync.Mutex
	st          persisted
	initialized bool
	started     bool
	devices     map[string]*device
	order       []string
	stored      map[string]Template
	cancelStart context.CancelFunc
	starting    sync.WaitGroup
}

// RuleFailure is the last failure of the rule, reported by GET /api/rule.
type RuleFailure struct {
	Time      time.Time `json:"time"`
	ClientID  string    `json:"clientId"`
	Parameter string    `json:"parameter"`
	Error     string    `json:"error"`
	Count     uint64    `json:"count"`
}

// New loads the emulator's files from cfg.DataDir (creating it) and
// returns an idle emulator. brokerPort is the default server port.
func New(cfg Config, log *slog.Logger, protos []proto.Protocol) (*Emulator, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return nil, fmt.Errorf("creating the data directory: %w", err)
	}
	e := &Emulator{cfg: cfg, log: log, protos: map[string]proto.Protocol{}, logs: newRing(logRingSize),
		devices: map[string]*device{}, stored: map[string]Template{}}
	for _, p := range protos {
		e.protos[p.Name()] = p
	}
	brokerPort := 1883
	if _, p, err := net.SplitHostPort(cfg.BrokerAddr); err == nil {
		if n, err := strconv.Atoi(p); err == nil && n > 0 {
			brokerPort = n
		}
	}
	e.st = persisted{Settings: defaultSettings(brokerPort), Options: map[string]string{}, Saved: map[string]map[string]string{}, Auto: map[string]autoupdate.Config{}}
	if err := e.loadFiles(); err != nil {
		return nil, err
	}
	e.publishRuntime()
	return e, nil
}

// fileError names a file by its base name only (spec: Errors).
func fileError(op, path string, err error) error {
	return apperr.Wrap(apperr.ErrInternal, err, codeInternal, fmt.Sprintf("cannot %s %s: %v", op, filepath.Base(path), pathCause(err)))
}

// pathCause drops the full path an *os.PathError would print.
func pathCause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (e *Emulator) path(name string) string { return filepath.Join(e.cfg.DataDir, name) }

func (e *Emulator) loadFiles() error {
	if b, err := os.ReadFile(e.path(optionsFile)); err == nil {
		var p persisted
		if err := json.Unmarshal(b, &p); err != nil {
			return fmt.Errorf("reading %s: %w", optionsFile, err)
		}
		if err := p.Settings.validate(e.available(), e.cfg.MaxDevices); err != nil {
			e.log.Warn("ignoring the stored configuration", "file", optionsFile, "error", apperr.PublicMessage(err))
		} else {
			if p.Options == nil {
				p.Options = map[string]string{}
			}
			if p.Saved == nil {
				p.Saved = map[string]map[string]string{}
			}
			if p.Auto == nil {
				p.Auto = map[string]autoupdate.Config{}
			}
			e.st = p
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("reading %s: %w", optionsFile, err)
	}
	if b, err := os.ReadFile(e.path(storedFile)); err == nil {
		var ts []Template
		if err := json.Unmarshal(b, &ts); err != nil {
			return fmt.Errorf("reading %s: %w", storedFile, err)
		}
		for _, t := range ts {
			e.stored[t.ClientID] = t
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("reading %s: %w", storedFile, err)
	}
	code := ""
	if b, err := os.ReadFile(e.path(ruleFile)); err == nil {
		code = string(b)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("reading %s: %w", ruleFile, err)
	}
	eng, err := rule.Compile(code, e.cfg.RuleBudget)
	if err != nil {
		e.log.Warn("the stored rule does not compile; starting with an empty rule", "file", ruleFile, "error", err.Error())
		eng, _ = rule.Compile("", e.cfg.RuleBudget)
	}
	e.ruleEng.Store(eng)
	return nil
}

// saveLocked writes the connection options file; caller holds mu.
func (e *Emulator) saveLocked() error {
	b, err := json.MarshalIndent(e.st, "", "  ")
	if err != nil {
		return err
	}
	if err := fsx.WriteFileAtomic(e.path(optionsFile), b); err != nil {
		return fileError("write", e.path(optionsFile), err)
	}
	return nil
}

func (e *Emulator) publishRuntime() {
	s := e.st.Settings
	e.rt.Store(&s)
}

func (e *Emulator) runtime() *Settings { return e.rt.Load() }
func (e *Emulator) rule() *rule.Engine { return e.ruleEng.Load() }

func (e *Emulator) ruleFailed(clientID, name string, err error) {
	n := uint64(1)
	if old := e.ruleErr.Load(); old != nil {
		n = old.Count + 1
	}
	e.ruleErr.Store(&RuleFailure{Time: time.Now().UTC(), ClientID: clientID, Parameter: name, Error: err.Error(), Count: n})
	e.logs.add(clientID, proto.Entry{Direction: "-", Event: "RULE_ERROR", Payload: name + ": " + err.Error()})
}

// available lists the loaded protocols in the spec's order.
func (e *Emulator) available() []string {
	out := []string{}
	for _, n := range AllProtocols {
		if _, ok := e.protos[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

func (e *Emulator) protocol(name string) (proto.Protocol, error) {
	p, ok := e.protos[name]
	if !ok {
		return nil, protocolNotFound(name)
	}
	return p, nil
}

// Status is GET /api/status.
type Status struct {
	Protocol    string `json:"protocol"`
	Initialized bool   `json:"initialized"`
	Started     bool   `json:"started"`
	DeviceCount int    `json:"deviceCount"`
}

// Status reports the session flags.
func (e *Emulator) Status() Status {
	e.mu.Lock()
	defer e.mu.Unlock()
	return Status{Protocol: e.st.Settings.Protocol, Initialized: e.initialized, Started: e.started, DeviceCount: len(e.order)}
}

func (e *Emulator) requireStoppedLocked() error {
	if e.initialized || e.started {
		return apperr.Invalid(codeNotStopped, "the emulator is initialized or started; POST /api/stop first")
	}
	return nil
}

// deviceConfig resolves a device's configuration from the settings and an
// optional template.
func (e *Emulator) deviceConfigLocked(p proto.Protocol, s Settings, opts map[string]string, id, serial string, port int) proto.Config {
	return proto.Config{
		ClientID: id, SerialNumber: serial, Manufacturer: s.Manufacturer, ModelName: s.ModelName,
		ServerIP: s.ServerIP, ServerPort: s.ServerPort, ClientIP: s.ClientIP, ClientPort: port,
		SecurityMode: s.SecurityMode, PSKID: s.PSKID, PSKKey: s.PSKKey,
		AuthKeyStorePath: s.AuthKeyStorePath, AuthKeyStorePass: s.AuthKeyStorePass,
		TrustStorePath: s.TrustStorePath, TrustStorePass: s.TrustStorePass,
		AuthCertAlias: s.AuthCertAlias, AliasPass: s.AliasPass,
		Options: resolveOptions(p, opts), Logger: e.log.With("device", id),
	}
}

// checkFiles makes sure the certificate files of a secure configuration
// can be read before devices try.
func checkFiles(c proto.Config) error {
	if c.SecurityMode != proto.SecurityX509 {
		return nil
	}
	for _, p := range []string{c.AuthKeyStorePath, c.TrustStorePath} {
		if p == "" {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			return fmt.Errorf("cannot read %s: %v", filepath.Base(p), pathCause(err))
		}
		f.Close()
	}
	return nil
}

// Init creates the session's devices from the configuration.
func (e *Emulator) Init() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.initialized {
		return apperr.Conflict(codeAlreadyInitialized, "the emulator is already initialized")
	}
	s := e.st.Settings
	p, err := e.protocol(s.Protocol)
	if err != nil {
		return apperr.New(apperr.ErrUnprocessable, codeInitFailed, "%s", apperr.PublicMessage(err))
	}
	devs := make([]*device, 0, s.ClientsCount)
	for i := range s.ClientsCount {
		id, serial := s.ClientID, s.SerialNumber
		if s.ClientsCount > 1 {
			id, serial = fmt.Sprintf("%s-%d", s.ClientID, i+1), fmt.Sprintf("%s-%d", s.SerialNumber, i+1)
		}
		if d, ok := e.devices[id]; ok && d.own {
			return apperr.New(apperr.ErrUnprocessable, codeInitFailed, "client id %s is taken by a device started on its own; remove it or change clientId", id)
		}
		port := 0
		if s.ClientPort > 0 {
			port = s.ClientPort + i
		}
		c := e.deviceConfigLocked(p, s, e.st.Options, id, serial, port)
		if i == 0 {
			if err := checkFiles(c); err != nil {
				return apperr.New(apperr.ErrUnprocessable, codeInitFailed, "%v", err)
			}
		}
		d, err := newDevice(e, p, c, nil, false, e.seq.Add(1))
		if err != nil {
			return apperr.New(apperr.ErrUnprocessable, codeInitFailed, "%v", err)
		}
		devs = append(devs, d)
	}
	e.removeSessionDevicesLocked()
	for _, d := range devs {
		e.addLocked(d)
	}
	e.initialized = true
	e.log.Info("session initialized", "protocol", s.Protocol, "devices", len(devs))
	return nil
}

func (e *Emulator) addLocked(d *device) {
	if _, ok := e.devices[d.id]; !ok {
		e.order = append(e.order, d.id)
	}
	e.devices[d.id] = d
	for name, c := range e.st.Auto {
		if p, ok := d.params.Get(name); ok {
			d.setAuto(name, c, p)
		}
	}
}

func (e *Emulator) removeLocked(id string) {
	delete(e.devices, id)
	e.order = slices.DeleteFunc(e.order, func(s string) bool { return s == id })
}

// removeSessionDevicesLocked drops the (stopped) devices of an earlier session.
func (e *Emulator) removeSessionDevicesLocked() {
	for _, id := range slices.Clone(e.order) {
		if d := e.devices[id]; !d.own {
			e.removeLocked(id)
		}
	}
}

func (e *Emulator) sessionDevicesLocked() []*device {
	var out []*device
	for _, id := range e.order {
		if d := e.devices[id]; !d.own {
			out = append(out, d)
		}
	}
	return out
}

// Start starts the session's devices: the first one at once (its failure
// is START_FAILED), the rest in the background, concurrentClients at a
// time with delaySec between waves.
func (e *Emulator) Start(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.initialized {
		return apperr.Conflict(codeNotInitialized, "the emulator is not initialized; POST /api/init first")
	}
	if e.started {
		return apperr.Conflict(codeAlreadyStarted, "the emulator is already started")
	}
	devs := e.sessionDevicesLocked()
	if len(devs) > 0 {
		if err := devs[0].start(ctx); err != nil {
			return apperr.New(apperr.ErrUnprocessable, codeStartFailed, "device %s could not start: %v", devs[0].id, err)
		}
	}
	bg, cancel := context.WithCancel(context.Background())
	if e.cancelStart != nil {
		e.cancelStart()
	}
	e.cancelStart = cancel
	e.started = true
	s := e.st.Settings
	e.starting.Add(1)
	go func() {
		defer e.starting.Done()
		e.startAll(bg, devs[min(1, len(devs)):], s.ConcurrentClients, time.Duration(s.DelaySec)*time.Second)
	}()
	return nil
}

func (e *Emulator) startAll(ctx context.Context, devs []*device, par int, delay time.Duration) {
	for len(devs) > 0 && ctx.Err() == nil {
		wave := devs[:min(par, len(devs))]
		devs = devs[len(wave):]
		var wg sync.WaitGroup
		for _, d := range wave {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := d.start(ctx); err != nil && ctx.Err() == nil {
					e.log.Warn("device did not start", "device", d.id, "error", err.Error())
				}
			}()
		}
		wg.Wait()
		if delay > 0 && len(devs) > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(delay):
			}
		}
	}
}

// stopDevices stops ds in parallel and returns the ids that failed.
func (e *Emulator) stopDevices(ds []*device) map[string]string {
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.StopWait)
	defer cancel()
	var mu sync.Mutex
	failed := map[string]string{}
	sem := make(chan struct{}, 256)
	var wg sync.WaitGroup
	for _, d := range ds {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := d.stop(ctx); err != nil {
				mu.Lock()
				failed[d.id] = err.Error()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return failed
}

func (e *Emulator) haltStarterLocked() {
	if e.cancelStart != nil {
		e.cancelStart()
		e.cancelStart = nil
	}
	e.mu.Unlock()
	e.starting.Wait()
	e.mu.Lock()
}

// Stop stops the session's devices (not those started on their own) and
// leaves them listed as stopped; the emulator is idle afterwards.
func (e *Emulator) Stop() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.initialized && !e.started {
		return apperr.Conflict(codeNotInitialized, "the emulator is not initialized")
	}
	e.haltStarterLocked()
	failed := e.stopDevices(e.sessionDevicesLocked())
	e.initialized, e.started = false, false
	if len(failed) > 0 {
		return apperr.Invalid(codeDeviceStopFailed, "%d device(s) could not be stopped cleanly", len(failed)).WithDetails(failed)
	}
	return nil
}

// Reset stops the session's devices and removes them: the initial state.
func (e *Emulator) Reset() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.initialized && !e.started {
		return apperr.Conflict(codeNotInitialized, "the emulator is not initialized")
	}
	e.haltStarterLocked()
	failed := e.stopDevices(e.sessionDevicesLocked())
	e.removeSessionDevicesLocked()
	e.initialized, e.started = false, false
	if len(failed) > 0 {
		return apperr.Invalid(codeDeviceStopFailed, "%d device(s) could not be stopped cleanly", len(failed)).WithDetails(failed)
	}
	return nil
}

// Shutdown stops every device, including those started on their own.
func (e *Emulator) Shutdown() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.haltStarterLocked()
	all := make([]*device, 0, len(e.order))
	for _, id := range e.order {
		all = append(all, e.devices[id])
	}
	e.stopDevices(all)
	e.initialized, e.started = false, false
}

func (e *Emulator) device(id string) (*device, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	d, ok := e.devices[id]
	if !ok {
		return nil, apperr.NotFound(codeDeviceNotFound, "device %s not found", id)
	}
	return d, nil
}

func (e *Emulator) list() []*device {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]*device, 0, len(e.order))
	for _, id := range e.order {
		out = append(out, e.devices[id])
	}
	return out
}
