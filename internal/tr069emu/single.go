package tr069emu

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"

	"cpesuite/internal/cwmp"
	"cpesuite/internal/tr069emu/cpe"
	"cpesuite/internal/tr069emu/tree"
)

// StartResult answers start, startStored and startProtocol.
type StartResult struct {
	Success       bool   `json:"success"`
	Serial        string `json:"serial"`
	Message       string `json:"message"`
	Protocol      string `json:"protocol,omitempty"`
	ParameterFile string `json:"parameterFile,omitempty"`
	ACSURL        string `json:"acsUrl,omitempty"`
}

// baseTreeFiles maps startProtocol's protocol to the shipped base tree.
var baseTreeFiles = map[string]string{"TR-098": "tr098-base.xml", "TR-181": "tr181-base.xml"}

// StartDevice starts a single device from its configuration; save stores
// the configuration too. A running serial is 409.
func (e *Emulator) StartDevice(dto InitDeviceDto, save bool) (StartResult, error) {
	if err := dto.normalize(e.cfg.DefaultACSURL, e.Properties().ParamsXML); err != nil {
		return StartResult{}, err
	}
	tmpl, err := e.files.Template(dto.ParameterFile)
	if err != nil {
		return StartResult{}, err
	}
	return e.startSingle(dto, tree.New(tmpl), save, true)
}

// startSingle registers and starts a device with the given tree.
func (e *Emulator) startSingle(dto InitDeviceDto, t *tree.Tree, save, bootstrap bool) (StartResult, error) {
	return e.replaceSingle(nil, dto, t, save, bootstrap)
}

// replaceSingle registers and starts a device in the place of old (nil: a
// serial nobody runs), so nothing else can claim the serial in between.
func (e *Emulator) replaceSingle(old *single, dto InitDeviceDto, t *tree.Tree, save, bootstrap bool) (StartResult, error) {
	e.mu.Lock()
	if e.singles[dto.Serial] != old {
		if old != nil {
			e.mu.Unlock()
			return StartResult{Serial: dto.Serial}, conflict("device %s was stopped or restarted meanwhile", dto.Serial)
		}
		e.mu.Unlock()
		return StartResult{Serial: dto.Serial}, conflict("device %s is already running", dto.Serial)
	}
	if e.batch != nil && e.batch.get(dto.Serial) != nil {
		e.mu.Unlock()
		return StartResult{Serial: dto.Serial}, conflict("serial %s belongs to a running load-test device", dto.Serial)
	}
	dto.Running = true
	o := cpe.Options{Serial: dto.Serial, ACSURL: dto.ACSURL, Tree: t, Bootstrap: bootstrap,
		Log: e.logs.Logger(dto.Serial, e.log), Updatable: dto.UpdatableParameters, UpdateEvery: e.cfg.AutoUpdate,
		FactoryTree: e.factoryTree(dto.Serial)}
	if dto.EnableHTTPConnectionRequest {
		o.ConnReqURL = e.crURL(dto.Serial)
	} else {
		_, _ = t.SetValues([]tree.Set{{Name: t.Template().Root() + "ManagementServer.ConnectionRequestURL", Value: ""}}, tree.SetOptions{})
	}
	d := cpe.New(e.env, o)
	e.singles[dto.Serial] = &single{dev: d, cfg: dto}
	ctx := e.ctx
	e.mu.Unlock()
	if save {
		if err := e.store.Put(dto); err != nil {
			e.mu.Lock()
			if e.singles[dto.Serial] != nil && e.singles[dto.Serial].dev == d {
				delete(e.singles, dto.Serial)
			}
			e.mu.Unlock()
			return StartResult{}, err
		}
	} else {
		e.store.setRunning(dto.Serial, true)
	}
	d.Start(ctx)
	return StartResult{Success: true, Serial: dto.Serial, Message: "Emulator started", ParameterFile: dto.ParameterFile, ACSURL: dto.ACSURL}, nil
}

// factoryTree returns what a factory reset restores: a fresh tree of the
// stored configuration's file, else of the file the device started with.
func (e *Emulator) factoryTree(serial string) func() *tree.Tree {
	return func() *tree.Tree {
		file := ""
		if dto, ok := e.store.Get(serial); ok {
			file = dto.ParameterFile
		} else if s, err := e.singleDevice(serial); err == nil {
			file = s.cfg.ParameterFile
		}
		if tmpl, err := e.files.Template(file); err == nil {
			return tree.New(tmpl)
		}
		return nil // the device falls back to its current template
	}
}

// StopDevice stops and removes a single device.
func (e *Emulator) StopDevice(serial string) error {
	if err := checkSerial(serial); err != nil {
		return err
	}
	e.mu.Lock()
	s := e.singles[serial]
	delete(e.singles, serial)
	e.mu.Unlock()
	if s == nil {
		return notFound("no running device with serial %s", serial)
	}
	s.dev.Stop()
	e.store.setRunning(serial, false)
	return nil
}

// StartStored starts a stored configuration.
func (e *Emulator) StartStored(serial string) (StartResult, error) {
	if err := checkSerial(serial); err != nil {
		return StartResult{}, err
	}
	dto, ok := e.store.Get(serial)
	if !ok {
		return StartResult{Serial: serial}, notFound("no stored configuration for serial %s", serial)
	}
	return e.StartDevice(dto, false)
}

// StartProtocol starts a device on the TR-098 or TR-181 base tree, with a
// generated serial when none is given.
func (e *Emulator) StartProtocol(protocol, serial, acsURL string) (StartResult, error) {
	file, ok := baseTreeFiles[protocol]
	if !ok {
		return StartResult{}, errf("protocol must be TR-098 or TR-181, got %q", protocol)
	}
	if serial == "" {
		b := make([]byte, 4)
		_, _ = rand.Read(b)
		serial = e.cfg.SerialPrefix + "-" + strings.ToUpper(hex.EncodeToString(b))
	}
	// The base trees are shipped with the binary; a deleted copy in the
	// folder does not stop startProtocol.
	tmpl, err := tree.Base(protocol)
	if err != nil {
		return StartResult{}, err
	}
	dto := InitDeviceDto{Serial: serial, ACSURL: acsURL, ParameterFile: file, EnableHTTPConnectionRequest: true}
	if err := dto.normalize(e.cfg.DefaultACSURL, file); err != nil {
		return StartResult{}, err
	}
	res, err := e.startSingle(dto, tree.New(tmpl), true, true)
	res.Protocol = protocol
	return res, err
}

// CloneDevice copies a device under a new serial: its stored configuration
// and, when it runs, its current parameter values; the clone is started
// when the source runs and stored either way.
func (e *Emulator) CloneDevice(source, target string) (InitDeviceDto, error) {
	if err := checkSerial(source); err != nil {
		return InitDeviceDto{}, err
	}
	if err := checkSerial(target); err != nil {
		return InitDeviceDto{}, err
	}
	if source == target {
		return InitDeviceDto{}, errf("newSerial must differ from sourceSerial")
	}
	if _, ok := e.store.Get(target); ok {
		return InitDeviceDto{}, conflict("a configuration for serial %s already exists", target)
	}
	s, runErr := e.singleDevice(source)
	dto, stored := e.store.Get(source)
	if runErr != nil && !stored {
		return InitDeviceDto{}, notFound("no running or stored device with serial %s", source)
	}
	if runErr == nil {
		dto = s.cfg
	}
	dto.Serial, dto.Running = target, false
	if runErr != nil {
		return dto, e.store.Put(dto)
	}
	if _, err := e.startSingle(dto, s.dev.Tree().Clone(), true, true); err != nil {
		return InitDeviceDto{}, err
	}
	dto.Running = true
	return dto, nil
}

// FactoryReset restarts a running device from its whole stored
// configuration (acsUrl, parameterFile, updatableParameters, connection
// requests; without one, the configuration it was started with) on a
// fresh tree, informing 0 BOOTSTRAP and 1 BOOT; a stored device that is not
// running is started. 404 when the serial is neither.
func (e *Emulator) FactoryReset(serial string) error {
	if err := checkSerial(serial); err != nil {
		return err
	}
	s, err := e.singleDevice(serial)
	if err != nil {
		if _, ok := e.store.Get(serial); ok {
			_, err := e.StartStored(serial)
			return err
		}
		return notFound("no running or stored device with serial %s", serial)
	}
	dto, stored := e.store.Get(serial)
	if !stored {
		dto = s.cfg
	}
	if err := dto.normalize(e.cfg.DefaultACSURL, e.Properties().ParamsXML); err != nil {
		return err
	}
	// The tree file is checked before the device goes down: a reset that
	// cannot restart must leave the device as it was.
	tmpl, err := e.files.Template(dto.ParameterFile)
	if err != nil {
		return err
	}
	s.dev.Stop()
	_, err = e.replaceSingle(s, dto, tree.New(tmpl), false, true)
	return err
}

// ActiveEmulator is one entry of /apiV2/activeEmulators.
type ActiveEmulator struct {
	Serial        string `json:"serial"`
	Manufacturer  string `json:"manufacturer"`
	ProductClass  string `json:"productClass"`
	OUI           string `json:"oui"`
	ModelName     string `json:"modelName"`
	ParameterFile string `json:"parameterFile"`
	ACSURL        string `json:"acsUrl"`
	IsRunning     bool   `json:"isRunning"`
}

// ActiveEmulators lists the single devices.
func (e *Emulator) ActiveEmulators() []ActiveEmulator {
	e.mu.Lock()
	list := make([]*single, 0, len(e.singles))
	for _, s := range e.singles {
		list = append(list, s)
	}
	e.mu.Unlock()
	out := make([]ActiveEmulator, 0, len(list))
	for _, s := range list {
		id := deviceID(s.dev)
		out = append(out, ActiveEmulator{Serial: s.cfg.Serial, Manufacturer: id["Manufacturer"], ProductClass: id["ProductClass"],
			OUI: id["OUI"], ModelName: id["ModelName"], ParameterFile: s.cfg.ParameterFile, ACSURL: s.dev.ACSURL(), IsRunning: true})
	}
	sortBy(out, func(a ActiveEmulator) string { return a.Serial })
	return out
}

// deviceID is the identity map of /apiV2/deviceId.
func deviceID(d *cpe.Device) map[string]string {
	t := d.Tree()
	root := t.Template().Root()
	get := func(n string) string { p, _ := t.Get(root + n); return p.Value }
	return map[string]string{
		"Manufacturer": get("DeviceInfo.Manufacturer"), "OUI": get("DeviceInfo.ManufacturerOUI"),
		"ProductClass": get("DeviceInfo.ProductClass"), "SerialNumber": d.Serial(),
		"ModelName": get("DeviceInfo.ModelName"), "HardwareVersion": get("DeviceInfo.HardwareVersion"),
		"SoftwareVersion": get("DeviceInfo.SoftwareVersion"), "DataModel": t.Template().DataModel(),
		"ConnectionRequestURL": get("ManagementServer.ConnectionRequestURL"), "ACSURL": d.ACSURL(),
	}
}

// treeErr maps a tree error to the API's statuses: unknown names 404,
// anything else the caller got wrong 400.
func treeErr(err error) error {
	var te *tree.Error
	if errors.As(err, &te) {
		if te.Code == cwmp.FaultInvalidParameterName {
			return notFound("%s", te.Error())
		}
		return errf("%s", te.Error())
	}
	var sf *tree.SetFaults
	if errors.As(err, &sf) {
		for _, f := range sf.Faults {
			if f.FaultCode == cwmp.FaultInvalidParameterName {
				return notFound("parameter %s not found", f.ParameterName)
			}
		}
		return errf("%s", sf.Error())
	}
	return err
}
