package tree

import (
	"strconv"
	"sync"
	"testing"
)

// TestConcurrent runs every operation at once on one tree; run it with
// -race.
func TestConcurrent(t *testing.T) {
	d := New(mustBase(t, TR181))
	d.SetResolver(func(name string) (string, bool) {
		if name == "Device.DeviceInfo.UpTime" {
			p, _ := d.Get("Device.ManagementServer.PeriodicInformInterval")
			return p.Value, true
		}
		return "", false
	})
	const workers, rounds = 8, 150
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				v := strconv.Itoa(w*1000 + i)
				switch (w + i) % 8 {
				case 0:
					if _, err := d.SetValues([]Set{{Name: "Device.ManagementServer.PeriodicInformInterval", Value: v},
						{Name: "Device.WiFi.Radio.1.Channel", Value: strconv.Itoa(1 + i%13)}}, SetOptions{CheckWritable: true}); err != nil {
						errs <- err
					}
				case 1:
					if _, err := d.Values([]string{"Device.WiFi.", "Device.DeviceInfo.UpTime"}); err != nil {
						errs <- err
					}
				case 2:
					if _, err := d.Names("Device.IP.", i%2 == 0); err != nil {
						errs <- err
					}
				case 3:
					n, err := d.AddObject("Device.IP.Interface.")
					if err != nil {
						errs <- err
						continue
					}
					// Another worker may have deleted it already.
					_ = d.DeleteObject("Device.IP.Interface." + strconv.Itoa(int(n)) + ".")
				case 4:
					if err := d.SetNotification("Device.Hosts.", i%3); err != nil {
						errs <- err
					}
				case 5:
					c := d.Clone()
					if _, err := c.SetValues([]Set{{Name: "Device.DeviceInfo.ProvisioningCode", Value: v}}, SetOptions{}); err != nil {
						errs <- err
					}
				case 6:
					d.Match("Device.WiFi.Radio.{i}.*")
					d.Search("channel", "", 10)
					d.List("Device.Hosts.")
					d.InformParams()
					d.Overrides()
				case 7:
					_, _ = d.AddObject("Device.Hosts.Host.")
					_ = d.AddParameter("Device.Hosts.Host.1.IPv4Address.9.IPAddress", v)
					d.Get("Device.Hosts.Host.3.IPAddress")
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := len(d.List("Device.IP.Interface.")); n == 0 {
		t.Fatalf("IP interfaces gone")
	}
}
