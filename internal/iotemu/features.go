package iotemu

import (
	"encoding/json"
	"errors"
	"os"
	"time"

	"cpesuite/internal/iotemu/autoupdate"
	"cpesuite/internal/iotemu/param"
	"cpesuite/internal/iotemu/rule"
	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/fsx"
)

// Autoupdate returns the automatic update of one parameter: the device's
// own, else the global one, else the disabled default, with the fields
// left open filled with the values the generator uses.
func (e *Emulator) Autoupdate(id, name string) (autoupdate.Config, error) {
	d, err := e.device(id)
	if err != nil {
		return autoupdate.Config{}, paramNotFound(id, name)
	}
	if _, ok := d.params.Get(name); !ok {
		return autoupdate.Config{}, paramNotFound(id, name)
	}
	if c, ok := d.autoOf(name); ok {
		return c.Resolved(), nil
	}
	return autoupdate.Config{}.Resolved(), nil
}

// SetAutoupdate installs an automatic update for one parameter, or with
// global=true for that parameter on every device (present and future).
func (e *Emulator) SetAutoupdate(id, name string, c autoupdate.Config) error {
	d, err := e.device(id)
	if err != nil {
		return badRequest("device %s not found", id)
	}
	p, ok := d.params.Get(name)
	if !ok {
		return badRequest("device %s has no parameter %s", id, name)
	}
	// Field checks first (400 BAD_REQUEST); a valid config the parameter's
	// type cannot take is AUTOUPDATE_FAILED.
	fields := c
	fields.Dataset = ""
	if err := fields.Validate(param.Float); err != nil {
		return badRequest("%v", err)
	}
	if err := c.Validate(p.Type); err != nil {
		return apperr.Invalid(codeAutoupdateFailed, "parameter %s (%s): %v", name, p.Type, err)
	}
	if !c.Global {
		d.setAuto(name, c, p)
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	old, had := e.st.Auto[name]
	e.st.Auto[name] = c
	if err := e.saveLocked(); err != nil {
		if had {
			e.st.Auto[name] = old
		} else {
			delete(e.st.Auto, name)
		}
		return err
	}
	for _, dd := range e.devices {
		if pp, ok := dd.params.Get(name); ok {
			dd.setAuto(name, c, pp)
		}
	}
	return nil
}

// History is GET .../parameters/{name}/history.
type History struct {
	Name     string      `json:"name"`
	Recorded bool        `json:"recorded"`
	Entries  []histEntry `json:"entries"`
}

// ParameterHistory returns the last values of one parameter, oldest first.
func (e *Emulator) ParameterHistory(id, name string) (History, error) {
	d, err := e.device(id)
	if err != nil {
		return History{}, err
	}
	if _, ok := d.params.Get(name); !ok {
		return History{}, paramNotFound(id, name)
	}
	return History{Name: name, Recorded: e.runtime().GUIRenderingType != renderOff, Entries: d.historyOf(name)}, nil
}

// RuleView is GET /api/rule and the answer of a successful POST.
type RuleView struct {
	Code      string       `json:"code"`
	Status    string       `json:"status"`
	LastError *RuleFailure `json:"lastError,omitempty"`
}

// RuleCompileError is the answer of a POST /api/rule that did not compile.
type RuleCompileError struct {
	Code   string `json:"code"`
	Status string `json:"status"`
	Error  string `json:"error"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
}

// Rule returns the current rule.
func (e *Emulator) Rule() RuleView {
	return RuleView{Code: e.rule().Code(), Status: "ok", LastError: e.ruleErr.Load()}
}

// SetRule compiles and saves code; on a compile failure it returns the
// compile result and leaves the current rule in place.
func (e *Emulator) SetRule(code string) (RuleView, *RuleCompileError, error) {
	eng, err := rule.Compile(code, e.cfg.RuleBudget)
	if err != nil {
		ce := &RuleCompileError{Code: code, Status: "error", Error: err.Error()}
		var cerr *rule.CompileError
		if errors.As(err, &cerr) {
			ce.Line, ce.Column = cerr.Line, cerr.Column
		}
		return RuleView{}, ce, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := fsx.WriteFileAtomic(e.path(ruleFile), []byte(code)); err != nil {
		return RuleView{}, nil, fileError("write", e.path(ruleFile), err)
	}
	e.ruleEng.Store(eng)
	e.ruleErr.Store(nil)
	return RuleView{Code: code, Status: "ok"}, nil, nil
}

// Logs returns the ring buffer entries after since.
func (e *Emulator) Logs(since uint64) LogBatch { return e.logs.since(since) }

// snapshot is the snapshot file.
type snapshot struct {
	SavedAt  time.Time        `json:"savedAt"`
	Protocol string           `json:"protocol"`
	Devices  []snapshotDevice `json:"devices"`
}

type snapshotDevice struct {
	ClientID     string            `json:"clientId"`
	SerialNumber string            `json:"serialNumber"`
	Protocol     string            `json:"protocol"`
	Manufacturer string            `json:"manufacturer"`
	ModelName    string            `json:"modelName"`
	ClientPort   int               `json:"clientPort,omitempty"`
	Parameters   map[string]string `json:"parameters"`
}

// SaveSnapshot writes every device and its parameter values.
func (e *Emulator) SaveSnapshot() (int, error) {
	ds := e.list()
	if len(ds) == 0 {
		return 0, badRequest("there are no devices to save")
	}
	s := snapshot{SavedAt: time.Now().UTC(), Protocol: e.runtime().Protocol}
	for _, d := range ds {
		vals := map[string]string{}
		for _, p := range d.params.List() {
			vals[p.Name] = p.Value
		}
		s.Devices = append(s.Devices, snapshotDevice{ClientID: d.id, SerialNumber: d.serial, Protocol: d.proto.Name(),
			Manufacturer: d.cfg.Manufacturer, ModelName: d.cfg.ModelName, ClientPort: d.cfg.ClientPort, Parameters: vals})
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return 0, err
	}
	if err := fsx.WriteFileAtomic(e.path(snapshotFile), b); err != nil {
		return 0, fileError("write", e.path(snapshotFile), err)
	}
	return len(s.Devices), nil
}

// LoadSnapshot re-initialises the session with the saved devices; the
// emulator must be idle.
func (e *Emulator) LoadSnapshot() (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.initialized || e.started {
		return 0, badRequest("a snapshot loads into an idle emulator only; POST /api/stop first")
	}
	b, err := os.ReadFile(e.path(snapshotFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, apperr.NotFound(codeSnapshotNotFound, "snapshot file %s not found; POST /api/snapshot/save first", snapshotFile)
	}
	if err != nil {
		return 0, fileError("read", e.path(snapshotFile), err)
	}
	var s snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return 0, badRequest("snapshot file %s is not valid: %v", snapshotFile, err)
	}
	if len(s.Devices) == 0 {
		return 0, badRequest("snapshot file %s holds no devices", snapshotFile)
	}
	devs := make([]*device, 0, len(s.Devices))
	for _, sd := range s.Devices {
		if d, ok := e.devices[sd.ClientID]; ok && d.own {
			// A device started on its own was saved too; it is still here.
			continue
		}
		t := Template{ClientID: sd.ClientID, Protocol: sd.Protocol, SerialNumber: sd.SerialNumber,
			Manufacturer: sd.Manufacturer, ModelName: sd.ModelName, ClientPort: sd.ClientPort, Parameters: sd.Parameters}
		d, err := e.newFromTemplateLocked(t, false)
		if err != nil {
			return 0, err
		}
		devs = append(devs, d)
	}
	e.removeSessionDevicesLocked()
	for _, d := range devs {
		e.addLocked(d)
	}
	e.initialized = true
	return len(devs), nil
}
