package acs

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"cpesuite/internal/cwmp"
)

// buildRPC returns the RPC that advances task t on a device with the given
// data model, and the phase the task enters once it is sent.
func buildRPC(t *Task, dataModel, speedtestURL string) (cwmp.Message, string, error) {
	dec := func(v any) error {
		if err := json.Unmarshal(t.Args, v); err != nil {
			return fmt.Errorf("task %d: stored arguments: %w", t.ID, err)
		}
		return nil
	}
	switch t.Kind {
	case KindGetParameterValues, KindGetParameterAttributes:
		var a NamesArgs
		if err := dec(&a); err != nil {
			return nil, "", err
		}
		if t.Kind == KindGetParameterValues {
			return &cwmp.GetParameterValues{ParameterNames: a.Names}, PhaseSent, nil
		}
		return &cwmp.GetParameterAttributes{ParameterNames: a.Names}, PhaseSent, nil
	case KindSetParameterValues:
		var a SetValuesArgs
		if err := dec(&a); err != nil {
			return nil, "", err
		}
		return spv(a.Values, a.ParameterKey), PhaseSent, nil
	case KindGetParameterNames:
		var a NamesPathArgs
		if err := dec(&a); err != nil {
			return nil, "", err
		}
		return &cwmp.GetParameterNames{ParameterPath: a.Path, NextLevel: a.NextLevel}, PhaseSent, nil
	case KindSetParameterAttributes:
		var a SetAttributesArgs
		if err := dec(&a); err != nil {
			return nil, "", err
		}
		m := &cwmp.SetParameterAttributes{}
		for _, at := range a.Attributes {
			m.ParameterList = append(m.ParameterList, cwmp.SetParameterAttributesStruct{Name: at.Name, NotificationChange: at.NotificationChange,
				Notification: int32(at.Notification), AccessListChange: at.AccessListChange, AccessList: at.AccessList})
		}
		return m, PhaseSent, nil
	case KindAddObject, KindDeleteObject:
		var a ObjectArgs
		if err := dec(&a); err != nil {
			return nil, "", err
		}
		if t.Kind == KindAddObject {
			return &cwmp.AddObject{ObjectName: a.ObjectName, ParameterKey: a.ParameterKey}, PhaseSent, nil
		}
		return &cwmp.DeleteObject{ObjectName: a.ObjectName, ParameterKey: a.ParameterKey}, PhaseSent, nil
	case KindReboot:
		var a CommandKeyArgs
		if err := dec(&a); err != nil {
			return nil, "", err
		}
		return &cwmp.Reboot{CommandKey: a.CommandKey}, PhaseSent, nil
	case KindFactoryReset:
		return &cwmp.FactoryReset{}, PhaseSent, nil
	case KindScheduleInform:
		var a ScheduleInformArgs
		if err := dec(&a); err != nil {
			return nil, "", err
		}
		return &cwmp.ScheduleInform{DelaySeconds: a.DelaySeconds, CommandKey: a.CommandKey}, PhaseSent, nil
	case KindDownload, KindUpload:
		var a TransferArgs
		if err := dec(&a); err != nil {
			return nil, "", err
		}
		key := transferCommandKey(t, a.CommandKey)
		if t.Kind == KindDownload {
			return &cwmp.Download{CommandKey: key, FileType: a.FileType, URL: a.URL, Username: a.Username, Password: a.Password,
				FileSize: a.FileSize, TargetFileName: a.TargetFileName, DelaySeconds: a.DelaySeconds,
				SuccessURL: a.SuccessURL, FailureURL: a.FailureURL}, PhaseSent, nil
		}
		return &cwmp.Upload{CommandKey: key, FileType: a.FileType, URL: a.URL, Username: a.Username, Password: a.Password,
			DelaySeconds: a.DelaySeconds}, PhaseSent, nil
	case KindDownloadDiagnostics, KindUploadDiagnostics, KindIPPing:
		if t.Phase == PhaseGetResults {
			return &cwmp.GetParameterValues{ParameterNames: []string{diagObject(dataModel, t.Kind)}}, PhaseGetResults, nil
		}
		var a DiagnosticsArgs
		if err := dec(&a); err != nil {
			return nil, "", err
		}
		return spv(diagSetValues(dataModel, t.Kind, a, speedtestURL), "diag-"+strconv.FormatInt(t.ID, 10)), PhaseSet, nil
	}
	return nil, "", fmt.Errorf("task %d: unknown kind %q", t.ID, t.Kind)
}

// transferCommandKey gives every transfer a command key so that the
// TransferComplete that arrives in a later session finds its task.
func transferCommandKey(t *Task, given string) string {
	if given != "" {
		return given
	}
	return "task-" + strconv.FormatInt(t.ID, 10)
}

func spv(values []SetValue, key string) *cwmp.SetParameterValues {
	m := &cwmp.SetParameterValues{ParameterKey: key}
	for _, v := range values {
		m.ParameterList = append(m.ParameterList, cwmp.ParameterValueStruct{Name: v.Name, Value: cwmp.Value{Type: v.Type, Text: v.Value}})
	}
	return m
}

// outcome is what a CPE's answer does to the task.
type outcome struct {
	state  TaskState
	phase  string
	result any
	fault  *Fault
	params Params // values learnt, merged into the device's cache
}

// expected lists, per task kind and phase, the response method that
// answers the RPC.
func expected(t *Task) string {
	switch t.Kind {
	case KindDownloadDiagnostics, KindUploadDiagnostics, KindIPPing:
		if t.Phase == PhaseGetResults {
			return "GetParameterValuesResponse"
		}
		return "SetParameterValuesResponse"
	}
	return string(t.Kind) + "Response"
}

// applyResponse interprets the CPE's answer to the RPC of task t.
func applyResponse(t *Task, dataModel string, msg cwmp.Message) outcome {
	if f, ok := msg.(*cwmp.Fault); ok {
		return outcome{state: TaskFault, fault: faultOf(f)}
	}
	if msg.Method() != expected(t) {
		return outcome{state: TaskFault, fault: &Fault{Code: FaultCodeRequestDenied,
			Message: fmt.Sprintf("CPE answered %s to a %s request", msg.Method(), strings.TrimSuffix(expected(t), "Response"))}}
	}
	switch m := msg.(type) {
	case *cwmp.GetParameterValuesResponse:
		p := paramsOf(m.ParameterList)
		if t.Kind.IsDiagnostics() {
			res, state, err := parseDiagResult(dataModel, t.Kind, p)
			if err != nil {
				return outcome{state: TaskFault, params: p, fault: &Fault{Code: FaultCodeInvalidArguments, Message: "diagnostic results: " + err.Error()}}
			}
			if state != "Complete" && state != "Completed" {
				return outcome{state: TaskFault, params: p, result: res, fault: &Fault{Code: FaultCodeInternal, Message: "diagnostic ended in state " + state}}
			}
			return outcome{state: TaskDone, params: p, result: res}
		}
		return outcome{state: TaskDone, params: p, result: p}
	case *cwmp.SetParameterValuesResponse:
		if t.Kind.IsDiagnostics() {
			return outcome{state: TaskRunning, phase: PhaseWaiting}
		}
		var a SetValuesArgs
		_ = json.Unmarshal(t.Args, &a)
		p := Params{}
		for _, v := range a.Values {
			p[v.Name] = ParamValue{Value: v.Value, Type: v.Type}
		}
		return outcome{state: TaskDone, params: p, result: map[string]int32{"status": m.Status}}
	case *cwmp.GetParameterNamesResponse:
		type info struct {
			Name     string `json:"name"`
			Writable bool   `json:"writable"`
		}
		out := make([]info, 0, len(m.ParameterList))
		for _, p := range m.ParameterList {
			out = append(out, info{p.Name, p.Writable})
		}
		return outcome{state: TaskDone, result: out}
	case *cwmp.GetParameterAttributesResponse:
		type attr struct {
			Name         string   `json:"name"`
			Notification int32    `json:"notification"`
			AccessList   []string `json:"accessList"`
		}
		out := make([]attr, 0, len(m.ParameterList))
		for _, p := range m.ParameterList {
			out = append(out, attr{p.Name, p.Notification, p.AccessList})
		}
		return outcome{state: TaskDone, result: out}
	case *cwmp.AddObjectResponse:
		return outcome{state: TaskDone, result: map[string]any{"instanceNumber": m.InstanceNumber, "status": m.Status}}
	case *cwmp.DeleteObjectResponse:
		return outcome{state: TaskDone, result: map[string]any{"status": m.Status}}
	case *cwmp.DownloadResponse:
		return transferOutcome(m.Status, m.StartTime, m.CompleteTime)
	case *cwmp.UploadResponse:
		return transferOutcome(m.Status, m.StartTime, m.CompleteTime)
	default: // Reboot, FactoryReset, ScheduleInform, SetParameterAttributes: no arguments
		return outcome{state: TaskDone, result: map[string]bool{"accepted": true}}
	}
}

func transferOutcome(status int32, start, complete time.Time) outcome {
	if status == 1 {
		// The transfer runs after the session; TransferComplete ends it.
		return outcome{state: TaskRunning, phase: PhaseTransfer}
	}
	return outcome{state: TaskDone, result: transferResult(start, complete, nil)}
}

func transferResult(start, complete time.Time, f *cwmp.FaultStruct) map[string]any {
	r := map[string]any{"startTime": start.UTC().Format(time.RFC3339), "completeTime": complete.UTC().Format(time.RFC3339)}
	if f != nil && f.FaultCode != 0 {
		r["faultCode"], r["faultString"] = int(f.FaultCode), f.FaultString
	}
	return r
}

func faultOf(f *cwmp.Fault) *Fault {
	out := &Fault{Code: int(f.FaultCode), Message: f.FaultString}
	if f.FaultCode == 0 {
		// A plain SOAP fault carries no CWMP code; 0 is none.
		out.Code = FaultCodeInvalidArguments
		if out.Message == "" {
			out.Message = "the CPE answered with a SOAP fault without a CWMP fault code"
		}
	}
	if len(f.SetParameterValuesFaults) > 0 {
		type spvFault struct {
			Name    string `json:"parameterName"`
			Code    int    `json:"faultCode"`
			Message string `json:"faultString"`
		}
		list := make([]spvFault, 0, len(f.SetParameterValuesFaults))
		for _, e := range f.SetParameterValuesFaults {
			list = append(list, spvFault{e.ParameterName, int(e.FaultCode), e.FaultString})
		}
		out.Detail, _ = json.Marshal(list)
	}
	return out
}

func paramsOf(list []cwmp.ParameterValueStruct) Params {
	p := make(Params, len(list))
	for _, v := range list {
		p[v.Name] = ParamValue{Value: v.Value.Text, Type: v.Value.Type}
	}
	return p
}
