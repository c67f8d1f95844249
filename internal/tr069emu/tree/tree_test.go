package tree

import (
	"slices"
	"strings"
	"testing"

	"cpesuite/internal/cwmp"
)

func TestGet(t *testing.T) {
	d := New(small(t))
	if d.Template().Name() != "small" {
		t.Fatalf("Template().Name() = %q", d.Template().Name())
	}
	cases := []struct {
		name string
		ok   bool
		want Param
	}{
		{"Device.DeviceInfo.UpTime", true, Param{Name: "Device.DeviceInfo.UpTime", Value: "0", Type: UnsignedInt}},
		{"Device.Hosts.Host.1.", true, Param{Name: "Device.Hosts.Host.1.", Object: true, Writable: true}},
		{"Device.", true, Param{Name: "Device.", Object: true}},
		{"Device.Hosts.Host.{i}.IPAddress", false, Param{}},
		{"Device.Hosts.Host.{i}.", false, Param{}},
		{"Device.Hosts.Host.1", false, Param{}},
		{"Device.DeviceInfo", false, Param{}},
		{"", false, Param{}},
		{"Device.Nope", false, Param{}},
	}
	for _, c := range cases {
		got, ok := d.Get(c.name)
		if ok != c.ok || got != c.want {
			t.Errorf("Get(%q) = %+v, %v; want %+v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestValues(t *testing.T) {
	d := New(small(t))
	cases := []struct {
		names []string
		want  []string
		code  cwmp.FaultCode
	}{
		{[]string{"Device.DeviceInfo."}, []string{"Device.DeviceInfo.Manufacturer", "Device.DeviceInfo.ProvisioningCode",
			"Device.DeviceInfo.SoftwareVersion", "Device.DeviceInfo.UpTime"}, 0},
		{[]string{"Device.Hosts.Host.2.", "Device.DeviceInfo.UpTime"}, []string{"Device.Hosts.Host.2.Active", "Device.Hosts.Host.2.IPAddress",
			"Device.Hosts.Host.2.IPv4Address.1.IPAddress", "Device.Hosts.Host.2.IPv4AddressNumberOfEntries", "Device.DeviceInfo.UpTime"}, 0},
		{[]string{"Device.Hosts.Host.1.IPv4Address."}, nil, 0}, // an empty table is no error
		{[]string{"Device.DeviceInfo.UpTime", "Device.DeviceInfo.UpTime"}, []string{"Device.DeviceInfo.UpTime", "Device.DeviceInfo.UpTime"}, 0},
		{nil, nil, 0},
		{[]string{"Device.DeviceInfo.UpTime", "Device.Nope"}, nil, cwmp.FaultInvalidParameterName},
		{[]string{"Device.DeviceInfo"}, nil, cwmp.FaultInvalidParameterName},
		{[]string{"Device.DeviceInfo.UpTime."}, nil, cwmp.FaultInvalidParameterName},
		{[]string{"Device.Hosts.Host.{i}."}, nil, cwmp.FaultInvalidParameterName},
		{[]string{"Device.Hosts.Host.3."}, nil, cwmp.FaultInvalidParameterName},
	}
	for _, c := range cases {
		got, err := d.Values(c.names)
		if c.code != 0 {
			wantCode(t, strings.Join(c.names, ","), err, c.code)
			continue
		}
		if err != nil {
			t.Fatalf("Values(%q): %v", c.names, err)
		}
		wantNames(t, "Values", namesOf(got), c.want)
	}
	all, err := d.Values([]string{""})
	if err != nil || len(all) != d.Template().Len() {
		t.Fatalf("Values(\"\") = %d params, %v; want %d", len(all), err, d.Template().Len())
	}
	if !slices.IsSortedFunc(all, func(a, b Param) int { return strings.Compare(a.Name, b.Name) }) {
		t.Fatalf("Values(\"\") not in name order: %q", namesOf(all))
	}
	for _, p := range all {
		if p.Object {
			t.Fatalf("Values returned object %s", p.Name)
		}
	}
	ps, _ := d.Values([]string{"Device.DeviceInfo.SoftwareVersion"})
	if want := (Param{Name: "Device.DeviceInfo.SoftwareVersion", Value: "1.0", Notification: 2}); ps[0] != want {
		t.Fatalf("SoftwareVersion = %+v", ps[0])
	}
}

func TestNames(t *testing.T) {
	d := New(small(t))
	cases := []struct {
		path string
		next bool
		want []string
		code cwmp.FaultCode
	}{
		{"", true, []string{"Device."}, 0},
		{"Device.", true, []string{"Device.DeviceInfo.", "Device.Hosts.", "Device.ManagementServer."}, 0},
		{"Device.Hosts.", true, []string{"Device.Hosts.Host.", "Device.Hosts.HostNumberOfEntries"}, 0},
		{"Device.Hosts.Host.", true, []string{"Device.Hosts.Host.1.", "Device.Hosts.Host.2."}, 0},
		{"Device.Hosts.Host.2.", true, []string{"Device.Hosts.Host.2.Active", "Device.Hosts.Host.2.IPAddress",
			"Device.Hosts.Host.2.IPv4Address.", "Device.Hosts.Host.2.IPv4AddressNumberOfEntries"}, 0},
		{"Device.Hosts.Host.1.", false, []string{"Device.Hosts.Host.1.", "Device.Hosts.Host.1.Active",
			"Device.Hosts.Host.1.IPAddress", "Device.Hosts.Host.1.IPv4Address."}, 0},
		{"Device.Hosts.Host.1.IPv4Address.", true, nil, 0},
		{"Device.Hosts.Host.1.IPv4Address.", false, []string{"Device.Hosts.Host.1.IPv4Address."}, 0},
		{"Device.DeviceInfo.UpTime", false, []string{"Device.DeviceInfo.UpTime"}, 0},
		{"Device.DeviceInfo.UpTime", true, nil, cwmp.FaultCPEInvalidArguments},
		{"Device.Nope.", false, nil, cwmp.FaultInvalidParameterName},
		{"Device.Nope", true, nil, cwmp.FaultInvalidParameterName},
		{"Device.DeviceInfo", false, nil, cwmp.FaultInvalidParameterName},
		{"Device.Hosts.Host.{i}.", false, nil, cwmp.FaultInvalidParameterName},
	}
	for _, c := range cases {
		got, err := d.Names(c.path, c.next)
		if c.code != 0 {
			wantCode(t, c.path, err, c.code)
			continue
		}
		if err != nil {
			t.Fatalf("Names(%q, %v): %v", c.path, c.next, err)
		}
		wantNames(t, "Names("+c.path+")", namesOf(got), c.want)
	}
	all, err := d.Names("", false)
	if err != nil || all[0].Name != "Device." || len(all) != 24 {
		t.Fatalf("Names(\"\", false) = %d nodes, %v: %q", len(all), err, namesOf(all))
	}
	hosts, _ := d.Names("Device.Hosts.", true)
	if !hosts[0].Object || !hosts[0].Writable || hosts[1].Object || hosts[1].Writable {
		t.Fatalf("Names(Device.Hosts.) attributes: %+v", hosts)
	}
}

func TestList(t *testing.T) {
	d := New(small(t))
	wantNames(t, "List", namesOf(d.List("Device.Hosts.Host.1")), []string{"Device.Hosts.Host.1.Active", "Device.Hosts.Host.1.IPAddress"})
	wantNames(t, "List", namesOf(d.List("Device.ManagementServer.PeriodicInformT")), []string{"Device.ManagementServer.PeriodicInformTime"})
	if got := d.List("Device.Nope"); len(got) != 0 {
		t.Fatalf("List(Device.Nope) = %v", got)
	}
	if got := d.List(""); len(got) != d.Template().Len() {
		t.Fatalf("List(\"\") = %d", len(got))
	}
}

func TestMatch(t *testing.T) {
	d := New(small(t))
	if _, err := d.AddObject("Device.Hosts.Host.2.IPv4Address."); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		pattern string
		want    []string
	}{
		{"Device.Hosts.Host.{i}.IPAddress", []string{"Device.Hosts.Host.1.IPAddress", "Device.Hosts.Host.2.IPAddress"}},
		{"Device.Hosts.Host.{i}.IPv4Address.{i}.IPAddress", []string{"Device.Hosts.Host.2.IPv4Address.1.IPAddress", "Device.Hosts.Host.2.IPv4Address.2.IPAddress"}},
		{"Device.*.Host.1.*", []string{"Device.Hosts.Host.1.Active", "Device.Hosts.Host.1.IPAddress"}},
		{"Device.*.UpTime", []string{"Device.DeviceInfo.UpTime"}},
		{"Device.Hosts.Host.2.IPv4Address.*", []string{"Device.Hosts.Host.2.IPv4Address.1.IPAddress", "Device.Hosts.Host.2.IPv4Address.2.IPAddress"}},
		{"Device.Hosts.Host.2.IPv4Address.", []string{"Device.Hosts.Host.2.IPv4Address.1.IPAddress", "Device.Hosts.Host.2.IPv4Address.2.IPAddress"}},
		{"Device.Hosts.Host.{i}.*.{i}.IPAddress", []string{"Device.Hosts.Host.2.IPv4Address.1.IPAddress", "Device.Hosts.Host.2.IPv4Address.2.IPAddress"}},
		{"Device.DeviceInfo.UpTime", []string{"Device.DeviceInfo.UpTime"}},
		{"Device.DeviceInfo.UpTime.*", nil},
		{"Device.{i}.UpTime", nil},
		{"Device.Hosts.*", []string{"Device.Hosts.Host.1.Active", "Device.Hosts.Host.1.IPAddress", "Device.Hosts.Host.2.Active",
			"Device.Hosts.Host.2.IPAddress", "Device.Hosts.Host.2.IPv4Address.1.IPAddress", "Device.Hosts.Host.2.IPv4Address.2.IPAddress",
			"Device.Hosts.Host.2.IPv4AddressNumberOfEntries", "Device.Hosts.HostNumberOfEntries"}},
		{"", nil},
		{"Device.Hosts", nil},
	}
	for _, c := range cases {
		wantNames(t, "Match("+c.pattern+")", d.Match(c.pattern), c.want)
	}
	if got := d.Match("*"); len(got) != d.Template().Len()+1 {
		t.Fatalf("Match(*) = %d names", len(got))
	}
}

func TestSearch(t *testing.T) {
	d := New(small(t))
	d.SetResolver(func(name string) (string, bool) {
		if name == "Device.DeviceInfo.UpTime" {
			return "4242", true
		}
		return "", false
	})
	cases := []struct {
		name, value string
		limit       int
		want        []string
	}{
		{"ipaddress", "", 0, []string{"Device.Hosts.Host.1.IPAddress", "Device.Hosts.Host.2.IPAddress", "Device.Hosts.Host.2.IPv4Address.1.IPAddress"}},
		{"IPADDRESS", "", 2, []string{"Device.Hosts.Host.1.IPAddress", "Device.Hosts.Host.2.IPAddress"}},
		{"", "192.168.1.11", 0, []string{"Device.Hosts.Host.2.IPAddress", "Device.Hosts.Host.2.IPv4Address.1.IPAddress"}},
		{"host.2", "192.168.1.11", 1, []string{"Device.Hosts.Host.2.IPAddress"}},
		{"", "CPESUITE", -1, []string{"Device.DeviceInfo.Manufacturer"}},
		{"", "4242", 0, []string{"Device.DeviceInfo.UpTime"}}, // resolved values are searched
		{"nothing", "", 0, nil},
	}
	for _, c := range cases {
		wantNames(t, "Search("+c.name+","+c.value+")", namesOf(d.Search(c.name, c.value, c.limit)), c.want)
	}
	if got := d.Search("", "", 0); len(got) != 14 {
		t.Fatalf("Search all = %d", len(got))
	}
	big := New(mustBase(t, TR181))
	if got := big.Search("", "", 0); len(got) != 100 {
		t.Fatalf("default limit: %d results", len(got))
	}
	if got := big.Search("", "", 1000); len(got) != big.Template().Len() {
		t.Fatalf("limit 1000: %d results, want %d", len(got), big.Template().Len())
	}
}

func TestResolver(t *testing.T) {
	d := New(small(t))
	calls := 0
	d.SetResolver(func(name string) (string, bool) {
		calls++
		switch name {
		case "Device.DeviceInfo.UpTime":
			// A resolver may read the tree: it runs without the lock.
			p, _ := d.Get("Device.ManagementServer.PeriodicInformInterval")
			return p.Value + "0", true
		case "Device.DeviceInfo.SoftwareVersion":
			return "9.9", true
		}
		return "", false
	})
	wantValue(t, d, "Device.DeviceInfo.UpTime", "3000")
	ps, _ := d.Values([]string{"Device.DeviceInfo."})
	if ps[3].Name != "Device.DeviceInfo.UpTime" || ps[3].Value != "3000" {
		t.Fatalf("Values: %+v", ps)
	}
	if got := d.List("Device.DeviceInfo.Up"); got[0].Value != "3000" {
		t.Fatalf("List: %+v", got)
	}
	inf := d.InformParams()
	if inf[0].Value != "9.9" {
		t.Fatalf("InformParams: %+v", inf)
	}
	// Names gives stored values, and objects are never resolved.
	ns, _ := d.Names("Device.DeviceInfo.UpTime", false)
	if ns[0].Value != "0" {
		t.Fatalf("Names: %+v", ns)
	}
	before := calls
	d.Get("Device.DeviceInfo.")
	if calls != before {
		t.Fatalf("resolver called for an object")
	}
	d.SetResolver(nil)
	wantValue(t, d, "Device.DeviceInfo.UpTime", "0")
}

func TestInformParams(t *testing.T) {
	d := New(small(t))
	got := d.InformParams()
	want := []Param{
		{Name: "Device.DeviceInfo.SoftwareVersion", Value: "1.0", Notification: 2},
		{Name: "Device.DeviceInfo.ProvisioningCode", Writable: true},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("InformParams = %+v", got)
	}
	if _, err := d.SetValues([]Set{{Name: "Device.DeviceInfo.ProvisioningCode", Value: "abc"}}, SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := d.InformParams(); got[1].Value != "abc" {
		t.Fatalf("after set: %+v", got)
	}
	// Parameters of a deleted instance are no longer sent.
	tp := mustParse(t, doc(`<Parameter name="Device.IP.Interface.1.IPv4Address.1.IPAddress" inform="true">10.0.0.1</Parameter>`,
		`<Parameter name="Device.DeviceInfo.SoftwareVersion" inform="true">1</Parameter>`))
	d = New(tp)
	wantNames(t, "InformParams", namesOf(d.InformParams()), []string{"Device.IP.Interface.1.IPv4Address.1.IPAddress", "Device.DeviceInfo.SoftwareVersion"})
	if err := d.DeleteObject("Device.IP.Interface.1."); err != nil {
		t.Fatal(err)
	}
	wantNames(t, "InformParams", namesOf(d.InformParams()), []string{"Device.DeviceInfo.SoftwareVersion"})
}
