package iotemu

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cpesuite/internal/iotemu/param"
	"cpesuite/internal/iotemu/proto"
	"cpesuite/internal/platform/apperr"
)

// DeviceEntry is one element of GET /api/devices.
type DeviceEntry struct {
	ClientID     string           `json:"clientId"`
	SerialNumber string           `json:"serialNumber"`
	Protocol     string           `json:"protocol"`
	Status       string           `json:"status"`
	Connection   proto.Connection `json:"connection"`
	ClientPort   int              `json:"clientPort"`
	Manufacturer string           `json:"manufacturer"`
	ModelName    string           `json:"modelName"`
	Running      bool             `json:"running"`
	Standalone   bool             `json:"standalone"`
}

// DeviceDetail is GET /api/devices/{clientId}.
type DeviceDetail struct {
	DeviceEntry
	Parameters []param.Param `json:"parameters"`
}

func (d *device) entry() DeviceEntry {
	return DeviceEntry{
		ClientID: d.id, SerialNumber: d.serial, Protocol: d.proto.Name(), Status: d.statusLine(),
		Connection: d.connection(), ClientPort: d.cfg.ClientPort, Manufacturer: d.cfg.Manufacturer,
		ModelName: d.cfg.ModelName, Running: d.isRunning(), Standalone: d.own,
	}
}

// Devices lists every device, session and standalone.
func (e *Emulator) Devices() []DeviceEntry {
	ds := e.list()
	out := make([]DeviceEntry, 0, len(ds))
	for _, d := range ds {
		out = append(out, d.entry())
	}
	return out
}

// Device returns one device with its parameters.
func (e *Emulator) Device(id string) (DeviceDetail, error) {
	d, err := e.device(id)
	if err != nil {
		return DeviceDetail{}, err
	}
	return DeviceDetail{DeviceEntry: d.entry(), Parameters: d.params.List()}, nil
}

// Parameters returns one device's parameters.
func (e *Emulator) Parameters(id string) ([]param.Param, error) {
	d, err := e.device(id)
	if err != nil {
		return nil, err
	}
	return d.params.List(), nil
}

func paramNotFound(id, name string) error {
	return apperr.NotFound(codeParameterNotFound, "device %s has no parameter %s", id, name)
}

// SetParameter is PUT .../parameters/{name}: the device must run and the
// parameter must not be frozen by the rule; nothing is sent otherwise.
func (e *Emulator) SetParameter(id, name, value string) error {
	d, err := e.device(id)
	if err != nil {
		return err
	}
	if _, ok := d.params.Get(name); !ok {
		return paramNotFound(id, name)
	}
	if !d.isRunning() {
		return apperr.Conflict(codeNotStarted, "device %s is not started", id)
	}
	err = d.apply(name, value, fromAPI)
	switch {
	case errors.Is(err, proto.ErrFrozen):
		return apperr.Conflict(codeParameterNotWritable, "parameter %s of device %s is frozen by the rule", name, id)
	case errors.Is(err, param.ErrValue):
		return badRequest("%v", err)
	}
	return err
}

// Heartbeat sends a heartbeat from every running device (id "") or one.
func (e *Emulator) Heartbeat(ctx context.Context, id string) (int, error) {
	var ds []*device
	if id == "" {
		ds = e.list()
	} else {
		d, err := e.device(id)
		if err != nil {
			return 0, err
		}
		if !d.isRunning() {
			return 0, apperr.Conflict(codeNotStarted, "device %s is not started", id)
		}
		ds = []*device{d}
	}
	if id != "" {
		if err := ds[0].drv.Heartbeat(ctx); err != nil {
			return 0, apperr.New(apperr.ErrUnprocessable, codeHeartbeatFailed, "device %s: %v", id, err)
		}
		return 1, nil
	}
	n := forEachRunning(ds, func(d *device, drv proto.Device) bool {
		if err := drv.Heartbeat(ctx); err != nil {
			e.log.Debug("heartbeat failed", "device", d.id, "error", err.Error())
			return false
		}
		return true
	})
	return n, nil
}

// fanOut bounds how many devices one API call drives at once: a server
// that does not answer costs each device its request time-out, which must
// not add up over thousands of devices.
const fanOut = 64

// forEachRunning calls fn for every running device of ds, fanOut at a time,
// and returns how many calls reported true.
func forEachRunning(ds []*device, fn func(*device, proto.Device) bool) int {
	var n atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, fanOut)
	for _, d := range ds {
		d.mu.Lock()
		running, drv := d.running, d.drv
		d.mu.Unlock()
		if !running {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if fn(d, drv) {
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	return int(n.Load())
}

// newFromTemplateLocked creates (not starts) a device from a template.
func (e *Emulator) newFromTemplateLocked(t Template, own bool) (*device, error) {
	pname := e.st.Settings.Protocol
	if t.Protocol != "" {
		pname = t.Protocol
	}
	p, err := e.protocol(strings.ToUpper(pname))
	if err != nil {
		return nil, err
	}
	if err := t.normalize(p); err != nil {
		return nil, err
	}
	t.Protocol = p.Name()
	s, err := t.resolve(e.st.Settings, e.available(), e.cfg.MaxDevices)
	if err != nil {
		return nil, err
	}
	opts := e.st.Options
	if s.Protocol != e.st.Settings.Protocol {
		opts = e.st.Saved[s.Protocol]
	}
	c := e.deviceConfigLocked(p, s, opts, t.ClientID, s.SerialNumber, s.ClientPort)
	c.Options = resolveOptions(p, opts, t.ProtocolOptions)
	if err := checkFiles(c); err != nil {
		return nil, badRequest("device %s could not be created: %v", t.ClientID, err)
	}
	d, err := newDevice(e, p, c, t.Parameters, own, e.seq.Add(1))
	if err != nil {
		if _, ok := apperr.As(err); ok {
			return nil, err
		}
		return nil, badRequest("device %s could not be created: %v", t.ClientID, err)
	}
	return d, nil
}

func (e *Emulator) checkFreeLocked(id string) error {
	if d, ok := e.devices[id]; ok {
		if d.isRunning() {
			return badRequest("device %s already exists and is running", id)
		}
		if !d.own {
			return badRequest("device %s belongs to the session; POST /api/devices/%s/start starts it", id, id)
		}
	}
	return nil
}

// StartNew creates, initialises, starts and stores one device without a
// session. The template is stored (replacing one of the same id).
func (e *Emulator) StartNew(ctx context.Context, t Template) (DeviceEntry, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.checkFreeLocked(t.ClientID); err != nil {
		return DeviceEntry{}, err
	}
	d, err := e.newFromTemplateLocked(t, true)
	if err != nil {
		return DeviceEntry{}, err
	}
	// Normalised by newFromTemplateLocked: masks dropped, options checked.
	if err := t.normalize(d.proto); err != nil {
		return DeviceEntry{}, err
	}
	// The stored template names its protocol so that masking and a later
	// start do not depend on the protocol selected then.
	t.Protocol = d.proto.Name()
	// Stored first: a device that runs but could not be stored would be
	// lost at the next restart while the caller was told it failed.
	old, had := e.stored[t.ClientID]
	e.stored[t.ClientID] = t
	if err := e.saveStoredLocked(); err != nil {
		if had {
			e.stored[t.ClientID] = old
		} else {
			delete(e.stored, t.ClientID)
		}
		return DeviceEntry{}, err
	}
	if err := d.start(ctx); err != nil {
		return DeviceEntry{}, apperr.Invalid(codeStartFailed, "device %s could not be started: %v", t.ClientID, err)
	}
	e.addLocked(d)
	return d.entry(), nil
}

// StartStored starts the stored template clientId as a standalone device.
func (e *Emulator) StartStored(ctx context.Context, id string) (DeviceEntry, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t, ok := e.stored[id]
	if !ok {
		return DeviceEntry{}, apperr.NotFound(codeDeviceNotFound, "no stored device %s", id)
	}
	if err := e.checkFreeLocked(id); err != nil {
		return DeviceEntry{}, err
	}
	d, err := e.newFromTemplateLocked(t, true)
	if err != nil {
		return DeviceEntry{}, err
	}
	if err := d.start(ctx); err != nil {
		return DeviceEntry{}, apperr.Invalid(codeStartFailed, "device %s could not be started: %v", id, err)
	}
	e.addLocked(d)
	return d.entry(), nil
}

// DeleteStored removes a template (a running device keeps running).
func (e *Emulator) DeleteStored(id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	t, ok := e.stored[id]
	if !ok {
		return apperr.NotFound(codeDeviceNotFound, "no stored device %s", id)
	}
	delete(e.stored, id)
	if err := e.saveStoredLocked(); err != nil {
		e.stored[id] = t
		return err
	}
	return nil
}

// AddDevices adds devices to an initialised session; they start at once
// when the session is started.
func (e *Emulator) AddDevices(ts []Template) ([]DeviceEntry, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.initialized {
		return nil, apperr.Invalid(codeNotInitialized, "devices can be added to an initialized session only; POST /api/init first")
	}
	if len(ts) == 0 {
		return nil, badRequest("at least one device template is required")
	}
	if len(e.order)+len(ts) > e.cfg.MaxDevices {
		return nil, badRequest("the emulator runs at most %d devices", e.cfg.MaxDevices)
	}
	seen := map[string]bool{}
	devs := make([]*device, 0, len(ts))
	for i, t := range ts {
		if seen[t.ClientID] {
			return nil, badRequest("device %d: clientId %s appears twice", i, t.ClientID)
		}
		seen[t.ClientID] = true
		if _, ok := e.devices[t.ClientID]; ok {
			return nil, badRequest("device %s already exists", t.ClientID)
		}
		d, err := e.newFromTemplateLocked(t, false)
		if err != nil {
			return nil, err
		}
		devs = append(devs, d)
	}
	out := make([]DeviceEntry, 0, len(devs))
	for _, d := range devs {
		e.addLocked(d)
	}
	if e.started {
		e.starting.Add(1)
		go func() {
			defer e.starting.Done()
			e.startAll(context.Background(), devs, e.runtime().ConcurrentClients, 0)
		}()
	}
	for _, d := range devs {
		out = append(out, d.entry())
	}
	return out, nil
}

// StartDevice starts one listed device, or the stored template of that id.
func (e *Emulator) StartDevice(ctx context.Context, id string) (DeviceEntry, error) {
	d, err := e.device(id)
	if err != nil {
		e.mu.Lock()
		_, stored := e.stored[id]
		e.mu.Unlock()
		if stored {
			return e.StartStored(ctx, id)
		}
		return DeviceEntry{}, err
	}
	if d.isRunning() {
		return DeviceEntry{}, apperr.Conflict(codeAlreadyStarted, "device %s is already running", id)
	}
	if err := d.start(ctx); err != nil {
		return DeviceEntry{}, apperr.Invalid(codeStartFailed, "device %s could not be started: %v", id, err)
	}
	return d.entry(), nil
}

// StopDevice stops one device.
func (e *Emulator) StopDevice(id string) error {
	d, err := e.device(id)
	if err != nil {
		return err
	}
	if !d.isRunning() {
		return apperr.Conflict(codeNotStarted, "device %s is not started", id)
	}
	if failed := e.stopDevices([]*device{d}); len(failed) > 0 {
		return apperr.Invalid(codeDeviceStopFailed, "device %s could not be stopped: %s", id, failed[id])
	}
	return nil
}

// DeleteDevice stops and removes one device.
func (e *Emulator) DeleteDevice(id string) error {
	d, err := e.device(id)
	if err != nil {
		return err
	}
	if failed := e.stopDevices([]*device{d}); len(failed) > 0 {
		return apperr.Invalid(codeDeviceStopFailed, "device %s could not be stopped: %s", id, failed[id])
	}
	e.mu.Lock()
	e.removeLocked(id)
	e.mu.Unlock()
	return nil
}

// errNoCapability and errNotRunning are the 409s of reboot and bootstrap.
var (
	errNoCapability = errors.New("not supported by the device's protocol")
	errNotRunning   = errors.New("device not running")
)

// Reboot and Bootstrap run a device's protocol action. They return
// apperr errors whose status the API sends without a body.
func (e *Emulator) Reboot(ctx context.Context, id string) error {
	return e.action(ctx, id, func(drv proto.Device) (func(context.Context) error, bool) {
		r, ok := drv.(proto.Rebooter)
		if !ok {
			return nil, false
		}
		return r.Reboot, true
	})
}

// Bootstrap runs the device's bootstrap sequence.
func (e *Emulator) Bootstrap(ctx context.Context, id string) error {
	return e.action(ctx, id, func(drv proto.Device) (func(context.Context) error, bool) {
		b, ok := drv.(proto.Bootstrapper)
		if !ok {
			return nil, false
		}
		return b.Bootstrap, true
	})
}

func (e *Emulator) action(ctx context.Context, id string, pick func(proto.Device) (func(context.Context) error, bool)) error {
	d, err := e.device(id)
	if err != nil {
		return err
	}
	d.mu.Lock()
	running, drv := d.running, d.drv
	d.mu.Unlock()
	if !running {
		return apperr.Wrap(apperr.ErrConflict, errNotRunning, codeNotStarted, "device "+id+" is not started")
	}
	fn, ok := pick(drv)
	if !ok {
		return apperr.Wrap(apperr.ErrConflict, errNoCapability, codeNotStarted, "not supported by "+d.proto.Name())
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := fn(ctx); err != nil {
		return apperr.New(apperr.ErrUnprocessable, codeActionFailed, "device %s: %v", id, err)
	}
	return nil
}

// lwm2mRunning returns the running LwM2M devices.
func (e *Emulator) lwm2mRunning() []*device {
	var out []*device
	for _, d := range e.list() {
		if d.proto.Name() == "LWM2M" && d.isRunning() {
			out = append(out, d)
		}
	}
	return out
}

// DeregisterResult is the answer of POST /api/lwm2m/deregister?details=true.
type DeregisterResult struct {
	Deregistered []string `json:"deregistered"`
	Count        int      `json:"count"`
}

// LwM2MDeregister sends DELETE /rd from every running LwM2M device and
// stops it; POST /api/start or /api/devices/{id}/start restarts it.
func (e *Emulator) LwM2MDeregister(ctx context.Context) (DeregisterResult, error) {
	ds := e.lwm2mRunning()
	if len(ds) == 0 {
		return DeregisterResult{}, apperr.Conflict(codeNotStarted, "no LWM2M device is running")
	}
	res := DeregisterResult{Deregistered: []string{}}
	var mu sync.Mutex
	forEachRunning(ds, func(d *device, drv proto.Device) bool {
		if dr, ok := drv.(proto.Deregisterer); ok {
			if was, err := dr.Deregister(ctx); err == nil && was {
				mu.Lock()
				res.Deregistered = append(res.Deregistered, d.id)
				mu.Unlock()
			}
		}
		_ = d.stop(ctx)
		return true
	})
	e.mu.Lock()
	// Deregistered session devices may be restarted by POST /api/start; the
	// waves still starting are called off.
	for _, d := range ds {
		if !d.own {
			e.started = false
			if e.cancelStart != nil {
				e.cancelStart()
				e.cancelStart = nil
			}
		}
	}
	e.mu.Unlock()
	slices.Sort(res.Deregistered)
	res.Count = len(res.Deregistered)
	return res, nil
}

// LwM2MUpdate sends a registration update from every running LwM2M device.
func (e *Emulator) LwM2MUpdate(ctx context.Context) (int, error) {
	ds := e.lwm2mRunning()
	if len(ds) == 0 {
		return 0, apperr.Conflict(codeNotStarted, "no LWM2M device is running")
	}
	n := forEachRunning(ds, func(_ *device, drv proto.Device) bool {
		u, ok := drv.(proto.Updater)
		if !ok {
			return false
		}
		was, err := u.Update(ctx)
		return err == nil && was
	})
	return n, nil
}
