package cpe

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"cpesuite/internal/cwmp"
	"cpesuite/internal/tr069emu/filexfer"
	"cpesuite/internal/tr069emu/tr143"
	"cpesuite/internal/tr069emu/tree"
)

// sleep waits d or until ctx ends, reporting whether it waited in full.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// goTransfer performs a Download or Upload after the session that asked
// for it, then owes the ACS a TransferComplete (7 TRANSFER COMPLETE and
// "M Download" / "M Upload" with the CommandKey).
func (d *Device) goTransfer(ctx context.Context, dl *cwmp.Download, up *cwmp.Upload) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		s := d.env.Settings()
		tc := &cwmp.TransferComplete{StartTime: time.Now().UTC()}
		var mEvent string
		if dl != nil {
			tc.CommandKey, mEvent = dl.CommandKey, cwmp.EventMDownload
			if !sleep(ctx, time.Duration(dl.DelaySeconds)*time.Second) {
				return
			}
			tc.StartTime = time.Now().UTC()
			if s.TransferEmulation {
				if !sleep(ctx, s.TransferDelays[0]) {
					return
				}
			} else {
				res := filexfer.Fetch(ctx, dl.URL, dl.Username, dl.Password, dl.FileSize, 0)
				tc.FaultStruct = res.Fault
				d.log.Info("download finished", "url", redactURL(dl.URL), "bytes", res.Bytes, "fault", res.Fault.FaultCode)
			}
		} else {
			tc.CommandKey, mEvent = up.CommandKey, cwmp.EventMUpload
			if !sleep(ctx, time.Duration(up.DelaySeconds)*time.Second) {
				return
			}
			tc.StartTime = time.Now().UTC()
			if s.TransferEmulation {
				if !sleep(ctx, s.TransferDelays[1]) {
					return
				}
			} else {
				res := filexfer.Send(ctx, up.URL, up.Username, up.Password, d.uploadBody(up.FileType))
				tc.FaultStruct = res.Fault
				d.log.Info("upload finished", "url", redactURL(up.URL), "bytes", res.Bytes, "fault", res.Fault.FaultCode)
			}
		}
		if ctx.Err() != nil {
			return
		}
		tc.CompleteTime = time.Now().UTC()
		d.mu.Lock()
		d.lastCommand = tc.CommandKey
		d.requests = append(d.requests, tc)
		d.addEventLocked(cwmp.EventStruct{EventCode: cwmp.EventTransferComplete})
		d.addEventLocked(cwmp.EventStruct{EventCode: mEvent, CommandKey: tc.CommandKey})
		d.kickLocked()
		d.mu.Unlock()
	}()
}

// uploadBody is what the CPE uploads: its configuration (every parameter)
// for configuration file types, its recent log otherwise.
func (d *Device) uploadBody(fileType string) []byte {
	var b strings.Builder
	if strings.HasPrefix(fileType, "2 ") || strings.Contains(strings.ToLower(fileType), "log") {
		fmt.Fprintf(&b, "log of %s at %s\n", d.serial, time.Now().UTC().Format(time.RFC3339))
		return []byte(b.String())
	}
	for _, p := range d.Tree().List("") {
		fmt.Fprintf(&b, "%s=%s\n", p.Name, p.Value)
	}
	return []byte(b.String())
}

// redactURL drops credentials from a URL before it is logged.
func redactURL(s string) string {
	if i := strings.Index(s, "@"); i >= 0 {
		if j := strings.Index(s, "://"); j >= 0 && j < i {
			return s[:j+3] + "***@" + s[i+1:]
		}
	}
	return s
}

// goDiagnostic runs a TR-143 diagnostic after the session that requested
// it, writes the results into the tree and informs 8 DIAGNOSTICS COMPLETE.
func (d *Device) goDiagnostic(ctx context.Context, t *tree.Tree, kind tr143.Kind, model string) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		// The diagnostic's traffic crosses the WAN: its counters show it.
		opt := tr143.Options{Timeout: d.env.DiagTimeout, OnBytes: d.countWAN}
		if opt.Timeout <= 0 {
			opt.Timeout = 60 * time.Second
		}
		if kind != tr143.IPPing && d.SpeedDelay() {
			opt.SpeedDelay = d.env.Settings().SpeedDelay
		}
		get := func(n string) string { p, _ := t.Get(n); return p.Value }
		obj := tr143.Object(model, kind)
		d.log.Info("diagnostic started", "object", obj)
		res := tr143.Run(ctx, model, kind, get, opt)
		if ctx.Err() != nil {
			return
		}
		writeResults(t, obj, res)
		d.log.Info("diagnostic complete", "object", obj, "state", res[obj+"DiagnosticsState"])
		d.Trigger(cwmp.EventStruct{EventCode: cwmp.EventDiagnosticsComplete})
	}()
}

// writeResults stores diagnostic results, creating PerConnectionResult
// instances as needed and dropping those of an earlier run.
func writeResults(t *tree.Tree, obj string, res map[string]string) {
	table := obj + "PerConnectionResult."
	for _, n := range t.Match(table + "{i}.*") {
		inst := n[:len(table)+strings.IndexByte(n[len(table):], '.')+1]
		_ = t.DeleteObject(inst)
	}
	want := 0
	for n := range res {
		if rest, ok := strings.CutPrefix(n, table); ok {
			idx, _, _ := strings.Cut(rest, ".")
			if i, err := strconv.Atoi(idx); err == nil && i > want {
				want = i
			}
		}
	}
	for range want {
		if _, err := t.AddObject(table); err != nil {
			break
		}
	}
	var sets []tree.Set
	for n, v := range res {
		if _, ok := t.Get(n); ok {
			sets = append(sets, tree.Set{Name: n, Value: v})
		}
	}
	if _, err := t.SetValues(sets, tree.SetOptions{}); err != nil {
		// One bad value must not lose the rest: write them one by one.
		for _, s := range sets {
			_, _ = t.SetValues([]tree.Set{s}, tree.SetOptions{})
		}
	}
}

// ErrInSession is returned by Invoke while a session is open.
var ErrInSession = errors.New("device is in a CWMP session")

// ErrUnknownEvent is an event name outside the invoke table.
var ErrUnknownEvent = errors.New("unknown event name")

// InvokeEvents maps the API's case-sensitive event names to their codes.
var InvokeEvents = map[string]string{
	"BootStrap":             cwmp.EventBootstrap,
	"Boot":                  cwmp.EventBoot,
	"Periodic":              cwmp.EventPeriodic,
	"ValueChange":           cwmp.EventValueChange,
	"ConnectionRequest":     cwmp.EventConnectionRequest,
	"TransferComplete":      cwmp.EventTransferComplete,
	"Diagnostics":           cwmp.EventDiagnosticsComplete,
	"DUStateChangeComplete": cwmp.EventDUStateChangeComplete,
}

// Invoke starts a session with the named event. TransferComplete also
// sends a TransferComplete for the last transfer; DUStateChangeComplete
// reports the outcome of the pending ChangeDUState (the only way it is
// reported, as the emulator leaves deployment units to the operator).
func (d *Device) Invoke(name string) error {
	code, ok := InvokeEvents[name]
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownEvent, name)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inSession {
		return ErrInSession
	}
	now := time.Now().UTC()
	switch code {
	case cwmp.EventTransferComplete:
		d.requests = append(d.requests, &cwmp.TransferComplete{CommandKey: d.lastCommand, StartTime: now, CompleteTime: now})
	case cwmp.EventDUStateChangeComplete:
		dsc := &cwmp.DUStateChangeComplete{}
		if du := d.pendingDU; du != nil {
			dsc.CommandKey = du.CommandKey
			for _, op := range du.Operations {
				dsc.Results = append(dsc.Results, duResult(op, now))
			}
			d.pendingDU = nil
		}
		d.requests = append(d.requests, dsc)
	}
	d.addEventLocked(cwmp.EventStruct{EventCode: code})
	d.kickLocked()
	return nil
}

func duResult(op cwmp.Operation, now time.Time) cwmp.OpResult {
	r := cwmp.OpResult{Resolved: true, StartTime: now, CompleteTime: now}
	switch op := op.(type) {
	case cwmp.InstallOp:
		r.UUID, r.CurrentState, r.DeploymentUnitRef = op.UUID, "Installed", "Device.SoftwareModules.DeploymentUnit.1"
	case cwmp.UpdateOp:
		r.UUID, r.Version, r.CurrentState = op.UUID, op.Version, "Installed"
	case cwmp.UninstallOp:
		r.UUID, r.Version, r.CurrentState = op.UUID, op.Version, "Uninstalled"
	}
	return r
}

// ResetWiFi picks a new channel and signal-to-noise ratio on every radio
// and returns how many parameters it drew (a VALUE CHANGE follows where
// notification is active and a value changed).
func (d *Device) ResetWiFi() int {
	t := d.Tree()
	root := t.Template().Root()
	var patterns []string
	if root == "Device." {
		patterns = []string{"Device.WiFi.Radio.{i}.Channel", "Device.WiFi.Radio.{i}.X_CPESUITE_SNR"}
	} else {
		patterns = []string{root + "LANDevice.{i}.WLANConfiguration.{i}.Channel", root + "LANDevice.{i}.WLANConfiguration.{i}.X_CPESUITE_SNR"}
	}
	var sets []tree.Set
	for _, pat := range patterns {
		for _, n := range t.Match(pat) {
			v := strconv.Itoa(10 + rand.IntN(36)) // SNR 10..45 dB
			if strings.HasSuffix(n, ".Channel") {
				v = strconv.Itoa(channelFor(t, n))
			}
			sets = append(sets, tree.Set{Name: n, Value: v})
		}
	}
	changes, err := t.SetValues(sets, tree.SetOptions{})
	if err != nil {
		d.log.Warn("resetting WiFi", "err", err)
		return 0
	}
	d.log.Info("WiFi reset", "changes", len(changes))
	d.Notify(changes)
	return len(sets)
}

// channelFor draws a channel valid for the radio's band.
func channelFor(t *tree.Tree, channelParam string) int {
	parent := strings.TrimSuffix(channelParam, "Channel")
	band := ""
	for _, n := range []string{"OperatingFrequencyBand", "X_CPESUITE_Band"} {
		if p, ok := t.Get(parent + n); ok {
			band = p.Value
		}
	}
	if strings.HasPrefix(band, "5") {
		five := []int{36, 40, 44, 48, 52, 56, 60, 64, 100, 104, 108, 112, 116, 132, 136, 140, 149, 153, 157, 161}
		return five[rand.IntN(len(five))]
	}
	return 1 + rand.IntN(13)
}
