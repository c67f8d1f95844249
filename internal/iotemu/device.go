package iotemu

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"sync/atomic"
	"time"

	"cpesuite/internal/iotemu/autoupdate"
	"cpesuite/internal/iotemu/param"
	"cpesuite/internal/iotemu/proto"
	"cpesuite/internal/iotemu/rule"
)

// historyLen is how many values a parameter history keeps (spec: Limits).
const historyLen = 50

// origin says who changed a parameter; it decides which checks apply.
type origin int

const (
	fromAPI origin = iota
	fromServer
	fromAuto
	fromRule
)

// device is one emulated client: its parameters, rule state, automatic
// updates and history, and the protocol stack's Device. It is the
// proto.Host of that Device.
type device struct {
	em        *Emulator
	id        string
	serial    string
	proto     proto.Protocol
	cfg       proto.Config
	params    *param.Set
	own       bool // started on its own (startNew, stored start): survives stop
	seed      uint64
	conn      atomic.Value // proto.Connection
	status    atomic.Value // string
	lifecycle sync.Mutex   // serialises Start/Stop of drv

	mu      sync.Mutex // guards the fields below and orders parameter changes
	drv     proto.Device
	running bool
	frozen  map[string]bool
	hist    map[string]*history
	auto    map[string]*autoTask
}

type histEntry struct {
	Time  time.Time `json:"time"`
	Value string    `json:"value"`
}

type history struct {
	entries []histEntry // ring of historyLen
	next    int
	full    bool
}

func (h *history) add(v string) {
	e := histEntry{Time: time.Now().UTC(), Value: v}
	if len(h.entries) < historyLen {
		h.entries = append(h.entries, e)
		return
	}
	h.entries[h.next] = e
	h.next = (h.next + 1) % historyLen
	h.full = true
}

func (h *history) list() []histEntry {
	if h == nil {
		return []histEntry{}
	}
	out := make([]histEntry, 0, len(h.entries))
	out = append(out, h.entries[h.next:]...)
	return append(out, h.entries[:h.next]...)
}

type autoTask struct {
	cfg   autoupdate.Config
	gen   *autoupdate.Generator
	timer *time.Timer
}

func newDevice(em *Emulator, p proto.Protocol, cfg proto.Config, values map[string]string, own bool, seed uint64) (*device, error) {
	d := &device{em: em, id: cfg.ClientID, serial: cfg.SerialNumber, proto: p, cfg: cfg, own: own, seed: seed,
		frozen: map[string]bool{}, hist: map[string]*history{}, auto: map[string]*autoTask{}}
	d.params = param.NewSet(p.Params(cfg))
	for name, v := range values {
		if _, _, err := d.params.Put(name, v); err != nil {
			return nil, badRequest("device %s: parameter %s: %v", cfg.ClientID, name, err)
		}
	}
	d.conn.Store(proto.Disconnected)
	d.status.Store("created")
	drv, err := p.New(cfg, d)
	if err != nil {
		return nil, fmt.Errorf("creating device %s: %w", cfg.ClientID, err)
	}
	d.drv = drv
	return d, nil
}

// proto.Host

func (d *device) Params() *param.Set               { return d.params }
func (d *device) SetStatus(s string)               { d.status.Store(s) }
func (d *device) SetConnection(c proto.Connection) { d.conn.Store(c) }
func (d *device) FailResponse() bool               { return d.em.runtime().FailResponse }
func (d *device) Log(e proto.Entry) {
	if d.em.runtime().LoggingEnabled {
		d.em.logs.add(d.id, e)
	}
}

func (d *device) Write(name, value string) error {
	return d.apply(name, value, fromServer)
}

func (d *device) connection() proto.Connection {
	c, _ := d.conn.Load().(proto.Connection)
	if c == "" {
		return proto.Unknown
	}
	return c
}

func (d *device) statusLine() string { s, _ := d.status.Load().(string); return s }

func (d *device) isRunning() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.running
}

// apply is the one path of every parameter change: checks, store, history,
// rule, and the stack's notification.
func (d *device) apply(name, value string, o origin) error {
	changed, err := d.applyLocked(name, value, o)
	if err != nil {
		return err
	}
	d.mu.Lock()
	drv, running := d.drv, d.running
	d.mu.Unlock()
	if running {
		for _, c := range changed {
			drv.Changed(c.Name, c.Value)
		}
	}
	return nil
}

func (d *device) applyLocked(name, value string, o origin) ([]rule.Change, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p, ok := d.params.Get(name)
	if !ok {
		return nil, fmt.Errorf("%w %q", param.ErrUnknown, name)
	}
	if o == fromServer && !p.Writable {
		return nil, fmt.Errorf("%s: %w", name, proto.ErrReadOnly)
	}
	if d.frozen[name] && o != fromRule {
		return nil, fmt.Errorf("%s: %w", name, proto.ErrFrozen)
	}
	old, stored, err := d.params.Put(name, value)
	if err != nil {
		return nil, err
	}
	changed := []rule.Change{{Name: name, Value: stored}}
	d.record(name, stored)
	eng := d.em.rule()
	if eng == nil || eng.Empty() || o == fromRule {
		return changed, nil
	}
	res, err := eng.Run(rule.Param{Name: name, Value: stored, OldValue: old, Type: string(p.Type)}, d.ruleDevice())
	if err != nil {
		d.em.ruleFailed(d.id, name, err)
		return changed, nil
	}
	for _, l := range res.Logs {
		d.Log(proto.Entry{Direction: "-", Event: "RULE_LOG", Payload: l})
	}
	for _, n := range res.Freeze {
		if _, ok := d.params.Get(n); ok {
			d.frozen[n] = true
		}
	}
	for _, n := range res.Unfreeze {
		delete(d.frozen, n)
	}
	sets := res.Set
	if res.Value != nil {
		sets = append([]rule.Change{{Name: name, Value: *res.Value}}, sets...)
	}
	for _, c := range sets {
		_, v, err := d.params.Put(c.Name, c.Value)
		if err != nil {
			d.em.ruleFailed(d.id, name, fmt.Errorf("rule set %s: %w", c.Name, err))
			continue
		}
		d.record(c.Name, v)
		changed = append(changed, rule.Change{Name: c.Name, Value: v})
	}
	return changed, nil
}

// record adds a history entry when rendering is FULL or LAZY. Caller holds mu.
func (d *device) record(name, v string) {
	if d.em.runtime().GUIRenderingType == renderOff {
		return
	}
	h := d.hist[name]
	if h == nil {
		h = &history{}
		d.hist[name] = h
	}
	h.add(v)
}

func (d *device) ruleDevice() rule.Device {
	vals := map[string]string{}
	for _, p := range d.params.List() {
		vals[p.Name] = p.Value
	}
	fr := make(map[string]bool, len(d.frozen))
	for k := range d.frozen {
		fr[k] = true
	}
	return rule.Device{ClientID: d.id, SerialNumber: d.serial, Protocol: d.proto.Name(), Params: vals, Frozen: fr}
}

func (d *device) historyOf(name string) []histEntry {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.hist[name].list()
}

// start starts the stack and the automatic updates.
func (d *device) start(ctx context.Context) error {
	d.lifecycle.Lock()
	defer d.lifecycle.Unlock()
	d.mu.Lock()
	if d.running {
		d.mu.Unlock()
		return nil
	}
	d.mu.Unlock()
	if err := d.drv.Start(ctx); err != nil {
		d.SetConnection(proto.Disconnected)
		d.SetStatus("start failed: " + err.Error())
		return err
	}
	d.mu.Lock()
	d.running = true
	for name, t := range d.auto {
		d.scheduleLocked(name, t)
	}
	d.mu.Unlock()
	return nil
}

// stop stops the stack and the automatic updates; the device stays defined.
func (d *device) stop(ctx context.Context) error {
	d.lifecycle.Lock()
	defer d.lifecycle.Unlock()
	d.mu.Lock()
	was := d.running
	d.running = false
	for _, t := range d.auto {
		if t.timer != nil {
			t.timer.Stop()
			t.timer = nil
		}
	}
	d.mu.Unlock()
	if !was {
		return nil
	}
	err := d.drv.Stop(ctx)
	d.SetConnection(proto.Disconnected)
	if err != nil {
		d.SetStatus("stop failed: " + err.Error())
		return err
	}
	d.SetStatus("stopped")
	return nil
}

// setAuto installs an automatic update; it runs at once on a running
// device, otherwise at the next start.
func (d *device) setAuto(name string, c autoupdate.Config, p param.Param) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if old := d.auto[name]; old != nil && old.timer != nil {
		old.timer.Stop()
	}
	t := &autoTask{cfg: c, gen: autoupdate.NewGenerator(c, p.Type, d.seed^fnvHash(name))}
	d.auto[name] = t
	if d.running {
		d.scheduleLocked(name, t)
	}
}

func (d *device) autoOf(name string) (autoupdate.Config, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	t, ok := d.auto[name]
	if !ok {
		return autoupdate.Config{}, false
	}
	return t.cfg, true
}

// scheduleLocked arms t's timer; caller holds mu.
func (d *device) scheduleLocked(name string, t *autoTask) {
	if !t.cfg.Autoupdatable || t.cfg.Period < 1 {
		return
	}
	t.timer = time.AfterFunc(time.Duration(t.cfg.Period)*time.Second, func() { d.tick(name, t) })
}

func (d *device) tick(name string, t *autoTask) {
	d.mu.Lock()
	if !d.running || d.auto[name] != t {
		d.mu.Unlock()
		return
	}
	frozen := d.frozen[name]
	var next string
	var err error
	if !frozen && d.em.runtime().ParamUpdateEnabled {
		next, err = t.gen.Next(d.params.Value(name))
	}
	d.scheduleLocked(name, t)
	d.mu.Unlock()
	if frozen || next == "" && err == nil {
		return
	}
	if err == nil {
		err = d.apply(name, next, fromAuto)
	}
	if err != nil && !errors.Is(err, proto.ErrFrozen) {
		d.Log(proto.Entry{Direction: "-", Event: "AUTOUPDATE_ERROR", Payload: name + ": " + err.Error()})
	}
}

// fnvHash gives each parameter of a device its own generator seed.
func fnvHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
