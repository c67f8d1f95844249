package export

import (
	"math"
	"strconv"
	"time"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/fcc/results"
)

// kind says how a cell is written.
type kind uint8

const (
	// null is an absent value: an empty CSV field, no XLSX cell.
	null kind = iota
	// text is stored text: cleaned of what XML 1.0 forbids, quoted or
	// escaped as the format needs.
	text
	// plain is ASCII the writer produced itself (a timestamp, a boolean):
	// never needs cleaning or escaping; an XLSX text cell.
	plain
	// number is a decimal number without locale; an XLSX numeric cell.
	number
)

// timeLayout is ISO 8601 in UTC with the wire's microseconds, the same
// spelling as the campaign wire contract.
const timeLayout = "2006-01-02T15:04:05.000000Z"

type column struct {
	name string
	// cell appends the value of r to dst and says its kind; null appends
	// nothing.
	cell func(dst []byte, r *results.Row) ([]byte, kind)
}

// Columns are the header of every export, in file order: the spec's
// common block, then the speed block, then the latency block (a row fills
// one of the two; the other's cells are empty). The per-connection list of
// a speed result is not exported: it is a nested list per row that a flat
// sheet cannot hold without changing the column count.
func Columns() []string {
	names := make([]string, len(columns))
	for i, c := range columns {
		names[i] = c.name
	}
	return names
}

var columns = []column{
	{"type", func(d []byte, r *results.Row) ([]byte, kind) { return str(d, string(r.Type)) }},
	{"fccTestId", func(d []byte, r *results.Row) ([]byte, kind) { return integer(d, r.FccTestID) }},
	{"activationId", func(d []byte, r *results.Row) ([]byte, kind) { return integer(d, r.ActivationID) }},
	{"iteration", func(d []byte, r *results.Row) ([]byte, kind) { return integer(d, int64(r.Iteration)) }},
	{"domainId", func(d []byte, r *results.Row) ([]byte, kind) { return integer(d, r.DomainID) }},
	{"serial", func(d []byte, r *results.Row) ([]byte, kind) { return str(d, r.Serial) }},
	{"hubbId", func(d []byte, r *results.Row) ([]byte, kind) { return str(d, r.HubbID) }},
	{"direction", func(d []byte, r *results.Row) ([]byte, kind) { return str(d, string(r.Direction)) }},
	{"url", func(d []byte, r *results.Row) ([]byte, kind) { return str(d, r.URL) }},
	{"tierKbps", func(d []byte, r *results.Row) ([]byte, kind) { return optInteger(d, r.TierKbps) }},
	{"startedAt", func(d []byte, r *results.Row) ([]byte, kind) { return stamp(d, r.StartedAt.Time) }},
	{"finishedAt", func(d []byte, r *results.Row) ([]byte, kind) { return stamp(d, r.FinishedAt.Time) }},
	{"status", func(d []byte, r *results.Row) ([]byte, kind) { return str(d, string(r.Status)) }},
	{"description", func(d []byte, r *results.Row) ([]byte, kind) { return str(d, r.Description) }},
	{"wanUsageDlKbps", func(d []byte, r *results.Row) ([]byte, kind) { return optInteger(d, r.WanUsageDlKbps) }},
	{"wanUsageUlKbps", func(d []byte, r *results.Row) ([]byte, kind) { return optInteger(d, r.WanUsageUlKbps) }},
	{"afterStop", func(d []byte, r *results.Row) ([]byte, kind) { return boolean(d, r.AfterStop) }},
	{"source", func(d []byte, r *results.Row) ([]byte, kind) { return str(d, r.Source) }},
	{"legacyUgId", func(d []byte, r *results.Row) ([]byte, kind) { return optInteger(d, r.LegacyUgID) }},
	{"legacyResultId", func(d []byte, r *results.Row) ([]byte, kind) { return optInteger(d, r.LegacyResultID) }},
	{"created", func(d []byte, r *results.Row) ([]byte, kind) { return stamp(d, r.Created) }},

	{"kbps", speed(func(d []byte, s *fccwire.SpeedResult) ([]byte, kind) { return float(d, s.Kbps) })},
	{"testMode", speed(func(d []byte, s *fccwire.SpeedResult) ([]byte, kind) { return str(d, string(s.TestMode)) })},
	{"romTime", speed(func(d []byte, s *fccwire.SpeedResult) ([]byte, kind) { return optStamp(d, s.ROMTime) })},
	{"bom", speed(func(d []byte, s *fccwire.SpeedResult) ([]byte, kind) { return stamp(d, s.BOM.Time) })},
	{"eom", speed(func(d []byte, s *fccwire.SpeedResult) ([]byte, kind) { return stamp(d, s.EOM.Time) })},
	{"testBytes", speed(func(d []byte, s *fccwire.SpeedResult) ([]byte, kind) { return integer(d, s.TestBytes) })},
	{"totalBytes", speed(func(d []byte, s *fccwire.SpeedResult) ([]byte, kind) { return optInteger(d, s.TotalBytes) })},
	{"tcpOpenRequestTime", speed(func(d []byte, s *fccwire.SpeedResult) ([]byte, kind) { return optStamp(d, s.TCPOpenRequestTime) })},
	{"tcpOpenResponseTime", speed(func(d []byte, s *fccwire.SpeedResult) ([]byte, kind) { return optStamp(d, s.TCPOpenResponseTime) })},
	{"connections", speed(func(d []byte, s *fccwire.SpeedResult) ([]byte, kind) { return integer(d, int64(s.Connections)) })},

	{"averageMs", latency(func(d []byte, l *fccwire.LatencyResult) ([]byte, kind) { return optFloat(d, l.AverageMs) })},
	{"minMs", latency(func(d []byte, l *fccwire.LatencyResult) ([]byte, kind) { return optFloat(d, l.MinMs) })},
	{"maxMs", latency(func(d []byte, l *fccwire.LatencyResult) ([]byte, kind) { return optFloat(d, l.MaxMs) })},
	{"successCount", latency(func(d []byte, l *fccwire.LatencyResult) ([]byte, kind) { return integer(d, int64(l.SuccessCount)) })},
	{"failureCount", latency(func(d []byte, l *fccwire.LatencyResult) ([]byte, kind) { return integer(d, int64(l.FailureCount)) })},
}

func speed(f func([]byte, *fccwire.SpeedResult) ([]byte, kind)) func([]byte, *results.Row) ([]byte, kind) {
	return func(d []byte, r *results.Row) ([]byte, kind) {
		if r.Speed == nil {
			return d, null
		}
		return f(d, r.Speed)
	}
}

func latency(f func([]byte, *fccwire.LatencyResult) ([]byte, kind)) func([]byte, *results.Row) ([]byte, kind) {
	return func(d []byte, r *results.Row) ([]byte, kind) {
		if r.Latency == nil {
			return d, null
		}
		return f(d, r.Latency)
	}
}

// str cleans s as it appends it, so both formats carry the same cell.
func str(d []byte, s string) ([]byte, kind) {
	if s == "" {
		return d, null
	}
	n := len(d)
	if d = appendClean(d, s); len(d) == n {
		return d, null
	}
	return d, text
}

func integer(d []byte, v int64) ([]byte, kind) { return strconv.AppendInt(d, v, 10), number }

func optInteger(d []byte, v *int64) ([]byte, kind) {
	if v == nil {
		return d, null
	}
	return integer(d, *v)
}

// float writes the shortest decimal that reads back as v, never with an
// exponent or a locale's separators; NaN and infinities (which an XLSX
// numeric cell cannot hold) as the words Go spells them.
func float(d []byte, v float64) ([]byte, kind) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.AppendFloat(d, v, 'f', -1, 64), plain
	}
	return strconv.AppendFloat(d, v, 'f', -1, 64), number
}

func optFloat(d []byte, v *float64) ([]byte, kind) {
	if v == nil {
		return d, null
	}
	return float(d, *v)
}

func boolean(d []byte, v bool) ([]byte, kind) { return strconv.AppendBool(d, v), plain }

func stamp(d []byte, t time.Time) ([]byte, kind) {
	if t.IsZero() {
		return d, null
	}
	return appendStamp(d, t.UTC()), plain
}

// appendStamp writes t (UTC) as timeLayout does. It is spelled out because
// time.AppendFormat parses its layout on every call, and an export formats
// up to eight times a row.
func appendStamp(d []byte, t time.Time) []byte {
	y, mo, day := t.Date()
	h, mi, s := t.Clock()
	if y < 0 || y > 9999 {
		return t.AppendFormat(d, timeLayout)
	}
	us := t.Nanosecond() / 1000
	d = append(d, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+int(mo)/10), byte('0'+int(mo)%10), '-', byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+s/10), byte('0'+s%10), '.')
	return append(d, byte('0'+us/100000), byte('0'+us/10000%10), byte('0'+us/1000%10),
		byte('0'+us/100%10), byte('0'+us/10%10), byte('0'+us%10), 'Z')
}

func optStamp(d []byte, t *fccwire.Time) ([]byte, kind) {
	if t == nil {
		return d, null
	}
	return stamp(d, t.Time)
}
