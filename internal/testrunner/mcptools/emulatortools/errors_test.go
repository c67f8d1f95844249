package emulatortools

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"cpesuite/internal/acs/acstest"
	"cpesuite/internal/platform/logx"
	"cpesuite/internal/testutil"
)

// TestToolErrors: bad arguments and refusals of the emulator or the ACS are
// tool errors whose text starts with a code and says what is wrong.
func TestToolErrors(t *testing.T) {
	r := newRig(t)
	cs := connectInMemory(t, r.srv)
	ok(t, cs, "start_device", map[string]any{"serial": "ERR1"}, nil)
	ok(t, cs, "acs_find_device", map[string]any{"serial": "ERR1", "wait_seconds": 30}, nil)

	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
		want []string
	}{
		// Schema checks done by the SDK before the tool runs.
		{"missing serial", "start_device", map[string]any{}, []string{"missing properties", "serial"}},
		{"missing name", "get_parameter", map[string]any{"serial": "ERR1"}, []string{"missing properties", "name"}},
		{"unknown argument", "get_parameter", map[string]any{"serial": "ERR1", "name": "Device.DeviceInfo.UpTime", "serail": "x"}, []string{"additional properties", "serail"}},
		{"wrong type", "read_log", map[string]any{"serial": "ERR1", "lines": "many"}, []string{"lines"}},

		// The tools' own checks.
		{"blank serial", "device_status", map[string]any{"serial": "  "}, []string{"INVALID_ARGUMENT:", "serial is required"}},
		{"bad serial", "start_device", map[string]any{"serial": "no spaces"}, []string{"INVALID_ARGUMENT:", `serial "no spaces"`}},
		{"tree path", "start_device", map[string]any{"serial": "ERR2", "tree_file": "../etc/x.xml"}, []string{"INVALID_ARGUMENT:", "not a path"}},
		{"bad acs url", "start_device", map[string]any{"serial": "ERR2", "acs_url": "ftp://acs"}, []string{"INVALID_ARGUMENT:", "acs_url"}},
		{"object path", "get_parameter", map[string]any{"serial": "ERR1", "name": "Device.DeviceInfo."}, []string{"INVALID_ARGUMENT:", "object path"}},
		{"bad characters", "get_parameter", map[string]any{"serial": "ERR1", "name": "Device.<x>"}, []string{"INVALID_ARGUMENT:", "not allowed"}},
		{"value not scalar", "set_parameter", map[string]any{"serial": "ERR1", "name": "Device.DeviceInfo.ProvisioningCode", "value": []int{1}}, []string{"INVALID_ARGUMENT:", "string, number or boolean"}},
		{"unknown event", "invoke_event", map[string]any{"serial": "ERR1", "event": "3 NOPE"}, []string{"INVALID_ARGUMENT:", "2 PERIODIC"}},
		{"log lines", "read_log", map[string]any{"serial": "ERR1", "lines": 100000}, []string{"INVALID_ARGUMENT:", "lines must be from 1 to 5000"}},
		{"params limit", "get_parameters", map[string]any{"serial": "ERR1", "prefix": "Device.", "limit": -1}, []string{"INVALID_ARGUMENT:", "limit"}},
		{"find wait", "acs_find_device", map[string]any{"serial": "ERR1", "wait_seconds": 121}, []string{"INVALID_ARGUMENT:", "wait_seconds must be from 0 to 120"}},
		{"find since", "acs_find_device", map[string]any{"serial": "ERR1", "informed_after": "yesterday"}, []string{"INVALID_ARGUMENT:", "RFC 3339"}},
		{"no device ref", "acs_get_device", map[string]any{}, []string{"INVALID_ARGUMENT:", "serial or device_id is required"}},
		{"two device refs", "acs_get_device", map[string]any{"serial": "ERR1", "device_id": 1}, []string{"INVALID_ARGUMENT:", "not both"}},
		{"unknown kind", "acs_queue_task", map[string]any{"serial": "ERR1", "kind": "Explode"}, []string{"INVALID_ARGUMENT:", `kind "Explode"`, "SetParameterValues"}},
		{"spv without values", "acs_queue_task", map[string]any{"serial": "ERR1", "kind": "SetParameterValues"}, []string{"INVALID_ARGUMENT:", "values"}},
		{"field of another kind", "acs_queue_task", map[string]any{"serial": "ERR1", "kind": "Reboot", "names": []string{"Device."}}, []string{"INVALID_ARGUMENT:", "Reboot does not take names"}},
		{"args and fields", "acs_queue_task", map[string]any{"serial": "ERR1", "kind": "Reboot", "command_key": "a", "args": map[string]any{}}, []string{"INVALID_ARGUMENT:", "not both"}},
		{"args checked by the ACS rules", "acs_queue_task", map[string]any{"serial": "ERR1", "kind": "Download", "args": map[string]any{"fileType": "1 Firmware Upgrade Image"}}, []string{"INVALID_ARGUMENT:", "url is required"}},
		{"download needs args", "acs_queue_task", map[string]any{"serial": "ERR1", "kind": "Download"}, []string{"INVALID_ARGUMENT:", "args"}},
		{"queue wait", "acs_queue_task", map[string]any{"serial": "ERR1", "kind": "Reboot", "wait_seconds": 500}, []string{"INVALID_ARGUMENT:", "wait_seconds"}},
		{"bad xsd type", "acs_queue_task", map[string]any{"serial": "ERR1", "kind": "SetParameterValues", "values": []map[string]any{{"name": "Device.DeviceInfo.ProvisioningCode", "value": "x", "type": "float"}}}, []string{"INVALID_ARGUMENT:", "xsd:float"}},
		{"no task ref", "acs_get_task", map[string]any{}, []string{"INVALID_ARGUMENT:", "task_id or transaction_id is required"}},

		// Unknown things, as the emulator and the ACS report them.
		{"unknown serial", "get_parameter", map[string]any{"serial": "NOSUCH", "name": "Device.DeviceInfo.UpTime"}, []string{"NOT_FOUND:", "no running device with serial NOSUCH"}},
		{"unknown parameter", "get_parameter", map[string]any{"serial": "ERR1", "name": "Device.DeviceInfo.NoSuch"}, []string{"NOT_FOUND:", "Device.DeviceInfo.NoSuch"}},
		{"unknown prefix", "get_parameters", map[string]any{"serial": "ERR1", "prefix": "Device.NoSuch."}, []string{"NOT_FOUND:", "Device.NoSuch."}},
		{"unknown parameter set", "set_parameter", map[string]any{"serial": "ERR1", "name": "Device.NoSuch.X", "value": 1}, []string{"NOT_FOUND:", "Device.NoSuch.X"}},
		{"unknown tree", "start_device", map[string]any{"serial": "ERR2", "tree_file": "nosuch.xml"}, []string{"NOT_FOUND:", "nosuch.xml"}},
		{"stop unknown", "stop_device", map[string]any{"serial": "NOSUCH"}, []string{"NOT_FOUND:", "NOSUCH"}},
		{"log unknown", "read_log", map[string]any{"serial": "NOSUCH"}, []string{"NOT_FOUND:", "no log for serial NOSUCH"}},
		{"event unknown serial", "invoke_event", map[string]any{"serial": "NOSUCH", "event": "2"}, []string{"NOT_FOUND:", "NOSUCH"}},
		{"never informed", "acs_find_device", map[string]any{"serial": "NOSUCH"}, []string{"NOT_FOUND:", "CPE NOSUCH has not informed the ACS"}},
		{"not since", "acs_find_device", map[string]any{"serial": "ERR1", "informed_after": "2999-01-01T00:00:00Z"}, []string{"NOT_FOUND:", "since 2999-01-01T00:00:00Z"}},
		{"acs unknown serial", "acs_get_device", map[string]any{"serial": "NOSUCH"}, []string{"NOT_FOUND:", "no CPE with serial NOSUCH"}},
		{"acs unknown id", "acs_get_device", map[string]any{"device_id": 999999}, []string{"NOT_FOUND:", "ACS (HTTP 404)"}},
		{"queue unknown serial", "acs_queue_task", map[string]any{"serial": "NOSUCH", "kind": "Reboot"}, []string{"NOT_FOUND:", "NOSUCH"}},
		{"unknown task", "acs_get_task", map[string]any{"task_id": 999999}, []string{"NOT_FOUND:", "task 999999"}},
		{"unknown transaction", "acs_get_task", map[string]any{"transaction_id": 999999}, []string{"NOT_FOUND:"}},
		{"running serial", "start_device", map[string]any{"serial": "ERR1"}, []string{"CONFLICT:", "already running"}},
	} {
		t.Run(tc.name, func(t *testing.T) { fails(t, cs, tc.tool, tc.args, tc.want...) })
	}
}

// TestUnreachable: an emulator or ACS that does not answer is a tool error
// naming which one and where, also after a wait.
func TestUnreachable(t *testing.T) {
	dead := "http://" + testutil.FreeAddr(t)
	srv, err := New(Config{EmulatorURL: dead, ACSURL: dead + "/acs", Log: logx.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	cs := connectInMemory(t, srv)
	for _, tc := range []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"list_devices", nil, []string{"EMULATOR_UNREACHABLE:", "TR-069 emulator at " + dead, "refused"}},
		{"start_device", map[string]any{"serial": "U1"}, []string{"EMULATOR_UNREACHABLE:"}},
		{"get_parameter", map[string]any{"serial": "U1", "name": "Device.DeviceInfo.UpTime"}, []string{"EMULATOR_UNREACHABLE:"}},
		{"read_log", map[string]any{"serial": "U1"}, []string{"EMULATOR_UNREACHABLE:"}},
		{"acs_find_device", map[string]any{"serial": "U1"}, []string{"ACS_UNREACHABLE:", "ACS management API at " + dead}},
		{"acs_find_device", map[string]any{"serial": "U1", "wait_seconds": 1}, []string{"ACS_UNREACHABLE:"}},
		{"acs_queue_task", map[string]any{"device_id": 1, "kind": "Reboot"}, []string{"ACS_UNREACHABLE:"}},
		{"acs_get_task", map[string]any{"task_id": 1}, []string{"ACS_UNREACHABLE:"}},
	} {
		t.Run(tc.tool, func(t *testing.T) { fails(t, cs, tc.tool, tc.args, tc.want...) })
	}
}

// TestPanicIsToolError: a tool that panics answers an internal tool error
// and the server keeps serving.
func TestPanicIsToolError(t *testing.T) {
	srv, err := New(Config{EmulatorURL: "http://" + testutil.FreeAddr(t), ACSURL: "http://" + testutil.FreeAddr(t), Log: logx.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	addTool(srv, toolMeta{name: "boom", description: "panics"}, func(context.Context, struct{}) (any, error) { panic("bug") })
	cs := connectInMemory(t, srv)
	r := call(t, cs, "boom", nil)
	if !r.isError || !strings.HasPrefix(r.text, "INTERNAL:") || strings.Contains(r.text, "bug") {
		t.Fatalf("panic answered %+v, want an internal error without the panic text", r)
	}
	fails(t, cs, "list_devices", nil, "EMULATOR_UNREACHABLE:")
}

// TestFindWaitEndsWithTheCall: a client that gives up on acs_find_device
// ends the server's polling too, over both transports.
func TestFindWaitEndsWithTheCall(t *testing.T) {
	a := acstest.Start(t, nil)
	for _, tc := range []struct {
		name    string
		connect func(*testing.T, *Server) *mcp.ClientSession
	}{{"in-memory", connectInMemory}, {"streamable-http", connectHTTP}} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &testutil.SyncBuffer{}
			polls := &countingTransport{next: http.DefaultTransport}
			srv, err := New(Config{EmulatorURL: "http://" + testutil.FreeAddr(t), ACSURL: a.APIURL,
				HTTPClient: &http.Client{Transport: polls},
				Log:        slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			if err != nil {
				t.Fatal(err)
			}
			cs := tc.connect(t, srv)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "acs_find_device", Arguments: map[string]any{"serial": "NEVER", "wait_seconds": 120}})
				done <- err
			}()
			// Cancel once the server is polling, not before.
			testutil.Eventually(t, testutil.MinDeadline, "the tool polling the ACS", func() bool { return polls.n.Load() >= 2 })
			cancel()
			if err := <-done; err == nil {
				t.Fatal("the cancelled call succeeded")
			}
			testutil.Eventually(t, testutil.MinDeadline, "the server's wait to end", func() bool {
				return strings.Contains(logs.String(), "code=CANCELLED")
			})
			// The session outlives the cancelled call.
			fails(t, cs, "list_devices", nil, "EMULATOR_UNREACHABLE:")
		})
	}
}

// countingTransport counts the requests the tool server sends.
type countingTransport struct {
	next http.RoundTripper
	n    atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}
