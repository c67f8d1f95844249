package cpe

import (
	"strconv"
	"testing"
	"time"

	"cpesuite/internal/cwmp"
	"cpesuite/internal/tr069emu/tr143"
	"cpesuite/internal/tr069emu/tree"
)

// wanNames are the WAN counters of the bundled trees, as an ACS reads them.
var wanNames = []struct {
	model    string
	rx, tx   string
	alsoRx   []string // other counters of the same WAN, equal to rx
	wrapsAt  uint64   // 0: 64-bit
	typeName string
}{
	{tree.TR181, "Device.IP.Interface.1.Stats.BytesReceived", "Device.IP.Interface.1.Stats.BytesSent",
		[]string{"Device.Ethernet.Interface.2.Stats.BytesReceived"}, 0, cwmp.TypeUnsignedLong},
	{tree.TR098, "InternetGatewayDevice.WANDevice.1.WANCommonInterfaceConfig.TotalBytesReceived",
		"InternetGatewayDevice.WANDevice.1.WANCommonInterfaceConfig.TotalBytesSent",
		[]string{"InternetGatewayDevice.WANDevice.1.WANEthernetInterfaceConfig.Stats.BytesReceived",
			"InternetGatewayDevice.WANDevice.1.WANConnectionDevice.1.WANIPConnection.1.Stats.EthernetBytesReceived"},
		1 << 32, cwmp.TypeUnsignedInt},
}

// sample is one GetParameterValues of the counters, bracketed by the
// times before the request and after the answer.
type sample struct {
	rx, tx     uint64
	also       []uint64
	start, end time.Time
}

// readWAN reads the counters the way the executor does, over CWMP, and
// checks each value as a strict ACS would: the declared type, and a value
// that parses as that type (an unsignedInt above 2^32-1 is refused).
func readWAN(t *testing.T, a *acsDouble, d *Device, rx, tx string, also []string, typ string) sample {
	t.Helper()
	s := sample{start: time.Now()}
	names := append([]string{rx, tx}, also...)
	resp := as[*cwmp.GetParameterValuesResponse](t, a.call(t, d, &cwmp.GetParameterValues{ParameterNames: names}))
	s.end = time.Now()
	got := map[string]uint64{}
	for _, p := range resp.ParameterList {
		bits := 64
		if p.Value.Type == cwmp.TypeUnsignedInt {
			bits = 32
		}
		if p.Value.Type != typ {
			t.Fatalf("%s has type %s, want %s", p.Name, p.Value.Type, typ)
		}
		n, err := strconv.ParseUint(p.Value.Text, 10, bits)
		if err != nil {
			t.Fatalf("%s = %q is not an %s: %v", p.Name, p.Value.Text, typ, err)
		}
		got[p.Name] = n
	}
	s.rx, s.tx = got[rx], got[tx]
	for _, n := range also {
		s.also = append(s.also, got[n])
	}
	return s
}

// atMost is the most a counter can have moved between two samples at
// rate: the whole span from the first request to the second answer.
func atMost(rate int64, a, b sample) uint64 {
	return uint64(float64(rate)*b.end.Sub(a.start).Seconds()) + 1
}

// TestWANCounters holds the WAN byte counters of both data models against
// what the executor's WAN-busy rule needs: they move while idle, slowly;
// a busy rate shows in them and clearing it brings back the idle rate;
// they never go back; they include the device's own TR-143 traffic; a
// reboot restarts them.
func TestWANCounters(t *testing.T) {
	t.Parallel()
	st := speedtestServer(t)
	const busyRx, busyTx = 40_000_000, 10_000_000
	for _, m := range wanNames {
		t.Run(m.model, func(t *testing.T) {
			t.Parallel()
			a, d := rpcDevice(t, m.model, Settings{})
			read := func() sample { return readWAN(t, a, d, m.rx, m.tx, m.alsoRx, m.typeName) }
			monotonic := func(prev, next sample) {
				t.Helper()
				if next.rx < prev.rx || next.tx < prev.tx {
					t.Fatalf("counters went back: rx %d -> %d, tx %d -> %d", prev.rx, next.rx, prev.tx, next.tx)
				}
			}

			// Idle: they move, at no more than the background rates.
			first := read()
			var idle sample
			eventually(t, "idle counters to move", func() bool { idle = read(); return idle.rx > first.rx && idle.tx > first.tx })
			monotonic(first, idle)
			if got, most := idle.rx-first.rx, atMost(IdleRxRate, first, idle); got > most {
				t.Fatalf("idle: %d bytes received, more than the idle rate allows (%d)", got, most)
			}
			for i, v := range idle.also {
				if v < first.rx || v > idle.rx+atMost(IdleRxRate, first, idle) {
					t.Fatalf("%s = %d, not the WAN's received count (%d..%d)", m.alsoRx[i], v, first.rx, idle.rx)
				}
			}

			// Busy: the rate shows in the counters, within the samples' bracket.
			d.SetWANBusy(busyRx, busyTx)
			if tr := d.WANTraffic(); tr.BusyRxRate != busyRx || tr.BusyTxRate != busyTx {
				t.Fatalf("WANTraffic %+v after SetWANBusy", tr)
			}
			b1 := read()
			var b2 sample
			eventually(t, "busy counters to move by a megabyte", func() bool { b2 = read(); return b2.rx-b1.rx > 1_000_000 })
			monotonic(b1, b2)
			if got, most := b2.rx-b1.rx, atMost(busyRx, b1, b2); got > most {
				t.Fatalf("busy: %d bytes received, more than %d B/s allows (%d)", got, busyRx, most)
			}
			if least := uint64(float64(busyTx) * b2.start.Sub(b1.end).Seconds()); b2.tx-b1.tx < least {
				t.Fatalf("busy: %d bytes sent, less than %d B/s gives between the samples (%d)", b2.tx-b1.tx, busyTx, least)
			}

			// Idle again: the count stays, the rate falls back.
			d.SetWANBusy(0, 0)
			c1 := read()
			monotonic(b2, c1)
			c2 := read()
			if got, most := c2.rx-c1.rx, atMost(IdleRxRate, c1, c2); got > most {
				t.Fatalf("cleared: %d bytes received, more than the idle rate allows (%d)", got, most)
			}

			// The device's own diagnostics count.
			dl := tr143.Object(m.model, tr143.Download)
			diagnose(t, a, d, dl, map[string]cwmp.Value{"DownloadURL": cwmp.String(st + "/download?size=2000000")})
			after := read()
			monotonic(c2, after)
			if after.rx-c2.rx < 2_000_000 {
				t.Fatalf("a 2 MB download diagnostic added %d bytes received", after.rx-c2.rx)
			}

			// A reboot restarts them, as a CPE's interface counters do.
			d.Reboot("", false)
			if rebooted := read(); rebooted.rx >= after.rx {
				t.Fatalf("after reboot rx %d, before %d: want restarted", rebooted.rx, after.rx)
			}
		})
	}
}

// TestWANCounterTypes: a 32-bit counter (TR-098's unsignedInt) wraps as
// the data model's counter does instead of overflowing its type; a 64-bit
// one carries on.
func TestWANCounterTypes(t *testing.T) {
	t.Parallel()
	const moved = 1<<32 + 12345
	for _, m := range wanNames {
		t.Run(m.model, func(t *testing.T) {
			t.Parallel()
			a, d := rpcDevice(t, m.model, Settings{})
			before := readWAN(t, a, d, m.rx, m.tx, nil, m.typeName)
			d.countWAN(moved, 0)
			got := readWAN(t, a, d, m.rx, m.tx, nil, m.typeName)
			want := before.rx + moved
			if m.wrapsAt > 0 {
				want %= m.wrapsAt
			}
			// The idle rate adds a little between the two reads.
			if most := atMost(IdleRxRate, before, got); got.rx < want || got.rx > want+most {
				t.Fatalf("%s = %d, want %d (+ at most %d idle bytes)", m.rx, got.rx, want, most)
			}
		})
	}
}
