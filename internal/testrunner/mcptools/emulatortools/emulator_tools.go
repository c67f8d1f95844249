package emulatortools

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"cpesuite/internal/platform/apperr"
)

// Arguments of the emulator tools. Fields without omitempty are required
// in the input schema.

type serialInput struct {
	Serial string `json:"serial" jsonschema:"serial number of the emulated CPE, e.g. CPE0001"`
}

type startDeviceInput struct {
	Serial            string `json:"serial" jsonschema:"serial number of the CPE to start (1 to 64 letters, digits, '.', '_', '-')"`
	TreeFile          string `json:"tree_file,omitempty" jsonschema:"parameter tree file in the emulator's tree folder, e.g. tr181-base.xml or tr098-base.xml; default: the emulator's configured tree"`
	ACSURL            string `json:"acs_url,omitempty" jsonschema:"CWMP URL of the ACS the CPE informs, e.g. http://acs:7547/; default: the emulator's default ACS URL"`
	ConnectionRequest *bool  `json:"connection_request,omitempty" jsonschema:"serve HTTP connection requests so the ACS can wake the CPE (default true)"`
	Restart           bool   `json:"restart,omitempty" jsonschema:"stop the CPE first when it is already running (default false: starting a running serial is an error)"`
}

type getParameterInput struct {
	Serial string `json:"serial" jsonschema:"serial number of the emulated CPE"`
	Name   string `json:"name" jsonschema:"full parameter name, e.g. Device.DeviceInfo.ProvisioningCode"`
}

type getParametersInput struct {
	Serial string `json:"serial" jsonschema:"serial number of the emulated CPE"`
	Prefix string `json:"prefix" jsonschema:"name prefix, usually an object path such as Device.DeviceInfo."`
	Limit  int    `json:"limit,omitempty" jsonschema:"most parameters to return, 1 to 10000 (default 500); the answer says when more matched"`
}

type setParameterInput struct {
	Serial string `json:"serial" jsonschema:"serial number of the emulated CPE"`
	Name   string `json:"name" jsonschema:"full parameter name, e.g. Device.DeviceInfo.ProvisioningCode"`
	Value  any    `json:"value" jsonschema:"new value (string, number or boolean); the parameter keeps its type"`
	Silent bool   `json:"silent,omitempty" jsonschema:"change the value without the 4 VALUE CHANGE Inform an active notification would send (default false)"`
}

type invokeEventInput struct {
	Serial string `json:"serial" jsonschema:"serial number of the emulated CPE"`
	Event  string `json:"event" jsonschema:"Inform event to send: 0 BOOTSTRAP, 1 BOOT, 2 PERIODIC, 4 VALUE CHANGE, 6 CONNECTION REQUEST, 7 TRANSFER COMPLETE, 8 DIAGNOSTICS COMPLETE or 11 DU STATE CHANGE COMPLETE (the number alone, or the emulator's name such as Periodic, works too)"`
}

type readLogInput struct {
	Serial string `json:"serial" jsonschema:"serial number of the emulated CPE (a stopped CPE's log is still readable)"`
	Lines  int    `json:"lines,omitempty" jsonschema:"how many of the last lines to return, 1 to 5000 (default 100)"`
}

// Limits of the list-like answers, to keep a model's context small.
const (
	defaultParamLimit = 500
	maxParamLimit     = 10000
	defaultLogLines   = 100
	maxLogLines       = 5000
)

func (s *Server) registerEmulatorTools() {
	addTool(s, toolMeta{name: "start_device", title: "Start an emulated CPE", destructive: false,
		description: "Start an emulated TR-069 CPE with the given serial; it bootstraps and informs the ACS at once. " +
			"The answer's startedAt can be passed to acs_find_device as informed_after."}, s.startDevice)
	addTool(s, toolMeta{name: "stop_device", title: "Stop an emulated CPE", destructive: true,
		description: "Stop a running emulated CPE; its log stays readable."}, s.stopDevice)
	addTool(s, toolMeta{name: "list_devices", title: "List running CPEs", readOnly: true,
		description: "List the emulated CPEs running on the emulator (serial, manufacturer, product class, OUI, tree file, ACS URL)."}, s.listDevices)
	addTool(s, toolMeta{name: "device_status", title: "CPE status", readOnly: true,
		description: "Whether a CPE is running and in a CWMP session now, with its identity (OUI, product class, versions, ACS URL). " +
			"A serial that is not running answers running=false."}, s.deviceStatus)
	addTool(s, toolMeta{name: "get_parameter", title: "Read a CPE parameter", readOnly: true,
		description: "Read one parameter of the CPE's own tree (what the CPE holds, not the ACS's cache): name, value, type."}, s.getParameter)
	addTool(s, toolMeta{name: "get_parameters", title: "Read CPE parameters by prefix", readOnly: true,
		description: "Read the parameters under a prefix of the CPE's own tree: name, value, type, writable."}, s.getParameters)
	addTool(s, toolMeta{name: "set_parameter", title: "Change a CPE parameter locally",
		description: "Change a parameter on the CPE side, as if changed on the device itself; with active notification the CPE " +
			"sends a 4 VALUE CHANGE Inform unless silent is true. The answer carries the value the CPE now holds."}, s.setParameter)
	addTool(s, toolMeta{name: "invoke_event", title: "Send an Inform event",
		description: "Make the CPE open a session and send an Inform with the given event, e.g. 2 PERIODIC or 4 VALUE CHANGE. " +
			"Refused while the CPE is in a session."}, s.invokeEvent)
	addTool(s, toolMeta{name: "read_log", title: "Read a CPE's log", readOnly: true,
		description: "The last lines of the CPE's CWMP log (sessions, RPCs, faults), as text."}, s.readLog)
}

// startAnswer is the emulator's start result plus when the call began.
type startAnswer struct {
	Success       bool      `json:"success"`
	Serial        string    `json:"serial"`
	Message       string    `json:"message"`
	ParameterFile string    `json:"parameterFile,omitempty"`
	ACSURL        string    `json:"acsUrl,omitempty"`
	Restarted     bool      `json:"restarted,omitempty"`
	StartedAt     time.Time `json:"startedAt"`
}

func (s *Server) startDevice(ctx context.Context, in startDeviceInput) (any, error) {
	serial, err := emulatorSerial(in.Serial)
	if err != nil {
		return nil, err
	}
	file, err := treeFile(in.TreeFile)
	if err != nil {
		return nil, err
	}
	acsURL, err := httpURL("acs_url", in.ACSURL)
	if err != nil {
		return nil, err
	}
	cr := in.ConnectionRequest == nil || *in.ConnectionRequest
	startedAt := s.now().UTC()
	restarted := false
	if in.Restart {
		switch _, err := s.emu.post(ctx, "/apiV2/stop", map[string]string{"serial": serial}, nil); {
		case err == nil:
			restarted = true
		case !errors.Is(err, apperr.ErrNotFound):
			return nil, err
		}
	}
	dto := map[string]any{"serial": serial, "enableHttpConnectionRequest": cr}
	if file != "" {
		dto["parameterFile"] = file
	}
	if acsURL != "" {
		dto["acsUrl"] = acsURL
	}
	var res startAnswer
	if _, err := s.emu.post(ctx, "/apiV2/start", dto, &res); err != nil {
		return nil, err
	}
	res.Restarted, res.StartedAt = restarted, startedAt
	return res, nil
}

func (s *Server) stopDevice(ctx context.Context, in serialInput) (any, error) {
	serial, err := emulatorSerial(in.Serial)
	if err != nil {
		return nil, err
	}
	if _, err := s.emu.post(ctx, "/apiV2/stop", map[string]string{"serial": serial}, nil); err != nil {
		return nil, err
	}
	return map[string]any{"serial": serial, "stopped": true}, nil
}

func (s *Server) listDevices(ctx context.Context, _ struct{}) (any, error) {
	var list []map[string]any
	if err := s.emu.get(ctx, "/apiV2/activeEmulators", nil, &list); err != nil {
		return nil, err
	}
	if list == nil {
		list = []map[string]any{}
	}
	return map[string]any{"count": len(list), "devices": list}, nil
}

type statusAnswer struct {
	Serial    string            `json:"serial"`
	Running   bool              `json:"running"`
	InSession bool              `json:"inSession"`
	Identity  map[string]string `json:"identity,omitempty"`
}

func (s *Server) deviceStatus(ctx context.Context, in serialInput) (any, error) {
	serial, err := emulatorSerial(in.Serial)
	if err != nil {
		return nil, err
	}
	q := url.Values{"serial": {serial}}
	var run struct {
		Running bool `json:"running"`
	}
	if err := s.emu.get(ctx, "/apiV2/isEmulatorRunning", q, &run); err != nil {
		return nil, err
	}
	ans := statusAnswer{Serial: serial}
	if !run.Running {
		return ans, nil
	}
	var sess struct {
		InSession bool `json:"inSession"`
	}
	err = s.emu.get(ctx, "/apiV2/sessionStatus", q, &sess)
	if err == nil {
		err = s.emu.get(ctx, "/apiV2/deviceId", q, &ans.Identity)
	}
	switch {
	case errors.Is(err, apperr.ErrNotFound):
		return ans, nil // stopped between the calls
	case err != nil:
		return nil, err
	}
	ans.Running, ans.InSession = true, sess.InSession
	return ans, nil
}

type paramValue struct {
	Serial string `json:"serial"`
	Name   string `json:"name"`
	Value  string `json:"value"`
	Type   string `json:"type"`
}

// readParam reads one parameter of a running CPE.
func (s *Server) readParam(ctx context.Context, serial, name string) (paramValue, error) {
	v := paramValue{Serial: serial}
	err := s.emu.get(ctx, "/apiV2/parameterValue", url.Values{"serial": {serial}, "parameterName": {name}}, &v)
	v.Serial = serial
	return v, err
}

func (s *Server) getParameter(ctx context.Context, in getParameterInput) (any, error) {
	serial, err := emulatorSerial(in.Serial)
	if err != nil {
		return nil, err
	}
	name, err := paramName("name", in.Name, false)
	if err != nil {
		return nil, err
	}
	return s.readParam(ctx, serial, name)
}

type paramInfo struct {
	Name     string `json:"name"`
	Value    string `json:"value"`
	Type     string `json:"type"`
	Writable bool   `json:"writable"`
}

func (s *Server) getParameters(ctx context.Context, in getParametersInput) (any, error) {
	serial, err := emulatorSerial(in.Serial)
	if err != nil {
		return nil, err
	}
	prefix, err := paramName("prefix", in.Prefix, true)
	if err != nil {
		return nil, err
	}
	limit := in.Limit
	if limit == 0 {
		limit = defaultParamLimit
	}
	if limit < 1 || limit > maxParamLimit {
		return nil, invalid("limit must be from 1 to %d, got %d", maxParamLimit, in.Limit)
	}
	var list []paramInfo
	if err := s.emu.get(ctx, "/apiV2/parametersByPrefix", url.Values{"serial": {serial}, "prefix": {prefix}}, &list); err != nil {
		return nil, err
	}
	if len(list) == 0 {
		// An empty answer is either an object without instances or a
		// misspelt path; only the second is the caller's mistake.
		q := url.Values{"serial": {serial}, "path": {prefix}, "nextLevel": {"true"}}
		var names []map[string]any
		if err := s.emu.get(ctx, "/apiV2/parameterNames", q, &names); err != nil {
			if errors.Is(err, apperr.ErrNotFound) || errors.Is(err, apperr.ErrInvalid) {
				return nil, apperr.NotFound("NOT_FOUND", "no parameter or object of CPE %s matches prefix %s", serial, prefix)
			}
			return nil, err
		}
		list = []paramInfo{}
	}
	ans := paramsAnswer{Serial: serial, Prefix: prefix, Total: len(list), Truncated: len(list) > limit}
	if ans.Truncated {
		list = list[:limit]
	}
	ans.Count, ans.Parameters = len(list), list
	return ans, nil
}

type paramsAnswer struct {
	Serial     string      `json:"serial"`
	Prefix     string      `json:"prefix"`
	Count      int         `json:"count"`
	Total      int         `json:"total"`
	Truncated  bool        `json:"truncated"`
	Parameters []paramInfo `json:"parameters"`
}

type setAnswer struct {
	paramValue
	ValueChangeInform bool `json:"valueChangeInform"`
}

func (s *Server) setParameter(ctx context.Context, in setParameterInput) (any, error) {
	serial, err := emulatorSerial(in.Serial)
	if err != nil {
		return nil, err
	}
	name, err := paramName("name", in.Name, false)
	if err != nil {
		return nil, err
	}
	value, err := scalar("value", in.Value)
	if err != nil {
		return nil, err
	}
	path := "/apiV2/setParameterValue"
	if in.Silent {
		path = "/apiV2/changeParameter"
	}
	status, err := s.emu.post(ctx, path, map[string]string{"serial": serial, "parameterName": name, "parameterValue": value}, nil)
	if err != nil {
		return nil, err
	}
	// Read back: the CPE keeps the parameter's type and may normalise the
	// value (booleans, numbers), and the caller should see what it holds.
	v, err := s.readParam(ctx, serial, name)
	if err != nil {
		return nil, err
	}
	// setParameterValue answers 200 exactly when it triggered the Inform.
	return setAnswer{paramValue: v, ValueChangeInform: status == http.StatusOK}, nil
}

func (s *Server) invokeEvent(ctx context.Context, in invokeEventInput) (any, error) {
	serial, err := emulatorSerial(in.Serial)
	if err != nil {
		return nil, err
	}
	ev, err := eventFor(in.Event)
	if err != nil {
		return nil, err
	}
	if _, err := s.emu.post(ctx, "/apiV2/invoke", map[string]string{"serial": serial, "eventName": ev.name}, nil); err != nil {
		if errors.Is(err, apperr.ErrConflict) {
			return nil, apperr.Conflict("CONFLICT", "CPE %s is in a CWMP session now; call invoke_event again when device_status says inSession=false", serial)
		}
		return nil, err
	}
	return map[string]any{"serial": serial, "event": ev.code + " " + ev.text, "invoked": true}, nil
}

func (s *Server) readLog(ctx context.Context, in readLogInput) (any, error) {
	serial, err := emulatorSerial(in.Serial)
	if err != nil {
		return nil, err
	}
	lines := in.Lines
	if lines == 0 {
		lines = defaultLogLines
	}
	if lines < 1 || lines > maxLogLines {
		return nil, invalid("lines must be from 1 to %d, got %d", maxLogLines, in.Lines)
	}
	r, err := s.emu.call(ctx, http.MethodGet, "/apiV2/getLogContent", url.Values{"serial": {serial}, "lines": {strconv.Itoa(lines)}}, nil)
	if err != nil {
		return nil, err
	}
	if len(r.body) == 0 {
		return "(the log of " + serial + " has no complete lines yet)", nil
	}
	return string(r.body), nil
}
