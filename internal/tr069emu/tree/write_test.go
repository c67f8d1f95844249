package tree

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"cpesuite/internal/cwmp"
)

func TestSetValuesFaults(t *testing.T) {
	const (
		interval = "Device.ManagementServer.PeriodicInformInterval"
		enable   = "Device.ManagementServer.PeriodicInformEnable"
		ptime    = "Device.ManagementServer.PeriodicInformTime"
		uptime   = "Device.DeviceInfo.UpTime"
	)
	acs := SetOptions{CheckWritable: true, CheckType: true}
	cases := []struct {
		name   string
		vals   []Set
		opts   SetOptions
		faults []cwmp.SPVFault // names and codes only
	}{
		{"unknown", []Set{{Name: "Device.Nope", Value: "1"}}, acs, []cwmp.SPVFault{{ParameterName: "Device.Nope", FaultCode: 9005}}},
		{"object", []Set{{Name: "Device.DeviceInfo.", Value: "1"}}, acs, []cwmp.SPVFault{{ParameterName: "Device.DeviceInfo.", FaultCode: 9005}}},
		{"template", []Set{{Name: "Device.Hosts.Host.{i}.IPAddress", Value: "1"}}, acs, []cwmp.SPVFault{{ParameterName: "Device.Hosts.Host.{i}.IPAddress", FaultCode: 9005}}},
		{"read-only", []Set{{Name: uptime, Value: "5"}}, acs, []cwmp.SPVFault{{ParameterName: uptime, FaultCode: 9008}}},
		{"bad value", []Set{{Name: interval, Value: "-5"}}, acs, []cwmp.SPVFault{{ParameterName: interval, FaultCode: 9007}}},
		{"bad value without checks", []Set{{Name: uptime, Value: "x"}}, SetOptions{}, []cwmp.SPVFault{{ParameterName: uptime, FaultCode: 9007}}},
		{"bad dateTime", []Set{{Name: ptime, Value: "yesterday"}}, acs, []cwmp.SPVFault{{ParameterName: ptime, FaultCode: 9007}}},
		{"type mismatch", []Set{{Name: interval, Value: "5", Type: "xsd:int"}}, acs, []cwmp.SPVFault{{ParameterName: interval, FaultCode: 9006}}},
		{"unknown type", []Set{{Name: interval, Value: "5", Type: "xsd:float"}}, SetOptions{}, []cwmp.SPVFault{{ParameterName: interval, FaultCode: 9006}}},
		{"same name twice", []Set{{Name: interval, Value: "5"}, {Name: interval, Value: "6"}}, acs, []cwmp.SPVFault{{ParameterName: interval, FaultCode: 9003}}},
		{"same name twice in a large request", append([]Set{{Name: enable, Value: "1"}},
			append(slices.Repeat([]Set{{Name: "Device.Nope", Value: "1"}}, 20), Set{Name: enable, Value: "0"})...), acs,
			append(slices.Repeat([]cwmp.SPVFault{{ParameterName: "Device.Nope", FaultCode: 9005}}, 20), cwmp.SPVFault{ParameterName: enable, FaultCode: 9003})},
		{"every fault is reported", []Set{
			{Name: enable, Value: "0"},
			{Name: "Device.Nope", Value: "1"},
			{Name: uptime, Value: "5"},
			{Name: interval, Value: "x"},
			{Name: ptime, Value: "0", Type: "xsd:unsignedInt"},
		}, acs, []cwmp.SPVFault{{ParameterName: "Device.Nope", FaultCode: 9005}, {ParameterName: uptime, FaultCode: 9008},
			{ParameterName: interval, FaultCode: 9007}, {ParameterName: ptime, FaultCode: 9006}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := New(small(t))
			changes, err := d.SetValues(c.vals, c.opts)
			var sf *SetFaults
			if !errors.As(err, &sf) || changes != nil {
				t.Fatalf("SetValues = %v, %v; want *SetFaults", changes, err)
			}
			if len(sf.Faults) != len(c.faults) {
				t.Fatalf("faults %+v, want %+v", sf.Faults, c.faults)
			}
			for i, f := range sf.Faults {
				if f.ParameterName != c.faults[i].ParameterName || f.FaultCode != c.faults[i].FaultCode || f.FaultString == "" {
					t.Fatalf("fault %d = %+v, want %+v", i, f, c.faults[i])
				}
			}
			// Nothing was written.
			if d.Overrides() != 0 {
				t.Fatalf("%d overrides after a refused SetValues", d.Overrides())
			}
			wantValue(t, d, enable, "1")
		})
	}
}

func TestSetValues(t *testing.T) {
	d := New(small(t))
	acs := SetOptions{CheckWritable: true, CheckType: true}
	changes, err := d.SetValues([]Set{
		{Name: "Device.ManagementServer.PeriodicInformInterval", Value: "60", Type: "XSD:UNSIGNEDINT"},
		{Name: "Device.ManagementServer.PeriodicInformEnable", Value: "true", Type: "boolean"}, // "1" already
		{Name: "Device.Hosts.Host.1.IPAddress", Value: "10.0.0.1"},
	}, acs)
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{
		{Name: "Device.ManagementServer.PeriodicInformInterval", Value: "60"},
		{Name: "Device.Hosts.Host.1.IPAddress", Value: "10.0.0.1"},
	}
	if !slices.Equal(changes, want) {
		t.Fatalf("changes %+v, want %+v", changes, want)
	}
	wantValue(t, d, "Device.ManagementServer.PeriodicInformInterval", "60")
	wantValue(t, d, "Device.ManagementServer.PeriodicInformEnable", "1")
	if d.Overrides() != 2 {
		t.Fatalf("Overrides = %d, want 2", d.Overrides())
	}
	// Writing the same value again is no change.
	changes, err = d.SetValues([]Set{{Name: "Device.ManagementServer.PeriodicInformInterval", Value: "60"}}, acs)
	if err != nil || len(changes) != 0 {
		t.Fatalf("same value: %v, %v", changes, err)
	}
	// Writing the template value back drops the override.
	if _, err := d.SetValues([]Set{{Name: "Device.ManagementServer.PeriodicInformInterval", Value: "300"}}, acs); err != nil {
		t.Fatal(err)
	}
	if d.Overrides() != 1 {
		t.Fatalf("Overrides = %d after writing the template value back, want 1", d.Overrides())
	}
	// Notification is reported with each change.
	if err := d.SetNotification("Device.DeviceInfo.Manufacturer", 2); err != nil {
		t.Fatal(err)
	}
	changes, err = d.SetValues([]Set{{Name: "Device.DeviceInfo.Manufacturer", Value: "acme"}}, SetOptions{})
	if err != nil || !slices.Equal(changes, []Change{{Name: "Device.DeviceInfo.Manufacturer", Value: "acme", Notification: 2}}) {
		t.Fatalf("changes %+v, %v", changes, err)
	}
	// Without CheckWritable the operator may write read-only parameters,
	// and without CheckType a type given changes the parameter's type.
	if _, err := d.SetValues([]Set{{Name: "Device.DeviceInfo.UpTime", Value: "-7", Type: "xsd:int"}}, SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if p := mustGet(t, d, "Device.DeviceInfo.UpTime"); p.Type != Int || p.Value != "-7" {
		t.Fatalf("UpTime = %+v", p)
	}
	// A type change alone is stored but is no value change.
	changes, err = d.SetValues([]Set{{Name: "Device.DeviceInfo.UpTime", Value: "-7", Type: "long"}}, SetOptions{})
	if err != nil || len(changes) != 0 || mustGet(t, d, "Device.DeviceInfo.UpTime").Type != Long {
		t.Fatalf("type only: %v, %v, %+v", changes, err, mustGet(t, d, "Device.DeviceInfo.UpTime"))
	}
	if changes, err := d.SetValues(nil, acs); err != nil || changes != nil {
		t.Fatalf("empty SetValues: %v, %v", changes, err)
	}
}

// TestSetValuesCopies makes sure stored values do not keep the caller's
// buffer (a decoded SOAP body) alive.
func TestSetValuesCopies(t *testing.T) {
	d := New(small(t))
	body := []byte("xx10.1.2.3yy")
	v := string(body)[2:10]
	if _, err := d.SetValues([]Set{{Name: "Device.Hosts.Host.1.IPAddress", Value: v}}, SetOptions{}); err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, d, "Device.Hosts.Host.1.IPAddress").Value
	if got != "10.1.2.3" || strings.Contains(got, "x") {
		t.Fatalf("value %q", got)
	}
	if unsafeSameData(got, v) {
		t.Fatalf("stored value shares the caller's memory")
	}
}

func TestSetNotification(t *testing.T) {
	d := New(small(t))
	cases := []struct {
		name  string
		notif int
		code  cwmp.FaultCode
	}{
		{"Device.Nope", 1, cwmp.FaultInvalidParameterName},
		{"Device.Nope.", 1, cwmp.FaultInvalidParameterName},
		{"Device.DeviceInfo.UpTime", 3, cwmp.FaultCPEInvalidArguments},
		{"Device.DeviceInfo.UpTime", -1, cwmp.FaultCPEInvalidArguments},
	}
	for _, c := range cases {
		wantCode(t, c.name, d.SetNotification(c.name, c.notif), c.code)
	}
	if err := d.SetNotification("Device.DeviceInfo.UpTime", 1); err != nil {
		t.Fatal(err)
	}
	if p := mustGet(t, d, "Device.DeviceInfo.UpTime"); p.Notification != 1 {
		t.Fatalf("UpTime notification %d", p.Notification)
	}
	// On a partial path, every leaf below it, added ones included.
	if _, err := d.AddObject("Device.Hosts.Host."); err != nil {
		t.Fatal(err)
	}
	if err := d.SetNotification("Device.Hosts.", 2); err != nil {
		t.Fatal(err)
	}
	for _, p := range d.List("Device.Hosts.") {
		if p.Notification != 2 {
			t.Fatalf("%s notification %d", p.Name, p.Notification)
		}
	}
	if p := mustGet(t, d, "Device.DeviceInfo.Manufacturer"); p.Notification != 0 {
		t.Fatalf("Manufacturer notification %d", p.Notification)
	}
	// "" is the whole tree; setting the template value everywhere leaves
	// only the added instance's nodes behind.
	if err := d.SetNotification("", 0); err != nil {
		t.Fatal(err)
	}
	for _, p := range d.List("") {
		if p.Notification != 0 {
			t.Fatalf("%s notification %d", p.Name, p.Notification)
		}
	}
	if err := d.SetNotification("Device.DeviceInfo.SoftwareVersion", 2); err != nil {
		t.Fatal(err)
	}
	// The added instance and HostNumberOfEntries remain.
	if want := len(d.ov.added) + 1; d.Overrides() != want {
		t.Fatalf("Overrides = %d, want %d", d.Overrides(), want)
	}
	// Setting the template's own value on an untouched tree allocates nothing.
	u := New(small(t))
	if err := u.SetNotification("Device.DeviceInfo.SoftwareVersion", 2); err != nil || u.ov != nil {
		t.Fatalf("untouched tree got an overlay: %v", err)
	}
}

func TestAddDeleteObject(t *testing.T) {
	d := New(small(t))
	const hosts = "Device.Hosts.Host."
	n, err := d.AddObject(hosts)
	if err != nil || n != 3 {
		t.Fatalf("AddObject = %d, %v; want 3", n, err)
	}
	got, _ := d.Names("Device.Hosts.Host.3.", false)
	want := []Param{
		{Name: "Device.Hosts.Host.3.", Object: true, Writable: true},
		{Name: "Device.Hosts.Host.3.Active", Value: "false", Type: Boolean},
		{Name: "Device.Hosts.Host.3.IPAddress", Value: "0.0.0.0", Writable: true, Notification: 1},
		{Name: "Device.Hosts.Host.3.IPv4Address.", Object: true},
		{Name: "Device.Hosts.Host.3.IPv4AddressNumberOfEntries", Value: "0", Type: UnsignedInt},
		{Name: "Device.Hosts.Host.3.Stats.", Object: true},
		{Name: "Device.Hosts.Host.3.Stats.BytesSent", Value: "0", Type: UnsignedLong},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("new instance:\n got  %+v\n want %+v", got, want)
	}
	wantValue(t, d, "Device.Hosts.HostNumberOfEntries", "3")
	wantNames(t, "Names(Host.)", namesOf(must(d.Names(hosts, true))), []string{"Device.Hosts.Host.1.", "Device.Hosts.Host.2.", "Device.Hosts.Host.3."})

	// Nested tables of the new instance.
	n, err = d.AddObject("Device.Hosts.Host.3.IPv4Address.")
	if err != nil || n != 1 {
		t.Fatalf("nested AddObject = %d, %v", n, err)
	}
	wantValue(t, d, "Device.Hosts.Host.3.IPv4Address.1.IPAddress", "")
	wantValue(t, d, "Device.Hosts.Host.3.IPv4AddressNumberOfEntries", "1")
	// and of a template instance.
	n, err = d.AddObject("Device.Hosts.Host.2.IPv4Address.")
	if err != nil || n != 2 {
		t.Fatalf("AddObject(Host.2.IPv4Address.) = %d, %v", n, err)
	}
	wantValue(t, d, "Device.Hosts.Host.2.IPv4AddressNumberOfEntries", "2")

	// Added values are written in place.
	if _, err := d.SetValues([]Set{{Name: "Device.Hosts.Host.3.IPAddress", Value: "10.9.9.9"}}, SetOptions{CheckWritable: true}); err != nil {
		t.Fatal(err)
	}
	wantValue(t, d, "Device.Hosts.Host.3.IPAddress", "10.9.9.9")

	// Deleting a template instance hides it and its overrides.
	if _, err := d.SetValues([]Set{{Name: "Device.Hosts.Host.1.IPAddress", Value: "10.0.0.1"}}, SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := d.DeleteObject("Device.Hosts.Host.1."); err != nil {
		t.Fatal(err)
	}
	wantAbsent(t, d, "Device.Hosts.Host.1.")
	wantAbsent(t, d, "Device.Hosts.Host.1.IPAddress")
	wantAbsent(t, d, "Device.Hosts.Host.1.IPv4Address.")
	wantValue(t, d, "Device.Hosts.HostNumberOfEntries", "2")
	if _, err := d.Values([]string{"Device.Hosts.Host.1."}); err == nil {
		t.Fatalf("Values on a deleted instance did not fail")
	}
	wantNames(t, "Match after delete", d.Match("Device.Hosts.Host.{i}.IPAddress"), []string{"Device.Hosts.Host.2.IPAddress", "Device.Hosts.Host.3.IPAddress"})

	// Deleting an added instance removes its nodes, nested ones included.
	if err := d.DeleteObject("Device.Hosts.Host.3."); err != nil {
		t.Fatal(err)
	}
	wantAbsent(t, d, "Device.Hosts.Host.3.IPv4Address.1.IPAddress")
	// Left: Host.2.IPv4Address.2. and its parameter, the deleted Host.1.,
	// and two NumberOfEntries.
	if d.Overrides() != 5 {
		t.Fatalf("Overrides = %d, want 5", d.Overrides())
	}
	wantValue(t, d, "Device.Hosts.HostNumberOfEntries", "1")

	// The next instance is one more than the highest existing one, so the
	// numbers of deleted template instances come back, without their old
	// template nodes.
	if err := d.DeleteObject("Device.Hosts.Host.2."); err != nil {
		t.Fatal(err)
	}
	wantValue(t, d, "Device.Hosts.HostNumberOfEntries", "0")
	for want := uint32(1); want <= 2; want++ {
		if n, err := d.AddObject(hosts); err != nil || n != want {
			t.Fatalf("AddObject = %d, %v; want %d", n, err, want)
		}
	}
	wantNames(t, "instances", namesOf(must(d.Names(hosts, true))), []string{"Device.Hosts.Host.1.", "Device.Hosts.Host.2."})
	wantValue(t, d, "Device.Hosts.Host.1.IPAddress", "0.0.0.0")
	wantValue(t, d, "Device.Hosts.Host.2.IPv4AddressNumberOfEntries", "0")
	wantAbsent(t, d, "Device.Hosts.Host.2.IPv4Address.1.IPAddress")
	wantNames(t, "Names(Host.2.)", namesOf(must(d.Names("Device.Hosts.Host.2.", true))), []string{"Device.Hosts.Host.2.Active",
		"Device.Hosts.Host.2.IPAddress", "Device.Hosts.Host.2.IPv4Address.", "Device.Hosts.Host.2.IPv4AddressNumberOfEntries", "Device.Hosts.Host.2.Stats."})
	wantValue(t, d, "Device.Hosts.HostNumberOfEntries", "2")
	// Deleting it again hides the template nodes once more.
	if err := d.DeleteObject("Device.Hosts.Host.1."); err != nil {
		t.Fatal(err)
	}
	wantNames(t, "instances", namesOf(must(d.Names(hosts, true))), []string{"Device.Hosts.Host.2."})
	if !slices.Equal(d.ov.deleted, []string{"Device.Hosts.Host.1.", "Device.Hosts.Host.2."}) {
		t.Fatalf("deleted = %q", d.ov.deleted)
	}

	// A deleted nested prefix is folded into its parent's.
	e := New(small(t))
	if err := e.DeleteObject("Device.Hosts.Host.2.IPv4Address.1."); err != nil {
		t.Fatal(err)
	}
	wantValue(t, e, "Device.Hosts.Host.2.IPv4AddressNumberOfEntries", "0")
	if err := e.DeleteObject("Device.Hosts.Host.2."); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(e.ov.deleted, []string{"Device.Hosts.Host.2."}) {
		t.Fatalf("deleted = %q", e.ov.deleted)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestAddDeleteObjectErrors(t *testing.T) {
	d := New(small(t))
	add := []struct {
		path string
		code cwmp.FaultCode
	}{
		{"Device.Hosts.Host", cwmp.FaultInvalidParameterName},
		{"Device.Hosts.", cwmp.FaultInvalidParameterName},
		{"Device.Nope.", cwmp.FaultInvalidParameterName},
		{"Device.Hosts.Host.{i}.", cwmp.FaultInvalidParameterName},
		{"Device.Hosts.Host.1.", cwmp.FaultInvalidParameterName},
		{"Device.Hosts.Host.7.IPv4Address.", cwmp.FaultInvalidParameterName},
		{"", cwmp.FaultInvalidParameterName},
	}
	for _, c := range add {
		n, err := d.AddObject(c.path)
		if n != 0 {
			t.Errorf("AddObject(%q) = %d", c.path, n)
		}
		wantCode(t, "AddObject("+c.path+")", err, c.code)
	}
	del := []string{"Device.Hosts.Host.", "Device.Hosts.Host.9.", "Device.", "", "Device.Hosts.Host.1", "Device.Hosts.Host.{i}.",
		"Device.Hosts.Host.1.IPAddress", "Device.Hosts.Host.01."}
	for _, p := range del {
		wantCode(t, "DeleteObject("+p+")", d.DeleteObject(p), cwmp.FaultInvalidParameterName)
	}
	if d.Overrides() != 0 {
		t.Fatalf("failed calls left %d overrides", d.Overrides())
	}

	// No instance number left, and names that would grow too long.
	long := "Device." + strings.Repeat("a", 200) + ".T."
	tp := mustParse(t, doc(`<Parameter name="Device.T.4294967295.X"/>`, `<Object name="Device.T.{i}."/>`,
		`<Parameter name="`+long+`{i}.`+strings.Repeat("b", 42)+`"/>`, `<Parameter name="`+long+`4294967294.X"/>`))
	e := New(tp)
	_, err := e.AddObject("Device.T.")
	wantCode(t, "AddObject past 4294967295", err, cwmp.FaultCPEResourcesExceeded)
	_, err = e.AddObject(long)
	wantCode(t, "AddObject with long names", err, cwmp.FaultCPEResourcesExceeded)
}

func TestAddObjectLimit(t *testing.T) {
	var leaves []string
	for i := range 999 {
		leaves = append(leaves, `<Parameter name="Device.T.{i}.P`+itoa(i)+`"/>`)
	}
	d := New(mustParse(t, doc(leaves...)))
	var err error
	for i := 0; err == nil; i++ {
		if i > maxAdded {
			t.Fatalf("no limit after %d instances", i)
		}
		_, err = d.AddObject("Device.T.")
	}
	wantCode(t, "AddObject past the limit", err, cwmp.FaultCPEResourcesExceeded)
	if n := len(d.ov.added); n > maxAdded {
		t.Fatalf("%d added nodes", n)
	}
	wantCode(t, "AddParameter past the limit", d.AddParameter("Device.T.1.Z", ""), cwmp.FaultInvalidParameterName)
}

func TestAddParameter(t *testing.T) {
	d := New(small(t))
	if err := d.AddParameter("Device.Hosts.Host.1.IPv4AddressNumberOfEntries", "0"); err != nil {
		t.Fatal(err)
	}
	p := mustGet(t, d, "Device.Hosts.Host.1.IPv4AddressNumberOfEntries")
	if want := (Param{Name: "Device.Hosts.Host.1.IPv4AddressNumberOfEntries", Value: "0", Type: UnsignedInt}); p != want {
		t.Fatalf("added %+v", p)
	}
	n, err := d.AddObject("Device.Hosts.Host.1.IPv4Address.")
	if err != nil || n != 1 {
		t.Fatalf("AddObject = %d, %v", n, err)
	}
	wantValue(t, d, "Device.Hosts.Host.1.IPv4AddressNumberOfEntries", "1")
	if err := d.DeleteObject("Device.Hosts.Host.1.IPv4Address.1."); err != nil {
		t.Fatal(err)
	}
	if err := d.AddParameter("Device.Hosts.Host.2.IPv4Address.1.IPAddress", "x"); err == nil {
		t.Fatalf("AddParameter on an existing name did not fail")
	}
	cases := []struct {
		name, value string
		code        cwmp.FaultCode
	}{
		{"Device.Hosts.Host.1.IPAddress", "1", cwmp.FaultCPEInvalidArguments},
		{"Device.Hosts.Host.1.Nope", "1", cwmp.FaultInvalidParameterName},
		{"Device.Hosts.Host.9.IPAddress", "1", cwmp.FaultInvalidParameterName},
		{"Device.Hosts.Host.1.Stats.BytesSent", "1", cwmp.FaultInvalidParameterName}, // no Stats. object in Host.1
		{"Device.Hosts.Host.1.IPv4Address.1.IPAddress", "1", cwmp.FaultInvalidParameterName},
		{"Device.Hosts.Host.1.", "", cwmp.FaultInvalidParameterName},
		{"Device.Hosts.Host.1..X", "", cwmp.FaultInvalidParameterName},
		{"Device.Hosts.Host.1", "", cwmp.FaultInvalidParameterName},
		{"Device.Hosts.Host.{i}.IPAddress", "", cwmp.FaultInvalidParameterName},
		{"Device.Hosts.Host.3.IPv4AddressNumberOfEntries", "x", cwmp.FaultInvalidParameterName},
		{"Device.Hosts.Host.2.IPv4AddressNumberOfEntries", "x", cwmp.FaultCPEInvalidArguments},
	}
	for _, c := range cases {
		wantCode(t, "AddParameter("+c.name+")", d.AddParameter(c.name, c.value), c.code)
	}
	if _, err := d.AddObject("Device.Hosts.Host."); err != nil {
		t.Fatal(err)
	}
	if err := d.DeleteObject("Device.Hosts.Host.3.Stats.BytesSent"); err == nil {
		t.Fatal("DeleteObject on a parameter did not fail")
	}
	// A parameter the template instance lacks, with a value that does not
	// fit its type.
	wantCode(t, "bad value", d.AddParameter("Device.Hosts.Host.1.IPv4AddressNumberOfEntries", "x"), cwmp.FaultCPEInvalidArguments)
	e := New(small(t))
	wantCode(t, "bad value", e.AddParameter("Device.Hosts.Host.1.IPv4AddressNumberOfEntries", "-1"), cwmp.FaultInvalidParameterValue)
	if e.Overrides() != 0 {
		t.Fatalf("refused AddParameter left %d overrides", e.Overrides())
	}
	// The most specific template wins.
	tp := mustParse(t, doc(`<Parameter name="Device.A.{i}.B.{i}.X" type="int">1</Parameter>`,
		`<Parameter name="Device.A.1.B.{i}.X" type="boolean" writable="true">true</Parameter>`,
		`<Object name="Device.A.2.B.3."/>`, `<Object name="Device.A.1.B.3."/>`))
	f := New(tp)
	for _, c := range []struct {
		name string
		typ  Type
	}{{"Device.A.1.B.3.X", Boolean}, {"Device.A.2.B.3.X", Int}} {
		if err := f.AddParameter(c.name, "1"); err != nil {
			t.Fatal(err)
		}
		if p := mustGet(t, f, c.name); p.Type != c.typ {
			t.Fatalf("%s type %v, want %v", c.name, p.Type, c.typ)
		}
	}
	if n, err := f.AddObject("Device.A.1.B."); err != nil || n != 4 {
		t.Fatalf("AddObject = %d, %v", n, err)
	}
	if p := mustGet(t, f, "Device.A.1.B.4.X"); p.Type != Boolean || p.Value != "true" || !p.Writable {
		t.Fatalf("Device.A.1.B.4.X = %+v", p)
	}
}

func TestClone(t *testing.T) {
	d := New(small(t))
	d.SetResolver(func(string) (string, bool) { return "resolved", true })
	if _, err := d.SetValues([]Set{{Name: "Device.Hosts.Host.1.IPAddress", Value: "10.0.0.1"}}, SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.AddObject("Device.Hosts.Host."); err != nil {
		t.Fatal(err)
	}
	if err := d.DeleteObject("Device.Hosts.Host.2."); err != nil {
		t.Fatal(err)
	}
	c := d.Clone()
	if c.Overrides() != d.Overrides() || c.Template() != d.Template() {
		t.Fatalf("clone has %d overrides, original %d", c.Overrides(), d.Overrides())
	}
	// The resolver stays with the original.
	wantValue(t, c, "Device.Hosts.Host.1.IPAddress", "10.0.0.1")
	wantValue(t, c, "Device.Hosts.Host.3.IPAddress", "0.0.0.0")
	wantAbsent(t, c, "Device.Hosts.Host.2.")

	// Changes to either side stay there.
	if _, err := c.SetValues([]Set{{Name: "Device.Hosts.Host.1.IPAddress", Value: "10.0.0.2"}, {Name: "Device.Hosts.Host.3.IPAddress", Value: "10.0.0.3"}}, SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetNotification("Device.Hosts.Host.3.Active", 2); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddObject("Device.Hosts.Host."); err != nil {
		t.Fatal(err)
	}
	if err := d.DeleteObject("Device.Hosts.Host.1."); err != nil {
		t.Fatal(err)
	}
	d.SetResolver(nil)
	wantValue(t, d, "Device.Hosts.Host.3.IPAddress", "0.0.0.0")
	if p := mustGet(t, d, "Device.Hosts.Host.3.Active"); p.Notification != 0 {
		t.Fatalf("original notification changed by the clone")
	}
	wantAbsent(t, d, "Device.Hosts.Host.4.")
	wantValue(t, c, "Device.Hosts.Host.1.IPAddress", "10.0.0.2")
	wantValue(t, c, "Device.Hosts.Host.3.IPAddress", "10.0.0.3")

	u := New(small(t)).Clone()
	if u.ov != nil || u.Overrides() != 0 {
		t.Fatalf("clone of an untouched tree has an overlay")
	}
}
