// Package prototest holds test helpers for the IoT emulator's protocol
// stacks (packages lwm2m, mqttdev, coapdev, ...).
package prototest

import (
	"fmt"
	"sync"
	"sync/atomic"

	"cpesuite/internal/iotemu/param"
	"cpesuite/internal/iotemu/proto"
)

// Host is a test double of the session (package iotemu) for stack tests:
// the session's side of one device, as small as the tests need. It holds a
// parameter set, records the log entries, the connection history, the
// status and the writes, and its Write checks unknown, read-only and frozen
// parameters like the session does. All methods are safe for concurrent use.
type Host struct {
	params *param.Set
	fail   atomic.Bool

	mu       sync.Mutex
	entries  []proto.Entry
	conns    []proto.Connection
	status   string
	frozen   map[string]bool
	writes   []string // name=value of successful writes
	onChange func(name, value string)
}

var _ proto.Host = (*Host)(nil)

// NewHost returns a host whose parameter set holds ps.
func NewHost(ps []param.Param) *Host {
	return &Host{params: param.NewSet(ps), frozen: map[string]bool{}}
}

// Params implements proto.Host.
func (h *Host) Params() *param.Set { return h.params }

// Write implements proto.Host: it refuses unknown, read-only and frozen
// parameters, then stores the value as Set does.
func (h *Host) Write(name, value string) error {
	p, ok := h.params.Get(name)
	if !ok {
		return fmt.Errorf("%w %q", param.ErrUnknown, name)
	}
	if !p.Writable {
		return fmt.Errorf("%s: %w", name, proto.ErrReadOnly)
	}
	h.mu.Lock()
	frozen := h.frozen[name]
	h.mu.Unlock()
	if frozen {
		return fmt.Errorf("%s: %w", name, proto.ErrFrozen)
	}
	return h.Set(name, value)
}

// Set stores a value without the writability and freezing checks, as an
// API write does: it records the write and calls the OnChange callback.
func (h *Host) Set(name, value string) error {
	_, stored, err := h.params.Put(name, value)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.writes = append(h.writes, name+"="+stored)
	f := h.onChange
	h.mu.Unlock()
	if f != nil {
		f(name, stored)
	}
	return nil
}

// Log implements proto.Host; it records e.
func (h *Host) Log(e proto.Entry) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.entries = append(h.entries, e)
}

// SetStatus implements proto.Host.
func (h *Host) SetStatus(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.status = s
}

// SetConnection implements proto.Host; it records c.
func (h *Host) SetConnection(c proto.Connection) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.conns = append(h.conns, c)
}

// FailResponse implements proto.Host; see SetFail.
func (h *Host) FailResponse() bool { return h.fail.Load() }

// SetFail sets the value FailResponse reports.
func (h *Host) SetFail(fail bool) { h.fail.Store(fail) }

// OnChange sets a callback run after each successful Write or Set, where
// the session calls the device's Changed.
func (h *Host) OnChange(f func(name, value string)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.onChange = f
}

// Freeze makes Write refuse name with proto.ErrFrozen, as a rule does.
func (h *Host) Freeze(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.frozen[name] = true
}

// Entries returns a copy of the recorded log entries.
func (h *Host) Entries() []proto.Entry {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]proto.Entry(nil), h.entries...)
}

// ClearEntries drops the recorded log entries.
func (h *Host) ClearEntries() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.entries = nil
}

// Connection returns the last connection value set, or proto.Unknown.
func (h *Host) Connection() proto.Connection {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.conns) == 0 {
		return proto.Unknown
	}
	return h.conns[len(h.conns)-1]
}

// Connections returns every connection value set, oldest first.
func (h *Host) Connections() []proto.Connection {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]proto.Connection(nil), h.conns...)
}

// Status returns the status line last set.
func (h *Host) Status() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.status
}

// Writes returns the successful writes as "name=value", oldest first.
func (h *Host) Writes() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.writes...)
}
