package iotemu

import (
	"encoding/json"
	"maps"
	"strings"

	"cpesuite/internal/iotemu/proto"
)

// Settings returns the configuration with its secrets masked.
func (e *Emulator) Settings() Settings {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.st.Settings.masked()
}

// Configure applies a posted configuration; only while stopped.
func (e *Emulator) Configure(body map[string]json.RawMessage) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.requireStoppedLocked(); err != nil {
		return err
	}
	next := e.st.Settings
	if err := next.apply(body, nil); err != nil {
		return err
	}
	if err := next.validate(e.available(), e.cfg.MaxDevices); err != nil {
		return err
	}
	old := e.st
	if next.Protocol != e.st.Settings.Protocol {
		e.switchProtocolLocked(next.Protocol, false)
	}
	e.st.Settings = next
	if err := e.saveLocked(); err != nil {
		e.st = old
		return err
	}
	e.publishRuntime()
	return nil
}

// ConfigureRuntime applies the runtime fields; allowed while running.
func (e *Emulator) ConfigureRuntime(body map[string]json.RawMessage) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	next := e.st.Settings
	if err := next.apply(body, runtimeFields); err != nil {
		return err
	}
	if err := next.validate(e.available(), e.cfg.MaxDevices); err != nil {
		return err
	}
	old := e.st.Settings
	e.st.Settings = next
	if err := e.saveLocked(); err != nil {
		e.st.Settings = old
		return err
	}
	e.publishRuntime()
	return nil
}

// switchProtocolLocked selects name. Without keep the options are
// cleared; with keep, re-selecting the current protocol changes nothing
// and switching restores the options saved when name was last left.
func (e *Emulator) switchProtocolLocked(name string, keep bool) {
	cur := e.st.Settings.Protocol
	if keep && name == cur {
		return
	}
	if name != cur && len(e.st.Options) > 0 {
		e.st.Saved[cur] = maps.Clone(e.st.Options)
	}
	e.st.Settings.Protocol = name
	e.st.Options = map[string]string{}
	if keep {
		if saved, ok := e.st.Saved[name]; ok {
			e.st.Options = maps.Clone(saved)
		}
	}
}

// SelectProtocol is POST /api/protocol/{name}.
func (e *Emulator) SelectProtocol(name string, keep bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.requireStoppedLocked(); err != nil {
		return err
	}
	name = strings.ToUpper(name)
	if _, err := e.protocol(name); err != nil {
		return err
	}
	old := e.st
	old.Options, old.Saved = maps.Clone(e.st.Options), maps.Clone(e.st.Saved)
	e.switchProtocolLocked(name, keep)
	if err := e.saveLocked(); err != nil {
		e.st = old
		return err
	}
	e.publishRuntime()
	return nil
}

// Options returns the current protocol's options, masked.
func (e *Emulator) Options() []OptionView {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.protos[e.st.Settings.Protocol]
	return viewOptions(p, e.st.Options)
}

// SetOptions merges posted option values; nothing is applied on error.
func (e *Emulator) SetOptions(posted map[string]string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.protos[e.st.Settings.Protocol]
	next, err := mergeOptions(p, e.st.Options, posted, false)
	if err != nil {
		return err
	}
	old := e.st.Options
	e.st.Options = next
	if err := e.saveLocked(); err != nil {
		e.st.Options = old
		return err
	}
	return nil
}

// Transport is GET /api/transportConfig.
func (e *Emulator) Transport() proto.Transport {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.st.Settings
	p := e.protos[s.Protocol]
	return p.Transport(e.deviceConfigLocked(p, s, e.st.Options, s.ClientID, s.SerialNumber, s.ClientPort))
}

// Protocols lists every protocol and the loaded ones.
func (e *Emulator) Protocols() (all, available []string) {
	return append([]string{}, AllProtocols...), e.available()
}
