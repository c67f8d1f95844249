package acs

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"cpesuite/internal/fcc/fccwire"
)

// defaultUploadBytes is what an upload sends when the campaign sets no
// fileSizeUpload: the diagnostics' own default.
const defaultUploadBytes = 10_000_000

// diagPlan is one measurement's diagnostic, resolved from the group's
// settings once.
type diagPlan struct {
	kind        TaskKind
	args        json.RawMessage
	url         string
	testMode    fccwire.TestMode
	connections int
	tier        *int64 // speed tier (Kbps) or latency tier (ms)
	wanDl       *int64
	wanUl       *int64
}

func (p *diagPlan) busy(w wanReading) bool {
	return (p.wanDl != nil && w.dl > *p.wanDl) || (p.wanUl != nil && w.ul > *p.wanUl)
}

// plan turns the group's settings into the diagnostic of direction dir.
func (r *campaignRun) plan(d *campaignDevice, g *fccwire.Group, dir fccwire.Direction) diagPlan {
	var p diagPlan
	var a DiagnosticsArgs
	if ps := g.Ping; ps != nil {
		p.kind, p.url, p.tier, p.wanDl, p.wanUl = KindIPPing, ps.TestHost, ps.LatencyTierMs, ps.WanDownloadThreshold, ps.WanUploadThreshold
		a.Host = ps.TestHost
		if ps.NumberOfRepetitions != nil {
			a.NumberOfRepetitions = uint32(*ps.NumberOfRepetitions)
		}
		if ps.TimeoutMs != nil {
			a.TimeoutMs = uint32(*ps.TimeoutMs)
		}
		if ps.DataBlockSize != nil {
			a.DataBlockSize = uint32(*ps.DataBlockSize)
		}
		p.args, _ = json.Marshal(a)
		return p
	}
	s := g.Speed
	if s == nil {
		s = &fccwire.SpeedSettings{TestMode: fccwire.FileBased}
	}
	p.wanDl, p.wanUl = s.WanDownloadThreshold, s.WanUploadThreshold
	base := strings.TrimSuffix(r.e.a.cfg.SpeedtestURL, "/")
	conns := (*int)(nil)
	if dir == fccwire.Download {
		p.kind, p.url, p.tier, conns = KindDownloadDiagnostics, s.DownloadURL, s.SpeedTierDownload, s.DownloadConnections
		if p.url == "" {
			p.url = base + "/download?size=10000000"
		}
	} else {
		p.kind, p.url, p.tier, conns = KindUploadDiagnostics, s.UploadURL, s.SpeedTierUpload, s.UploadConnections
		if p.url == "" {
			p.url = base + "/upload"
		}
		a.TestFileLength = defaultUploadBytes
		if s.FileSizeUpload != nil {
			a.TestFileLength = uint32(*s.FileSizeUpload)
		}
	}
	a.URL = p.url
	p.connections = 1
	// Several connections, per-connection results and time-based tests are
	// TR-181's (TR-143 Amendment 1); a TR-098 device runs one file-based
	// transfer and the result says so.
	p.testMode = fccwire.FileBased
	if d.Protocol == fccwire.ProtocolTR181 {
		if conns != nil && *conns > 1 {
			p.connections = *conns
			a.NumberOfConnections = uint32(*conns)
			a.EnablePerConnResults = true
		}
		if s.TestMode == fccwire.TimeBased && s.TimeBasedTestDuration != nil {
			p.testMode = fccwire.TimeBased
			a.TimeBasedTestDuration = uint32(*s.TimeBasedTestDuration)
		}
	}
	p.args, _ = json.Marshal(a)
	return p
}

// result is the common block of a result of measurement k.
func (r *campaignRun) result(d *campaignDevice, g *fccwire.Group, k measKey, p diagPlan, m *measurement, w wanReading) *fccwire.Result {
	res := &fccwire.Result{Type: r.head.Type, FccTestID: r.head.FccTestID, ActivationID: r.id, Iteration: k.Iteration,
		DomainID: r.head.DomainID, ConfigID: g.ConfigID, CpeID: d.CpeID, Serial: d.Serial, Direction: k.Direction, URL: p.url,
		StartedAt: fccwire.At(m.StartedAt), Attempts: max(m.Attempts, 1)}
	if r.head.Type == fccwire.TypeSpeed {
		res.TierKbps = p.tier
	}
	if w.read {
		res.WanUsageDlKbps, res.WanUsageUlKbps = &w.dl, &w.ul
	}
	return res
}

func (r *campaignRun) errorResult(d *campaignDevice, g *fccwire.Group, k measKey, p diagPlan, m *measurement, w wanReading, why string) *fccwire.Result {
	res := r.result(d, g, k, p, m, w)
	res.Status = fccwire.OutcomeError
	res.Description = clip(fmt.Sprintf("failed after %d attempts: %s", res.Attempts, why), 1024)
	return res
}

// measured builds the result of a finished diagnostic. An error means the
// figures cannot make a result (the attempt counts as failed).
func (r *campaignRun) measured(d *campaignDevice, g *fccwire.Group, k measKey, p diagPlan, m *measurement, w wanReading, t Task) (*fccwire.Result, error) {
	res := r.result(d, g, k, p, m, w)
	if p.kind == KindIPPing {
		var pr PingResult
		if err := json.Unmarshal(t.Result, &pr); err != nil {
			return nil, fmt.Errorf("ping result: %v", err)
		}
		lat, err := latencyBlock(pr)
		if err != nil {
			return nil, err
		}
		res.Latency = lat
		res.Status = fccwire.OutcomeOK
		if p.tier != nil && *lat.AverageMs > float64(*p.tier) {
			res.Status = fccwire.OutcomeBelowTier
		}
		return res, nil
	}
	var tr TransferResult
	if err := json.Unmarshal(t.Result, &tr); err != nil {
		return nil, fmt.Errorf("transfer result: %v", err)
	}
	sp, err := speedBlock(k.Direction, tr, p)
	if err != nil {
		return nil, err
	}
	res.Speed = sp
	res.Status = fccwire.OutcomeOK
	if p.tier != nil && sp.Kbps < float64(*p.tier) {
		res.Status = fccwire.OutcomeBelowTier
	}
	return res, nil
}

func latencyBlock(pr PingResult) (*fccwire.LatencyResult, error) {
	u := func(p *uint64) int {
		if p == nil {
			return 0
		}
		return int(min(*p, math.MaxInt32))
	}
	lat := &fccwire.LatencyResult{SuccessCount: u(pr.SuccessCount), FailureCount: u(pr.FailureCount)}
	if lat.SuccessCount < 1 {
		return nil, fmt.Errorf("no ping answered (%d failed)", lat.FailureCount)
	}
	if pr.AverageResponseTimeMs == nil || pr.MinimumResponseTimeMs == nil || pr.MaximumResponseTimeMs == nil {
		return nil, fmt.Errorf("ping times missing from the result")
	}
	avg, lo, hi := float64(*pr.AverageResponseTimeMs), float64(*pr.MinimumResponseTimeMs), float64(*pr.MaximumResponseTimeMs)
	lat.AverageMs, lat.MinMs, lat.MaxMs = &avg, &lo, &hi
	return lat, nil
}

func parseWireTime(s string) (*fccwire.Time, error) {
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil, fmt.Errorf("%q is not a date-time", s)
	}
	w := fccwire.At(t)
	return &w, nil
}

func int64p(p *uint64) *int64 {
	if p == nil || *p > math.MaxInt64 {
		return nil
	}
	v := int64(*p)
	return &v
}

// speedBlock turns TR-143 transfer figures into the result's speed block.
func speedBlock(dir fccwire.Direction, tr TransferResult, p diagPlan) (*fccwire.SpeedResult, error) {
	bom, err := parseWireTime(tr.BOMTime)
	if err != nil {
		return nil, err
	}
	eom, err := parseWireTime(tr.EOMTime)
	if err != nil {
		return nil, err
	}
	if bom == nil || eom == nil {
		return nil, fmt.Errorf("BOMTime or EOMTime missing from the result")
	}
	bytes := tr.TestBytesReceived
	total := tr.TotalBytesReceived
	if dir == fccwire.Upload {
		bytes, total = tr.TestBytesSent, tr.TotalBytesSent
		if bytes == nil {
			bytes = tr.TestFileLength
		}
	}
	if bytes == nil || *bytes > math.MaxInt64 {
		return nil, fmt.Errorf("test byte count missing from the result")
	}
	kbps, err := fccwire.Kbps(int64(*bytes), bom.Time, eom.Time)
	if err != nil {
		return nil, err
	}
	sp := &fccwire.SpeedResult{Kbps: kbps, TestMode: p.testMode, BOM: *bom, EOM: *eom, TestBytes: int64(*bytes),
		TotalBytes: int64p(total), Connections: p.connections}
	var firstErr error
	keep := func(s string) *fccwire.Time {
		t, err := parseWireTime(s)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return t
	}
	sp.ROMTime, sp.TCPOpenRequestTime, sp.TCPOpenResponseTime = keep(tr.ROMTime), keep(tr.TCPOpenRequestTime), keep(tr.TCPOpenResponseTime)
	if firstErr != nil {
		return nil, firstErr
	}
	for _, pc := range tr.PerConnection {
		c, err := connectionBlock(dir, pc)
		if err != nil {
			// Per-connection figures are extra: the transfer's stand.
			sp.PerConnection = nil
			break
		}
		sp.PerConnection = append(sp.PerConnection, c)
	}
	if n := len(sp.PerConnection); n > 0 {
		sp.Connections = n
	}
	return sp, nil
}

func connectionBlock(dir fccwire.Direction, pc PerConnectionResult) (fccwire.ConnectionResult, error) {
	c := fccwire.ConnectionResult{Connection: pc.Index}
	bom, err1 := parseWireTime(pc.BOMTime)
	eom, err2 := parseWireTime(pc.EOMTime)
	if err1 != nil || err2 != nil || bom == nil || eom == nil || !eom.After(bom.Time) {
		return c, fmt.Errorf("connection %d: no usable BOM/EOM", pc.Index)
	}
	c.BOM, c.EOM = *bom, *eom
	bytes, total := pc.TestBytesReceived, pc.TotalBytesReceived
	if dir == fccwire.Upload {
		bytes, total = pc.TestBytesSent, pc.TotalBytesSent
	}
	if bytes == nil || *bytes > math.MaxInt64 {
		return c, fmt.Errorf("connection %d: no test bytes", pc.Index)
	}
	c.TestBytes, c.TotalBytes = int64(*bytes), int64p(total)
	var err error
	if c.ROMTime, err = parseWireTime(pc.ROMTime); err != nil {
		return c, err
	}
	if c.TCPOpenRequestTime, err = parseWireTime(pc.TCPOpenRequestTime); err != nil {
		return c, err
	}
	if c.TCPOpenResponseTime, err = parseWireTime(pc.TCPOpenResponseTime); err != nil {
		return c, err
	}
	return c, nil
}

// wanReading is a WAN usage check's outcome in Kbps.
type wanReading struct {
	read   bool
	dl, ul int64
}

// wanCounters names the WAN byte counters of a data model: received
// (download) and sent (upload), and whether they wrap at 2^32 (TR-098's
// unsignedInt; TR-181's Stats are unsignedLong).
func wanCounters(dataModel string) (rx, tx string, wrap32 bool) {
	if dataModel == DataModelTR181 {
		return "Device.IP.Interface.1.Stats.BytesReceived", "Device.IP.Interface.1.Stats.BytesSent", false
	}
	return "InternetGatewayDevice.WANDevice.1.WANCommonInterfaceConfig.TotalBytesReceived",
		"InternetGatewayDevice.WANDevice.1.WANCommonInterfaceConfig.TotalBytesSent", true
}

// wanUsage reads the WAN counters twice, WANSampleInterval apart, and
// returns the usage between the reads.
func (r *campaignRun) wanUsage(ctx context.Context, d *campaignDevice) (wanReading, error) {
	dm := DataModelTR098
	if d.Protocol == fccwire.ProtocolTR181 {
		dm = DataModelTR181
	}
	if dev, err := r.e.a.store.Device(ctx, d.CpeID); err == nil && dev.DataModel != "" {
		dm = dev.DataModel
	}
	rx, tx, wrap := wanCounters(dm)
	read := func() (rxv, txv uint64, at time.Time, err error) {
		t, err := r.runTask(ctx, d.CpeID, KindGetParameterValues, NamesArgs{Names: []string{rx, tx}})
		if err != nil {
			return 0, 0, at, err
		}
		if t.State != TaskDone || t.FinishedAt == nil {
			return 0, 0, at, fmt.Errorf("reading WAN counters: %s", faultText(t))
		}
		var p Params
		if err := json.Unmarshal(t.Result, &p); err != nil {
			return 0, 0, at, err
		}
		rxv, err1 := strconv.ParseUint(p[rx].Value, 10, 64)
		txv, err2 := strconv.ParseUint(p[tx].Value, 10, 64)
		if err1 != nil || err2 != nil {
			return 0, 0, at, fmt.Errorf("WAN counters %q, %q are not numbers", p[rx].Value, p[tx].Value)
		}
		return rxv, txv, *t.FinishedAt, nil
	}
	rx1, tx1, t1, err := read()
	if err != nil {
		return wanReading{}, err
	}
	if !sleep(ctx, r.e.cfg.WANSampleInterval) {
		return wanReading{}, ctx.Err()
	}
	rx2, tx2, t2, err := read()
	if err != nil {
		return wanReading{}, err
	}
	secs := t2.Sub(t1).Seconds()
	if secs <= 0 {
		return wanReading{}, fmt.Errorf("WAN counter reads not apart in time")
	}
	return wanReading{read: true, dl: usageKbps(rx1, rx2, wrap, secs), ul: usageKbps(tx1, tx2, wrap, secs)}, nil
}

// usageKbps is the rate between two counter values. A 32-bit counter
// that went down wrapped (modulo 2^32); a 64-bit one that went down was
// reset (a reboot), and counts from 0.
func usageKbps(from, to uint64, wrap32 bool, secs float64) int64 {
	var diff uint64
	switch {
	case to >= from:
		diff = to - from
	case wrap32:
		diff = (to - from) & (1<<32 - 1)
	default:
		diff = to
	}
	return int64(math.Round(float64(diff) * 8 / 1000 / secs))
}
