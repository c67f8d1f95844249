package cpe

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"cpesuite/internal/tr069emu/tree"
)

// Background traffic of an idle WAN, bytes per second: a CPE is never
// silent (DNS, NTP, its own management traffic), and a reader of two
// counter samples must see them move, but far below any busy threshold.
const (
	IdleRxRate = 2_000
	IdleTxRate = 1_000
)

// MaxWANRate bounds a busy rate, bytes per second: 10 Gbit/s, more than any
// emulated line, and small enough that rate x nanoseconds fits an int64.
const MaxWANRate = 1_250_000_000

// meanPacketBytes turns byte counters into packet counters. The emulator
// has no packets; a mean between full frames and ACKs keeps the two
// counters in proportion, as an ACS comparing them would expect.
const meanPacketBytes = 1000

// WANTraffic is a device's WAN usage as its counters report it.
type WANTraffic struct {
	// Busy rates in bytes per second; 0 means that direction is idle (the
	// background rate applies).
	BusyRxRate, BusyTxRate int64
	// Bytes counted since boot, background, busy and diagnostics together.
	BytesReceived, BytesSent int64
}

// wanCounters are computed on read from the clock: rate x time since the
// last change plus what was accumulated before it. Nothing ticks, so an
// idle device costs no goroutine, timer or write.
type wanCounters struct {
	mu             sync.Mutex
	since          time.Time // start of the current rates
	accRx, accTx   int64     // bytes up to since, plus diagnostics
	busyRx, busyTx int64     // 0: that direction's idle rate
	rateRx, rateTx int64     // rates in force since since
	booted         bool      // nothing moves before the first boot
}

// ratesLocked returns the rates the busy settings call for.
func (w *wanCounters) ratesLocked() (int64, int64) {
	rx, tx := w.busyRx, w.busyTx
	if rx == 0 {
		rx = IdleRxRate
	}
	if tx == 0 {
		tx = IdleTxRate
	}
	return rx, tx
}

// bytesLocked returns the counters at now.
func (w *wanCounters) bytesLocked(now time.Time) (rx, tx int64) {
	if !w.booted {
		return w.accRx, w.accTx
	}
	el := now.Sub(w.since)
	if el < 0 {
		el = 0
	}
	return w.accRx + over(w.rateRx, el), w.accTx + over(w.rateTx, el)
}

// over is rate bytes/s for el, without overflowing for any rate up to
// MaxWANRate and any uptime.
func over(rate int64, el time.Duration) int64 {
	secs, rem := int64(el/time.Second), int64(el%time.Second)
	return rate*secs + rate*rem/int64(time.Second)
}

// restartLocked folds what was counted into acc and starts the current
// rates at now.
func (w *wanCounters) restartLocked(now time.Time) {
	w.accRx, w.accTx = w.bytesLocked(now)
	w.since = now
	w.rateRx, w.rateTx = w.ratesLocked()
}

// boot zeroes the counters at a (re)boot, as a CPE's interface counters
// restart with it; busy settings survive: they are the test's, not the
// device's.
func (w *wanCounters) boot(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.accRx, w.accTx, w.booted = 0, 0, true
	w.since = now
	w.rateRx, w.rateTx = w.ratesLocked()
}

func (w *wanCounters) setBusy(rx, tx int64, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.busyRx, w.busyTx = rx, tx
	w.restartLocked(now)
}

func (w *wanCounters) add(rx, tx int64) {
	w.mu.Lock()
	w.accRx += rx
	w.accTx += tx
	w.mu.Unlock()
}

func (w *wanCounters) traffic(now time.Time) WANTraffic {
	w.mu.Lock()
	defer w.mu.Unlock()
	rx, tx := w.bytesLocked(now)
	return WANTraffic{BusyRxRate: w.busyRx, BusyTxRate: w.busyTx, BytesReceived: rx, BytesSent: tx}
}

// SetWANBusy makes the device's WAN carry rx bytes per second downstream
// and tx upstream instead of the background rates; 0 leaves a direction
// (or, both 0, the WAN) idle again. The counters never go back: what was
// counted so far stays. Rates must be within 0..MaxWANRate.
func (d *Device) SetWANBusy(rx, tx int64) {
	d.wan.setBusy(min(max(rx, 0), MaxWANRate), min(max(tx, 0), MaxWANRate), time.Now())
}

// WANTraffic returns the busy setting and the counters now.
func (d *Device) WANTraffic() WANTraffic { return d.wan.traffic(time.Now()) }

// countWAN adds bytes the device moved itself (TR-143 diagnostics).
func (d *Device) countWAN(rx, tx int64) { d.wan.add(rx, tx) }

// wanParam is how one counter parameter derives from the WAN counters.
type wanParam struct {
	tx      bool // sent, else received
	packets bool
	// mod, when set, is where a 32-bit counter wraps, as the data model's
	// counter does (TR-098's are unsignedInt): readers take differences
	// modulo it.
	mod int64
}

// wanParamsOf caches, per template, which parameters are WAN counters.
var wanParamsOf sync.Map // *tree.Template -> map[string]wanParam

// wanParams returns the WAN counter parameters of a template.
func wanParams(t *tree.Template) map[string]wanParam {
	if m, ok := wanParamsOf.Load(t); ok {
		return m.(map[string]wanParam)
	}
	m := findWANParams(t)
	actual, _ := wanParamsOf.LoadOrStore(t, m)
	return actual.(map[string]wanParam)
}

// findWANParams locates the WAN interface of a tree file. TR-098: the
// WANDevice and connection of Layer3Forwarding.DefaultConnectionService
// (WANDevice.1, connection 1 when unset). TR-181: every IP interface whose
// LowerLayers lead to an Ethernet interface with Upstream true, and that
// interface (IP.Interface.1 when none does).
func findWANParams(t *tree.Template) map[string]wanParam {
	m := map[string]wanParam{}
	add := func(prefix string, names map[string]wanParam) {
		for n, wp := range names {
			if p, ok := t.Lookup(prefix + n); ok && !p.Object {
				switch p.Type {
				case tree.UnsignedInt:
					wp.mod = 1 << 32
				case tree.Int:
					wp.mod = 1 << 31
				}
				m[prefix+n] = wp
			}
		}
	}
	stats := map[string]wanParam{
		"BytesSent": {tx: true}, "BytesReceived": {},
		"PacketsSent": {tx: true, packets: true}, "PacketsReceived": {packets: true},
	}
	root := t.Root()
	if root != "Device." {
		conn := root + "WANDevice.1.WANConnectionDevice.1.WANIPConnection.1"
		if p, ok := t.Lookup(root + "Layer3Forwarding.DefaultConnectionService"); ok && strings.HasPrefix(p.Value, root+"WANDevice.") {
			conn = strings.TrimSuffix(p.Value, ".")
		}
		dev := conn
		if i := strings.Index(dev, ".WANConnectionDevice."); i >= 0 {
			dev = dev[:i]
		}
		add(dev+".WANCommonInterfaceConfig.", map[string]wanParam{
			"TotalBytesSent": {tx: true}, "TotalBytesReceived": {},
			"TotalPacketsSent": {tx: true, packets: true}, "TotalPacketsReceived": {packets: true},
		})
		add(dev+".WANEthernetInterfaceConfig.Stats.", stats)
		add(conn+".Stats.", map[string]wanParam{
			"EthernetBytesSent": {tx: true}, "EthernetBytesReceived": {},
			"EthernetPacketsSent": {tx: true, packets: true}, "EthernetPacketsReceived": {packets: true},
		})
		return m
	}
	probe := tree.New(t)
	upstream := func(obj string) bool {
		p, ok := probe.Get(obj + ".Upstream")
		return ok && (p.Value == "true" || p.Value == "1")
	}
	var found bool
	for _, ll := range probe.Match("Device.IP.Interface.{i}.LowerLayers") {
		ipIf := strings.TrimSuffix(ll, "LowerLayers")
		// Follow the first lower layer down a few levels (IP -> Link ->
		// Interface is the usual stack).
		cur := ipIf
		for range 4 {
			p, ok := probe.Get(cur + "LowerLayers")
			if !ok || p.Value == "" {
				break
			}
			next, _, _ := strings.Cut(p.Value, ",")
			next = strings.TrimSuffix(strings.TrimSpace(next), ".")
			if upstream(next) {
				add(ipIf+"Stats.", stats)
				add(next+".Stats.", stats)
				found = true
				break
			}
			cur = next + "."
		}
	}
	if !found {
		add("Device.IP.Interface.1.Stats.", stats)
	}
	return m
}

// resolveWAN answers a WAN counter parameter from the counters.
func (d *Device) resolveWAN(params map[string]wanParam, name string) (string, bool) {
	wp, ok := params[name]
	if !ok {
		return "", false
	}
	tr := d.wan.traffic(time.Now())
	v := tr.BytesReceived
	if wp.tx {
		v = tr.BytesSent
	}
	if wp.packets {
		v /= meanPacketBytes
	}
	if wp.mod > 0 {
		v %= wp.mod
	}
	return strconv.FormatInt(v, 10), true
}
