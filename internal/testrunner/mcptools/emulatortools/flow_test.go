package emulatortools

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"cpesuite/internal/acs"
	"cpesuite/internal/testutil"
)

// TestCaseFlow is what a test case does through a worker: start a CPE,
// wait for its first Inform in the ACS, configure it through an ACS task,
// and check on the CPE that the value arrived; then the CPE-side tools.
// Both transports and both data models run it.
func TestCaseFlow(t *testing.T) {
	for _, tc := range []struct {
		name, tree, root string
		connect          func(*testing.T, *Server) *mcp.ClientSession
	}{
		{"in-memory/TR-181", "tr181-base.xml", "Device.", connectInMemory},
		{"streamable-http/TR-098", "tr098-base.xml", "InternetGatewayDevice.", connectHTTP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			cs := tc.connect(t, r.srv)
			serial := "FLOW-" + strings.TrimSuffix(tc.tree, ".xml")
			pc := tc.root + "DeviceInfo.ProvisioningCode"

			var started startAnswer
			ok(t, cs, "start_device", map[string]any{"serial": serial, "tree_file": tc.tree}, &started)
			if !started.Success || started.Serial != serial || started.ParameterFile != tc.tree || started.StartedAt.IsZero() {
				t.Fatalf("start_device answered %+v", started)
			}

			// The first Inform, waited for rather than slept on.
			var found findAnswer
			ok(t, cs, "acs_find_device", map[string]any{"serial": serial, "wait_seconds": 30,
				"informed_after": started.StartedAt.Format(time.RFC3339Nano)}, &found)
			if !found.Found || found.Device.Serial != serial || found.Device.ID == 0 || !strings.Contains(found.Device.LastEvents, "0 BOOTSTRAP") {
				t.Fatalf("acs_find_device answered %+v", found)
			}

			// SetParameterValues through the ACS, with a connection request.
			var q queueAnswer
			ok(t, cs, "acs_queue_task", map[string]any{"serial": serial, "kind": "setParameterValues",
				"values": []map[string]any{{"name": pc, "value": "PC-" + tc.root}}, "wait_seconds": 60, "label": "flow"}, &q)
			if !q.Finished || q.State != acs.TaskDone || len(q.Tasks) != 1 || q.DeviceID != found.Device.ID || q.Kind != "SetParameterValues" {
				t.Fatalf("SPV answered %+v", q)
			}
			var pv paramValue
			ok(t, cs, "get_parameter", map[string]any{"serial": serial, "name": pc}, &pv)
			if pv.Value != "PC-"+tc.root || pv.Name != pc || pv.Type != "xsd:string" {
				t.Fatalf("after SPV the CPE holds %+v", pv)
			}
			var task taskAnswer
			ok(t, cs, "acs_get_task", map[string]any{"task_id": q.Tasks[0].ID}, &task)
			if !task.Finished || task.Task.State != acs.TaskDone || task.Task.Kind != acs.KindSetParameterValues {
				t.Fatalf("acs_get_task answered %+v", task)
			}
			var txn transactionAnswer
			ok(t, cs, "acs_get_task", map[string]any{"transaction_id": q.TransactionID}, &txn)
			if !txn.Finished || txn.Transaction.Label != "flow" || len(txn.Transaction.Tasks) != 1 {
				t.Fatalf("transaction %+v", txn)
			}

			// GetParameterValues returns what the CPE reports, and fills the
			// ACS's cache.
			interval := tc.root + "ManagementServer.PeriodicInformInterval"
			ok(t, cs, "acs_queue_task", map[string]any{"serial": serial, "kind": "get_parameter_values",
				"names": []string{tc.root + "DeviceInfo.SerialNumber", interval}, "wait_seconds": 60}, &q)
			if q.State != acs.TaskDone || !strings.Contains(string(q.Tasks[0].Result), serial) {
				t.Fatalf("GPV: %+v %s", q, q.Tasks[0].Result)
			}

			// A number for an unsignedInt parameter takes the type the ACS
			// has cached from that GPV.
			ok(t, cs, "acs_queue_task", map[string]any{"device_id": found.Device.ID, "kind": "SetParameterValues",
				"values": []map[string]any{{"name": interval, "value": 1234}}, "wait_seconds": 60}, &q)
			if q.State != acs.TaskDone {
				t.Fatalf("SPV of an unsignedInt: %+v", q)
			}
			ok(t, cs, "get_parameter", map[string]any{"serial": serial, "name": interval}, &pv)
			if pv.Value != "1234" || pv.Type != "xsd:unsignedInt" {
				t.Fatalf("interval after SPV: %+v", pv)
			}

			// A CPE fault is an answer, not a tool error: the case checks it.
			text := ok(t, cs, "acs_queue_task", map[string]any{"serial": serial, "kind": "SetParameterValues",
				"values": []map[string]any{{"name": tc.root + "DeviceInfo.Manufacturer", "value": "x"}}, "wait_seconds": 60}, &q)
			if !q.Finished || q.State != acs.TaskFault || q.Tasks[0].Fault == nil || !strings.Contains(text, "9008") {
				t.Fatalf("SPV of a read-only parameter: %s", text)
			}

			// The ACS's record, narrowed to DeviceInfo.
			var dev deviceAnswer
			ok(t, cs, "acs_get_device", map[string]any{"serial": serial, "parameter_prefix": tc.root + "DeviceInfo."}, &dev)
			if dev.ID != found.Device.ID || dev.ParameterCount == 0 || len(dev.OpenTasks) != 0 {
				t.Fatalf("acs_get_device: %+v", dev)
			}
			for name := range dev.Parameters {
				if !strings.HasPrefix(name, tc.root+"DeviceInfo.") {
					t.Fatalf("acs_get_device returned %s outside the prefix", name)
				}
			}

			// A CPE-side change of an actively notified parameter informs
			// the ACS with 4 VALUE CHANGE.
			var set setAnswer
			ok(t, cs, "set_parameter", map[string]any{"serial": serial, "name": pc, "value": "LOCAL-1"}, &set)
			if set.Value != "LOCAL-1" || !set.ValueChangeInform {
				t.Fatalf("set_parameter: %+v", set)
			}
			waitForEvent(t, cs, serial, "4 VALUE CHANGE")

			// An invoked event reaches the ACS; the CPE may still be in the
			// value-change session, which the tool reports as a conflict.
			testutil.Eventually(t, testutil.MinDeadline, "invoke_event accepted", func() bool {
				res := call(t, cs, "invoke_event", map[string]any{"serial": serial, "event": "2 PERIODIC"})
				if res.isError && !strings.HasPrefix(res.text, "CONFLICT:") {
					t.Fatalf("invoke_event: %s", res.text)
				}
				return !res.isError
			})
			waitForEvent(t, cs, serial, "2 PERIODIC")

			var status statusAnswer
			ok(t, cs, "device_status", map[string]any{"serial": serial}, &status)
			if !status.Running || status.Identity["SerialNumber"] != serial {
				t.Fatalf("device_status: %+v", status)
			}
			var list struct {
				Count   int              `json:"count"`
				Devices []map[string]any `json:"devices"`
			}
			ok(t, cs, "list_devices", nil, &list)
			if list.Count != 1 || list.Devices[0]["serial"] != serial {
				t.Fatalf("list_devices: %+v", list)
			}
			var params paramsAnswer
			ok(t, cs, "get_parameters", map[string]any{"serial": serial, "prefix": tc.root + "DeviceInfo."}, &params)
			if params.Truncated || params.Count != params.Total || !slices.ContainsFunc(params.Parameters, func(p paramInfo) bool {
				return p.Name == pc && p.Value == "LOCAL-1" && p.Writable
			}) {
				t.Fatalf("get_parameters: %+v", params)
			}
			ok(t, cs, "get_parameters", map[string]any{"serial": serial, "prefix": tc.root + "DeviceInfo.", "limit": 1}, &params)
			if !params.Truncated || params.Count != 1 || params.Total < 2 {
				t.Fatalf("get_parameters with limit 1: %+v", params)
			}

			log := ok(t, cs, "read_log", map[string]any{"serial": serial, "lines": 500}, nil)
			if !strings.Contains(log, "SetParameterValues") {
				t.Fatalf("read_log does not show the SetParameterValues session:\n%s", log)
			}
			if n := strings.Count(ok(t, cs, "read_log", map[string]any{"serial": serial, "lines": 3}, nil), "\n"); n != 3 {
				t.Fatalf("read_log lines=3 returned %d lines", n)
			}

			// Start again: refused while running, unless restart is asked.
			fails(t, cs, "start_device", map[string]any{"serial": serial, "tree_file": tc.tree}, "CONFLICT:", "already running")
			ok(t, cs, "start_device", map[string]any{"serial": serial, "tree_file": tc.tree, "restart": true}, &started)
			if !started.Restarted || !started.Success {
				t.Fatalf("restart: %+v", started)
			}

			ok(t, cs, "stop_device", map[string]any{"serial": serial}, nil)
			ok(t, cs, "device_status", map[string]any{"serial": serial}, &status)
			if status.Running || status.InSession {
				t.Fatalf("device_status after stop: %+v", status)
			}
			fails(t, cs, "get_parameter", map[string]any{"serial": serial, "name": pc}, "NOT_FOUND:", "no running device with serial "+serial)
		})
	}
}

// waitForEvent polls the ACS record until the device's last Inform carried
// event.
func waitForEvent(t *testing.T, cs *mcp.ClientSession, serial, event string) {
	t.Helper()
	testutil.Eventually(t, testutil.MinDeadline, event+" in the ACS", func() bool {
		var dev deviceAnswer
		ok(t, cs, "acs_get_device", map[string]any{"serial": serial}, &dev)
		return strings.Contains(dev.LastEvents, event)
	})
}
