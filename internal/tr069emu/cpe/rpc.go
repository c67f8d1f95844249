package cpe

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"cpesuite/internal/cwmp"
	"cpesuite/internal/tr069emu/tr143"
	"cpesuite/internal/tr069emu/tree"
)

// Methods is what GetRPCMethods answers: every RPC this CPE handles.
var Methods = []string{
	"GetRPCMethods", "GetParameterNames", "GetParameterValues", "SetParameterValues",
	"GetParameterAttributes", "SetParameterAttributes", "AddObject", "DeleteObject",
	"Reboot", "FactoryReset", "Download", "Upload", "ScheduleInform",
	"ChangeDUState", "GetQueuedTransfers", "GetAllQueuedTransfers",
}

// taskDelay waits the configured delay for method before it is processed;
// other devices are not held up because each device has its own runner.
func (d *Device) taskDelay(ctx context.Context, method string) error {
	delay := d.env.Settings().TaskDelays[method]
	if delay <= 0 {
		return nil
	}
	d.log.Debug("task delay", "method", method, "delay", delay.String())
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// answer processes one ACS RPC and returns the response or fault.
func (d *Device) answer(ctx context.Context, t *tree.Tree, m cwmp.Message) cwmp.Message {
	method := m.Method()
	d.log.Info("RPC received", "method", method)
	if d.env.Settings().LoadingMode {
		return cwmp.NewFault(cwmp.FaultCPERequestDenied, "loading mode: this CPE only informs")
	}
	if err := d.taskDelay(ctx, method); err != nil {
		return cwmp.NewFault(cwmp.FaultCPEInternalError, "stopped")
	}
	if s := d.env.Settings(); method == "ChangeDUState" && s.TransferEmulation && !sleep(ctx, s.TransferDelays[2]) {
		return cwmp.NewFault(cwmp.FaultCPEInternalError, "stopped")
	}
	resp := d.dispatch(t, m)
	if f, ok := resp.(*cwmp.Fault); ok {
		d.log.Warn("RPC fault", "method", method, "fault", f.Error())
	}
	return resp
}

func (d *Device) dispatch(t *tree.Tree, m cwmp.Message) cwmp.Message {
	root := t.Template().Root()
	switch m := m.(type) {
	case *cwmp.GetRPCMethods:
		return &cwmp.GetRPCMethodsResponse{MethodList: Methods}
	case *cwmp.GetParameterValues:
		params, err := t.Values(m.ParameterNames)
		if err != nil {
			return treeFault(err)
		}
		resp := &cwmp.GetParameterValuesResponse{ParameterList: make([]cwmp.ParameterValueStruct, len(params))}
		for i, p := range params {
			resp.ParameterList[i] = cwmp.ParameterValueStruct{Name: p.Name, Value: value(p)}
		}
		return resp
	case *cwmp.GetParameterNames:
		params, err := t.Names(m.ParameterPath, m.NextLevel)
		if err != nil {
			return treeFault(err)
		}
		resp := &cwmp.GetParameterNamesResponse{ParameterList: make([]cwmp.ParameterInfoStruct, len(params))}
		for i, p := range params {
			resp.ParameterList[i] = cwmp.ParameterInfoStruct{Name: p.Name, Writable: p.Writable}
		}
		return resp
	case *cwmp.SetParameterValues:
		return d.setParameterValues(t, root, m)
	case *cwmp.GetParameterAttributes:
		params, err := t.Values(m.ParameterNames)
		if err != nil {
			return treeFault(err)
		}
		resp := &cwmp.GetParameterAttributesResponse{ParameterList: make([]cwmp.ParameterAttributeStruct, len(params))}
		for i, p := range params {
			resp.ParameterList[i] = cwmp.ParameterAttributeStruct{Name: p.Name, Notification: int32(p.Notification)}
		}
		return resp
	case *cwmp.SetParameterAttributes:
		// Check every name first so the RPC applies all or nothing.
		for _, a := range m.ParameterList {
			if _, err := t.Values([]string{a.Name}); err != nil {
				return treeFault(err)
			}
			if a.NotificationChange && (a.Notification < 0 || a.Notification > 2) {
				return cwmp.NewFault(cwmp.FaultInvalidParameterValue, "notification must be 0, 1 or 2")
			}
		}
		for _, a := range m.ParameterList {
			if a.NotificationChange {
				if err := t.SetNotification(a.Name, int(a.Notification)); err != nil {
					return treeFault(err)
				}
			}
		}
		return &cwmp.SetParameterAttributesResponse{}
	case *cwmp.AddObject:
		n, err := t.AddObject(m.ObjectName)
		if err != nil {
			return treeFault(err)
		}
		setParameterKey(t, root, m.ParameterKey)
		return &cwmp.AddObjectResponse{InstanceNumber: n, Status: 0}
	case *cwmp.DeleteObject:
		if err := t.DeleteObject(m.ObjectName); err != nil {
			return treeFault(err)
		}
		setParameterKey(t, root, m.ParameterKey)
		return &cwmp.DeleteObjectResponse{Status: 0}
	case *cwmp.Reboot:
		key := m.CommandKey
		d.afterSession(func(context.Context) { d.Reboot(key, true) })
		return &cwmp.RebootResponse{}
	case *cwmp.FactoryReset:
		d.afterSession(func(context.Context) { d.FactoryReset() })
		return &cwmp.FactoryResetResponse{}
	case *cwmp.ScheduleInform:
		if m.DelaySeconds == 0 {
			return cwmp.NewFault(cwmp.FaultCPEInvalidArguments, "DelaySeconds must be greater than 0")
		}
		key, delay := m.CommandKey, time.Duration(m.DelaySeconds)*time.Second
		time.AfterFunc(delay, func() {
			d.Trigger(cwmp.EventStruct{EventCode: cwmp.EventScheduled}, cwmp.EventStruct{EventCode: cwmp.EventMScheduleInform, CommandKey: key})
		})
		return &cwmp.ScheduleInformResponse{}
	case *cwmp.Download:
		if err := checkTransferURL(m.URL); err != nil {
			return cwmp.NewFault(cwmp.FaultUnsupportedProtocol, err.Error())
		}
		dl := *m
		d.afterSession(func(ctx context.Context) { d.goTransfer(ctx, &dl, nil) })
		return &cwmp.DownloadResponse{Status: 1}
	case *cwmp.Upload:
		if err := checkTransferURL(m.URL); err != nil {
			return cwmp.NewFault(cwmp.FaultUnsupportedProtocol, err.Error())
		}
		up := *m
		d.afterSession(func(ctx context.Context) { d.goTransfer(ctx, nil, &up) })
		return &cwmp.UploadResponse{Status: 1}
	case *cwmp.ChangeDUState:
		if len(m.Operations) == 0 {
			return cwmp.NewFault(cwmp.FaultCPEInvalidArguments, "no operations")
		}
		du := *m
		d.mu.Lock()
		d.pendingDU = &du
		d.mu.Unlock()
		d.log.Info("ChangeDUState accepted; DUStateChangeComplete is sent when invoked through the API", "operations", len(du.Operations))
		return &cwmp.ChangeDUStateResponse{}
	case *cwmp.GetQueuedTransfers:
		return &cwmp.GetQueuedTransfersResponse{}
	case *cwmp.GetAllQueuedTransfers:
		return &cwmp.GetAllQueuedTransfersResponse{}
	}
	return cwmp.NewFault(cwmp.FaultCPEMethodNotSupported, "")
}

// setParameterValues applies an SPV atomically and reacts to what it set:
// a requested diagnostic, the periodic settings, the ACS URL.
func (d *Device) setParameterValues(t *tree.Tree, root string, m *cwmp.SetParameterValues) cwmp.Message {
	vals := make([]tree.Set, len(m.ParameterList))
	for i, p := range m.ParameterList {
		vals[i] = tree.Set{Name: p.Name, Value: p.Value.Text, Type: p.Value.Type}
	}
	if _, err := t.SetValues(vals, tree.SetOptions{CheckWritable: true, CheckType: true}); err != nil {
		var sf *tree.SetFaults
		if errors.As(err, &sf) {
			return &cwmp.Fault{FaultCode: cwmp.FaultCPEInvalidArguments, FaultString: cwmp.FaultCPEInvalidArguments.String(), SetParameterValuesFaults: sf.Faults}
		}
		return treeFault(err)
	}
	setParameterKey(t, root, m.ParameterKey)
	periodic := false
	for _, p := range m.ParameterList {
		switch p.Name {
		case root + "ManagementServer.PeriodicInformInterval", root + "ManagementServer.PeriodicInformEnable":
			periodic = true
		case root + "ManagementServer.URL":
			if u := strings.TrimSpace(p.Value.Text); u != "" {
				d.mu.Lock()
				d.acsURL = u
				d.mu.Unlock()
			}
		}
		if kind, model, ok := tr143.KindOf(p.Name); ok && p.Value.Text == "Requested" {
			d.afterSession(func(ctx context.Context) { d.goDiagnostic(ctx, t, kind, model) })
		}
	}
	if periodic {
		d.mu.Lock()
		d.periodic = d.periodicFromTree()
		d.schedulePeriodicLocked(d.periodic)
		d.mu.Unlock()
	}
	return &cwmp.SetParameterValuesResponse{Status: 0}
}

func (d *Device) afterSession(fn func(context.Context)) {
	d.mu.Lock()
	d.after = append(d.after, fn)
	d.mu.Unlock()
}

func setParameterKey(t *tree.Tree, root, key string) {
	setPresent(t, tree.Set{Name: root + "ManagementServer.ParameterKey", Value: key})
}

// treeFault turns a tree error into the CWMP fault it carries.
func treeFault(err error) *cwmp.Fault {
	var te *tree.Error
	if errors.As(err, &te) {
		return cwmp.NewFault(te.Code, te.Error())
	}
	return cwmp.NewFault(cwmp.FaultCPEInternalError, err.Error())
}

func checkTransferURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return errors.New("URL is not an absolute URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("only http and https transfers are supported, not " + strconv.Quote(u.Scheme))
	}
	return nil
}
