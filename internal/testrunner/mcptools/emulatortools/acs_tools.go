package emulatortools

import (
	"context"
	"slices"
	"strings"
	"time"

	"cpesuite/internal/acs"
	"cpesuite/internal/acs/acsclient"
	"cpesuite/internal/platform/apperr"
)

// pollInterval is how often acs_find_device looks again while it waits.
const pollInterval = 250 * time.Millisecond

// maxWaitSeconds is the ACS's own ceiling on an enqueue wait, used for the
// find wait too.
const maxWaitSeconds = int(acs.MaxWait / time.Second)

type findDeviceInput struct {
	Serial        string `json:"serial" jsonschema:"the CPE's serial number as it informs the ACS"`
	WaitSeconds   int    `json:"wait_seconds,omitempty" jsonschema:"wait up to this many seconds (0 to 120, default 0) for the CPE's Inform instead of failing at once"`
	InformedAfter string `json:"informed_after,omitempty" jsonschema:"RFC 3339 time (e.g. start_device's startedAt): only an Inform at or after it counts, so an earlier run's record does not; compared to the second"`
}

type deviceRefInput struct {
	Serial          string `json:"serial,omitempty" jsonschema:"the CPE's serial number (give serial or device_id)"`
	DeviceID        int64  `json:"device_id,omitempty" jsonschema:"the ACS's device id (give serial or device_id)"`
	ParameterPrefix string `json:"parameter_prefix,omitempty" jsonschema:"only cached parameters whose names start with this, e.g. Device.DeviceInfo."`
}

type getTaskInput struct {
	TaskID        int64 `json:"task_id,omitempty" jsonschema:"task id from acs_queue_task (give task_id or transaction_id)"`
	TransactionID int64 `json:"transaction_id,omitempty" jsonschema:"transaction id from acs_queue_task (give task_id or transaction_id)"`
}

func (s *Server) registerACSTools() {
	addTool(s, toolMeta{name: "acs_find_device", title: "Find a CPE in the ACS", readOnly: true,
		description: "Find the CPE with this serial in the ACS registry; with wait_seconds, poll until it has informed " +
			"(the way to wait for a started CPE's first Inform). Not found is an error."}, s.findDevice)
	addTool(s, toolMeta{name: "acs_get_device", title: "Read a CPE's ACS record", readOnly: true,
		description: "The ACS's record of a CPE: identity, last Inform and events, online flag, the parameter values the ACS " +
			"has cached and the open (pending or running) tasks."}, s.getDevice)
	addTool(s, toolMeta{name: "acs_queue_task", title: "Queue a task in the ACS", destructive: true,
		description: "Queue one task for a CPE in the ACS and optionally wait for it. kind is one of " + kindList() +
			", or ConnectionRequest to only wake the CPE. Arguments by kind: SetParameterValues: values (name, value, " +
			"optional xsd type; a missing type is taken from the ACS's cache, else xsd:string), parameter_key; " +
			"GetParameterValues and GetParameterAttributes: names; GetParameterNames: path, next_level; AddObject and " +
			"DeleteObject: object_name (ending in a dot), parameter_key; Reboot: command_key; ScheduleInform: " +
			"delay_seconds, command_key; FactoryReset: none; Download, Upload, SetParameterAttributes and the " +
			"diagnostics: args, the ACS's argument object for that kind (args works for every kind instead of the " +
			"fields). The answer says whether the task finished within wait_seconds and its state (done or fault, " +
			"with the CPE's fault)."}, s.queueTask)
	addTool(s, toolMeta{name: "acs_get_task", title: "Read a task or transaction", readOnly: true,
		description: "A task (state pending, running, done or fault; result or fault) or a whole transaction by id."}, s.getTask)
}

func kindList() string {
	names := make([]string, len(acs.TaskKinds))
	for i, k := range acs.TaskKinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// informedDevices lists the devices with serial that have informed (at or
// after after, when given), the latest Inform first.
func (s *Server) informedDevices(ctx context.Context, serial string, after time.Time) ([]acs.Device, error) {
	page, err := s.acs.Devices(ctx, acsclient.DeviceQuery{Serial: serial, PageSize: 100})
	if err != nil {
		return nil, s.acsError(ctx, err)
	}
	var out []acs.Device
	for _, d := range page.Items {
		if d.LastInformAt != nil && !d.LastInformAt.Before(after) {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b acs.Device) int { return b.LastInformAt.Compare(*a.LastInformAt) })
	return out, nil
}

type findAnswer struct {
	Found    bool       `json:"found"`
	Device   acs.Device `json:"device"`
	Matches  int        `json:"matches"`
	WaitedMs int64      `json:"waitedMs"`
}

func (s *Server) findDevice(ctx context.Context, in findDeviceInput) (any, error) {
	serial, err := acsSerial(in.Serial)
	if err != nil {
		return nil, err
	}
	wait, err := waitSeconds(in.WaitSeconds, maxWaitSeconds)
	if err != nil {
		return nil, err
	}
	var after time.Time
	if v := strings.TrimSpace(in.InformedAfter); v != "" {
		if after, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return nil, invalid("informed_after %q is not an RFC 3339 time such as 2026-01-02T15:04:05Z", v)
		}
		// The ACS may keep times to the second only.
		after = after.Truncate(time.Second)
	}
	start := s.now()
	deadline := start.Add(wait)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		list, err := s.informedDevices(ctx, serial, after)
		// While waiting, an ACS that is briefly unreachable is retried;
		// the last error is reported if the wait runs out.
		if err == nil && len(list) > 0 {
			return findAnswer{Found: true, Device: list[0], Matches: len(list), WaitedMs: s.now().Sub(start).Milliseconds()}, nil
		}
		if err != nil && apperr.Status(err) < 500 {
			return nil, err // refused, not failing: asking again changes nothing
		}
		if !s.now().Before(deadline) {
			if err != nil {
				return nil, err
			}
			what := "has not informed the ACS"
			if !after.IsZero() {
				what += " since " + after.Format(time.RFC3339)
			}
			if wait > 0 {
				what += " within " + wait.String()
			}
			return nil, apperr.NotFound("NOT_FOUND", "CPE %s %s", serial, what)
		}
		select {
		case <-ctx.Done():
			return nil, apperr.Wrap(apperr.ErrUnavailable, ctx.Err(), "CANCELLED", "the call was cancelled while waiting for CPE "+serial)
		case <-tick.C:
		}
	}
}

// deviceID resolves serial or id to the ACS's device id.
func (s *Server) deviceID(ctx context.Context, serial string, id int64) (int64, error) {
	switch {
	case id < 0:
		return 0, invalid("device_id must be a positive integer, got %d", id)
	case id > 0 && strings.TrimSpace(serial) != "":
		return 0, invalid("give serial or device_id, not both")
	case id > 0:
		return id, nil
	case strings.TrimSpace(serial) == "":
		return 0, invalid("serial or device_id is required")
	}
	sn, err := acsSerial(serial)
	if err != nil {
		return 0, err
	}
	list, err := s.informedDevices(ctx, sn, time.Time{})
	if err != nil {
		return 0, err
	}
	if len(list) == 0 {
		return 0, apperr.NotFound("NOT_FOUND", "no CPE with serial %s has informed the ACS (acs_find_device with wait_seconds waits for it)", sn)
	}
	return list[0].ID, nil
}

type deviceAnswer struct {
	acs.DeviceDetail
	ParameterCount int `json:"parameterCount"`
}

func (s *Server) getDevice(ctx context.Context, in deviceRefInput) (any, error) {
	id, err := s.deviceID(ctx, in.Serial, in.DeviceID)
	if err != nil {
		return nil, err
	}
	prefix := ""
	if strings.TrimSpace(in.ParameterPrefix) != "" {
		if prefix, err = paramName("parameter_prefix", in.ParameterPrefix, true); err != nil {
			return nil, err
		}
	}
	d, err := s.acs.Device(ctx, id)
	if err != nil {
		return nil, s.acsError(ctx, err)
	}
	for name := range d.Parameters {
		if !strings.HasPrefix(name, prefix) {
			delete(d.Parameters, name)
		}
	}
	if d.Parameters == nil {
		d.Parameters = acs.Params{}
	}
	if d.OpenTasks == nil {
		d.OpenTasks = []acs.Task{}
	}
	return deviceAnswer{DeviceDetail: d, ParameterCount: len(d.Parameters)}, nil
}

type taskAnswer struct {
	Finished bool     `json:"finished"`
	Task     acs.Task `json:"task"`
}

type transactionAnswer struct {
	Finished    bool            `json:"finished"`
	Transaction acs.Transaction `json:"transaction"`
}

func (s *Server) getTask(ctx context.Context, in getTaskInput) (any, error) {
	switch {
	case in.TaskID < 0 || in.TransactionID < 0:
		return nil, invalid("ids must be positive integers")
	case in.TaskID > 0 && in.TransactionID > 0:
		return nil, invalid("give task_id or transaction_id, not both")
	case in.TaskID > 0:
		t, err := s.acs.Task(ctx, in.TaskID)
		if err != nil {
			return nil, s.acsError(ctx, err)
		}
		return taskAnswer{Finished: !t.Open(), Task: t}, nil
	case in.TransactionID > 0:
		t, err := s.acs.Transaction(ctx, in.TransactionID)
		if err != nil {
			return nil, s.acsError(ctx, err)
		}
		return transactionAnswer{Finished: t.State != acs.TaskPending, Transaction: t}, nil
	}
	return nil, invalid("task_id or transaction_id is required")
}
