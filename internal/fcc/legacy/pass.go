package legacy

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/fcc/results"
)

// table names the source table of a kind and how to read it.
type table struct {
	table  string
	fields string
}

func src(k Kind) table {
	if k == KindSpeed {
		return table{"legacy_speed_results", `result_id, ug_id, run_no, serial, direction, iteration, speed_type, start_date, end_date,
			kbps, test_bytes, total_bytes, tier, status, properties`}
	}
	return table{"legacy_latency_results", `result_id, ug_id, run_no, serial, 'PING', iteration, NULL, start_date, end_date,
		avg_ms, min_ms, max_ms, success_count, failure_count, status, properties`}
}

// pass is one kind's pass in this process.
type pass struct {
	kind   Kind
	runID  string
	cutoff string
	lower  string
	maxID  int64
	batch  int
	loc    *time.Location
}

// srcRow is a source row of either table, read with one field list.
type srcRow struct {
	id, ug      int64
	run         int
	serial      sql.NullString
	direction   string
	iteration   int
	speedType   sql.NullString
	start, end  naiveTime
	f1          sql.NullFloat64 // kbps | avg_ms
	n1          sql.NullFloat64 // test_bytes | min_ms
	s1          sql.NullString  // total_bytes | max_ms
	s2          sql.NullString  // tier | success_count
	i2          sql.NullInt64   // status | failure_count
	status      sql.NullInt64   // (latency) status
	properties  sql.NullString
	speedTable  bool
	latencyVals [5]sql.NullFloat64
}

func (im *Importer) read(ctx context.Context, p *pass, after, upTo int64) ([]srcRow, error) {
	t := src(p.kind)
	rows, err := im.d.Source.QueryContext(ctx, im.d.Source.Rebind(`SELECT `+t.fields+` FROM `+t.table+`
		WHERE result_id > ? AND result_id <= ? AND (start_date IS NULL OR (start_date >= ? AND start_date < ?))
		ORDER BY result_id LIMIT ?`), after, upTo, p.lower, p.cutoff, p.batch)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]srcRow, 0, p.batch)
	for rows.Next() {
		var r srcRow
		var speedType any
		if p.kind == KindSpeed {
			var total, tier sql.NullString
			var bytes sql.NullInt64
			if err := rows.Scan(&r.id, &r.ug, &r.run, &r.serial, &r.direction, &r.iteration, &speedType, &r.start, &r.end,
				&r.f1, &bytes, &total, &tier, &r.status, &r.properties); err != nil {
				return nil, err
			}
			r.speedTable = true
			r.n1 = sql.NullFloat64{Float64: float64(bytes.Int64), Valid: bytes.Valid}
			r.s1, r.s2 = total, tier
			if bytes.Valid {
				r.i2 = bytes // exact test bytes
			}
			if s, ok := speedType.(string); ok {
				r.speedType = sql.NullString{String: s, Valid: true}
			} else if b, ok := speedType.([]byte); ok {
				r.speedType = sql.NullString{String: string(b), Valid: true}
			}
		} else {
			v := &r.latencyVals
			var ok, ko sql.NullInt64
			if err := rows.Scan(&r.id, &r.ug, &r.run, &r.serial, &r.direction, &r.iteration, &speedType, &r.start, &r.end,
				&v[0], &v[1], &v[2], &ok, &ko, &r.status, &r.properties); err != nil {
				return nil, err
			}
			v[3] = sql.NullFloat64{Float64: float64(ok.Int64), Valid: ok.Valid}
			v[4] = sql.NullFloat64{Float64: float64(ko.Int64), Valid: ko.Valid}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// invalidReason names why a row halts the pass, or "".
func invalidReason(k Kind, r *srcRow) string {
	switch {
	case !r.serial.Valid || strings.TrimSpace(r.serial.String) == "":
		return "null serial"
	case !r.start.valid:
		return "null start date"
	case k == KindSpeed && (!r.speedType.Valid || r.speedType.String == ""):
		return "null speed type"
	case k == KindSpeed && r.direction != string(fccwire.Download) && r.direction != string(fccwire.Upload):
		return fmt.Sprintf("direction %q", r.direction)
	}
	return ""
}

// quality counts what a conversion repaired; each is a status counter.
type quality struct{ bytesOverflow, tierFailed, statusUnknown, propsMissing int64 }

var outcomes = map[int64]fccwire.Outcome{0: fccwire.OutcomeOK, 1: fccwire.OutcomeBelowTier, 2: fccwire.OutcomeError, 3: fccwire.OutcomeWANBusy}

func (im *Importer) convert(p *pass, r *srcRow, a anchor, run int64, q *quality) results.Row {
	start := fccwire.At(r.start.in(p.loc))
	end := start
	if r.end.valid {
		end = fccwire.At(r.end.in(p.loc))
	}
	status, ok := outcomes[r.status.Int64]
	if !r.status.Valid || !ok {
		status = fccwire.OutcomeError
		q.statusUnknown++
	}
	var props map[string]any
	if !r.properties.Valid || json.Unmarshal([]byte(r.properties.String), &props) != nil {
		q.propsMissing++
	}
	ug, id := r.ug, r.id
	out := results.Row{Source: results.SourceLegacy, LegacyUgID: &ug, LegacyResultID: &id}
	out.Result = fccwire.Result{Envelope: fccwire.Envelope{WireVersion: fccwire.Version, Kind: fccwire.KindResult},
		FccTestID: a.id, ActivationID: run, Iteration: r.iteration, DomainID: a.domain, Serial: r.serial.String,
		Direction: fccwire.Direction(r.direction), StartedAt: start, FinishedAt: end, Status: status, Attempts: 1}
	if p.kind == KindSpeed {
		out.Type = fccwire.TypeSpeed
		out.URL, _ = props["url"].(string)
		if r.s2.Valid && strings.TrimSpace(r.s2.String) != "" {
			if t, err := strconv.ParseInt(strings.TrimSpace(r.s2.String), 10, 64); err == nil && t >= 0 {
				out.TierKbps = &t
			} else {
				q.tierFailed++
			}
		}
		sp := &fccwire.SpeedResult{Kbps: r.f1.Float64, TestMode: fccwire.TestMode(r.speedType.String), BOM: start, EOM: end, TestBytes: r.i2.Int64, Connections: 1}
		if r.s1.Valid {
			if t, err := strconv.ParseInt(strings.TrimSpace(r.s1.String), 10, 64); err == nil && t >= 0 {
				sp.TotalBytes = &t
			} else {
				q.bytesOverflow++
			}
		}
		out.Speed = sp
		return out
	}
	out.Type = fccwire.TypeLatency
	out.URL, _ = props["host"].(string)
	v := r.latencyVals
	l := &fccwire.LatencyResult{SuccessCount: int(v[3].Float64), FailureCount: int(v[4].Float64)}
	for i, dst := range []**float64{&l.AverageMs, &l.MinMs, &l.MaxMs} {
		if v[i].Valid {
			f := v[i].Float64
			*dst = &f
		}
	}
	out.Latency = l
	return out
}

// heartbeat keeps the claim fresh while one batch takes long.
func (im *Importer) heartbeat(ctx context.Context, p *pass) {
	t := time.NewTicker(max(im.cfg.StaleAfter/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			db := im.d.FCC
			_, _ = db.ExecContext(ctx, db.Rebind(`UPDATE fcc_legacy_import SET heartbeat_us = ? WHERE kind = ? AND run_id = ?`),
				im.now().UnixMicro(), string(p.kind), p.runID)
		}
	}
}

// run is one pass: batches until the window is done, a stop is asked, the
// store fails or a row is invalid.
func (im *Importer) run(p *pass) {
	defer im.wg.Done()
	hbCtx, hbStop := context.WithCancel(im.ctx)
	defer hbStop()
	go im.heartbeat(hbCtx, p)
	err := im.loop(im.ctx, p)
	if errors.Is(err, errLost) {
		im.log.Warn("legacy import: another start took the kind over", "kind", p.kind, "run", p.runID)
		return
	}
	if err != nil {
		im.m.passesFailed.WithLabelValues(string(p.kind)).Inc()
		im.end(p, StateFailed, err.Error())
	}
}

// end leaves the kind in state with lastError (empty clears nothing).
func (im *Importer) end(p *pass, state, lastError string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db := im.d.FCC
	var le any
	if lastError != "" {
		le = trim(lastError)
	}
	if _, err := db.ExecContext(ctx, db.Rebind(`UPDATE fcc_legacy_import SET state = ?, stop_requested = ?, heartbeat_us = ?,
		last_error = COALESCE(?, last_error) WHERE kind = ? AND run_id = ?`), state, false, im.now().UnixMicro(), le, string(p.kind), p.runID); err != nil {
		im.log.Error("legacy import: recording the end of a pass", "kind", p.kind, "err", err)
	}
	im.log.Info("legacy import pass ended", "kind", p.kind, "run", p.runID, "state", state, "lastError", lastError)
}

func (im *Importer) loop(ctx context.Context, p *pass) error {
	db := im.d.FCC
	for {
		r, err := im.load(context.Background(), db, p.kind)
		if err != nil {
			return err
		}
		if r.runID.String != p.runID {
			return errLost
		}
		if r.stopRequested {
			im.end(p, StateIdle, "")
			return nil
		}
		if ctx.Err() != nil {
			im.end(p, StateIdle, "the service stopped during the pass; start resumes it")
			return nil
		}
		// A pending range (read, not known written) is re-checked first.
		upTo := p.maxID
		if r.pendingResult.Valid {
			upTo = r.pendingResult.Int64
		}
		rows, err := im.read(ctx, p, r.cursorID, upTo)
		if err != nil {
			if ctx.Err() != nil {
				continue
			}
			return fmt.Errorf("reading the legacy source: %w", err)
		}
		if len(rows) == 0 {
			if r.pendingResult.Valid {
				if err := lostIfNone(db.ExecContext(ctx, db.Rebind(`UPDATE fcc_legacy_import SET pending_result_id = NULL, pending_from_id = NULL,
					pending_ug_id = NULL WHERE kind = ? AND run_id = ?`), string(p.kind), p.runID)); err != nil {
					return err
				}
				continue
			}
			return im.complete(p, r)
		}
		if err := lostIfNone(db.ExecContext(ctx, db.Rebind(`UPDATE fcc_legacy_import SET pending_from_id = ?, pending_result_id = ?,
			pending_ug_id = ?, heartbeat_us = ? WHERE kind = ? AND run_id = ?`),
			r.cursorID, rows[len(rows)-1].id, rows[0].ug, im.now().UnixMicro(), string(p.kind), p.runID)); err != nil {
			return err
		}
		valid, bad := rows, ""
		for i := range rows {
			if reason := invalidReason(p.kind, &rows[i]); reason != "" {
				valid = rows[:i]
				bad = fmt.Sprintf("legacy campaign (ugId) %d, row %d (resultId) of %s: %s; the pass halts until the source row is fixed",
					rows[i].ug, rows[i].id, src(p.kind).table, reason)
				break
			}
		}
		if err := im.batch(ctx, p, valid); err != nil {
			if errors.Is(err, errLost) {
				return err
			}
			if ctx.Err() != nil {
				im.end(p, StateIdle, "the service stopped during the pass; start resumes it")
				return nil
			}
			var se storeError
			if errors.As(err, &se) {
				im.end(p, StateIdle, "result store: "+se.Error()+"; start resumes the pass")
				return nil
			}
			return err
		}
		if bad != "" {
			if _, err := db.ExecContext(ctx, db.Rebind(`UPDATE fcc_legacy_import SET rows_invalid = rows_invalid + 1 WHERE kind = ? AND run_id = ?`),
				string(p.kind), p.runID); err != nil {
				return err
			}
			return errors.New(bad)
		}
	}
}

type storeError struct{ error }

// batch writes valid rows and commits the cursor past them. Per batch the
// campaign database sees a fixed number of statements whatever the rows
// hold: anchors and runs come from the importer's caches (a statement only
// for a key never met), and the device snapshot and the cursor commit
// together in one transaction of multi-row inserts.
func (im *Importer) batch(ctx context.Context, p *pass, rows []srcRow) error {
	db := im.d.FCC
	kl := string(p.kind)
	if len(rows) == 0 {
		return nil
	}
	out := make([]results.Row, len(rows))
	var q quality
	// Local maps: a batch has few distinct user groups and runs, so the
	// importer's locked caches are asked once per key, not once per row.
	anchors := map[int64]anchor{}
	runs := map[runKey]int64{}
	pairs := map[deviceKey]struct{}{}
	for i := range rows {
		r := &rows[i]
		a, ok := anchors[r.ug]
		if !ok {
			var err error
			if a, err = im.anchor(ctx, r.ug, p.kind); err != nil {
				return err
			}
			anchors[r.ug] = a
		}
		rk := runKey{a.id, r.run}
		run, ok := runs[rk]
		if !ok {
			var err error
			if run, err = im.run_(ctx, a, r.run, r.start.in(p.loc)); err != nil {
				return err
			}
			runs[rk] = run
		}
		out[i] = im.convert(p, r, a, run, &q)
		pairs[deviceKey{run, r.serial.String}] = struct{}{}
	}
	fresh, ids, err := im.resolve(ctx, pairs)
	if err != nil {
		return err
	}
	n, err := im.d.Store.Insert(ctx, out)
	if err != nil {
		return storeError{err}
	}
	// The snapshot is written after the store insert and with the cursor:
	// a batch that failed before this point is read again (its pending
	// range) and its pairs recomputed from the rows, so nothing is lost,
	// and a commit that fails leaves neither half.
	last := rows[len(rows)-1]
	var it any = int64(last.iteration)
	var snap, unresolved int64
	err = db.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		if snap, unresolved, err = im.snapshot(ctx, tx, fresh, ids); err != nil {
			return err
		}
		return lostIfNone(tx.ExecContext(ctx, db.Rebind(`UPDATE fcc_legacy_import SET rows_read = rows_read + ?, rows_written = rows_written + ?,
			rows_skipped = rows_skipped + ?, bytes_overflow_count = bytes_overflow_count + ?, tier_parse_failed = tier_parse_failed + ?,
			status_unknown_count = status_unknown_count + ?, properties_missing_count = properties_missing_count + ?,
			devices_unresolved = devices_unresolved + ?, cursor_result_id = ?, cursor_ug_id = ?, cursor_serial = ?, cursor_direction = ?,
			cursor_started_at = ?, cursor_iteration = ?, pending_result_id = NULL, pending_from_id = NULL, pending_ug_id = NULL,
			heartbeat_us = ? WHERE kind = ? AND run_id = ?`),
			len(rows), n, len(rows)-n, q.bytesOverflow, q.tierFailed, q.statusUnknown, q.propsMissing, unresolved,
			last.id, last.ug, last.serial.String, last.direction, Naive(last.start.wall), it, im.now().UnixMicro(), kl, p.runID))
	})
	if err != nil {
		return err
	}
	im.remember(fresh)
	im.m.rowsRead.WithLabelValues(kl).Add(float64(len(rows)))
	im.m.rowsWritten.WithLabelValues(kl).Add(float64(n))
	im.m.rowsSkipped.WithLabelValues(kl).Add(float64(len(rows) - n))
	im.m.batches.WithLabelValues(kl).Inc()
	im.m.devicesSnapshotted.WithLabelValues(kl).Add(float64(snap))
	im.m.devicesUnresolved.WithLabelValues(kl).Add(float64(unresolved))
	return nil
}

// complete moves the watermark to the pass cutoff: COMPLETED is not
// terminal, the next start imports what came after.
func (im *Importer) complete(p *pass, r row) error {
	db := im.d.FCC
	wmID := max(r.watermarkID, p.maxID)
	if err := lostIfNone(db.ExecContext(context.Background(), db.Rebind(`UPDATE fcc_legacy_import SET state = ?, watermark_started_before = ?,
		watermark_result_id = ?, pass_cutoff = NULL, pass_max_id = NULL, stop_requested = ?, heartbeat_us = ?, last_error = NULL
		WHERE kind = ? AND run_id = ?`), StateCompleted, p.cutoff, wmID, false, im.now().UnixMicro(), string(p.kind), p.runID)); err != nil {
		return err
	}
	im.m.passesCompleted.WithLabelValues(string(p.kind)).Inc()
	im.log.Info("legacy import pass completed", "kind", p.kind, "run", p.runID, "rowsRead", r.rowsRead, "cutoff", p.cutoff)
	return nil
}

// anchor returns the campaign of a legacy user group, creating it.
func (im *Importer) anchor(ctx context.Context, ug int64, k Kind) (anchor, error) {
	im.mu.Lock()
	defer im.mu.Unlock()
	if a, ok := im.anchors[ug]; ok {
		return a, nil
	}
	name, domain, typ := fmt.Sprintf("legacy user group %d", ug), int64(0), string(k)
	var n, t sql.NullString
	var d sql.NullInt64
	err := im.d.Source.QueryRowContext(ctx, im.d.Source.Rebind(`SELECT name, domain_id, test_type FROM legacy_user_groups WHERE ug_id = ?`), ug).Scan(&n, &d, &t)
	switch {
	case err == nil:
		if n.String != "" {
			name = n.String
		}
		domain = d.Int64
		if t.String == string(KindSpeed) || t.String == string(KindLatency) {
			typ = t.String
		}
	case !errors.Is(err, sql.ErrNoRows):
		return anchor{}, fmt.Errorf("reading legacy user group %d: %w", ug, err)
	}
	db := im.d.FCC
	now := im.now()
	res, err := db.ExecContext(ctx, db.Rebind(`INSERT INTO fcc_campaigns (domain_id, name, type, state, legacy_ug_id, created_at, created_by, updated_at, updated_by)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (legacy_ug_id) DO NOTHING`), domain, name, typ, "COMPLETED", ug, now, "legacy-import", now, "legacy-import")
	if err != nil {
		return anchor{}, fmt.Errorf("creating the anchor of legacy user group %d: %w", ug, err)
	}
	if c, _ := res.RowsAffected(); c == 1 {
		im.m.anchorsCreated.Inc()
	}
	var a anchor
	if err := db.QueryRowContext(ctx, db.Rebind(`SELECT id, domain_id FROM fcc_campaigns WHERE legacy_ug_id = ?`), ug).Scan(&a.id, &a.domain); err != nil {
		return anchor{}, err
	}
	if len(im.anchors) >= cacheBound {
		clear(im.anchors)
	}
	im.anchors[ug] = a
	return a, nil
}

// run_ returns the activation of a legacy run of an anchor, creating it
// FINISHED so that no scheduler or watchdog ever acts on it.
func (im *Importer) run_(ctx context.Context, a anchor, runNo int, start time.Time) (int64, error) {
	im.mu.Lock()
	defer im.mu.Unlock()
	key := runKey{a.id, runNo}
	if id, ok := im.runs[key]; ok {
		return id, nil
	}
	db := im.d.FCC
	now := im.now()
	res, err := db.ExecContext(ctx, db.Rebind(`INSERT INTO fcc_runs (campaign_id, run_number, state, reason, window_start_at, started_at, finished_at, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (campaign_id, run_number) DO NOTHING`), a.id, runNo, "FINISHED", "LEGACY_IMPORT", start, start, start, now, now)
	if err != nil {
		return 0, fmt.Errorf("creating run %d of anchor campaign %d: %w", runNo, a.id, err)
	}
	if c, _ := res.RowsAffected(); c == 1 {
		im.m.activationsCreated.Inc()
	}
	var id int64
	if err := db.QueryRowContext(ctx, db.Rebind(`SELECT id FROM fcc_runs WHERE campaign_id = ? AND run_number = ?`), a.id, runNo).Scan(&id); err != nil {
		return 0, err
	}
	if len(im.runs) >= cacheBound {
		clear(im.runs)
	}
	im.runs[key] = id
	return id, nil
}

// resolve picks the batch's (run, serial) pairs not snapshotted before
// and resolves their serials. It runs outside the batch transaction: the
// device lookup may use the same pool, which on SQLite is one connection.
func (im *Importer) resolve(ctx context.Context, pairs map[deviceKey]struct{}) ([]deviceKey, map[string]int64, error) {
	im.mu.Lock()
	var fresh []deviceKey
	for k := range pairs {
		if _, ok := im.seen[k]; !ok {
			fresh = append(fresh, k)
		}
	}
	im.mu.Unlock()
	if len(fresh) == 0 || im.d.Devices == nil {
		return fresh, nil, nil
	}
	serials := make([]string, 0, len(fresh))
	for _, k := range fresh {
		serials = append(serials, k.serial)
	}
	ids, err := im.d.Devices(ctx, serials)
	if err != nil {
		return nil, nil, fmt.Errorf("resolving legacy serials: %w", err)
	}
	return fresh, ids, nil
}

// snapshotChunk bounds one multi-row INSERT into fcc_run_devices: 5
// parameters a row, so 5,000, well under SQLite's 32,766 and PostgreSQL's
// 65,535; a batch of 10,000 new pairs is 10 statements.
const snapshotChunk = 1000

// snapshot records the fresh pairs whose serial resolved, in (run, device)
// order: the SPEED and LATENCY passes snapshot the same runs at the same
// time, and taking the unique-index locks in one order keeps their
// transactions from deadlocking. It returns how many rows were new and how
// many pairs stayed unresolved.
func (im *Importer) snapshot(ctx context.Context, tx *sql.Tx, fresh []deviceKey, ids map[string]int64) (int64, int64, error) {
	type dev struct {
		run, cpe int64
		serial   string
	}
	devs := make([]dev, 0, len(fresh))
	var unresolved int64
	for _, k := range fresh {
		cpe, ok := ids[k.serial]
		if !ok {
			unresolved++
			continue
		}
		devs = append(devs, dev{k.run, cpe, k.serial})
	}
	slices.SortFunc(devs, func(a, b dev) int {
		if c := cmp.Compare(a.run, b.run); c != 0 {
			return c
		}
		if c := cmp.Compare(a.cpe, b.cpe); c != 0 {
			return c
		}
		return strings.Compare(a.serial, b.serial)
	})
	db := im.d.FCC
	now := im.now()
	state := string(fccwire.DeviceDone)
	var snap int64
	var b strings.Builder
	for start := 0; start < len(devs); start += snapshotChunk {
		part := devs[start:min(start+snapshotChunk, len(devs))]
		b.Reset()
		b.WriteString(`INSERT INTO fcc_run_devices (run_id, cpe_id, serial, state, seq, updated_at) VALUES `)
		args := make([]any, 0, 5*len(part))
		for i, d := range part {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`(?, ?, ?, ?, 0, ?)`)
			args = append(args, d.run, d.cpe, d.serial, state, now)
		}
		b.WriteString(` ON CONFLICT (run_id, cpe_id) DO NOTHING`)
		res, err := tx.ExecContext(ctx, db.Rebind(b.String()), args...)
		if err != nil {
			return 0, 0, fmt.Errorf("snapshotting legacy devices: %w", err)
		}
		if c, err := res.RowsAffected(); err == nil {
			snap += c
		}
	}
	return snap, unresolved, nil
}

// remember marks pairs as snapshotted once their transaction committed.
func (im *Importer) remember(fresh []deviceKey) {
	im.mu.Lock()
	defer im.mu.Unlock()
	if len(im.seen)+len(fresh) > cacheBound {
		clear(im.seen)
	}
	for _, k := range fresh {
		im.seen[k] = struct{}{}
	}
}

type metrics struct {
	rowsRead, rowsWritten, rowsSkipped, batches *prometheus.CounterVec
	devicesSnapshotted, devicesUnresolved       *prometheus.CounterVec
	passesCompleted, passesFailed               *prometheus.CounterVec
	anchorsCreated, activationsCreated          prometheus.Counter
}

// newMetrics builds the fcc.legacy.import.* counters; each per kind but
// the anchors and activations, which both kinds share.
func newMetrics(reg prometheus.Registerer) *metrics {
	vec := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fcc_legacy_import_" + name + "_total", Help: help}, []string{"kind"})
	}
	one := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: "fcc_legacy_import_" + name + "_total", Help: help})
	}
	m := &metrics{
		rowsRead:           vec("rows_read", "legacy source rows read"),
		rowsWritten:        vec("rows_written", "legacy rows newly stored in the result store"),
		rowsSkipped:        vec("rows_skipped", "legacy rows read whose natural key was already stored"),
		batches:            vec("batches", "legacy batches committed"),
		devicesSnapshotted: vec("devices_snapshotted", "devices recorded on the activations of legacy runs"),
		devicesUnresolved:  vec("devices_unresolved", "legacy serials not found among the ACS devices"),
		passesCompleted:    vec("passes_completed", "legacy passes that reached their cutoff"),
		passesFailed:       vec("passes_failed", "legacy passes that ended FAILED"),
		anchorsCreated:     one("anchors_created", "anchor campaigns created for legacy user groups"),
		activationsCreated: one("activations_created", "activations created for legacy runs"),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.rowsRead, m.rowsWritten, m.rowsSkipped, m.batches, m.devicesSnapshotted,
			m.devicesUnresolved, m.passesCompleted, m.passesFailed, m.anchorsCreated, m.activationsCreated} {
			_ = reg.Register(c)
		}
	}
	return m
}
