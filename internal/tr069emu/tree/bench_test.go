package tree

import (
	"runtime"
	"strconv"
	"testing"
)

// heapPerTree returns the heap bytes each of n trees built by mk costs.
func heapPerTree(n int, mk func(i int) *Tree) float64 {
	trees := make([]*Tree, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range trees {
		trees[i] = mk(i)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(trees)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
}

// tenOverrides writes what an emulated device typically changes: its
// identity, ACS settings and a few values set by the ACS.
func tenOverrides(d *Tree, i int) {
	s := strconv.Itoa(i)
	_, err := d.SetValues([]Set{
		{Name: "Device.DeviceInfo.SerialNumber", Value: "EMU" + s},
		{Name: "Device.DeviceInfo.ProvisioningCode", Value: "prov-" + s},
		{Name: "Device.ManagementServer.URL", Value: "http://acs.example.net:7547/cwmp"},
		{Name: "Device.ManagementServer.ConnectionRequestURL", Value: "http://10.1.2.3:" + s + "/"},
		{Name: "Device.ManagementServer.ParameterKey", Value: "key-" + s},
		{Name: "Device.ManagementServer.PeriodicInformInterval", Value: "300"},
		{Name: "Device.WiFi.SSID.1.SSID", Value: "home-" + s},
		{Name: "Device.WiFi.AccessPoint.1.Security.KeyPassphrase", Value: "secret-" + s},
		{Name: "Device.WiFi.Radio.1.Channel", Value: "11"},
		{Name: "Device.WiFi.Radio.1.X_CPESUITE_SNR", Value: "28"},
	}, SetOptions{})
	if err != nil {
		panic(err)
	}
}

// TestTreeMemory keeps the promise of the emulator: an untouched tree is
// nearly free, and a typical device well under its 100 KB budget.
func TestTreeMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 10,000 trees")
	}
	base := mustBase(t, TR181)
	const n = 10_000
	idle := heapPerTree(n, func(int) *Tree { return New(base) })
	ten := heapPerTree(n, func(i int) *Tree { d := New(base); tenOverrides(d, i); return d })
	t.Logf("heap per tree: idle %.0f B, with 10 overrides %.0f B", idle, ten)
	if idle > 4096 {
		t.Errorf("idle tree costs %.0f bytes, want < 4 KB", idle)
	}
	if ten > 16384 {
		t.Errorf("tree with 10 overrides costs %.0f bytes, want < 16 KB", ten)
	}
}

// BenchmarkIdleTreeMemory reports the heap of 10,000 devices' trees, idle
// and with 10 overrides each.
func BenchmarkIdleTreeMemory(b *testing.B) {
	base := mustBase(b, TR181)
	var idle, ten float64
	for b.Loop() {
		idle = heapPerTree(10_000, func(int) *Tree { return New(base) })
		ten = heapPerTree(10_000, func(i int) *Tree { d := New(base); tenOverrides(d, i); return d })
	}
	b.ReportMetric(idle, "B/idle-tree")
	b.ReportMetric(ten, "B/tree-10-overrides")
}

func BenchmarkValuesPartial(b *testing.B) {
	d := New(mustBase(b, TR181))
	tenOverrides(d, 1)
	names := []string{"Device.WiFi.Radio.1."}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Values(names); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValuesAll(b *testing.B) {
	d := New(mustBase(b, TR181))
	tenOverrides(d, 1)
	names := []string{""}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Values(names); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSetValues(b *testing.B) {
	d := New(mustBase(b, TR181))
	tenOverrides(d, 1)
	sets := [2][]Set{
		{{Name: "Device.ManagementServer.PeriodicInformInterval", Value: "60"}, {Name: "Device.WiFi.Radio.1.Channel", Value: "1"}},
		{{Name: "Device.ManagementServer.PeriodicInformInterval", Value: "120"}, {Name: "Device.WiFi.Radio.1.Channel", Value: "6"}},
	}
	opts := SetOptions{CheckWritable: true, CheckType: true}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := d.SetValues(sets[i&1], opts); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkNamesNextLevel(b *testing.B) {
	d := New(mustBase(b, TR181))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Names("Device.", true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAddDeleteObject(b *testing.B) {
	d := New(mustBase(b, TR181))
	b.ReportAllocs()
	for b.Loop() {
		n, err := d.AddObject("Device.Hosts.Host.")
		if err != nil {
			b.Fatal(err)
		}
		if err := d.DeleteObject("Device.Hosts.Host." + strconv.Itoa(int(n)) + "."); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseBase(b *testing.B) {
	data := BaseFiles()["tr181-base.xml"]
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(bytesReader(data), 0); err != nil {
			b.Fatal(err)
		}
	}
}
