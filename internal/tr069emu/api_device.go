package tr069emu

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/tr069emu/cpe"
	"cpesuite/internal/tr069emu/tree"
)

func (api *API) deviceRoutes(h func(string, httpx.Handler)) {
	h("GET /apiV2/config", api.config)
	h("POST /apiV2/start", api.startDevice)
	h("POST /apiV2/stop", api.stopDevice)
	h("GET /apiV2/activeEmulators", api.activeEmulators)
	h("GET /apiV2/isEmulatorRunning", api.isRunning)
	h("GET /apiV2/sessionStatus", api.sessionStatus)
	h("POST /apiV2/reboot", api.reboot)
	h("POST /apiV2/factoryReset", api.factoryReset)
	h("POST /apiV2/cloneDevice", api.cloneDevice)
	h("GET /apiV2/deviceId", api.deviceID)
	h("GET /apiV2/statistics", api.statistics)
	h("GET /apiV2/storedDevices", api.storedDevices)
	h("GET /apiV2/storedDevice", api.storedDevice)
	h("POST /apiV2/saveDevice", api.saveDevice)
	h("POST /apiV2/deleteStoredDevice", api.deleteStoredDevice)
	h("POST /apiV2/startStored", api.startStored)
	h("POST /apiV2/startProtocol", api.startProtocol)
	h("GET /apiV2/parameters", api.parameters)
	h("GET /apiV2/parametersByPrefix", api.parametersByPrefix)
	h("GET /apiV2/parameterNames", api.parameterNames)
	h("GET /apiV2/parameterValue", api.parameterValue)
	h("GET /apiV2/parameterFullInfo", api.parameterFullInfo)
	h("GET /apiV2/parameterExists", api.parameterExists)
	h("GET /apiV2/searchParameters", api.searchParameters)
	h("POST /apiV2/changeParameter", api.changeParameter)
	h("POST /apiV2/changeParameters", api.changeParameters)
	h("POST /apiV2/setParameterValue", api.setParameterValue)
	h("POST /apiV2/changeNotification", api.changeNotification)
	h("POST /apiV2/addObject", api.addObject)
	h("POST /apiV2/addParameter", api.addParameter)
	h("POST /apiV2/deleteObject", api.deleteObject)
	h("POST /apiV2/invoke", api.invoke)
	h("POST /apiV2/changePeriodic", api.changePeriodic)
	h("GET /apiV2/getLog", api.getLog)
	h("GET /apiV2/getLogContent", api.getLogContent)
	h("GET /apiV2/logStatistics", api.logStatistics)
	h("POST /apiV2/clearLog", api.clearLog)
	h("GET /apiV2/updatableParameters", api.getUpdatable)
	h("POST /apiV2/updatableParameters", api.setUpdatable)
	h("GET /apiV2/paramsXmlList", api.paramsXMLList)
	h("POST /apiV2/uploadParamTree", api.uploadParamTree)
	// Extensions the specification does not name: WAN load for the
	// campaign executor's WAN-busy rule.
	h("POST /apiV2/makeWanBusy", api.makeWANBusy)
	h("POST /apiV2/resetWanBusy", api.resetWANBusy)
	h("GET /apiV2/wanTraffic", api.wanTraffic)
}

// ParameterInfo is one parameter with its attributes.
type ParameterInfo struct {
	Name         string `json:"name"`
	Value        string `json:"value"`
	Type         string `json:"type"`
	Notification int    `json:"notification"`
	Writable     bool   `json:"writable"`
}

func info(p tree.Param) ParameterInfo {
	return ParameterInfo{Name: p.Name, Value: p.Value, Type: p.Type.XSD(), Notification: p.Notification, Writable: p.Writable}
}

func infos(ps []tree.Param) []ParameterInfo {
	out := make([]ParameterInfo, 0, len(ps))
	for _, p := range ps {
		if !p.Object {
			out = append(out, info(p))
		}
	}
	return out
}

// query returns a required query parameter.
func query(r *http.Request, name string) (string, error) {
	v := r.URL.Query().Get(name)
	if strings.TrimSpace(v) == "" {
		return "", errf("query parameter %s is required", name)
	}
	return v, nil
}

// queryDevice resolves the serial query parameter to a single device.
func (api *API) queryDevice(r *http.Request) (*single, error) {
	serial, err := query(r, "serial")
	if err != nil {
		return nil, err
	}
	return api.e.singleDevice(serial)
}

func (api *API) config(w http.ResponseWriter, _ *http.Request) error {
	return ok(w, map[string]string{"defaultAcsUrl": api.e.cfg.DefaultACSURL})
}

// startReply answers start-like calls: the result shape with 200, or with
// the error status plus an error field.
func startReply(w http.ResponseWriter, res StartResult, err error) error {
	if err == nil {
		return ok(w, res)
	}
	if !errors.Is(err, apperr.ErrConflict) {
		return err
	}
	msg := apperr.PublicMessage(err)
	return httpx.WriteJSON(w, http.StatusConflict, map[string]any{"success": false, "serial": res.Serial, "message": msg, "error": msg})
}

func (api *API) startDevice(w http.ResponseWriter, r *http.Request) error {
	save := true
	if v := r.URL.Query().Get("saveConfig"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errf("saveConfig must be true or false, got %q", v)
		}
		save = b
	}
	var dto InitDeviceDto
	if err := decode(r, &dto); err != nil {
		return err
	}
	res, err := api.e.StartDevice(dto, save)
	return startReply(w, res, err)
}

func (api *API) stopDevice(w http.ResponseWriter, r *http.Request) error {
	serial, err := decodeSerial(r)
	if err != nil {
		return err
	}
	if err := api.e.StopDevice(serial); err != nil {
		return err
	}
	return noContent(w)
}

func (api *API) activeEmulators(w http.ResponseWriter, _ *http.Request) error {
	return ok(w, api.e.ActiveEmulators())
}

func (api *API) isRunning(w http.ResponseWriter, r *http.Request) error {
	serial, err := query(r, "serial")
	if err != nil {
		return err
	}
	if err := checkSerial(serial); err != nil {
		return err
	}
	_, err = api.e.singleDevice(serial)
	return ok(w, map[string]any{"serial": serial, "running": err == nil})
}

func (api *API) sessionStatus(w http.ResponseWriter, r *http.Request) error {
	s, err := api.queryDevice(r)
	if err != nil {
		return err
	}
	return ok(w, map[string]any{"serial": s.cfg.Serial, "inSession": s.dev.InSession()})
}

func (api *API) reboot(w http.ResponseWriter, r *http.Request) error {
	serial, err := decodeSerial(r)
	if err != nil {
		return err
	}
	s, err := api.e.singleDevice(serial)
	if err != nil {
		return err
	}
	s.dev.Reboot("", false)
	return noContent(w)
}

func (api *API) factoryReset(w http.ResponseWriter, r *http.Request) error {
	serial, err := decodeSerial(r)
	if err != nil {
		return err
	}
	if err := api.e.FactoryReset(serial); err != nil {
		return err
	}
	return noContent(w)
}

func (api *API) cloneDevice(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		SourceSerial string `json:"sourceSerial"`
		NewSerial    string `json:"newSerial"`
	}
	if err := decode(r, &b); err != nil {
		return err
	}
	dto, err := api.e.CloneDevice(strings.TrimSpace(b.SourceSerial), strings.TrimSpace(b.NewSerial))
	if err != nil {
		return err
	}
	return ok(w, dto)
}

func (api *API) deviceID(w http.ResponseWriter, r *http.Request) error {
	s, err := api.queryDevice(r)
	if err != nil {
		return err
	}
	return ok(w, deviceID(s.dev))
}

func (api *API) statistics(w http.ResponseWriter, _ *http.Request) error {
	return ok(w, api.e.Statistics())
}

func (api *API) storedDevices(w http.ResponseWriter, _ *http.Request) error {
	return ok(w, api.e.store.List())
}

func (api *API) storedDevice(w http.ResponseWriter, r *http.Request) error {
	serial, err := query(r, "serial")
	if err != nil {
		return err
	}
	if err := checkSerial(serial); err != nil {
		return err
	}
	dto, found := api.e.store.Get(serial)
	if !found {
		return notFound("no stored configuration for serial %s", serial)
	}
	return ok(w, dto)
}

func (api *API) saveDevice(w http.ResponseWriter, r *http.Request) error {
	var dto InitDeviceDto
	if err := decode(r, &dto); err != nil {
		return err
	}
	if err := dto.normalize(api.e.cfg.DefaultACSURL, api.e.Properties().ParamsXML); err != nil {
		return err
	}
	if !api.e.files.Exists(dto.ParameterFile) {
		return notFound("parameter tree file %s not found", dto.ParameterFile)
	}
	_, err := api.e.singleDevice(dto.Serial)
	dto.Running = err == nil // managed by the system, whatever the body says
	if err := api.e.store.Put(dto); err != nil {
		return err
	}
	return noContent(w)
}

func (api *API) deleteStoredDevice(w http.ResponseWriter, r *http.Request) error {
	serial, err := decodeSerial(r)
	if err != nil {
		return err
	}
	found, err := api.e.store.Delete(serial)
	if err != nil {
		return err
	}
	if !found {
		return notFound("no stored configuration for serial %s", serial)
	}
	return noContent(w)
}

func (api *API) startStored(w http.ResponseWriter, r *http.Request) error {
	serial, err := decodeSerial(r)
	if err != nil {
		return err
	}
	res, err := api.e.StartStored(serial)
	return startReply(w, res, err)
}

func (api *API) startProtocol(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Protocol string `json:"protocol"`
		Serial   string `json:"serial"`
		ACSURL   string `json:"acsUrl"`
	}
	if err := decode(r, &b); err != nil {
		return err
	}
	res, err := api.e.StartProtocol(strings.TrimSpace(b.Protocol), strings.TrimSpace(b.Serial), strings.TrimSpace(b.ACSURL))
	return startReply(w, res, err)
}

func (api *API) parameters(w http.ResponseWriter, r *http.Request) error {
	s, err := api.queryDevice(r)
	if err != nil {
		return err
	}
	return ok(w, infos(s.dev.Tree().List("")))
}

func (api *API) parametersByPrefix(w http.ResponseWriter, r *http.Request) error {
	s, err := api.queryDevice(r)
	if err != nil {
		return err
	}
	prefix, err := query(r, "prefix")
	if err != nil {
		return err
	}
	return ok(w, infos(s.dev.Tree().List(prefix)))
}

// NameInfo is one entry of /apiV2/parameterNames.
type NameInfo struct {
	Name     string `json:"name"`
	IsObject bool   `json:"isObject"`
}

func (api *API) parameterNames(w http.ResponseWriter, r *http.Request) error {
	s, err := api.queryDevice(r)
	if err != nil {
		return err
	}
	path := r.URL.Query().Get("path")
	next := false
	if v := r.URL.Query().Get("nextLevel"); v != "" {
		if next, err = strconv.ParseBool(v); err != nil {
			return errf("nextLevel must be true or false, got %q", v)
		}
	}
	ps, err := s.dev.Tree().Names(path, next)
	if err != nil {
		return treeErr(err)
	}
	out := make([]NameInfo, len(ps))
	for i, p := range ps {
		out[i] = NameInfo{Name: p.Name, IsObject: p.Object}
	}
	return ok(w, out)
}

// queryParam resolves serial and parameterName to one leaf parameter.
func (api *API) queryParam(r *http.Request) (tree.Param, error) {
	s, err := api.queryDevice(r)
	if err != nil {
		return tree.Param{}, err
	}
	name, err := query(r, "parameterName")
	if err != nil {
		return tree.Param{}, err
	}
	p, found := s.dev.Tree().Get(name)
	if !found || p.Object {
		return tree.Param{}, notFound("parameter %s not found", name)
	}
	return p, nil
}

func (api *API) parameterValue(w http.ResponseWriter, r *http.Request) error {
	p, err := api.queryParam(r)
	if err != nil {
		return err
	}
	return ok(w, map[string]string{"name": p.Name, "value": p.Value, "type": p.Type.XSD()})
}

func (api *API) parameterFullInfo(w http.ResponseWriter, r *http.Request) error {
	p, err := api.queryParam(r)
	if err != nil {
		return err
	}
	return ok(w, info(p))
}

func (api *API) parameterExists(w http.ResponseWriter, r *http.Request) error {
	s, err := api.queryDevice(r)
	if err != nil {
		return err
	}
	pattern, err := query(r, "pattern")
	if err != nil {
		return err
	}
	names := s.dev.Tree().Match(pattern)
	if names == nil {
		names = []string{}
	}
	return ok(w, map[string]any{"exists": len(names) > 0, "count": len(names), "matchingParameters": names})
}

// DefaultSearchLimit is searchParameters' limit when none is given.
const DefaultSearchLimit = 100

func (api *API) searchParameters(w http.ResponseWriter, r *http.Request) error {
	s, err := api.queryDevice(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	limit := DefaultSearchLimit
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > 100000 {
			return errf("limit must be a whole number from 1 to 100000, got %q", v)
		}
	}
	return ok(w, infos(s.dev.Tree().Search(q.Get("nameContains"), q.Get("valueContains"), limit)))
}

// paramEdit is the body of single-parameter edits.
type paramEdit struct {
	Serial         string  `json:"serial"`
	ParameterName  string  `json:"parameterName"`
	ParameterValue *string `json:"parameterValue"`
}

func (api *API) decodeEdit(r *http.Request) (*single, paramEdit, error) {
	var b paramEdit
	if err := decode(r, &b); err != nil {
		return nil, b, err
	}
	s, err := api.e.singleDevice(strings.TrimSpace(b.Serial))
	if err != nil {
		return nil, b, err
	}
	if b.ParameterName == "" {
		return nil, b, errf("parameterName is required")
	}
	if b.ParameterValue == nil {
		return nil, b, errf("parameterValue is required")
	}
	return s, b, nil
}

// edit writes values as the operator, keeping each parameter's type, and
// returns the changes.
func edit(s *single, vals map[string]string) ([]tree.Change, error) {
	sets := make([]tree.Set, 0, len(vals))
	for n, v := range vals {
		sets = append(sets, tree.Set{Name: n, Value: v})
	}
	changes, err := s.dev.Tree().SetValues(sets, tree.SetOptions{})
	if err != nil {
		return nil, treeErr(err)
	}
	return changes, nil
}

func (api *API) changeParameter(w http.ResponseWriter, r *http.Request) error {
	s, b, err := api.decodeEdit(r)
	if err != nil {
		return err
	}
	if _, err := edit(s, map[string]string{b.ParameterName: *b.ParameterValue}); err != nil {
		return err
	}
	return noContent(w)
}

// valueChangeReply is 200 with the changed names when a 4 VALUE CHANGE
// Inform was triggered, else 204.
func valueChangeReply(w http.ResponseWriter, s *single, changes []tree.Change) error {
	if !s.dev.Notify(changes) {
		return noContent(w)
	}
	names := make([]string, len(changes))
	for i, c := range changes {
		names[i] = c.Name
	}
	return ok(w, map[string]any{"serial": s.cfg.Serial, "valueChange": true, "changed": names})
}

func (api *API) setParameterValue(w http.ResponseWriter, r *http.Request) error {
	s, b, err := api.decodeEdit(r)
	if err != nil {
		return err
	}
	changes, err := edit(s, map[string]string{b.ParameterName: *b.ParameterValue})
	if err != nil {
		return err
	}
	return valueChangeReply(w, s, changes)
}

func (api *API) changeParameters(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Serial     string            `json:"serial"`
		Parameters map[string]string `json:"parameters"`
	}
	if err := decode(r, &b); err != nil {
		return err
	}
	s, err := api.e.singleDevice(strings.TrimSpace(b.Serial))
	if err != nil {
		return err
	}
	if len(b.Parameters) == 0 {
		return errf("parameters (a map of path to value) is required")
	}
	changes, err := edit(s, b.Parameters)
	if err != nil {
		return err
	}
	return valueChangeReply(w, s, changes)
}

func (api *API) changeNotification(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Serial        string `json:"serial"`
		ParameterName string `json:"parameterName"`
		Notification  *int   `json:"notification"`
	}
	if err := decode(r, &b); err != nil {
		return err
	}
	s, err := api.e.singleDevice(strings.TrimSpace(b.Serial))
	if err != nil {
		return err
	}
	if b.Notification == nil || *b.Notification < 0 || *b.Notification > 2 {
		return errf("notification must be 0 (off), 1 (passive) or 2 (active)")
	}
	if b.ParameterName == "" {
		return errf("parameterName is required")
	}
	if err := s.dev.Tree().SetNotification(b.ParameterName, *b.Notification); err != nil {
		return treeErr(err)
	}
	return noContent(w)
}

func (api *API) addObject(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Serial     string `json:"serial"`
		ParentPath string `json:"parentPath"`
	}
	if err := decode(r, &b); err != nil {
		return err
	}
	s, err := api.e.singleDevice(strings.TrimSpace(b.Serial))
	if err != nil {
		return err
	}
	if b.ParentPath == "" {
		return errf("parentPath is required")
	}
	path := b.ParentPath
	if !strings.HasSuffix(path, ".") {
		path += "."
	}
	n, err := s.dev.Tree().AddObject(path)
	if err != nil {
		return treeErr(err)
	}
	return ok(w, map[string]any{"instanceNumber": n, "objectPath": path + strconv.FormatUint(uint64(n), 10) + "."})
}

func (api *API) addParameter(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Serial string `json:"serial"`
		Name   string `json:"name"`
		Value  string `json:"value"`
	}
	if err := decode(r, &b); err != nil {
		return err
	}
	s, err := api.e.singleDevice(strings.TrimSpace(b.Serial))
	if err != nil {
		return err
	}
	if b.Name == "" || strings.HasSuffix(b.Name, ".") {
		return errf("name must be a parameter path")
	}
	if err := s.dev.Tree().AddParameter(b.Name, b.Value); err != nil {
		// No template entry to take the attributes from is bad input.
		return errf("%s", err.Error())
	}
	return noContent(w)
}

func (api *API) deleteObject(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Serial     string `json:"serial"`
		ObjectName string `json:"objectName"`
	}
	if err := decode(r, &b); err != nil {
		return err
	}
	s, err := api.e.singleDevice(strings.TrimSpace(b.Serial))
	if err != nil {
		return err
	}
	if b.ObjectName == "" {
		return errf("objectName is required")
	}
	path := b.ObjectName
	if !strings.HasSuffix(path, ".") {
		path += "."
	}
	if err := s.dev.Tree().DeleteObject(path); err != nil {
		return treeErr(err)
	}
	return noContent(w)
}

func (api *API) invoke(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Serial    string `json:"serial"`
		EventName string `json:"eventName"`
	}
	if err := decode(r, &b); err != nil {
		return err
	}
	s, err := api.e.singleDevice(strings.TrimSpace(b.Serial))
	if err != nil {
		return err
	}
	switch err := s.dev.Invoke(b.EventName); {
	case errors.Is(err, cpe.ErrUnknownEvent):
		return errf("eventName %q is not one of BootStrap, Boot, Periodic, ValueChange, ConnectionRequest, TransferComplete, Diagnostics, DUStateChangeComplete (case sensitive)", b.EventName)
	case errors.Is(err, cpe.ErrInSession):
		return conflict("device %s is in a CWMP session", s.cfg.Serial)
	case err != nil:
		return err
	}
	return noContent(w)
}

func (api *API) changePeriodic(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Serial string `json:"serial"`
		Value  *int   `json:"value"`
	}
	if err := decode(r, &b); err != nil {
		return err
	}
	s, err := api.e.singleDevice(strings.TrimSpace(b.Serial))
	if err != nil {
		return err
	}
	if b.Value == nil || *b.Value < 0 {
		return errf("value must be a number of seconds, 0 to disable")
	}
	s.dev.SetPeriodic(time.Duration(*b.Value) * time.Second)
	return noContent(w)
}

// logSerial validates the serial of a log call; logs outlive devices, so a
// stopped device's log is still readable.
func logSerial(r *http.Request) (string, error) {
	serial, err := query(r, "serial")
	if err != nil {
		return "", err
	}
	return serial, checkSerial(serial)
}

func (api *API) getLog(w http.ResponseWriter, r *http.Request) error {
	serial, err := logSerial(r)
	if err != nil {
		return err
	}
	f, err := api.e.logs.Open(serial)
	if err != nil {
		return err
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+serial+`.log"`)
	_, err = io.Copy(w, f)
	return err
}

func (api *API) getLogContent(w http.ResponseWriter, r *http.Request) error {
	serial, err := logSerial(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	lines, from := 100, int64(-1)
	if v := q.Get("lines"); v != "" {
		if lines, err = strconv.Atoi(v); err != nil || lines < 1 || lines > 100000 {
			return errf("lines must be a whole number from 1 to 100000, got %q", v)
		}
	}
	if v := q.Get("fromPosition"); v != "" {
		if from, err = strconv.ParseInt(v, 10, 64); err != nil || from < 0 {
			return errf("fromPosition must be a byte offset of 0 or more, got %q", v)
		}
	}
	text, next, err := api.e.logs.Content(serial, lines, from)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-File-Position", strconv.FormatInt(next, 10))
	_, err = w.Write(text)
	return err
}

func (api *API) logStatistics(w http.ResponseWriter, r *http.Request) error {
	serial, err := logSerial(r)
	if err != nil {
		return err
	}
	st, err := api.e.logs.Stats(serial)
	if err != nil {
		return err
	}
	return ok(w, st)
}

func (api *API) clearLog(w http.ResponseWriter, r *http.Request) error {
	serial, err := decodeSerial(r)
	if err != nil {
		return err
	}
	if err := api.e.logs.Clear(serial); err != nil {
		return err
	}
	return noContent(w)
}

func (api *API) getUpdatable(w http.ResponseWriter, r *http.Request) error {
	s, err := api.queryDevice(r)
	if err != nil {
		return err
	}
	list := s.dev.UpdatableList()
	if list == nil {
		list = []cpe.Updatable{}
	}
	return ok(w, list)
}

func (api *API) setUpdatable(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Serial     string          `json:"serial"`
		Parameters []cpe.Updatable `json:"parameters"`
	}
	if err := decode(r, &b); err != nil {
		return err
	}
	s, err := api.e.singleDevice(strings.TrimSpace(b.Serial))
	if err != nil {
		return err
	}
	if b.Parameters == nil {
		b.Parameters = []cpe.Updatable{}
	}
	for i := range b.Parameters {
		if err := b.Parameters[i].Normalize(); err != nil {
			return errf("parameters[%d]: %v", i, err)
		}
	}
	s.dev.SetUpdatable(b.Parameters)
	if dto, found := api.e.store.Get(s.cfg.Serial); found {
		dto.UpdatableParameters = b.Parameters
		if err := api.e.store.Put(dto); err != nil {
			return err
		}
	}
	return noContent(w)
}

func (api *API) uploadParamTree(w http.ResponseWriter, r *http.Request) error {
	name, data, err := api.readUpload(w, r)
	if err != nil {
		return err
	}
	if err := api.e.files.Upload(name, data); err != nil {
		return err
	}
	return ok(w, map[string]string{"filename": name})
}

// WANTraffic is a device's WAN load and counters (GET /apiV2/wanTraffic).
type WANTraffic struct {
	Serial string `json:"serial"`
	// Busy is true while a busy rate is set in either direction.
	Busy                   bool  `json:"busy"`
	DownloadBytesPerSecond int64 `json:"downloadBytesPerSecond"`
	UploadBytesPerSecond   int64 `json:"uploadBytesPerSecond"`
	// BytesReceived and BytesSent are the WAN counters since boot, before
	// the 32-bit wrap a TR-098 tree applies to its unsignedInt counters.
	BytesReceived int64 `json:"bytesReceived"`
	BytesSent     int64 `json:"bytesSent"`
}

// makeWANBusy sets a running device's (batch or single) WAN busy rates:
// its WAN counters then grow at those rates instead of the idle ones.
func (api *API) makeWANBusy(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Serial                 string `json:"serial"`
		DownloadBytesPerSecond *int64 `json:"downloadBytesPerSecond"`
		UploadBytesPerSecond   *int64 `json:"uploadBytesPerSecond"`
	}
	if err := decode(r, &b); err != nil {
		return err
	}
	serial := strings.TrimSpace(b.Serial)
	if err := checkSerial(serial); err != nil {
		return err
	}
	var rates [2]int64
	for i, f := range []struct {
		name string
		v    *int64
	}{{"downloadBytesPerSecond", b.DownloadBytesPerSecond}, {"uploadBytesPerSecond", b.UploadBytesPerSecond}} {
		if f.v == nil {
			continue
		}
		if *f.v < 0 || *f.v > cpe.MaxWANRate {
			return errf("%s must be from 0 to %d bytes per second, got %d", f.name, cpe.MaxWANRate, *f.v)
		}
		rates[i] = *f.v
	}
	if rates[0] == 0 && rates[1] == 0 {
		return errf("downloadBytesPerSecond or uploadBytesPerSecond must be above 0; POST /apiV2/resetWanBusy makes the WAN idle")
	}
	d, err := api.e.device(serial)
	if err != nil {
		return err
	}
	d.SetWANBusy(rates[0], rates[1])
	return noContent(w)
}

func (api *API) resetWANBusy(w http.ResponseWriter, r *http.Request) error {
	d, err := api.bodyDevice(r)
	if err != nil {
		return err
	}
	d.SetWANBusy(0, 0)
	return noContent(w)
}

func (api *API) wanTraffic(w http.ResponseWriter, r *http.Request) error {
	serial, err := query(r, "serial")
	if err != nil {
		return err
	}
	d, err := api.e.device(serial)
	if err != nil {
		return err
	}
	tr := d.WANTraffic()
	return ok(w, WANTraffic{Serial: d.Serial(), Busy: tr.BusyRxRate > 0 || tr.BusyTxRate > 0,
		DownloadBytesPerSecond: tr.BusyRxRate, UploadBytesPerSecond: tr.BusyTxRate,
		BytesReceived: tr.BytesReceived, BytesSent: tr.BytesSent})
}
