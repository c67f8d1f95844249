package ingest

import (
	"bytes"
	"encoding/json"
	"regexp"
	"unicode"
	"unicode/utf8"

	"cpesuite/internal/fcc/fccwire"
)

// decodeResult is fccwire.Decode(KindResult, data) with a fast path.
//
// Holding every result to its JSON Schema cost about 130 µs of CPU per
// message in BenchmarkIngest, the largest single cost of ingestion. The
// ACS sends canonical bytes (fccwire.Encode), so the fast path decodes
// into the Go type, encodes that again and requires the very same bytes:
// that alone rules out unknown fields, missing required fields, nulls,
// duplicate keys, other spellings of numbers and times, and invalid UTF-8.
// What is left, the schema's value rules and fccwire's checks, is checked
// on the Go value, each at least as strictly as the schema does. Anything
// the fast path does not accept goes through fccwire.Decode, which decides
// and gives the error; TestDecodeFastPathNeverLaxer holds the two together.
func decodeResult(data []byte) (*fccwire.Result, error) {
	if r, ok := fastDecode(data); ok {
		return r, nil
	}
	m, err := fccwire.Decode(fccwire.KindResult, data)
	if err != nil {
		return nil, err
	}
	return m.(*fccwire.Result), nil
}

// The schema's patterns (fccwire/schema/defs.json). Values must also be
// ASCII: Go's \s is narrower than some regular-expression dialects', so a
// non-ASCII URL or host is left to the schema.
var (
	urlPattern  = regexp.MustCompile(`^(https?|ftp)://[^\s/?#@]+(?:[/?#][^\s]*)?$`)
	hostPattern = regexp.MustCompile(`^(?:[A-Za-z0-9_.-]+|\[?[0-9A-Fa-f:.]+\]?)$`)
)

func fastDecode(data []byte) (*fccwire.Result, bool) {
	if len(data) > fccwire.MaxMessageBytes {
		return nil, false
	}
	r := new(fccwire.Result)
	if err := json.Unmarshal(data, r); err != nil {
		return nil, false
	}
	if !canonical(r, data) || !fastValid(r) {
		return nil, false
	}
	return r, true
}

// canonical reports whether r encodes to exactly data.
func canonical(r *fccwire.Result, data []byte) bool {
	var buf bytes.Buffer
	buf.Grow(len(data) + 1)
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return false
	}
	return bytes.Equal(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), data)
}

// fastValid applies result.json's value rules and fccwire's checks to r.
func fastValid(r *fccwire.Result) bool {
	if r.WireVersion != fccwire.Version || r.Kind != fccwire.KindResult {
		return false
	}
	if r.FccTestID < 1 || r.ActivationID < 1 || r.ConfigID < 1 || r.CpeID < 1 || r.DomainID < 0 ||
		r.Iteration < 1 || r.Attempts < 1 {
		return false
	}
	if !validSerial(r.Serial) || utf8.RuneCountInString(r.Description) > 1024 {
		return false
	}
	if negative(r.TierKbps) || negative(r.WanUsageDlKbps) || negative(r.WanUsageUlKbps) {
		return false
	}
	if r.FinishedAt.Before(r.StartedAt.Time) {
		return false
	}
	measured := r.Status == "OK" || r.Status == "BELOW_TIER"
	switch r.Status {
	case "OK", "BELOW_TIER", "ERROR", "WAN_BUSY":
	default:
		return false
	}
	if r.Status == "WAN_BUSY" && (r.Speed != nil || r.Latency != nil) {
		return false
	}
	switch r.Type {
	case "SPEED":
		if r.Direction != "DOWNLOAD" && r.Direction != "UPLOAD" || !asciiMatch(urlPattern, r.URL) ||
			r.Latency != nil || measured && r.Speed == nil {
			return false
		}
		if r.Speed != nil && !validSpeed(r.Speed) {
			return false
		}
	case "LATENCY":
		if r.Direction != "PING" || !asciiMatch(hostPattern, r.URL) || r.Speed != nil || r.TierKbps != nil ||
			measured && (r.Latency == nil || r.Latency.SuccessCount < 1) {
			return false
		}
		if r.Latency != nil && !validLatency(r.Latency) {
			return false
		}
	default:
		return false
	}
	return true
}

func validSpeed(s *fccwire.SpeedResult) bool {
	if s.Kbps < 0 || s.TestMode != "FILE_BASED" && s.TestMode != "TIME_BASED" || s.TestBytes < 0 ||
		negative(s.TotalBytes) || s.Connections < 1 {
		return false
	}
	if want, err := fccwire.Kbps(s.TestBytes, s.BOM.Time, s.EOM.Time); err != nil || want != s.Kbps {
		return false
	}
	for _, c := range s.PerConnection {
		if c.Connection < 1 || c.TestBytes < 0 || negative(c.TotalBytes) || !c.EOM.After(c.BOM.Time) {
			return false
		}
	}
	return true
}

func validLatency(l *fccwire.LatencyResult) bool {
	if l.SuccessCount < 0 || l.FailureCount < 0 || l.SuccessCount+l.FailureCount < 1 {
		return false
	}
	figures := l.AverageMs != nil && l.MinMs != nil && l.MaxMs != nil
	none := l.AverageMs == nil && l.MinMs == nil && l.MaxMs == nil
	if l.SuccessCount >= 1 {
		return figures && *l.MinMs >= 0 && *l.MinMs <= *l.AverageMs && *l.AverageMs <= *l.MaxMs
	}
	return none
}

// validSerial is the schema's serial rule, stricter where dialects differ:
// 1 to 64 characters, no control character, no white space (in any
// script) at either end.
func validSerial(s string) bool {
	n := utf8.RuneCountInString(s)
	if n < 1 || n > 64 {
		return false
	}
	for _, c := range s {
		if unicode.IsControl(c) || unicode.Is(unicode.Cc, c) {
			return false
		}
	}
	first, _ := utf8.DecodeRuneInString(s)
	last, _ := utf8.DecodeLastRuneInString(s)
	return !unicode.IsSpace(first) && !unicode.IsSpace(last)
}

func asciiMatch(re *regexp.Regexp, s string) bool {
	if len(s) < 1 || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return re.MatchString(s)
}

func negative(p *int64) bool { return p != nil && *p < 0 }
