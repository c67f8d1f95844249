package cpe

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/cwmp"
	"cpesuite/internal/tr069emu/tree"
)

// rpcDevice starts a device of model talking to a fresh double and waits
// for its bootstrap session to end.
func rpcDevice(t *testing.T, model string, s Settings) (*acsDouble, *Device) {
	t.Helper()
	a := newDouble(t)
	serial := serialFor(t)
	d := startDevice(t, newEnv(t, s), model, a.url(serial), Options{Serial: serial, Bootstrap: true})
	a.waitSessionEnd(t, serial, 0)
	return a, d
}

func TestGetRPCMethods(t *testing.T) {
	t.Parallel()
	a, d := rpcDevice(t, tree.TR181, Settings{})
	resp := as[*cwmp.GetRPCMethodsResponse](t, a.call(t, d, &cwmp.GetRPCMethods{}))
	if !slices.Equal(resp.MethodList, Methods) {
		t.Fatalf("MethodList %v, want %v", resp.MethodList, Methods)
	}
	for _, m := range []string{"GetParameterValues", "SetParameterValues", "Download", "Upload", "ChangeDUState", "Reboot"} {
		if !slices.Contains(resp.MethodList, m) {
			t.Errorf("MethodList lacks %s", m)
		}
	}
}

func TestGetParameterValues(t *testing.T) {
	t.Parallel()
	for _, m := range models {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			a, d := rpcDevice(t, m.name, Settings{})
			r := m.root
			for _, tc := range []struct {
				name  string
				names []string
				check func(t *testing.T, list []cwmp.ParameterValueStruct)
				fault cwmp.FaultCode
			}{
				{name: "parameters", names: []string{r + "DeviceInfo.SerialNumber", r + "DeviceInfo.Manufacturer", r + "DeviceInfo.UpTime"},
					check: func(t *testing.T, list []cwmp.ParameterValueStruct) {
						if len(list) != 3 || list[0].Value.Text != d.Serial() || list[1].Value.Text != "cpesuite" {
							t.Fatalf("values %+v", list)
						}
						if list[2].Value.Type != "xsd:unsignedInt" {
							t.Errorf("UpTime type %q", list[2].Value.Type)
						}
						if _, err := strconv.ParseUint(list[2].Value.Text, 10, 32); err != nil {
							t.Errorf("UpTime %q is not a number", list[2].Value.Text)
						}
					}},
				{name: "partial path", names: []string{r + "DeviceInfo."},
					check: func(t *testing.T, list []cwmp.ParameterValueStruct) {
						if len(list) < 10 {
							t.Fatalf("only %d values below DeviceInfo.", len(list))
						}
						for _, p := range list {
							if !strings.HasPrefix(p.Name, r+"DeviceInfo.") || strings.HasSuffix(p.Name, ".") {
								t.Errorf("unexpected %q in a partial path answer", p.Name)
							}
						}
						if !slices.ContainsFunc(list, func(p cwmp.ParameterValueStruct) bool {
							return p.Name == r+"DeviceInfo.SerialNumber" && p.Value.Text == d.Serial()
						}) {
							t.Errorf("SerialNumber missing: %+v", list)
						}
					}},
				{name: "unknown parameter", names: []string{r + "DeviceInfo.NoSuchThing"}, fault: cwmp.FaultInvalidParameterName},
				{name: "unknown partial path", names: []string{r + "Nope."}, fault: cwmp.FaultInvalidParameterName},
				{name: "one unknown among known", names: []string{r + "DeviceInfo.SerialNumber", r + "Nope"}, fault: cwmp.FaultInvalidParameterName},
			} {
				t.Run(tc.name, func(t *testing.T) {
					resp := a.call(t, d, &cwmp.GetParameterValues{ParameterNames: tc.names})
					if tc.fault != 0 {
						fault(t, resp, tc.fault)
						return
					}
					tc.check(t, as[*cwmp.GetParameterValuesResponse](t, resp).ParameterList)
				})
			}
		})
	}
}

func TestGetParameterNames(t *testing.T) {
	t.Parallel()
	for _, m := range models {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			a, d := rpcDevice(t, m.name, Settings{})
			r := m.root
			for _, tc := range []struct {
				name      string
				path      string
				nextLevel bool
				want      map[string]bool // name -> writable, must be present
				notWant   []string
				fault     cwmp.FaultCode
			}{
				{name: "next level", path: r + "DeviceInfo.", nextLevel: true,
					want:    map[string]bool{r + "DeviceInfo.Manufacturer": false, r + "DeviceInfo.ProvisioningCode": true},
					notWant: []string{r + "DeviceInfo.", r + "ManagementServer.URL"}},
				{name: "all levels", path: r + "ManagementServer.", nextLevel: false,
					want: map[string]bool{r + "ManagementServer.": false, r + "ManagementServer.URL": true, r + "ManagementServer.ParameterKey": false}},
				{name: "root next level", path: "", nextLevel: true, want: map[string]bool{r: false}},
				{name: "a parameter", path: r + "DeviceInfo.SerialNumber", want: map[string]bool{r + "DeviceInfo.SerialNumber": false}},
				{name: "next level on a parameter", path: r + "DeviceInfo.SerialNumber", nextLevel: true, fault: cwmp.FaultCPEInvalidArguments},
				{name: "unknown", path: r + "NoSuch.", fault: cwmp.FaultInvalidParameterName},
			} {
				t.Run(tc.name, func(t *testing.T) {
					resp := a.call(t, d, &cwmp.GetParameterNames{ParameterPath: tc.path, NextLevel: tc.nextLevel})
					if tc.fault != 0 {
						fault(t, resp, tc.fault)
						return
					}
					list := as[*cwmp.GetParameterNamesResponse](t, resp).ParameterList
					got := map[string]bool{}
					for _, p := range list {
						got[p.Name] = p.Writable
					}
					for n, w := range tc.want {
						if gw, ok := got[n]; !ok || gw != w {
							t.Errorf("%s: present %v writable %v, want present and writable %v", n, ok, gw, w)
						}
					}
					for _, n := range tc.notWant {
						if _, ok := got[n]; ok {
							t.Errorf("%s listed", n)
						}
					}
					if tc.nextLevel && tc.path != "" {
						for n := range got {
							rest := strings.TrimSuffix(strings.TrimPrefix(n, tc.path), ".")
							if strings.Contains(rest, ".") {
								t.Errorf("NextLevel listed %s, more than one level down", n)
							}
						}
					}
				})
			}
		})
	}
}

func TestSetParameterValues(t *testing.T) {
	t.Parallel()
	for _, m := range models {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			a, d := rpcDevice(t, m.name, Settings{})
			r := m.root
			key := r + "ManagementServer.ParameterKey"
			ok := &cwmp.SetParameterValues{ParameterKey: "key-1", ParameterList: []cwmp.ParameterValueStruct{
				{Name: r + "DeviceInfo.ProvisioningCode", Value: cwmp.String("PC-1")},
				{Name: r + "Time.LocalTimeZone", Value: cwmp.Value{Text: "CET-1"}},
			}}
			if resp := as[*cwmp.SetParameterValuesResponse](t, a.call(t, d, ok)); resp.Status != 0 {
				t.Fatalf("status %d", resp.Status)
			}
			if v := paramValue(t, d, r+"DeviceInfo.ProvisioningCode"); v != "PC-1" {
				t.Errorf("ProvisioningCode %q", v)
			}
			if v := paramValue(t, d, r+"Time.LocalTimeZone"); v != "CET-1" {
				t.Errorf("LocalTimeZone %q", v)
			}
			if v := paramValue(t, d, key); v != "key-1" {
				t.Errorf("ParameterKey %q, want key-1", v)
			}

			// All or nothing: one good value and four refused ones.
			bad := &cwmp.SetParameterValues{ParameterKey: "key-2", ParameterList: []cwmp.ParameterValueStruct{
				{Name: r + "DeviceInfo.ProvisioningCode", Value: cwmp.String("PC-2")},
				{Name: r + "DeviceInfo.NoSuchThing", Value: cwmp.String("x")},
				{Name: r + "DeviceInfo.Manufacturer", Value: cwmp.String("evil")},
				{Name: r + "ManagementServer.PeriodicInformInterval", Value: cwmp.Value{Type: "xsd:unsignedInt", Text: "-5"}},
				{Name: r + "ManagementServer.PeriodicInformEnable", Value: cwmp.String("true")},
			}}
			f := fault(t, a.call(t, d, bad), cwmp.FaultCPEInvalidArguments)
			want := map[string]cwmp.FaultCode{
				r + "DeviceInfo.NoSuchThing":                  cwmp.FaultInvalidParameterName,
				r + "DeviceInfo.Manufacturer":                 cwmp.FaultNonWritableParameter,
				r + "ManagementServer.PeriodicInformInterval": cwmp.FaultInvalidParameterValue,
				r + "ManagementServer.PeriodicInformEnable":   cwmp.FaultInvalidParameterType,
			}
			got := map[string]cwmp.FaultCode{}
			for _, sf := range f.SetParameterValuesFaults {
				got[sf.ParameterName] = sf.FaultCode
				if sf.FaultString == "" {
					t.Errorf("%s: empty FaultString", sf.ParameterName)
				}
			}
			if len(got) != len(want) {
				t.Errorf("SetParameterValuesFaults %+v, want %v", f.SetParameterValuesFaults, want)
			}
			for n, c := range want {
				if got[n] != c {
					t.Errorf("%s: fault %d, want %d", n, got[n], c)
				}
			}
			if v := paramValue(t, d, r+"DeviceInfo.ProvisioningCode"); v != "PC-1" {
				t.Errorf("a refused SPV changed ProvisioningCode to %q", v)
			}
			if v := paramValue(t, d, key); v != "key-1" {
				t.Errorf("a refused SPV changed the ParameterKey to %q", v)
			}
		})
	}
}

func TestSetParameterValuesReschedulesPeriodic(t *testing.T) {
	t.Parallel()
	for _, m := range models {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			a, d := rpcDevice(t, m.name, Settings{})
			if d.Periodic() != time.Hour {
				t.Fatalf("periodic %v, want the tree's 3600 s", d.Periodic())
			}
			id := a.queue(d.Serial(), &cwmp.SetParameterValues{ParameterList: []cwmp.ParameterValueStruct{
				{Name: m.root + "ManagementServer.PeriodicInformInterval", Value: cwmp.UnsignedInt(1)}}})
			as[*cwmp.SetParameterValuesResponse](t, a.await(t, d, id).Env.Body)
			if d.Periodic() != time.Second {
				t.Fatalf("periodic %v after setting 1 s", d.Periodic())
			}
			_, end := a.waitSessionEnd(t, d.Serial(), 0)
			done := a.all(d.Serial())[end].At
			p, _ := a.waitPost(t, d.Serial(), end+1, "periodic Inform", func(p post) bool {
				inf, ok := informOf(p)
				return ok && hasEvent(inf, cwmp.EventPeriodic, "")
			})
			if gap := p.At.Sub(done); gap < time.Second-50*time.Millisecond {
				t.Errorf("periodic Inform %v after the SPV session, want about 1 s", gap)
			}
			// Disabling stops it.
			as[*cwmp.SetParameterValuesResponse](t, a.call(t, d, &cwmp.SetParameterValues{ParameterList: []cwmp.ParameterValueStruct{
				{Name: m.root + "ManagementServer.PeriodicInformEnable", Value: cwmp.Bool(false)}}}))
			if d.Periodic() != 0 {
				t.Errorf("periodic %v after PeriodicInformEnable=false", d.Periodic())
			}
			d.mu.Lock()
			timer := d.periodicT
			d.mu.Unlock()
			if timer != nil {
				t.Error("periodic timer still armed after disabling")
			}
		})
	}
}

func TestSetParameterValuesMovesACS(t *testing.T) {
	t.Parallel()
	a, d := rpcDevice(t, tree.TR181, Settings{})
	moved := a.url("MOVED")
	as[*cwmp.SetParameterValuesResponse](t, a.call(t, d, &cwmp.SetParameterValues{ParameterList: []cwmp.ParameterValueStruct{
		{Name: "Device.ManagementServer.URL", Value: cwmp.String(moved)}}}))
	if d.ACSURL() != moved {
		t.Fatalf("ACSURL %q, want %q", d.ACSURL(), moved)
	}
	eventually(t, "session over", func() bool { return !d.InSession() })
	connReq(t, d)
	inf, _ := a.waitInform(t, "MOVED", 0, cwmp.EventConnectionRequest, "")
	if inf.DeviceID.SerialNumber != d.Serial() {
		t.Fatalf("Inform at the new URL from %q", inf.DeviceID.SerialNumber)
	}
}

func TestParameterAttributes(t *testing.T) {
	t.Parallel()
	for _, m := range models {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			a, d := rpcDevice(t, m.name, Settings{})
			r := m.root
			name := r + "Time.NTPServer1"
			for _, n := range []int32{2, 1, 0} {
				as[*cwmp.SetParameterAttributesResponse](t, a.call(t, d, &cwmp.SetParameterAttributes{ParameterList: []cwmp.SetParameterAttributesStruct{
					{Name: name, NotificationChange: true, Notification: n}}}))
				resp := as[*cwmp.GetParameterAttributesResponse](t, a.call(t, d, &cwmp.GetParameterAttributes{ParameterNames: []string{name}}))
				if len(resp.ParameterList) != 1 || resp.ParameterList[0].Name != name || resp.ParameterList[0].Notification != n {
					t.Errorf("after setting %d: %+v", n, resp.ParameterList)
				}
			}
			// NotificationChange false leaves it alone.
			as[*cwmp.SetParameterAttributesResponse](t, a.call(t, d, &cwmp.SetParameterAttributes{ParameterList: []cwmp.SetParameterAttributesStruct{
				{Name: name, NotificationChange: false, Notification: 2}}}))
			if p, _ := d.Tree().Get(name); p.Notification != 0 {
				t.Errorf("NotificationChange=false changed notification to %d", p.Notification)
			}
			// A partial path sets every parameter below it.
			as[*cwmp.SetParameterAttributesResponse](t, a.call(t, d, &cwmp.SetParameterAttributes{ParameterList: []cwmp.SetParameterAttributesStruct{
				{Name: r + "Time.", NotificationChange: true, Notification: 1}}}))
			resp := as[*cwmp.GetParameterAttributesResponse](t, a.call(t, d, &cwmp.GetParameterAttributes{ParameterNames: []string{r + "Time."}}))
			if len(resp.ParameterList) < 5 {
				t.Fatalf("GPA of a partial path: %+v", resp.ParameterList)
			}
			for _, p := range resp.ParameterList {
				if p.Notification != 1 {
					t.Errorf("%s: notification %d after setting the partial path to 1", p.Name, p.Notification)
				}
			}
			// All or nothing: an invalid entry refuses the valid one before it.
			for _, tc := range []struct {
				name  string
				attrs []cwmp.SetParameterAttributesStruct
				code  cwmp.FaultCode
			}{
				{"notification 3", []cwmp.SetParameterAttributesStruct{{Name: name, NotificationChange: true, Notification: 2},
					{Name: r + "Time.NTPServer2", NotificationChange: true, Notification: 3}}, cwmp.FaultInvalidParameterValue},
				{"notification -1", []cwmp.SetParameterAttributesStruct{{Name: name, NotificationChange: true, Notification: -1}}, cwmp.FaultInvalidParameterValue},
				{"unknown name", []cwmp.SetParameterAttributesStruct{{Name: name, NotificationChange: true, Notification: 2},
					{Name: r + "Time.Nope", NotificationChange: true, Notification: 1}}, cwmp.FaultInvalidParameterName},
			} {
				fault(t, a.call(t, d, &cwmp.SetParameterAttributes{ParameterList: tc.attrs}), tc.code)
				if p, _ := d.Tree().Get(name); p.Notification != 1 {
					t.Errorf("%s: refused SPA changed notification to %d", tc.name, p.Notification)
				}
			}
			fault(t, a.call(t, d, &cwmp.GetParameterAttributes{ParameterNames: []string{r + "Time.Nope"}}), cwmp.FaultInvalidParameterName)
		})
	}
}

func TestAddAndDeleteObject(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		model, table, count, param string
		value                      cwmp.Value
		want                       uint32
	}{
		{tree.TR181, "Device.IP.Interface.", "Device.IP.InterfaceNumberOfEntries", "Enable", cwmp.Bool(true), 3},
		// TR-098 names this table's count ForwardNumberOfEntries, which the
		// tree does not maintain (it looks for ForwardingNumberOfEntries).
		{tree.TR098, "InternetGatewayDevice.Layer3Forwarding.Forwarding.", "", "DestIPAddress", cwmp.String("10.0.0.0"), 1},
	} {
		t.Run(tc.model, func(t *testing.T) {
			t.Parallel()
			a, d := rpcDevice(t, tc.model, Settings{})
			root := d.Tree().Template().Root()
			resp := as[*cwmp.AddObjectResponse](t, a.call(t, d, &cwmp.AddObject{ObjectName: tc.table, ParameterKey: "add-1"}))
			if resp.InstanceNumber != tc.want || resp.Status != 0 {
				t.Fatalf("AddObject: %+v, want instance %d", resp, tc.want)
			}
			inst := tc.table + strconv.Itoa(int(tc.want)) + "."
			if _, ok := d.Tree().Get(inst + tc.param); !ok {
				t.Errorf("%s%s missing after AddObject", inst, tc.param)
			}
			if tc.count != "" {
				if v := paramValue(t, d, tc.count); v != strconv.Itoa(int(tc.want)) {
					t.Errorf("%s = %s", tc.count, v)
				}
			}
			if v := paramValue(t, d, root+"ManagementServer.ParameterKey"); v != "add-1" {
				t.Errorf("ParameterKey %q after AddObject", v)
			}
			// The new instance is writable through SPV.
			as[*cwmp.SetParameterValuesResponse](t, a.call(t, d, &cwmp.SetParameterValues{ParameterList: []cwmp.ParameterValueStruct{
				{Name: inst + tc.param, Value: tc.value}}}))

			del := as[*cwmp.DeleteObjectResponse](t, a.call(t, d, &cwmp.DeleteObject{ObjectName: inst, ParameterKey: "del-1"}))
			if del.Status != 0 {
				t.Errorf("DeleteObject status %d", del.Status)
			}
			if _, ok := d.Tree().Get(inst + tc.param); ok {
				t.Errorf("%s still there after DeleteObject", inst)
			}
			if v := paramValue(t, d, root+"ManagementServer.ParameterKey"); v != "del-1" {
				t.Errorf("ParameterKey %q after DeleteObject", v)
			}
			for _, bad := range []cwmp.Message{
				&cwmp.AddObject{ObjectName: root + "NoSuch.Table.", ParameterKey: "x"},
				&cwmp.AddObject{ObjectName: root + "DeviceInfo.Manufacturer", ParameterKey: "x"},
				&cwmp.DeleteObject{ObjectName: inst, ParameterKey: "x"},
				&cwmp.DeleteObject{ObjectName: tc.table, ParameterKey: "x"},
			} {
				fault(t, a.call(t, d, bad), cwmp.FaultInvalidParameterName)
			}
			if v := paramValue(t, d, root+"ManagementServer.ParameterKey"); v != "del-1" {
				t.Errorf("a refused object RPC changed the ParameterKey to %q", v)
			}
		})
	}
}

func TestRebootInformsBootAndMReboot(t *testing.T) {
	t.Parallel()
	for _, m := range models {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			a, d := rpcDevice(t, m.name, Settings{})
			uptime := m.root + "DeviceInfo.UpTime"
			d.boot.Store(time.Now().Add(-2 * time.Hour).UnixNano())
			if n, _ := strconv.Atoi(paramValue(t, d, uptime)); n < 7200 {
				t.Fatalf("UpTime %d before the reboot, want >= 7200", n)
			}
			id := a.queue(d.Serial(), &cwmp.Reboot{CommandKey: "rb-1"})
			resp := a.await(t, d, id)
			as[*cwmp.RebootResponse](t, resp.Env.Body)
			// The reboot happens after the session: the next Inform is its own.
			idx := slices.IndexFunc(a.all(d.Serial()), func(p post) bool { return p.Env != nil && p.Env.ID == resp.Env.ID })
			_, end := a.waitSessionEnd(t, d.Serial(), idx)
			inf, i := a.waitInform(t, d.Serial(), end+1, cwmp.EventBoot, "")
			if !slices.Equal(codes(inf.Event), []string{cwmp.EventBoot, cwmp.EventMReboot + "[rb-1]"}) {
				t.Errorf("events %v, want 1 BOOT and M Reboot rb-1", codes(inf.Event))
			}
			if i != end+1 {
				t.Errorf("boot Inform is post %d, want the first after the Reboot session (%d)", i, end+1)
			}
			if n, _ := strconv.Atoi(paramValue(t, d, uptime)); n >= 7200 {
				t.Errorf("UpTime %d after the reboot, want it restarted", n)
			}
		})
	}
}

func TestFactoryReset(t *testing.T) {
	t.Parallel()
	for _, m := range models {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			a, d := rpcDevice(t, m.name, Settings{})
			r := m.root
			old := d.Tree()
			as[*cwmp.SetParameterValuesResponse](t, a.call(t, d, &cwmp.SetParameterValues{ParameterKey: "pk", ParameterList: []cwmp.ParameterValueStruct{
				{Name: r + "DeviceInfo.ProvisioningCode", Value: cwmp.String("CUSTOM")}}}))
			id := a.queue(d.Serial(), &cwmp.FactoryReset{})
			as[*cwmp.FactoryResetResponse](t, a.await(t, d, id).Env.Body)
			_, end := a.waitSessionEnd(t, d.Serial(), 0)
			inf, _ := a.waitInform(t, d.Serial(), end+1, cwmp.EventBootstrap, "")
			if !slices.Equal(codes(inf.Event), []string{cwmp.EventBootstrap, cwmp.EventBoot}) {
				t.Errorf("events %v, want 0 BOOTSTRAP and 1 BOOT", codes(inf.Event))
			}
			if v, _ := informParam(inf, r+"DeviceInfo.ProvisioningCode"); v != "" {
				t.Errorf("ProvisioningCode %q informed after the reset", v)
			}
			if d.Tree() == old {
				t.Fatal("the tree was not replaced")
			}
			for n, want := range map[string]string{
				r + "DeviceInfo.ProvisioningCode":   "",
				r + "ManagementServer.ParameterKey": "",
				r + "DeviceInfo.SerialNumber":       d.Serial(),
				r + "ManagementServer.URL":          a.url(d.Serial()),
			} {
				if v := paramValue(t, d, n); v != want {
					t.Errorf("%s = %q after the reset, want %q", n, v, want)
				}
			}
			// The device keeps answering on the new tree.
			gpv := as[*cwmp.GetParameterValuesResponse](t, a.call(t, d, &cwmp.GetParameterValues{ParameterNames: []string{r + "DeviceInfo.SerialNumber"}}))
			if gpv.ParameterList[0].Value.Text != d.Serial() {
				t.Errorf("serial after reset %+v", gpv.ParameterList)
			}
		})
	}
	t.Run("factory tree option", func(t *testing.T) {
		t.Parallel()
		a := newDouble(t)
		tmpl := baseTemplate(t, tree.TR181)
		d := startDevice(t, newEnv(t, Settings{}), tree.TR181, a.url("EMUFTREE"), Options{Serial: "EMUFTREE", Bootstrap: true,
			FactoryTree: func() *tree.Tree {
				ft := tree.New(tmpl)
				_, _ = ft.SetValues([]tree.Set{{Name: "Device.DeviceInfo.ProvisioningCode", Value: "FROM-FACTORY"}}, tree.SetOptions{})
				return ft
			}})
		a.waitSessionEnd(t, "EMUFTREE", 0)
		id := a.queue("EMUFTREE", &cwmp.FactoryReset{})
		a.await(t, d, id)
		inf, _ := a.waitInform(t, "EMUFTREE", 3, cwmp.EventBootstrap, "")
		if v, _ := informParam(inf, "Device.DeviceInfo.ProvisioningCode"); v != "FROM-FACTORY" {
			t.Errorf("ProvisioningCode %q, want the factory tree's", v)
		}
		if v := paramValue(t, d, "Device.DeviceInfo.SerialNumber"); v != "EMUFTREE" {
			t.Errorf("serial %q in the factory tree", v)
		}
	})
}

func TestScheduleInform(t *testing.T) {
	t.Parallel()
	a, d := rpcDevice(t, tree.TR098, Settings{})
	fault(t, a.call(t, d, &cwmp.ScheduleInform{DelaySeconds: 0, CommandKey: "zero"}), cwmp.FaultCPEInvalidArguments)

	id := a.queue(d.Serial(), &cwmp.ScheduleInform{DelaySeconds: 1, CommandKey: "si-1"})
	resp := a.await(t, d, id)
	as[*cwmp.ScheduleInformResponse](t, resp.Env.Body)
	p, _ := a.waitPost(t, d.Serial(), 0, "scheduled Inform", func(p post) bool {
		inf, ok := informOf(p)
		return ok && hasEvent(inf, cwmp.EventScheduled, "")
	})
	inf := p.Env.Body.(*cwmp.Inform)
	if !slices.Equal(codes(inf.Event), []string{cwmp.EventScheduled, cwmp.EventMScheduleInform + "[si-1]"}) {
		t.Errorf("events %v, want 3 SCHEDULED and M ScheduleInform si-1", codes(inf.Event))
	}
	if gap := p.At.Sub(resp.At); gap < time.Second {
		t.Errorf("scheduled Inform %v after the response, want at least DelaySeconds 1 s", gap)
	}
}

func TestUnknownAndUnsupportedMethods(t *testing.T) {
	t.Parallel()
	a, d := rpcDevice(t, tree.TR181, Settings{})
	for _, m := range []cwmp.Message{
		&cwmp.GetOptions{OptionName: "x"},
		&cwmp.CancelTransfer{CommandKey: "x"},
		&cwmp.ScheduleDownload{CommandKey: "x", FileType: "1 Firmware Upgrade Image", URL: "http://example.com/fw"},
		&cwmp.SetVouchers{},
	} {
		fault(t, a.call(t, d, m), cwmp.FaultCPEMethodNotSupported)
	}
	// A method cwmp does not know at all, and a malformed argument.
	id := a.queueRaw(d.Serial(), `<cwmp:X_VENDOR_SelfDestruct><Now>1</Now></cwmp:X_VENDOR_SelfDestruct>`)
	fault(t, a.await(t, d, id).Env.Body, cwmp.FaultCPEMethodNotSupported)
	id = a.queueRaw(d.Serial(), `<cwmp:ScheduleInform><DelaySeconds>soon</DelaySeconds><CommandKey>k</CommandKey></cwmp:ScheduleInform>`)
	fault(t, a.await(t, d, id).Env.Body, cwmp.FaultCPEInvalidArguments)

	// A fault from the ACS is answered with the empty POST; the session goes on.
	a.queue(d.Serial(), cwmp.NewFault(cwmp.FaultInternalError, "ACS trouble"))
	id = a.queue(d.Serial(), &cwmp.GetRPCMethods{})
	resp := a.await(t, d, id)
	as[*cwmp.GetRPCMethodsResponse](t, resp.Env.Body)
	ps := a.all(d.Serial())
	i := slices.IndexFunc(ps, func(p post) bool { return p.Reply == "Fault" })
	if i < 0 || i+1 >= len(ps) || ps[i+1].Env != nil {
		t.Fatalf("after the ACS fault the device sent %v, want the empty POST", ps[i+1].method())
	}
}

func TestLoadingModeRefusesEveryRPC(t *testing.T) {
	t.Parallel()
	a, d := rpcDevice(t, tree.TR181, Settings{LoadingMode: true})
	if inf := a.informs(d.Serial()); len(inf) != 1 || !hasEvent(inf[0], cwmp.EventBootstrap, "") {
		t.Fatalf("Informs %d, want the bootstrap one delivered in loading mode", len(inf))
	}
	for _, m := range []cwmp.Message{
		&cwmp.GetRPCMethods{},
		&cwmp.GetParameterValues{ParameterNames: []string{"Device.DeviceInfo.SerialNumber"}},
		&cwmp.SetParameterValues{ParameterList: []cwmp.ParameterValueStruct{{Name: "Device.DeviceInfo.ProvisioningCode", Value: cwmp.String("x")}}},
		&cwmp.GetParameterNames{ParameterPath: "Device.", NextLevel: true},
		&cwmp.GetParameterAttributes{ParameterNames: []string{"Device.DeviceInfo.SerialNumber"}},
		&cwmp.SetParameterAttributes{ParameterList: []cwmp.SetParameterAttributesStruct{{Name: "Device.DeviceInfo.SerialNumber", NotificationChange: true, Notification: 1}}},
		&cwmp.AddObject{ObjectName: "Device.IP.Interface."},
		&cwmp.DeleteObject{ObjectName: "Device.IP.Interface.1."},
		&cwmp.Reboot{CommandKey: "r"},
		&cwmp.FactoryReset{},
		&cwmp.Download{CommandKey: "d", FileType: "1 Firmware Upgrade Image", URL: "http://127.0.0.1:1/fw"},
		&cwmp.Upload{CommandKey: "u", FileType: "1 Vendor Configuration File", URL: "http://127.0.0.1:1/up"},
		&cwmp.ScheduleInform{DelaySeconds: 1, CommandKey: "s"},
		&cwmp.ChangeDUState{CommandKey: "c", Operations: []cwmp.Operation{cwmp.InstallOp{URL: "http://127.0.0.1:1/du", UUID: "u"}}},
		&cwmp.GetQueuedTransfers{},
		&cwmp.GetAllQueuedTransfers{},
	} {
		t.Run(m.Method(), func(t *testing.T) {
			fault(t, a.call(t, d, m), cwmp.FaultCPERequestDenied)
		})
	}
	if v := paramValue(t, d, "Device.DeviceInfo.ProvisioningCode"); v != "" {
		t.Errorf("SPV applied in loading mode: %q", v)
	}
	// Informs still work, and nothing refused was carried out (no reboot).
	_, end := a.waitSessionEnd(t, d.Serial(), len(a.all(d.Serial()))-1)
	connReq(t, d)
	inf, _ := a.waitInform(t, d.Serial(), end+1, cwmp.EventConnectionRequest, "")
	if !slices.Equal(codes(inf.Event), []string{cwmp.EventConnectionRequest}) {
		t.Errorf("events %v, want only 6 CONNECTION REQUEST", codes(inf.Event))
	}
}

func TestTaskDelays(t *testing.T) {
	t.Parallel()
	const delay = 300 * time.Millisecond
	t.Run("delays the answer", func(t *testing.T) {
		t.Parallel()
		a, d := rpcDevice(t, tree.TR181, Settings{TaskDelays: map[string]time.Duration{"GetParameterValues": delay}})
		id := a.queue(d.Serial(), &cwmp.GetParameterValues{ParameterNames: []string{"Device.DeviceInfo.SerialNumber"}})
		resp := a.await(t, d, id)
		as[*cwmp.GetParameterValuesResponse](t, resp.Env.Body)
		ps := a.all(d.Serial())
		i := slices.IndexFunc(ps, func(p post) bool { return p.Env != nil && p.Env.ID == id })
		if gap := ps[i].At.Sub(ps[i-1].At); gap < delay {
			t.Errorf("answered %v after the request, want at least %v", gap, delay)
		}
		// Other methods have no delay configured: GetRPCMethods is
		// answered, whatever the time it takes.
		as[*cwmp.GetRPCMethodsResponse](t, a.call(t, d, &cwmp.GetRPCMethods{}))
	})
	t.Run("does not block other devices", func(t *testing.T) {
		t.Parallel()
		// Both devices share the environment; one waits an hour before its
		// answer while the other completes a session.
		a := newDouble(t)
		env := newEnv(t, Settings{TaskDelays: map[string]time.Duration{"GetParameterValues": time.Hour}})
		slow := startDevice(t, env, tree.TR181, a.url("EMUSLOW"), Options{Serial: "EMUSLOW", Bootstrap: true})
		fast := startDevice(t, env, tree.TR181, a.url("EMUFAST"), Options{Serial: "EMUFAST", Bootstrap: true, WithoutInitialInform: true, PeriodicDisabled: true})
		a.waitSessionEnd(t, "EMUSLOW", 0)
		id := a.queue("EMUSLOW", &cwmp.GetParameterValues{ParameterNames: []string{"Device.DeviceInfo.SerialNumber"}})
		eventually(t, "the slow device to take its GPV", func() bool {
			if !a.handedOut("EMUSLOW", id) {
				slow.ConnectionRequest()
				return false
			}
			return true
		})
		fast.ConnectionRequest()
		a.waitSessionEnd(t, "EMUFAST", 0)
		if !slow.InSession() {
			t.Fatal("the slow device left its session")
		}
		for _, p := range a.all("EMUSLOW") {
			if p.Env != nil && p.Env.ID == id {
				t.Fatal("the slow device answered before its delay")
			}
		}
		// Stop interrupts the delay.
		slow.Stop()
		if slow.InSession() {
			t.Error("in session after Stop")
		}
	})
}
