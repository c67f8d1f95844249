// Package legacy imports the older system's measurements (the relational
// source of SOURCE.md) into the result store: one pass per kind (SPEED,
// LATENCY) at a time across every process, claimed in the campaign
// database, resumable from a committed cursor, creating the anchor
// campaigns and activations the rows belong to.
package legacy

import (
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"cpesuite/internal/fcc/results"
	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/sqlstore"
)

//go:embed migrations
var migrations embed.FS

// Kind is a legacy result table.
type Kind string

// The kinds, in the order the status body lists them.
const (
	KindSpeed   Kind = "SPEED"
	KindLatency Kind = "LATENCY"
)

// Kinds lists every kind.
var Kinds = []Kind{KindSpeed, KindLatency}

// The states of a kind.
const (
	StateIdle      = "IDLE"
	StateRunning   = "RUNNING"
	StateStopping  = "STOPPING"
	StateCompleted = "COMPLETED"
	StateFailed    = "FAILED"
)

// lag is the fixed part of a pass cutoff; window-settle is added to it.
const lag = 24 * time.Hour

// Gate tells whether the result store is UP (results.Probe).
type Gate interface{ Status() results.Status }

// DeviceLookup resolves serials to ACS device ids; a serial it leaves out
// is unresolved (counted, not snapshotted).
type DeviceLookup func(ctx context.Context, serials []string) (map[string]int64, error)

// Deps is what the importer works on.
type Deps struct {
	// FCC is the campaign database: the import's state, the anchor
	// campaigns, their runs and device snapshots. Its fcc migrations must
	// have run (fcc.OpenStore) before New.
	FCC *sqlstore.DB
	// Source holds the legacy tables of SOURCE.md; it is only read.
	Source *sqlstore.DB
	Store  results.Store
	// Gate refuses a start unless the store is UP; nil counts as down.
	Gate Gate
	// Devices is optional; without it every device is unresolved.
	Devices    DeviceLookup
	Registerer prometheus.Registerer
	Log        *slog.Logger
}

// Importer runs legacy passes.
type Importer struct {
	cfg  Config
	d    Deps
	log  *slog.Logger
	m    *metrics
	now  func() time.Time
	host string // prefix of this process's run ids

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex // guards the caches below and anchor/run creation
	anchors map[int64]anchor
	runs    map[runKey]int64
	seen    map[deviceKey]struct{}
}

type anchor struct{ id, domain int64 }
type runKey struct {
	campaign int64
	run      int
}
type deviceKey struct {
	run    int64
	serial string
}

// cacheBound caps each cache; at the bound it is emptied, which costs a
// few re-reads and never correctness (creation is idempotent).
const cacheBound = 1 << 20

// New applies the import's migrations (service "fcc-legacy-import") and
// returns the importer. Close stops its passes.
func New(ctx context.Context, cfg Config, d Deps) (*Importer, error) {
	if d.FCC == nil || d.Source == nil || d.Store == nil {
		return nil, errors.New("legacy: the campaign database, the source and the result store are required")
	}
	if err := sqlstore.Migrate(ctx, d.FCC, "fcc-legacy-import", migrations); err != nil {
		return nil, err
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	im := &Importer{cfg: cfg, d: d, log: d.Log, m: newMetrics(d.Registerer), now: func() time.Time { return time.Now().UTC() },
		host: hex.EncodeToString(b), anchors: map[int64]anchor{}, runs: map[runKey]int64{}, seen: map[deviceKey]struct{}{}}
	im.ctx, im.cancel = context.WithCancel(context.Background())
	return im, nil
}

// Close asks the passes of this process to stop and waits for them; each
// leaves its kind IDLE with its cursor committed, to be resumed.
func (im *Importer) Close() error {
	im.cancel()
	im.wg.Wait()
	return nil
}

// SetClock replaces the clock (tests of the pass cutoff); call it before
// Start.
func (im *Importer) SetClock(now func() time.Time) { im.now = now }

// Wait blocks until the passes of this process have ended (tests).
func (im *Importer) Wait() { im.wg.Wait() }

// StartRequest is the body of POST /FCC/admin/legacy-import/start.
type StartRequest struct {
	Kinds     []string `json:"kinds"`
	DryRun    bool     `json:"dryRun"`
	BatchSize *int     `json:"batchSize"`
}

// StopRequest is the body of POST /FCC/admin/legacy-import/stop.
type StopRequest struct {
	Kinds []string `json:"kinds"`
}

// parseKinds: empty or null means both; duplicates collapse; order is the
// status body's.
func parseKinds(in []string) ([]Kind, error) {
	if len(in) == 0 {
		return Kinds, nil
	}
	var out []Kind
	for _, s := range in {
		k := Kind(s)
		if k != KindSpeed && k != KindLatency {
			return nil, apperr.Invalid("", "kinds: %q is neither SPEED nor LATENCY", s)
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b Kind) int { return slices.Index(Kinds, a) - slices.Index(Kinds, b) })
	return out, nil
}

// plan is what a start found for one kind before claiming it.
type plan struct {
	kind     Kind
	prev     row
	resume   bool
	zone     string
	cutoff   string
	lower    string
	maxID    int64
	late     int64
	estimate int64 // remaining rows of the pass
}

// Start counts the remaining work of each named kind, then (unless dry
// run) claims all of them or none and runs one pass per kind.
func (im *Importer) Start(ctx context.Context, req StartRequest) (Status, error) {
	kinds, err := parseKinds(req.Kinds)
	if err != nil {
		return Status{}, err
	}
	if !im.cfg.Enabled {
		return Status{}, apperr.Invalid("", "the legacy import is disabled (svc.fcc.legacy-import.enabled=false)")
	}
	batch := im.cfg.BatchSize
	if req.BatchSize != nil {
		if *req.BatchSize < 1 || *req.BatchSize > MaxBatchSize {
			return Status{}, apperr.Invalid("", "batchSize must be from 1 to %d", MaxBatchSize)
		}
		batch = *req.BatchSize
	}
	now := im.now()
	plans := make([]*plan, 0, len(kinds))
	for _, k := range kinds {
		p, err := im.plan(ctx, k, now)
		if err != nil {
			return Status{}, err
		}
		plans = append(plans, p)
	}
	if req.DryRun {
		st, err := im.Status(ctx)
		if err != nil {
			return Status{}, err
		}
		for _, p := range plans {
			ks := st.kind(p.kind)
			ks.TotalRowEstimate = p.estimate
			if p.resume {
				ks.TotalRowEstimate += p.prev.rowsRead
			}
		}
		return st, nil
	}
	if im.d.Gate == nil {
		return Status{}, apperr.New(apperr.ErrUnavailable, "", "the result store is not configured")
	}
	if gs := im.d.Gate.Status(); gs.State != results.StateUp {
		return Status{}, apperr.New(apperr.ErrUnavailable, "", "the result store is %s", gs.State)
	}
	runID := fmt.Sprintf("%s-%d", im.host, now.UnixMicro())
	if err := im.claim(ctx, plans, runID, batch, now); err != nil {
		return Status{}, err
	}
	for _, p := range plans {
		loc, err := loadZone(p.zone)
		if err != nil {
			loc = time.UTC
		}
		ps := &pass{kind: p.kind, runID: runID, cutoff: p.cutoff, lower: p.lower, maxID: p.maxID, batch: batch, loc: loc}
		im.wg.Add(1)
		go im.run(ps)
	}
	return im.Status(ctx)
}

func (im *Importer) plan(ctx context.Context, k Kind, now time.Time) (*plan, error) {
	r, err := im.load(ctx, im.d.FCC, k)
	if err != nil {
		return nil, err
	}
	p := &plan{kind: k, prev: r}
	if fresh := r.state == StateRunning || r.state == StateStopping; fresh && r.heartbeat.Valid && now.Sub(time.UnixMicro(r.heartbeat.Int64)) <= im.cfg.StaleAfter {
		// Held: the claim will refuse with 409; count nothing more.
		return p, nil
	}
	t := src(k)
	if r.passCutoff.Valid {
		// A pass that did not complete (stopped, store down, failed,
		// or stale): resume it with its own cutoff and zone.
		p.resume, p.zone, p.cutoff, p.maxID = true, r.zone.String, r.passCutoff.String, r.passMaxID.Int64
		p.lower = minNaive
		if r.watermark.Valid {
			p.lower = r.watermark.String
		}
	} else {
		p.zone = im.cfg.ZoneID()
		loc, err := loadZone(p.zone)
		if err != nil {
			return nil, apperr.Invalid("", "svc.fcc.legacy-import.zone: unknown zone %q", p.zone)
		}
		p.cutoff = Naive(now.Add(-lag - im.cfg.WindowSettle).In(loc))
		p.lower = minNaive
		if err := im.d.Source.QueryRowContext(ctx, `SELECT COALESCE(MAX(result_id), 0) FROM `+t.table).Scan(&p.maxID); err != nil {
			return nil, fmt.Errorf("legacy source %s: %w", t.table, err)
		}
		if r.watermark.Valid {
			p.lower = r.watermark.String
			// Rows that reached the source after their window was
			// imported: counted, never back-filled.
			if err := im.d.Source.QueryRowContext(ctx, im.d.Source.Rebind(`SELECT COUNT(*) FROM `+t.table+` WHERE result_id > ? AND result_id <= ? AND start_date < ?`),
				r.watermarkID, p.maxID, r.watermark.String).Scan(&p.late); err != nil {
				return nil, fmt.Errorf("legacy source %s: %w", t.table, err)
			}
		}
	}
	cursor := int64(0)
	if p.resume {
		cursor = r.cursorID
	}
	if err := im.d.Source.QueryRowContext(ctx, im.d.Source.Rebind(`SELECT COUNT(*) FROM `+t.table+
		` WHERE result_id > ? AND result_id <= ? AND (start_date IS NULL OR (start_date >= ? AND start_date < ?))`),
		cursor, p.maxID, p.lower, p.cutoff).Scan(&p.estimate); err != nil {
		return nil, fmt.Errorf("legacy source %s: %w", t.table, err)
	}
	return p, nil
}

// claim takes every planned kind in one transaction or none: a kind held
// by a fresh heartbeat answers 409 naming its run and heartbeat.
func (im *Importer) claim(ctx context.Context, plans []*plan, runID string, batch int, now time.Time) error {
	db := im.d.FCC
	staleBefore := now.Add(-im.cfg.StaleAfter).UnixMicro()
	return db.InTx(ctx, func(tx *sql.Tx) error {
		for _, p := range plans {
			set := `state = ?, run_id = ?, heartbeat_us = ?, started_us = ?, stop_requested = ?, batch_size = ?, zone_id = ?,
				pass_cutoff = ?, pass_max_id = ?, last_error = NULL`
			args := []any{StateRunning, runID, now.UnixMicro(), now.UnixMicro(), false, batch, p.zone, p.cutoff, p.maxID}
			if p.resume {
				set += `, total_row_estimate = rows_read + ?`
				args = append(args, p.estimate)
			} else {
				set += `, total_row_estimate = ?, rows_read = 0, rows_written = 0, rows_skipped = 0, rows_late_skipped = ?, rows_invalid = 0,
					bytes_overflow_count = 0, tier_parse_failed = 0, status_unknown_count = 0, properties_missing_count = 0, devices_unresolved = 0,
					cursor_ug_id = NULL, cursor_serial = NULL, cursor_direction = NULL, cursor_started_at = NULL, cursor_result_id = 0,
					cursor_iteration = NULL, pending_result_id = NULL, pending_from_id = NULL, pending_ug_id = NULL`
				args = append(args, p.estimate, p.late)
			}
			// The row must still be what the plan read (same run id), and
			// free or stale.
			args = append(args, string(p.kind), p.prev.runID.String, StateRunning, StateStopping, staleBefore)
			res, err := tx.ExecContext(ctx, db.Rebind(`UPDATE fcc_legacy_import SET `+set+`
				WHERE kind = ? AND COALESCE(run_id, '') = ? AND (state NOT IN (?, ?) OR heartbeat_us IS NULL OR heartbeat_us < ?)`), args...)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				continue
			}
			cur, err := im.load(ctx, tx, p.kind)
			if err != nil {
				return err
			}
			hb := "never"
			if cur.heartbeat.Valid {
				hb = time.UnixMicro(cur.heartbeat.Int64).UTC().Format(time.RFC3339Nano)
			}
			return apperr.Conflict("", "legacy import %s is already running: run %s, last heartbeat %s", p.kind, cur.runID.String, hb)
		}
		return nil
	})
}

// Stop asks the named kinds' passes to stop between two batches. A
// RUNNING kind whose heartbeat is stale has no pass to ask: it becomes
// IDLE at once, resumable.
func (im *Importer) Stop(ctx context.Context, req StopRequest) (Status, error) {
	kinds, err := parseKinds(req.Kinds)
	if err != nil {
		return Status{}, err
	}
	db := im.d.FCC
	staleBefore := im.now().Add(-im.cfg.StaleAfter).UnixMicro()
	for _, k := range kinds {
		if _, err := db.ExecContext(ctx, db.Rebind(`UPDATE fcc_legacy_import SET state = ?, last_error = ?
			WHERE kind = ? AND state IN (?, ?) AND (heartbeat_us IS NULL OR heartbeat_us < ?)`),
			StateIdle, "stopped while no pass was alive (stale heartbeat)", string(k), StateRunning, StateStopping, staleBefore); err != nil {
			return Status{}, err
		}
		if _, err := db.ExecContext(ctx, db.Rebind(`UPDATE fcc_legacy_import SET state = ?, stop_requested = ? WHERE kind = ? AND state = ?`),
			StateStopping, true, string(k), StateRunning); err != nil {
			return Status{}, err
		}
	}
	return im.Status(ctx)
}

// querier is a *sql.DB or *sql.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

type row struct {
	kind                                          Kind
	state                                         string
	runID, zone, passCutoff, lastError, watermark sql.NullString
	cursorSerial, cursorDirection, cursorStarted  sql.NullString
	heartbeat, started, passMaxID                 sql.NullInt64
	cursorUg, cursorIteration                     sql.NullInt64
	pendingResult, pendingFrom, pendingUg         sql.NullInt64
	stopRequested                                 bool
	batch                                         int
	cursorID, watermarkID                         int64
	rowsRead, estimate, written, skipped, late    int64
	invalid, bytesOverflow, tierFailed            int64
	statusUnknown, propsMissing, devUnresolved    int64
}

func (im *Importer) load(ctx context.Context, q querier, k Kind) (row, error) {
	r := row{kind: k}
	err := q.QueryRowContext(ctx, im.d.FCC.Rebind(`SELECT state, run_id, zone_id, pass_cutoff, last_error, watermark_started_before,
		cursor_serial, cursor_direction, cursor_started_at, heartbeat_us, started_us, pass_max_id, cursor_ug_id, cursor_iteration,
		pending_result_id, pending_from_id, pending_ug_id, stop_requested, batch_size, cursor_result_id, watermark_result_id,
		rows_read, total_row_estimate, rows_written, rows_skipped, rows_late_skipped, rows_invalid, bytes_overflow_count,
		tier_parse_failed, status_unknown_count, properties_missing_count, devices_unresolved
		FROM fcc_legacy_import WHERE kind = ?`), string(k)).Scan(&r.state, &r.runID, &r.zone, &r.passCutoff, &r.lastError, &r.watermark,
		&r.cursorSerial, &r.cursorDirection, &r.cursorStarted, &r.heartbeat, &r.started, &r.passMaxID, &r.cursorUg, &r.cursorIteration,
		&r.pendingResult, &r.pendingFrom, &r.pendingUg, &r.stopRequested, &r.batch, &r.cursorID, &r.watermarkID,
		&r.rowsRead, &r.estimate, &r.written, &r.skipped, &r.late, &r.invalid, &r.bytesOverflow,
		&r.tierFailed, &r.statusUnknown, &r.propsMissing, &r.devUnresolved)
	if err != nil {
		return r, fmt.Errorf("legacy import state %s: %w", k, err)
	}
	return r, nil
}

// Status is the status body.
type Status struct {
	Enabled          bool         `json:"enabled"`
	ConfiguredZoneID string       `json:"configuredZoneId"`
	Kinds            []KindStatus `json:"kinds"`
}

func (s *Status) kind(k Kind) *KindStatus {
	for i := range s.Kinds {
		if s.Kinds[i].Kind == k {
			return &s.Kinds[i]
		}
	}
	return nil
}

// KindStatus is one kind of the status body. Counters describe the
// current or last pass: a fresh pass zeroes them, a resumed one continues.
type KindStatus struct {
	Kind                   Kind       `json:"kind"`
	State                  string     `json:"state"`
	RunID                  *string    `json:"runId"`
	RowsRead               int64      `json:"rowsRead"`
	TotalRowEstimate       int64      `json:"totalRowEstimate"`
	RowsWritten            int64      `json:"rowsWritten"`
	RowsSkipped            int64      `json:"rowsSkipped"`
	HeartbeatAt            *time.Time `json:"heartbeatAt"`
	StartedAt              *time.Time `json:"startedAt"`
	BatchSize              int        `json:"batchSize"`
	PassCutoff             *string    `json:"passCutoff"`
	CursorUgID             *int64     `json:"cursorUgId"`
	CursorSerial           *string    `json:"cursorSerial"`
	CursorDirection        *string    `json:"cursorDirection"`
	CursorStartedAt        *string    `json:"cursorStartedAt"`
	CursorResultID         *int64     `json:"cursorResultId"`
	CursorIteration        *int64     `json:"cursorIteration"`
	WatermarkStartedBefore *string    `json:"watermarkStartedBefore"`
	WatermarkResultID      *int64     `json:"watermarkResultId"`
	PendingResultID        *int64     `json:"pendingResultId"`
	PendingFromID          *int64     `json:"pendingFromId"`
	PendingUgID            *int64     `json:"pendingUgId"`
	RowsLateSkipped        int64      `json:"rowsLateSkipped"`
	RowsInvalid            int64      `json:"rowsInvalid"`
	BytesOverflowCount     int64      `json:"bytesOverflowCount"`
	TierParseFailed        int64      `json:"tierParseFailed"`
	StatusUnknownCount     int64      `json:"statusUnknownCount"`
	PropertiesMissingCount int64      `json:"propertiesMissingCount"`
	DevicesUnresolved      int64      `json:"devicesUnresolved"`
	ZoneID                 *string    `json:"zoneId"`
	LastError              *string    `json:"lastError"`
	PendingStop            bool       `json:"pendingStop"`
}

func str(n sql.NullString) *string {
	if !n.Valid {
		return nil
	}
	return &n.String
}

func i64(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	return &n.Int64
}

func micro(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := time.UnixMicro(n.Int64).UTC()
	return &t
}

// Status reads the status body; it answers whatever the store's state.
func (im *Importer) Status(ctx context.Context) (Status, error) {
	st := Status{Enabled: im.cfg.Enabled, ConfiguredZoneID: im.cfg.ZoneID()}
	for _, k := range Kinds {
		r, err := im.load(ctx, im.d.FCC, k)
		if err != nil {
			return Status{}, err
		}
		ks := KindStatus{Kind: k, State: r.state, RunID: str(r.runID), RowsRead: r.rowsRead, TotalRowEstimate: r.estimate,
			RowsWritten: r.written, RowsSkipped: r.skipped, HeartbeatAt: micro(r.heartbeat), StartedAt: micro(r.started), BatchSize: r.batch,
			PassCutoff: str(r.passCutoff), CursorUgID: i64(r.cursorUg), CursorSerial: str(r.cursorSerial), CursorDirection: str(r.cursorDirection),
			CursorStartedAt: str(r.cursorStarted), CursorIteration: i64(r.cursorIteration), WatermarkStartedBefore: str(r.watermark),
			PendingResultID: i64(r.pendingResult), PendingFromID: i64(r.pendingFrom), PendingUgID: i64(r.pendingUg),
			RowsLateSkipped: r.late, RowsInvalid: r.invalid, BytesOverflowCount: r.bytesOverflow, TierParseFailed: r.tierFailed,
			StatusUnknownCount: r.statusUnknown, PropertiesMissingCount: r.propsMissing, DevicesUnresolved: r.devUnresolved,
			ZoneID: str(r.zone), LastError: str(r.lastError), PendingStop: r.stopRequested && (r.state == StateRunning || r.state == StateStopping)}
		if r.cursorID > 0 {
			ks.CursorResultID = &r.cursorID
		}
		if r.watermark.Valid {
			ks.WatermarkResultID = &r.watermarkID
		}
		st.Kinds = append(st.Kinds, ks)
	}
	return st, nil
}

// errLost means another start took the kind over (this pass's heartbeat
// went stale): the pass ends without touching the row.
var errLost = errors.New("legacy import: claim lost")

func lostIfNone(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errLost
	}
	return nil
}

// trim bounds lastError: driver errors can be long.
func trim(s string) string {
	const max = 1000
	if len(s) > max {
		return s[:max]
	}
	return strings.ToValidUTF8(s, "?")
}
