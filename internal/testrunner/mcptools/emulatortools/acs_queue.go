package emulatortools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"cpesuite/internal/acs"
)

type setValueInput struct {
	Name  string `json:"name" jsonschema:"full parameter name, e.g. Device.DeviceInfo.ProvisioningCode"`
	Value any    `json:"value" jsonschema:"new value (string, number or boolean)"`
	Type  string `json:"type,omitempty" jsonschema:"xsd type such as xsd:string, xsd:unsignedInt, xsd:boolean (the xsd: prefix may be left out); default: the type the ACS has cached for the parameter, else xsd:string"`
}

type queueTaskInput struct {
	Serial            string          `json:"serial,omitempty" jsonschema:"the CPE's serial number (give serial or device_id)"`
	DeviceID          int64           `json:"device_id,omitempty" jsonschema:"the ACS's device id (give serial or device_id)"`
	Kind              string          `json:"kind" jsonschema:"task kind, e.g. SetParameterValues, GetParameterValues, Reboot, or ConnectionRequest to only wake the CPE (case, '_' and '-' are ignored)"`
	Values            []setValueInput `json:"values,omitempty" jsonschema:"SetParameterValues: the parameters to set"`
	Names             []string        `json:"names,omitempty" jsonschema:"GetParameterValues, GetParameterAttributes: parameter names or object paths (ending in a dot)"`
	Path              string          `json:"path,omitempty" jsonschema:"GetParameterNames: parameter or object path; empty: the whole tree"`
	NextLevel         bool            `json:"next_level,omitempty" jsonschema:"GetParameterNames: immediate children only"`
	ObjectName        string          `json:"object_name,omitempty" jsonschema:"AddObject, DeleteObject: object path ending in a dot, e.g. Device.Hosts.Host. or Device.Hosts.Host.3."`
	ParameterKey      string          `json:"parameter_key,omitempty" jsonschema:"SetParameterValues, AddObject, DeleteObject: ParameterKey (at most 32 characters)"`
	CommandKey        string          `json:"command_key,omitempty" jsonschema:"Reboot, ScheduleInform: CommandKey (at most 32 characters)"`
	DelaySeconds      int             `json:"delay_seconds,omitempty" jsonschema:"ScheduleInform: seconds until the CPE informs"`
	Args              map[string]any  `json:"args,omitempty" jsonschema:"the ACS's own argument object for the kind (required for Download, Upload and SetParameterAttributes), e.g. {\"url\": \"http://files/fw.bin\", \"fileType\": \"1 Firmware Upgrade Image\"}; not together with the fields above"`
	ConnectionRequest *bool           `json:"connection_request,omitempty" jsonschema:"send a connection request so the CPE runs the task now (default true); false: it runs at the CPE's next Inform"`
	WaitSeconds       int             `json:"wait_seconds,omitempty" jsonschema:"wait up to this many seconds (0 to 120, default 0) for the task to finish; 0 answers at once with the task pending"`
	Label             string          `json:"label,omitempty" jsonschema:"free text stored on the transaction, e.g. the test case id"`
}

// connectionRequestKind is acs_queue_task's kind that only wakes the CPE.
const connectionRequestKind = "ConnectionRequest"

// taskKind resolves a kind, forgiving case and separators.
func taskKind(raw string) (string, error) {
	want := squash(raw)
	if want == squash(connectionRequestKind) {
		return connectionRequestKind, nil
	}
	for _, k := range acs.TaskKinds {
		if squash(string(k)) == want {
			return string(k), nil
		}
	}
	if strings.TrimSpace(raw) == "" {
		return "", invalid("kind is required: one of %s, or %s", kindList(), connectionRequestKind)
	}
	return "", invalid("kind %q is not one of %s, or %s", raw, kindList(), connectionRequestKind)
}

// fieldsFor lists the argument fields each kind takes besides args.
var fieldsFor = map[acs.TaskKind][]string{
	acs.KindSetParameterValues:     {"values", "parameter_key"},
	acs.KindGetParameterValues:     {"names"},
	acs.KindGetParameterAttributes: {"names"},
	acs.KindGetParameterNames:      {"path", "next_level"},
	acs.KindAddObject:              {"object_name", "parameter_key"},
	acs.KindDeleteObject:           {"object_name", "parameter_key"},
	acs.KindReboot:                 {"command_key"},
	acs.KindScheduleInform:         {"delay_seconds", "command_key"},
}

// given lists the task argument fields the caller set.
func (in *queueTaskInput) given() []string {
	set := map[string]bool{
		"values": len(in.Values) > 0, "names": len(in.Names) > 0, "path": in.Path != "", "next_level": in.NextLevel,
		"object_name": in.ObjectName != "", "parameter_key": in.ParameterKey != "", "command_key": in.CommandKey != "",
		"delay_seconds": in.DelaySeconds != 0,
	}
	var out []string
	for k, v := range set {
		if v {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// taskArgs builds the ACS's argument object of kind from the fields (or
// takes args), then checks it with the ACS's own rules so the caller
// hears of a mistake before anything is queued.
func (s *Server) taskArgs(ctx context.Context, kind acs.TaskKind, in *queueTaskInput, deviceID int64) (json.RawMessage, error) {
	given := in.given()
	var v any
	switch {
	case in.Args != nil && len(given) > 0:
		return nil, invalid("give args or the per-kind fields (%s), not both", strings.Join(given, ", "))
	case in.Args != nil:
		v = in.Args
	default:
		allowed := fieldsFor[kind]
		for _, f := range given {
			if !slices.Contains(allowed, f) {
				if len(allowed) == 0 {
					return nil, invalid("%s does not take %s; give its arguments as args", kind, f)
				}
				return nil, invalid("%s does not take %s (it takes %s, or args)", kind, f, strings.Join(allowed, ", "))
			}
		}
		var err error
		if v, err = s.fieldArgs(ctx, kind, in, deviceID); err != nil {
			return nil, err
		}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, invalid("args cannot be encoded: %v", err)
	}
	norm, err := acs.ValidateArgs(kind, raw)
	if err != nil {
		return nil, invalid("%v", err)
	}
	return norm, nil
}

// fieldArgs is the argument struct of kind filled from the fields.
func (s *Server) fieldArgs(ctx context.Context, kind acs.TaskKind, in *queueTaskInput, deviceID int64) (any, error) {
	switch kind {
	case acs.KindSetParameterValues:
		values, err := s.setValues(ctx, in.Values, deviceID)
		return acs.SetValuesArgs{Values: values, ParameterKey: in.ParameterKey}, err
	case acs.KindGetParameterValues, acs.KindGetParameterAttributes:
		return acs.NamesArgs{Names: in.Names}, nil
	case acs.KindGetParameterNames:
		return acs.NamesPathArgs{Path: in.Path, NextLevel: in.NextLevel}, nil
	case acs.KindAddObject, acs.KindDeleteObject:
		return acs.ObjectArgs{ObjectName: in.ObjectName, ParameterKey: in.ParameterKey}, nil
	case acs.KindReboot:
		return acs.CommandKeyArgs{CommandKey: in.CommandKey}, nil
	case acs.KindScheduleInform:
		if in.DelaySeconds < 1 || in.DelaySeconds > math.MaxInt32 {
			return nil, invalid("delay_seconds must be a positive number of seconds, got %d", in.DelaySeconds)
		}
		return acs.ScheduleInformArgs{DelaySeconds: uint32(in.DelaySeconds), CommandKey: in.CommandKey}, nil
	case acs.KindFactoryReset:
		return map[string]any{}, nil
	}
	return nil, invalid("%s needs its arguments as args (the ACS's argument object)", kind)
}

// setValues converts the values of a SetParameterValues. A value without
// a type takes the one the ACS has cached, as the CPE reported it: a CPE
// may refuse an unsignedInt sent as xsd:string.
func (s *Server) setValues(ctx context.Context, in []setValueInput, deviceID int64) ([]acs.SetValue, error) {
	if len(in) == 0 {
		return nil, invalid("values must list at least one parameter for SetParameterValues")
	}
	var cached acs.Params
	out := make([]acs.SetValue, len(in))
	for i, v := range in {
		name, err := paramName(fmt.Sprintf("values[%d].name", i), v.Name, false)
		if err != nil {
			return nil, err
		}
		value, err := scalar(fmt.Sprintf("values[%d].value", i), v.Value)
		if err != nil {
			return nil, err
		}
		typ := strings.TrimSpace(v.Type)
		if typ != "" && !strings.HasPrefix(typ, "xsd:") {
			typ = "xsd:" + typ
		}
		if typ == "" {
			if cached == nil {
				d, err := s.acs.Device(ctx, deviceID)
				if err != nil {
					return nil, s.acsError(ctx, err)
				}
				cached = d.Parameters
				if cached == nil {
					cached = acs.Params{}
				}
			}
			typ = cached[name].Type
		}
		out[i] = acs.SetValue{Name: name, Value: value, Type: typ}
	}
	return out, nil
}

type queueAnswer struct {
	DeviceID          int64                   `json:"deviceId"`
	Kind              string                  `json:"kind"`
	Finished          bool                    `json:"finished"`
	State             acs.TaskState           `json:"state,omitempty"`
	TransactionID     int64                   `json:"transactionId,omitempty"`
	Tasks             []acs.Task              `json:"tasks,omitempty"`
	ConnectionRequest *acs.ConnRequestOutcome `json:"connectionRequest,omitempty"`
	Note              string                  `json:"note,omitempty"`
}

func (s *Server) queueTask(ctx context.Context, in queueTaskInput) (any, error) {
	kind, err := taskKind(in.Kind)
	if err != nil {
		return nil, err
	}
	wait, err := waitSeconds(in.WaitSeconds, maxWaitSeconds)
	if err != nil {
		return nil, err
	}
	if len(in.Label) > 200 {
		return nil, invalid("label is longer than 200 characters")
	}
	id, err := s.deviceID(ctx, in.Serial, in.DeviceID)
	if err != nil {
		return nil, err
	}
	if kind == connectionRequestKind {
		if g := in.given(); len(g) > 0 || in.Args != nil {
			return nil, invalid("ConnectionRequest takes no task arguments")
		}
		if err := s.acs.ConnectionRequest(ctx, id); err != nil {
			return nil, s.acsError(ctx, err)
		}
		return queueAnswer{DeviceID: id, Kind: kind, Finished: true, ConnectionRequest: &acs.ConnRequestOutcome{OK: true},
			Note: "the CPE accepted the connection request and opens a session"}, nil
	}
	args, err := s.taskArgs(ctx, acs.TaskKind(kind), &in, id)
	if err != nil {
		return nil, err
	}
	req := acs.EnqueueRequest{Tasks: []acs.TaskSpec{{Kind: acs.TaskKind(kind), Args: args}}, Label: in.Label,
		ConnectionRequest: in.ConnectionRequest == nil || *in.ConnectionRequest, WaitSeconds: int(wait.Seconds())}
	resp, finished, err := s.acs.Enqueue(ctx, id, req)
	if err != nil {
		return nil, s.acsError(ctx, err)
	}
	ans := queueAnswer{DeviceID: id, Kind: kind, Finished: finished, State: resp.State, TransactionID: resp.ID,
		Tasks: resp.Tasks, ConnectionRequest: resp.ConnectionRequest}
	switch {
	case resp.ConnectionRequest != nil && !resp.ConnectionRequest.OK:
		ans.Note = "the connection request failed, so the task waits for the CPE's next Inform"
	case !finished && len(resp.Tasks) > 0:
		ans.Note = fmt.Sprintf("not finished yet: poll acs_get_task with task_id %d", resp.Tasks[0].ID)
	case resp.State == acs.TaskFault:
		ans.Note = "the task failed: see tasks[0].fault"
	}
	if ans.Tasks == nil {
		ans.Tasks = []acs.Task{}
	}
	return ans, nil
}
