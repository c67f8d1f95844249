package cpe

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/acs"
	"cpesuite/internal/acs/acsclient"
	"cpesuite/internal/acs/acstest"
	"cpesuite/internal/tr069emu/tr143"
	"cpesuite/internal/tr069emu/tree"
)

// These tests run the device against the real ACS (Digest authentication,
// session cookies, its own RPC scheduling): the authority on
// interoperability. Connection requests are not HTTP here, so the tests
// make them with Device.ConnectionRequest.

// acsDevice waits until the ACS knows serial and returns it.
func acsDevice(t *testing.T, a *acstest.ACS, serial string) acs.Device {
	t.Helper()
	var dev acs.Device
	eventually(t, "device "+serial+" in the ACS", func() bool {
		page, err := a.Client.Devices(context.Background(), acsclient.DeviceQuery{Serial: serial})
		if err != nil || len(page.Items) == 0 {
			return false
		}
		dev = page.Items[0]
		return true
	})
	return dev
}

// runTask enqueues one task and makes the device come for it, then waits
// for the task to end (diagnostics, transfers and reboots take further
// sessions, which the device opens by itself).
func runTask(t *testing.T, a *acstest.ACS, d *Device, devID int64, kind acs.TaskKind, args any) acs.Task {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	resp, _, err := a.Client.Enqueue(context.Background(), devID, acs.EnqueueRequest{Tasks: []acs.TaskSpec{{Kind: kind, Args: raw}}})
	if err != nil {
		t.Fatalf("enqueue %s: %v", kind, err)
	}
	var task acs.Task
	var asked time.Time
	eventually(t, string(kind)+" to finish", func() bool {
		txn, err := a.Client.Transaction(context.Background(), resp.ID)
		if err != nil || len(txn.Tasks) == 0 {
			return false
		}
		task = txn.Tasks[0]
		if task.State == acs.TaskPending && time.Since(asked) > 50*time.Millisecond {
			asked = time.Now()
			d.ConnectionRequest()
		}
		return !task.Open()
	})
	return task
}

func taskJSON(t *testing.T, task acs.Task) string {
	t.Helper()
	b, err := json.Marshal(task)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantDone(t *testing.T, task acs.Task, contains ...string) {
	t.Helper()
	s := taskJSON(t, task)
	if task.State != acs.TaskDone {
		t.Fatalf("%s: %s, want done", task.Kind, s)
	}
	for _, c := range contains {
		if !strings.Contains(string(task.Result), c) {
			t.Errorf("%s result %s lacks %s", task.Kind, task.Result, c)
		}
	}
}

func wantFault(t *testing.T, task acs.Task, code int, detail ...string) {
	t.Helper()
	s := taskJSON(t, task)
	if task.State != acs.TaskFault || task.Fault == nil || task.Fault.Code != code {
		t.Fatalf("%s: %s, want fault %d", task.Kind, s, code)
	}
	for _, c := range detail {
		if !strings.Contains(string(task.Fault.Detail), c) {
			t.Errorf("%s fault detail %s lacks %s", task.Kind, task.Fault.Detail, c)
		}
	}
}

func TestAgainstRealACS(t *testing.T) {
	t.Parallel()
	st := speedtestServer(t)
	fs := newFileServer(t)
	for _, m := range models {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			a := acstest.Start(t, nil)
			serial := "EMUACS" + strings.ReplaceAll(m.name, "-", "")
			r := m.root
			d := startDevice(t, newEnv(t, Settings{}), m.name, a.CWMPURL, Options{Serial: serial, Bootstrap: true,
				ConnReqURL: "http://127.0.0.1:9/cr/" + serial})
			dev := acsDevice(t, a, serial)
			if dev.OUI != "A1B2C3" || dev.ProductClass != "EMU-GW" || dev.DataModel != m.name || !strings.Contains(dev.LastEvents, "0 BOOTSTRAP") {
				t.Errorf("registered as %+v", dev)
			}
			if dev.ConnReqURL != "http://127.0.0.1:9/cr/"+serial {
				t.Errorf("ConnectionRequestURL %q", dev.ConnReqURL)
			}

			t.Run("GetParameterValues", func(t *testing.T) {
				wantDone(t, runTask(t, a, d, dev.ID, acs.KindGetParameterValues, acs.NamesArgs{Names: []string{r + "DeviceInfo.SerialNumber", r + "DeviceInfo."}}), serial)
				wantFault(t, runTask(t, a, d, dev.ID, acs.KindGetParameterValues, acs.NamesArgs{Names: []string{r + "Nope."}}), 9005)
			})
			t.Run("SetParameterValues", func(t *testing.T) {
				name := r + "ManagementServer.PeriodicInformInterval"
				wantDone(t, runTask(t, a, d, dev.ID, acs.KindSetParameterValues, acs.SetValuesArgs{
					Values: []acs.SetValue{{Name: name, Value: "1234", Type: "xsd:unsignedInt"}}, ParameterKey: "acs-key"}))
				if v := paramValue(t, d, name); v != "1234" {
					t.Errorf("%s = %s", name, v)
				}
				if d.Periodic() != 1234*time.Second {
					t.Errorf("periodic %v after the SPV", d.Periodic())
				}
				if v := paramValue(t, d, r+"ManagementServer.ParameterKey"); v != "acs-key" {
					t.Errorf("ParameterKey %q", v)
				}
				wantFault(t, runTask(t, a, d, dev.ID, acs.KindSetParameterValues, acs.SetValuesArgs{Values: []acs.SetValue{
					{Name: r + "NoSuch.Param", Value: "1"},
					{Name: r + "DeviceInfo.Manufacturer", Value: "x"},
					{Name: name, Value: "minus", Type: "xsd:unsignedInt"},
				}}), 9003, `"faultCode":9005`, `"faultCode":9008`, `"faultCode":9007`)
				if v := paramValue(t, d, name); v != "1234" {
					t.Errorf("a refused SPV changed %s to %s", name, v)
				}
			})
			t.Run("GetParameterNames", func(t *testing.T) {
				wantDone(t, runTask(t, a, d, dev.ID, acs.KindGetParameterNames, acs.NamesPathArgs{Path: r + "DeviceInfo.", NextLevel: true}), r+"DeviceInfo.Manufacturer")
			})
			t.Run("Attributes", func(t *testing.T) {
				name := r + "Time.NTPServer1"
				wantDone(t, runTask(t, a, d, dev.ID, acs.KindSetParameterAttributes, acs.SetAttributesArgs{Attributes: []acs.SetAttribute{
					{Name: name, NotificationChange: true, Notification: 2}}}))
				if p, _ := d.Tree().Get(name); p.Notification != 2 {
					t.Errorf("notification %d", p.Notification)
				}
				task := runTask(t, a, d, dev.ID, acs.KindGetParameterAttributes, acs.NamesArgs{Names: []string{name}})
				wantDone(t, task, `"name":"`+name+`","notification":2`)
				wantFault(t, runTask(t, a, d, dev.ID, acs.KindSetParameterAttributes, acs.SetAttributesArgs{Attributes: []acs.SetAttribute{
					{Name: r + "Time.Nope", NotificationChange: true, Notification: 1}}}), 9005)
			})
			t.Run("Objects", func(t *testing.T) {
				table := r + "IP.Interface."
				if m.name == tree.TR098 {
					table = r + "Layer3Forwarding.Forwarding."
				}
				task := runTask(t, a, d, dev.ID, acs.KindAddObject, acs.ObjectArgs{ObjectName: table, ParameterKey: "add"})
				wantDone(t, task, `"instanceNumber"`)
				var res struct {
					InstanceNumber int `json:"instanceNumber"`
				}
				_ = json.Unmarshal(task.Result, &res)
				if res.InstanceNumber < 1 {
					t.Fatalf("AddObject result %s", task.Result)
				}
				inst := table + strconv.Itoa(res.InstanceNumber) + "."
				wantDone(t, runTask(t, a, d, dev.ID, acs.KindDeleteObject, acs.ObjectArgs{ObjectName: inst, ParameterKey: "del"}))
				if v := paramValue(t, d, r+"ManagementServer.ParameterKey"); v != "del" {
					t.Errorf("ParameterKey %q", v)
				}
				wantFault(t, runTask(t, a, d, dev.ID, acs.KindDeleteObject, acs.ObjectArgs{ObjectName: inst}), 9005)
			})
			t.Run("Transfers", func(t *testing.T) {
				wantDone(t, runTask(t, a, d, dev.ID, acs.KindDownload, acs.TransferArgs{CommandKey: "acs-dl", FileType: "1 Firmware Upgrade Image", URL: fs.URL + "/fw.bin", FileSize: 4096}), "completeTime")
				wantDone(t, runTask(t, a, d, dev.ID, acs.KindUpload, acs.TransferArgs{FileType: "1 Vendor Configuration File", URL: fs.URL + "/upload?n=acs-" + m.name}), "completeTime")
				if !strings.Contains(string(fs.upload("acs-"+m.name)), "SerialNumber="+serial) {
					t.Error("uploaded configuration lacks the serial")
				}
				wantFault(t, runTask(t, a, d, dev.ID, acs.KindDownload, acs.TransferArgs{CommandKey: "acs-missing", FileType: "1 Firmware Upgrade Image", URL: fs.URL + "/missing"}), 9010)
			})
			t.Run("Diagnostics", func(t *testing.T) {
				wantDone(t, runTask(t, a, d, dev.ID, acs.KindDownloadDiagnostics, acs.DiagnosticsArgs{URL: st + "/download?size=150000"}), `"diagnosticsState":"Completed"`)
				wantDone(t, runTask(t, a, d, dev.ID, acs.KindUploadDiagnostics, acs.DiagnosticsArgs{URL: st + "/upload", TestFileLength: 50000}), `"diagnosticsState":"Completed"`)
				if s := paramValue(t, d, tr143.Object(m.name, tr143.Upload)+"DiagnosticsState"); s != "Completed" {
					t.Errorf("tree upload state %q", s)
				}
			})
			t.Run("ScheduleInform", func(t *testing.T) {
				wantDone(t, runTask(t, a, d, dev.ID, acs.KindScheduleInform, acs.ScheduleInformArgs{DelaySeconds: 1, CommandKey: "acs-si"}))
				eventually(t, "3 SCHEDULED at the ACS", func() bool {
					dd, err := a.Client.Device(context.Background(), dev.ID)
					return err == nil && strings.Contains(dd.LastEvents, "3 SCHEDULED") && strings.Contains(dd.LastEvents, "M ScheduleInform")
				})
			})
			t.Run("Reboot", func(t *testing.T) {
				wantDone(t, runTask(t, a, d, dev.ID, acs.KindReboot, acs.CommandKeyArgs{CommandKey: "acs-rb"}))
				eventually(t, "1 BOOT and M Reboot at the ACS", func() bool {
					dd, err := a.Client.Device(context.Background(), dev.ID)
					return err == nil && strings.Contains(dd.LastEvents, "1 BOOT") && strings.Contains(dd.LastEvents, "M Reboot")
				})
			})
			t.Run("FactoryReset", func(t *testing.T) {
				wantDone(t, runTask(t, a, d, dev.ID, acs.KindFactoryReset, nil))
				eventually(t, "0 BOOTSTRAP at the ACS", func() bool {
					dd, err := a.Client.Device(context.Background(), dev.ID)
					return err == nil && strings.Contains(dd.LastEvents, "0 BOOTSTRAP")
				})
				if v := paramValue(t, d, r+"ManagementServer.PeriodicInformInterval"); v != "3600" {
					t.Errorf("PeriodicInformInterval %s after the factory reset", v)
				}
			})
		})
	}
}

func TestLoadingModeAgainstRealACS(t *testing.T) {
	t.Parallel()
	a := acstest.Start(t, nil)
	d := startDevice(t, newEnv(t, Settings{LoadingMode: true}), tree.TR181, a.CWMPURL, Options{Serial: "EMUACSLOAD", Bootstrap: true})
	dev := acsDevice(t, a, "EMUACSLOAD")
	wantFault(t, runTask(t, a, d, dev.ID, acs.KindGetParameterValues, acs.NamesArgs{Names: []string{"Device.DeviceInfo.SerialNumber"}}), 9001)
}
