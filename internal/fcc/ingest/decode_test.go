package ingest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/fcc/fccwire"
)

// bases are valid results of every shape: the contract's golden files and
// generated ones for each outcome.
func bases(t *testing.T) map[string]*fccwire.Result {
	t.Helper()
	out := map[string]*fccwire.Result{}
	for _, f := range []string{"result-speed.json", "result-latency.json"} {
		data, err := os.ReadFile(filepath.Join("..", "fccwire", "testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		var r fccwire.Result
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		out[f] = &r
	}
	errLatency := result(1, "E1", 1)
	errLatency.Status, errLatency.Latency = "ERROR", &fccwire.LatencyResult{FailureCount: 3}
	out["latency-error-counts"] = errLatency
	busy := result(1, "W1", 1)
	busy.Status, busy.Latency = "WAN_BUSY", nil
	out["latency-wan-busy"] = busy
	speedErr := *out["result-speed.json"]
	speedErr.Status, speedErr.Speed, speedErr.Description = "ERROR", nil, "9007 Download failed"
	out["speed-error"] = &speedErr
	return out
}

func canonicalBytes(t *testing.T, r *fccwire.Result) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func clone(t *testing.T, r *fccwire.Result) *fccwire.Result {
	t.Helper()
	var c fccwire.Result
	if err := json.Unmarshal(canonicalBytes(t, r), &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

func i64(v int64) *int64       { return &v }
func f64(v float64) *float64   { return &v }
func tm(s string) fccwire.Time { v, _ := time.Parse(time.RFC3339, s); return fccwire.At(v) }

// TestDecodeFastPathNeverLaxer holds the fast path to fccwire.Decode: for
// every valid shape it must take the fast path, and for each of many
// broken variants (value rules the schema states, fccwire's checks, and
// non-canonical spellings) whatever it accepts Decode must accept with the
// same value.
func TestDecodeFastPathNeverLaxer(t *testing.T) {
	t.Parallel()
	mutations := map[string]func(r *fccwire.Result){
		"as is":        func(*fccwire.Result) {},
		"old version":  func(r *fccwire.Result) { r.WireVersion = "1.4" },
		"other kind":   func(r *fccwire.Result) { r.Kind = "STOP" },
		"unknown type": func(r *fccwire.Result) { r.Type = "VOICE" },
		"type swapped": func(r *fccwire.Result) {
			r.Type = map[fccwire.TestType]fccwire.TestType{"SPEED": "LATENCY", "LATENCY": "SPEED"}[r.Type]
		},
		"fccTestId 0":           func(r *fccwire.Result) { r.FccTestID = 0 },
		"activationId -1":       func(r *fccwire.Result) { r.ActivationID = -1 },
		"configId 0":            func(r *fccwire.Result) { r.ConfigID = 0 },
		"cpeId 0":               func(r *fccwire.Result) { r.CpeID = 0 },
		"domainId 0":            func(r *fccwire.Result) { r.DomainID = 0 },
		"domainId -1":           func(r *fccwire.Result) { r.DomainID = -1 },
		"iteration 0":           func(r *fccwire.Result) { r.Iteration = 0 },
		"attempts 0":            func(r *fccwire.Result) { r.Attempts = 0 },
		"serial blank":          func(r *fccwire.Result) { r.Serial = "" },
		"serial leading space":  func(r *fccwire.Result) { r.Serial = " A1" },
		"serial trailing tab":   func(r *fccwire.Result) { r.Serial = "A1\t" },
		"serial NUL":            func(r *fccwire.Result) { r.Serial = "A\x001" },
		"serial DEL":            func(r *fccwire.Result) { r.Serial = "A\x7f1" },
		"serial C1 control":     func(r *fccwire.Result) { r.Serial = "A\u00851" },
		"serial NBSP end":       func(r *fccwire.Result) { r.Serial = "A1\u00a0" },
		"serial inner space":    func(r *fccwire.Result) { r.Serial = "A 1" },
		"serial unicode":        func(r *fccwire.Result) { r.Serial = "Ä1-日本" },
		"serial 64":             func(r *fccwire.Result) { r.Serial = strings.Repeat("é", 64) },
		"serial 65":             func(r *fccwire.Result) { r.Serial = strings.Repeat("A", 65) },
		"direction PING":        func(r *fccwire.Result) { r.Direction = "PING" },
		"direction UPLOAD":      func(r *fccwire.Result) { r.Direction = "UPLOAD" },
		"direction unknown":     func(r *fccwire.Result) { r.Direction = "SIDEWAYS" },
		"url empty":             func(r *fccwire.Result) { r.URL = "" },
		"url host only":         func(r *fccwire.Result) { r.URL = "speed.example.net" },
		"url ipv6 host":         func(r *fccwire.Result) { r.URL = "[2001:db8::1]" },
		"url ftp":               func(r *fccwire.Result) { r.URL = "ftp://files.example.net/10MB" },
		"url credentials":       func(r *fccwire.Result) { r.URL = "http://u:p@h.example.net/x" },
		"url space":             func(r *fccwire.Result) { r.URL = "http://h.example.net/a b" },
		"url gopher":            func(r *fccwire.Result) { r.URL = "gopher://h.example.net/" },
		"url non-ascii":         func(r *fccwire.Result) { r.URL = "http://bücher.example/x" },
		"url 257":               func(r *fccwire.Result) { r.URL = "http://h/" + strings.Repeat("a", 248) },
		"url 256":               func(r *fccwire.Result) { r.URL = "http://h/" + strings.Repeat("a", 247) },
		"host slash":            func(r *fccwire.Result) { r.URL = "h.example.net/x" },
		"tier -1":               func(r *fccwire.Result) { r.TierKbps = i64(-1) },
		"tier 0":                func(r *fccwire.Result) { r.TierKbps = i64(0) },
		"wan dl -1":             func(r *fccwire.Result) { r.WanUsageDlKbps = i64(-1) },
		"wan ul 5":              func(r *fccwire.Result) { r.WanUsageUlKbps = i64(5) },
		"finished before start": func(r *fccwire.Result) { r.FinishedAt = tm("2020-01-01T00:00:00Z") },
		"finished equals start": func(r *fccwire.Result) { r.FinishedAt = r.StartedAt },
		"status unknown":        func(r *fccwire.Result) { r.Status = "MAYBE" },
		"status WAN_BUSY":       func(r *fccwire.Result) { r.Status = "WAN_BUSY" },
		"status OK":             func(r *fccwire.Result) { r.Status = "OK" },
		"status ERROR":          func(r *fccwire.Result) { r.Status = "ERROR" },
		"description 1024":      func(r *fccwire.Result) { r.Description = strings.Repeat("ü", 1024) },
		"description 1025":      func(r *fccwire.Result) { r.Description = strings.Repeat("x", 1025) },
		"no blocks":             func(r *fccwire.Result) { r.Speed, r.Latency = nil, nil },
		"both blocks": func(r *fccwire.Result) {
			if r.Speed != nil {
				r.Latency = &fccwire.LatencyResult{FailureCount: 1}
			} else {
				r.Speed = &fccwire.SpeedResult{TestMode: "FILE_BASED", BOM: r.StartedAt, EOM: r.FinishedAt, Connections: 1}
			}
		},
		"kbps off":          func(r *fccwire.Result) { withSpeed(r, func(s *fccwire.SpeedResult) { s.Kbps++ }) },
		"kbps negative":     func(r *fccwire.Result) { withSpeed(r, func(s *fccwire.SpeedResult) { s.Kbps = -1 }) },
		"test mode unknown": func(r *fccwire.Result) { withSpeed(r, func(s *fccwire.SpeedResult) { s.TestMode = "X" }) },
		"test bytes -1":     func(r *fccwire.Result) { withSpeed(r, func(s *fccwire.SpeedResult) { s.TestBytes = -1 }) },
		"total bytes -1":    func(r *fccwire.Result) { withSpeed(r, func(s *fccwire.SpeedResult) { s.TotalBytes = i64(-1) }) },
		"connections 0":     func(r *fccwire.Result) { withSpeed(r, func(s *fccwire.SpeedResult) { s.Connections = 0 }) },
		"eom before bom":    func(r *fccwire.Result) { withSpeed(r, func(s *fccwire.SpeedResult) { s.EOM = s.BOM }) },
		"per connection empty": func(r *fccwire.Result) {
			withSpeed(r, func(s *fccwire.SpeedResult) { s.PerConnection = []fccwire.ConnectionResult{} })
		},
		"connection 0":           func(r *fccwire.Result) { withConn(r, func(c *fccwire.ConnectionResult) { c.Connection = 0 }) },
		"connection eom=bom":     func(r *fccwire.Result) { withConn(r, func(c *fccwire.ConnectionResult) { c.EOM = c.BOM }) },
		"connection bytes -1":    func(r *fccwire.Result) { withConn(r, func(c *fccwire.ConnectionResult) { c.TestBytes = -1 }) },
		"connection total -1":    func(r *fccwire.Result) { withConn(r, func(c *fccwire.ConnectionResult) { c.TotalBytes = i64(-1) }) },
		"latency success 0 figs": func(r *fccwire.Result) { withLatency(r, func(l *fccwire.LatencyResult) { l.SuccessCount = 0 }) },
		"latency no figures": func(r *fccwire.Result) {
			withLatency(r, func(l *fccwire.LatencyResult) { l.AverageMs, l.MinMs, l.MaxMs = nil, nil, nil })
		},
		"latency min > avg":    func(r *fccwire.Result) { withLatency(r, func(l *fccwire.LatencyResult) { l.MinMs = f64(100) }) },
		"latency avg > max":    func(r *fccwire.Result) { withLatency(r, func(l *fccwire.LatencyResult) { l.AverageMs = f64(1000) }) },
		"latency min negative": func(r *fccwire.Result) { withLatency(r, func(l *fccwire.LatencyResult) { l.MinMs = f64(-1) }) },
		"latency only min": func(r *fccwire.Result) {
			withLatency(r, func(l *fccwire.LatencyResult) { l.AverageMs, l.MaxMs = nil, nil })
		},
		"latency counts 0": func(r *fccwire.Result) {
			withLatency(r, func(l *fccwire.LatencyResult) { l.SuccessCount, l.FailureCount = 0, 0 })
		},
		"latency failures -1": func(r *fccwire.Result) { withLatency(r, func(l *fccwire.LatencyResult) { l.FailureCount = -1 }) },
		"latency success -1":  func(r *fccwire.Result) { withLatency(r, func(l *fccwire.LatencyResult) { l.SuccessCount = -1 }) },
	}
	// Spellings the canonical check must send to the schema.
	spellings := map[string]func(b []byte) []byte{
		"canonical": func(b []byte) []byte { return b },
		"unknown field": func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"afterStop"`), []byte(`"extra":1,"afterStop"`), 1)
		},
		"null description": func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"afterStop"`), []byte(`"description":null,"afterStop"`), 1)
		},
		"missing afterStop": func(b []byte) []byte { return bytes.Replace(b, []byte(`"afterStop":false,`), nil, 1) },
		"duplicate key": func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"attempts":`), []byte(`"attempts":0,"attempts":`), 1)
		},
		"white space": func(b []byte) []byte { return append([]byte(" "), b...) },
		"float iteration": func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"iteration":1,`), []byte(`"iteration":1.0,`), 1)
		},
		"time spelling":  func(b []byte) []byte { return bytes.Replace(b, []byte(`.000000Z"`), []byte(`Z"`), 1) },
		"escaped letter": func(b []byte) []byte { return bytes.Replace(b, []byte(`"RESULT"`), []byte(`"RESUL\u0054"`), 1) },
	}
	fast := 0
	for bname, base := range bases(t) {
		for mname, mutate := range mutations {
			r := clone(t, base)
			mutate(r)
			canon := canonicalBytes(t, r)
			for sname, spell := range spellings {
				data := spell(bytes.Clone(canon))
				got, ok := fastDecode(data)
				m, err := fccwire.Decode(fccwire.KindResult, data)
				if ok && err != nil {
					t.Errorf("%s / %s / %s: fast path accepted what Decode refuses (%v):\n%s", bname, mname, sname, err, data)
					continue
				}
				if ok && !reflect.DeepEqual(got, m) {
					t.Errorf("%s / %s / %s: fast path decoded\n%+v\nDecode\n%+v", bname, mname, sname, got, m)
				}
				if mname == "as is" && sname == "canonical" && !ok {
					t.Errorf("%s: a canonical valid result missed the fast path", bname)
				}
				if ok {
					fast++
				}
				// decodeResult agrees with Decode on acceptance whichever path.
				if _, derr := decodeResult(data); (derr == nil) != (err == nil) {
					t.Errorf("%s / %s / %s: decodeResult err %v, Decode err %v", bname, mname, sname, derr, err)
				}
			}
		}
	}
	t.Logf("fast path took %d of %d variants", fast, len(bases(t))*len(mutations)*len(spellings))
}

func withSpeed(r *fccwire.Result, f func(*fccwire.SpeedResult)) {
	if r.Speed != nil {
		f(r.Speed)
	}
}

func withConn(r *fccwire.Result, f func(*fccwire.ConnectionResult)) {
	if r.Speed != nil && len(r.Speed.PerConnection) > 0 {
		f(&r.Speed.PerConnection[0])
	}
}

func withLatency(r *fccwire.Result, f func(*fccwire.LatencyResult)) {
	if r.Latency != nil {
		f(r.Latency)
	}
}

func BenchmarkDecodeResult(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "fccwire", "testdata", "result-speed.json"))
	if err != nil {
		b.Fatal(err)
	}
	// The file ends in a newline the wire does not carry.
	data = bytes.TrimSpace(data)
	for _, tc := range []struct {
		name string
		fn   func([]byte) error
	}{
		{"fccwire.Decode", func(d []byte) error { _, err := fccwire.Decode(fccwire.KindResult, d); return err }},
		{"decodeResult", func(d []byte) error { _, err := decodeResult(d); return err }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if err := tc.fn(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
