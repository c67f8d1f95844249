package results

import (
	"cmp"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/platform/apperr"
)

// Table names. A SPEED row lives in the speed table, a LATENCY row in the
// latency table; a row never has a block of the other kind.
const (
	TableSpeed   = "results_speed"
	TableLatency = "results_latency"
	// TableSchemaVersion records the applied migrations.
	TableSchemaVersion = "results_schema_version"
)

// Both engines share the column order below, so one function turns a Row
// into values and one scans them back.
var commonColumns = []string{
	"wire_version", "type", "fcc_test_id", "activation_id", "iteration", "domain_id", "config_id",
	"cpe_id", "serial", "hubb_id", "direction", "url", "tier_kbps", "started_at_us",
	"finished_at_us", "status", "description", "wan_usage_dl_kbps", "wan_usage_ul_kbps",
	"after_stop", "attempts", "source", "legacy_ug_id", "legacy_result_id", "created_us",
}

var speedColumns = []string{
	"kbps", "test_mode", "rom_time_us", "bom_us", "eom_us", "test_bytes", "total_bytes",
	"tcp_open_request_time_us", "tcp_open_response_time_us", "connections", "per_connection",
}

var latencyColumns = []string{"average_ms", "min_ms", "max_ms", "success_count", "failure_count"}

// columns returns the columns of a table in insert and select order.
func columns(table string) []string {
	block := speedColumns
	if table == TableLatency {
		block = latencyColumns
	}
	return append(slices.Clone(commonColumns), block...)
}

func columnList(table string) string { return strings.Join(columns(table), ", ") }

// tableOf returns the table a row belongs in, or an error for a row that
// would lose data: an unknown type or a block of the other kind.
func tableOf(r *Row) (string, error) {
	switch {
	case r.Type == fccwire.TypeSpeed && r.Latency == nil:
		return TableSpeed, nil
	case r.Type == fccwire.TypeLatency && r.Speed == nil && r.TierKbps == nil:
		return TableLatency, nil
	}
	return "", apperr.New(apperr.ErrInvalid, "", "result %s: type %q with this block cannot be stored (a SPEED row carries no latency block, a LATENCY row no speed block or tier)", r.NaturalKey(), r.Type)
}

// micros is the stored form of a time: microseconds since the epoch, UTC,
// the resolution of the wire. Debian's ClickHouse 18.16 has no DateTime64,
// so both engines store integers and report queries compare integers.
func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func optMicros(t *fccwire.Time) any {
	if t == nil {
		return nil
	}
	return micros(t.Time)
}

func optInt64(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func optFloat(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// values returns the row's values in columns(table) order, with nil for
// NULL and Go types the engines map one to one: int64, int32, string,
// bool, float64. A row without Created is stamped with now.
func values(r *Row, table string, now time.Time) ([]driver.Value, error) {
	created := r.Created
	if created.IsZero() {
		created = now
	}
	v := make([]driver.Value, 0, len(commonColumns)+len(speedColumns))
	v = append(v,
		r.WireVersion, string(r.Type), r.FccTestID, r.ActivationID, int32(r.Iteration), r.DomainID, r.ConfigID,
		r.CpeID, r.Serial, r.HubbID, string(r.Direction), r.URL, optInt64(r.TierKbps), micros(r.StartedAt.Time),
		micros(r.FinishedAt.Time), string(r.Status), r.Description, optInt64(r.WanUsageDlKbps), optInt64(r.WanUsageUlKbps),
		r.AfterStop, int32(r.Attempts), r.Source, optInt64(r.LegacyUgID), optInt64(r.LegacyResultID), micros(created),
	)
	if table == TableSpeed {
		s := r.Speed
		if s == nil {
			return append(v, make([]driver.Value, len(speedColumns))...), nil
		}
		var per any
		if len(s.PerConnection) > 0 {
			b, err := appendPerConnection(make([]byte, 0, 192*len(s.PerConnection)), s.PerConnection)
			if err != nil {
				return nil, fmt.Errorf("result %s: per-connection results: %w", r.NaturalKey(), err)
			}
			per = string(b)
		}
		return append(v, s.Kbps, string(s.TestMode), optMicros(s.ROMTime), micros(s.BOM.Time), micros(s.EOM.Time),
			s.TestBytes, optInt64(s.TotalBytes), optMicros(s.TCPOpenRequestTime), optMicros(s.TCPOpenResponseTime),
			int32(s.Connections), per), nil
	}
	l := r.Latency
	if l == nil {
		return append(v, make([]driver.Value, len(latencyColumns))...), nil
	}
	return append(v, optFloat(l.AverageMs), optFloat(l.MinMs), optFloat(l.MaxMs), int32(l.SuccessCount), int32(l.FailureCount)), nil
}

// record receives one scanned row. Nullable columns scan into pointers,
// which both database/sql and clickhouse-go fill with nil for NULL.
type record struct {
	wireVersion, typ                         string
	fccTestID, activationID                  int64
	iteration                                int32
	domainID, configID, cpeID                int64
	serial, hubbID, direction, url           string
	tierKbps                                 *int64
	startedAt, finishedAt                    int64
	status, description                      string
	wanDl, wanUl                             *int64
	afterStopBool                            bool
	afterStopU8                              uint8
	attempts                                 int32
	source                                   string
	legacyUg, legacyResult                   *int64
	created                                  int64
	kbps                                     *float64
	testMode                                 *string
	romTime, bom, eom, testBytes, totalBytes *int64
	tcpOpenRequest, tcpOpenResponse          *int64
	connections                              *int32
	perConnection                            *string
	averageMs, minMs, maxMs                  *float64
	successCount, failureCount               *int32
	boolAsUint8                              bool
}

// dest returns scan destinations in columns(table) order. ClickHouse 18.16
// has no Bool type, so its after_stop is a UInt8.
func (c *record) dest(table string) []any {
	var afterStop any = &c.afterStopBool
	if c.boolAsUint8 {
		afterStop = &c.afterStopU8
	}
	d := []any{
		&c.wireVersion, &c.typ, &c.fccTestID, &c.activationID, &c.iteration, &c.domainID, &c.configID,
		&c.cpeID, &c.serial, &c.hubbID, &c.direction, &c.url, &c.tierKbps, &c.startedAt,
		&c.finishedAt, &c.status, &c.description, &c.wanDl, &c.wanUl,
		afterStop, &c.attempts, &c.source, &c.legacyUg, &c.legacyResult, &c.created,
	}
	if table == TableSpeed {
		return append(d, &c.kbps, &c.testMode, &c.romTime, &c.bom, &c.eom, &c.testBytes, &c.totalBytes,
			&c.tcpOpenRequest, &c.tcpOpenResponse, &c.connections, &c.perConnection)
	}
	return append(d, &c.averageMs, &c.minMs, &c.maxMs, &c.successCount, &c.failureCount)
}

func optTime(us *int64) *fccwire.Time {
	if us == nil {
		return nil
	}
	t := fccwire.At(fromMicros(*us))
	return &t
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// row turns a scanned record back into the Row that was inserted.
func (c *record) row(table string) (Row, error) {
	r := Row{
		Result: fccwire.Result{
			Envelope:       fccwire.Envelope{WireVersion: c.wireVersion},
			Type:           fccwire.TestType(c.typ),
			FccTestID:      c.fccTestID,
			ActivationID:   c.activationID,
			Iteration:      int(c.iteration),
			DomainID:       c.domainID,
			ConfigID:       c.configID,
			CpeID:          c.cpeID,
			Serial:         c.serial,
			Direction:      fccwire.Direction(c.direction),
			URL:            c.url,
			TierKbps:       clonePtr(c.tierKbps),
			StartedAt:      fccwire.At(fromMicros(c.startedAt)),
			FinishedAt:     fccwire.At(fromMicros(c.finishedAt)),
			Status:         fccwire.Outcome(c.status),
			Description:    c.description,
			WanUsageDlKbps: clonePtr(c.wanDl),
			WanUsageUlKbps: clonePtr(c.wanUl),
			AfterStop:      c.afterStopBool || c.afterStopU8 != 0,
			Attempts:       int(c.attempts),
		},
		HubbID:         c.hubbID,
		Source:         c.source,
		LegacyUgID:     clonePtr(c.legacyUg),
		LegacyResultID: clonePtr(c.legacyResult),
		Created:        fromMicros(c.created),
	}
	// The kind is implied by the table; it is kept only when the row came
	// with an envelope, so a row reads back as it was inserted.
	if c.wireVersion != "" {
		r.Kind = fccwire.KindResult
	}
	switch table {
	case TableSpeed:
		if c.kbps == nil {
			break
		}
		if c.testMode == nil || c.bom == nil || c.eom == nil || c.testBytes == nil || c.connections == nil {
			return Row{}, errors.New("speed block with missing columns")
		}
		s := &fccwire.SpeedResult{
			Kbps:                *c.kbps,
			TestMode:            fccwire.TestMode(*c.testMode),
			ROMTime:             optTime(c.romTime),
			BOM:                 fccwire.At(fromMicros(*c.bom)),
			EOM:                 fccwire.At(fromMicros(*c.eom)),
			TestBytes:           *c.testBytes,
			TotalBytes:          clonePtr(c.totalBytes),
			TCPOpenRequestTime:  optTime(c.tcpOpenRequest),
			TCPOpenResponseTime: optTime(c.tcpOpenResponse),
			Connections:         int(*c.connections),
		}
		if c.perConnection != nil {
			if err := json.Unmarshal([]byte(*c.perConnection), &s.PerConnection); err != nil {
				return Row{}, fmt.Errorf("per-connection results: %w", err)
			}
		}
		r.Speed = s
	case TableLatency:
		if c.successCount == nil {
			break
		}
		r.Latency = &fccwire.LatencyResult{
			AverageMs:    clonePtr(c.averageMs),
			MinMs:        clonePtr(c.minMs),
			MaxMs:        clonePtr(c.maxMs),
			SuccessCount: int(*c.successCount),
			FailureCount: int(*c.failureCount),
		}
	}
	// A record is scanned into again for the next row.
	*c = record{boolAsUint8: c.boolAsUint8}
	return r, nil
}

// key is a row's natural key.
type key struct {
	activationID int64
	serial       string
	direction    fccwire.Direction
	iteration    int
}

func keyOf(r *Row) key {
	return key{r.ActivationID, r.Serial, r.Direction, r.Iteration}
}

func compareKeys(a, b key) int {
	return cmp.Or(cmp.Compare(a.activationID, b.activationID), strings.Compare(a.serial, b.serial),
		strings.Compare(string(a.direction), string(b.direction)), cmp.Compare(a.iteration, b.iteration))
}

// sortRows puts rows in natural key order; both engines compare strings
// byte-wise, but sorting here makes the order independent of collations.
func sortRows(rows []Row) {
	slices.SortFunc(rows, func(a, b Row) int { return compareKeys(keyOf(&a), keyOf(&b)) })
}

// split groups a batch by table, keeping the first row of each natural key
// (a batch may repeat a result the grid delivered twice).
func split(rows []Row) (speed, latency []*Row, err error) {
	seen := make(map[key]struct{}, len(rows))
	for i := range rows {
		r := &rows[i]
		t, err := tableOf(r)
		if err != nil {
			return nil, nil, err
		}
		k := keyOf(r)
		if _, dup := seen[k]; dup {
			continue
		}
		seen[k] = struct{}{}
		if t == TableSpeed {
			speed = append(speed, r)
		} else {
			latency = append(latency, r)
		}
	}
	return speed, latency, nil
}

func errTooMany(n int) error {
	return apperr.New(apperr.ErrInvalid, "", "%d result rows in one insert; at most %d", n, MaxInsertRows)
}
