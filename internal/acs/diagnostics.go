package acs

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// diagPaths are the TR-143 diagnostic objects of the two data models.
var diagPaths = map[string]map[TaskKind]string{
	DataModelTR098: {
		KindDownloadDiagnostics: "InternetGatewayDevice.DownloadDiagnostics.",
		KindUploadDiagnostics:   "InternetGatewayDevice.UploadDiagnostics.",
		KindIPPing:              "InternetGatewayDevice.IPPingDiagnostics.",
	},
	DataModelTR181: {
		KindDownloadDiagnostics: "Device.IP.Diagnostics.DownloadDiagnostics.",
		KindUploadDiagnostics:   "Device.IP.Diagnostics.UploadDiagnostics.",
		KindIPPing:              "Device.IP.Diagnostics.IPPing.",
	},
}

// diagObject returns the diagnostics object for the device's data model
// (TR-098 when unknown, as a null protocol counts as TR069).
func diagObject(dataModel string, kind TaskKind) string {
	if dataModel != DataModelTR181 {
		dataModel = DataModelTR098
	}
	return diagPaths[dataModel][kind]
}

// diagSetValues are the parameters written to request a diagnostic, with
// DiagnosticsState=Requested last so a CPE applying them in order sees the
// settings first.
func diagSetValues(dataModel string, kind TaskKind, a DiagnosticsArgs, speedtestURL string) []SetValue {
	obj := diagObject(dataModel, kind)
	var vals []SetValue
	add := func(name, value, typ string) {
		vals = append(vals, SetValue{Name: obj + name, Value: value, Type: typ})
	}
	u32 := func(n uint32) string { return strconv.FormatUint(uint64(n), 10) }
	if a.Interface != "" {
		add("Interface", a.Interface, "xsd:string")
	}
	// TR-143 names it DSCP in both data models' diagnostics objects.
	const dscp = "DSCP"
	switch kind {
	case KindDownloadDiagnostics:
		url := a.URL
		if url == "" {
			url = strings.TrimSuffix(speedtestURL, "/") + "/download?size=10000000"
		}
		add("DownloadURL", url, "xsd:string")
		add(dscp, strconv.Itoa(a.DSCP), "xsd:unsignedInt")
	case KindUploadDiagnostics:
		url := a.URL
		if url == "" {
			url = strings.TrimSuffix(speedtestURL, "/") + "/upload"
		}
		length := a.TestFileLength
		if length == 0 {
			length = 10_000_000
		}
		add("UploadURL", url, "xsd:string")
		add(dscp, strconv.Itoa(a.DSCP), "xsd:unsignedInt")
		add("TestFileLength", u32(length), "xsd:unsignedInt")
	case KindIPPing:
		host := a.Host
		if host == "" {
			host = "127.0.0.1"
		}
		reps, timeout, size := a.NumberOfRepetitions, a.TimeoutMs, a.DataBlockSize
		if reps == 0 {
			reps = 4
		}
		if timeout == 0 {
			timeout = 1000
		}
		if size == 0 {
			size = 64
		}
		add("Host", host, "xsd:string")
		add("NumberOfRepetitions", u32(reps), "xsd:unsignedInt")
		add("Timeout", u32(timeout), "xsd:unsignedInt")
		add("DataBlockSize", u32(size), "xsd:unsignedInt")
		add(dscp, strconv.Itoa(a.DSCP), "xsd:unsignedInt")
	}
	// TR-181 transfers may use several TCP connections (TR-143 Amendment 1).
	if dataModel == DataModelTR181 && kind != KindIPPing {
		if a.NumberOfConnections > 0 {
			add("NumberOfConnections", u32(a.NumberOfConnections), "xsd:unsignedInt")
		}
		if a.EnablePerConnResults {
			add("EnablePerConnectionResults", "true", "xsd:boolean")
		}
		if a.TimeBasedTestDuration > 0 {
			add("TimeBasedTestDuration", u32(a.TimeBasedTestDuration), "xsd:unsignedInt")
		}
	}
	add("DiagnosticsState", "Requested", "xsd:string")
	return vals
}

// TransferResult is the typed result of a download or upload diagnostic.
type TransferResult struct {
	DiagnosticsState    string                `json:"diagnosticsState"`
	ROMTime             string                `json:"romTime,omitempty"`
	BOMTime             string                `json:"bomTime,omitempty"`
	EOMTime             string                `json:"eomTime,omitempty"`
	TCPOpenRequestTime  string                `json:"tcpOpenRequestTime,omitempty"`
	TCPOpenResponseTime string                `json:"tcpOpenResponseTime,omitempty"`
	TestBytesReceived   *uint64               `json:"testBytesReceived,omitempty"`
	TestBytesSent       *uint64               `json:"testBytesSent,omitempty"`
	TotalBytesReceived  *uint64               `json:"totalBytesReceived,omitempty"`
	TotalBytesSent      *uint64               `json:"totalBytesSent,omitempty"`
	TestFileLength      *uint64               `json:"testFileLength,omitempty"`
	ThroughputKbps      *float64              `json:"throughputKbps,omitempty"`
	PerConnection       []PerConnectionResult `json:"perConnectionResults,omitempty"`
}

// PerConnectionResult is one TCP connection of a TR-181 multi-connection
// diagnostic.
type PerConnectionResult struct {
	Index               int     `json:"index"`
	ROMTime             string  `json:"romTime,omitempty"`
	BOMTime             string  `json:"bomTime,omitempty"`
	EOMTime             string  `json:"eomTime,omitempty"`
	TestBytesReceived   *uint64 `json:"testBytesReceived,omitempty"`
	TestBytesSent       *uint64 `json:"testBytesSent,omitempty"`
	TotalBytesReceived  *uint64 `json:"totalBytesReceived,omitempty"`
	TotalBytesSent      *uint64 `json:"totalBytesSent,omitempty"`
	TCPOpenRequestTime  string  `json:"tcpOpenRequestTime,omitempty"`
	TCPOpenResponseTime string  `json:"tcpOpenResponseTime,omitempty"`
}

// PingResult is the typed result of an IP ping diagnostic.
type PingResult struct {
	DiagnosticsState      string  `json:"diagnosticsState"`
	SuccessCount          *uint64 `json:"successCount,omitempty"`
	FailureCount          *uint64 `json:"failureCount,omitempty"`
	AverageResponseTimeMs *uint64 `json:"averageResponseTimeMs,omitempty"`
	MinimumResponseTimeMs *uint64 `json:"minimumResponseTimeMs,omitempty"`
	MaximumResponseTimeMs *uint64 `json:"maximumResponseTimeMs,omitempty"`
}

// parseDiagResult turns the GPV of the diagnostics object into a typed
// result. The returned state is the DiagnosticsState.
func parseDiagResult(dataModel string, kind TaskKind, params Params) (any, string, error) {
	obj := diagObject(dataModel, kind)
	get := func(name string) string { return params[obj+name].Value }
	num := func(name string) (*uint64, error) {
		v, ok := params[obj+name]
		if !ok || v.Value == "" {
			return nil, nil
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v.Value), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s%s: %q is not a whole number", obj, name, v.Value)
		}
		return &n, nil
	}
	state := get("DiagnosticsState")
	if state == "" {
		return nil, "", fmt.Errorf("%sDiagnosticsState missing from the results", obj)
	}
	var firstErr error
	must := func(p *uint64, err error) *uint64 {
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return p
	}
	if kind == KindIPPing {
		r := PingResult{DiagnosticsState: state,
			SuccessCount: must(num("SuccessCount")), FailureCount: must(num("FailureCount")),
			AverageResponseTimeMs: must(num("AverageResponseTime")), MinimumResponseTimeMs: must(num("MinimumResponseTime")),
			MaximumResponseTimeMs: must(num("MaximumResponseTime"))}
		return r, state, firstErr
	}
	r := TransferResult{DiagnosticsState: state,
		ROMTime: get("ROMTime"), BOMTime: get("BOMTime"), EOMTime: get("EOMTime"),
		TCPOpenRequestTime: get("TCPOpenRequestTime"), TCPOpenResponseTime: get("TCPOpenResponseTime"),
		TestBytesReceived: must(num("TestBytesReceived")), TestBytesSent: must(num("TestBytesSent")),
		TotalBytesReceived: must(num("TotalBytesReceived")), TotalBytesSent: must(num("TotalBytesSent")),
		TestFileLength: must(num("TestFileLength"))}
	for _, t := range []string{r.ROMTime, r.BOMTime, r.EOMTime} {
		if t != "" {
			if _, err := time.Parse(time.RFC3339Nano, t); err != nil && firstErr == nil {
				firstErr = fmt.Errorf("%q is not an ISO 8601 date-time", t)
			}
		}
	}
	bytes := r.TestBytesReceived
	if kind == KindUploadDiagnostics {
		bytes = r.TestFileLength
		if bytes == nil {
			bytes = r.TotalBytesSent
		}
	}
	if bom, err1 := time.Parse(time.RFC3339Nano, r.BOMTime); err1 == nil && bytes != nil {
		if eom, err2 := time.Parse(time.RFC3339Nano, r.EOMTime); err2 == nil && eom.After(bom) {
			kbps := float64(*bytes) * 8 / eom.Sub(bom).Seconds() / 1000
			r.ThroughputKbps = &kbps
		}
	}
	r.PerConnection = perConnection(obj, params, &firstErr)
	return r, state, firstErr
}

// perConnection collects PerConnectionResult.{i}. entries in index order.
func perConnection(obj string, params Params, firstErr *error) []PerConnectionResult {
	prefix := obj + "PerConnectionResult."
	byIndex := map[int]*PerConnectionResult{}
	var order []int
	for name, v := range params {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		idx, field, ok := strings.Cut(rest, ".")
		i, err := strconv.Atoi(idx)
		if !ok || err != nil || i < 1 {
			continue
		}
		pc := byIndex[i]
		if pc == nil {
			pc = &PerConnectionResult{Index: i}
			byIndex[i] = pc
			order = append(order, i)
		}
		num := func() *uint64 {
			n, err := strconv.ParseUint(strings.TrimSpace(v.Value), 10, 64)
			if err != nil {
				if *firstErr == nil {
					*firstErr = fmt.Errorf("%s: %q is not a whole number", name, v.Value)
				}
				return nil
			}
			return &n
		}
		switch field {
		case "ROMTime":
			pc.ROMTime = v.Value
		case "BOMTime":
			pc.BOMTime = v.Value
		case "EOMTime":
			pc.EOMTime = v.Value
		case "TCPOpenRequestTime":
			pc.TCPOpenRequestTime = v.Value
		case "TCPOpenResponseTime":
			pc.TCPOpenResponseTime = v.Value
		case "TestBytesReceived":
			pc.TestBytesReceived = num()
		case "TestBytesSent":
			pc.TestBytesSent = num()
		case "TotalBytesReceived":
			pc.TotalBytesReceived = num()
		case "TotalBytesSent":
			pc.TotalBytesSent = num()
		}
	}
	if len(order) == 0 {
		return nil
	}
	slices.Sort(order)
	out := make([]PerConnectionResult, 0, len(order))
	for _, i := range order {
		out = append(out, *byIndex[i])
	}
	return out
}
