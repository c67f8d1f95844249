package fcc

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"cpesuite/internal/fcc/fleet"
	"cpesuite/internal/platform/sqlstore"
)

//go:embed migrations
var migrations embed.FS

// Store is the campaign service's relational store (SQLite embedded,
// PostgreSQL in production).
type Store struct {
	db *sqlstore.DB
}

// OpenStore migrates db and returns the store.
func OpenStore(ctx context.Context, db *sqlstore.DB) (*Store, error) {
	switch db.Dialect() {
	case sqlstore.SQLite, sqlstore.Postgres:
	default:
		return nil, fmt.Errorf("fcc store: dialect %s is not supported (use sqlite or postgres)", db.Dialect())
	}
	if err := sqlstore.Migrate(ctx, db, "fcc", migrations); err != nil {
		return nil, fmt.Errorf("fcc store: %w", err)
	}
	return &Store{db: db}, nil
}

// DB exposes the database for health checks and tests.
func (s *Store) DB() *sqlstore.DB { return s.db }

func (s *Store) q(query string) string { return s.db.Rebind(query) }

// querier is what reads need: the pool or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// storedCampaign is a campaign as stored: the save shape plus the columns
// the service keeps for itself.
type storedCampaign struct {
	Campaign
	ActivationCount int
	LegacyUGID      *int64
	Version         int64
	CreatedAt       time.Time
	UpdatedAt       time.Time
	CreatedBy       string
	UpdatedBy       string
	// configSelections holds each stored config's selection by config id,
	// for the frozen-fleet rule.
	selections map[int64]selection
}

const campaignColumns = `id, domain_id, name, type, state, activation_type, activation_date, only_online_devices,
	total_test_duration, single_test_duration, batch_interval, failed_test_retries, wan_usage_retries,
	request_device_connect, reactivation_type, repeat_every, starts_on, reactivation_count,
	activation_count, legacy_ug_id, version, created_at, created_by, updated_at, updated_by`

func scanCampaign(sc interface{ Scan(...any) error }) (storedCampaign, error) {
	var c storedCampaign
	var id, domain int64
	var actType, reType sql.NullString
	var actDate, startsOn sql.NullTime
	a := &Activation{}
	r := &Reactivation{}
	var count int
	err := sc.Scan(&id, &domain, &c.Name, &c.Type, &c.State, &actType, &actDate, &a.OnlyOnlineDevices,
		&a.TotalTestDuration, &a.SingleTestDuration, &a.BatchInterval, &a.FailedTestRetries, &a.WanUsageRetries,
		&a.RequestDeviceConnect, &reType, &r.RepeatEvery, &startsOn, &count,
		&c.ActivationCount, &c.LegacyUGID, &c.Version, &c.CreatedAt, &c.CreatedBy, &c.UpdatedAt, &c.UpdatedBy)
	if err != nil {
		return c, err
	}
	c.ID, c.DomainID = &id, &domain
	if actType.Valid {
		a.Type = actType.String
		if actDate.Valid {
			t := actDate.Time.UTC()
			a.Date = &t
		}
		c.Activation = a
	}
	if reType.Valid {
		r.Type = reType.String
		if startsOn.Valid {
			t := startsOn.Time.UTC()
			r.StartsOn = &t
		}
		// There is no stored column for ends: a stored count reads as After.
		ends := EndsAfter
		r.Ends = &ends
		r.ReactivationCount = &count
		c.Reactivation = r
	}
	return c, nil
}

// campaign loads one campaign with its configurations and settings, or
// ErrNotFound. Visibility is the caller's business.
func (s *Store) campaign(ctx context.Context, q querier, id int64) (storedCampaign, error) {
	c, err := scanCampaign(q.QueryRowContext(ctx, s.q(`SELECT `+campaignColumns+` FROM fcc_campaigns WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, notFound("campaign %d not found", id)
	}
	if err != nil {
		return c, fmt.Errorf("loading campaign %d: %w", id, err)
	}
	rows, err := q.QueryContext(ctx, s.q(`SELECT c.id, c.manufacturer, c.model, c.source_type, c.condition_id, c.condition_name,
		c.selected_devices, c.unselected_devices, c.serials, c.device_count, st.id, st.type, st."values"
		FROM fcc_configs c LEFT JOIN fcc_settings st ON st.config_id = c.id
		WHERE c.campaign_id = ? ORDER BY c.position`), id)
	if err != nil {
		return c, fmt.Errorf("loading configs of campaign %d: %w", id, err)
	}
	defer rows.Close()
	c.Configs = []TestConfig{}
	c.selections = map[int64]selection{}
	for rows.Next() {
		var cfg TestConfig
		var cid, count int64
		var selected, unselected, serials string
		var sid sql.NullInt64
		var stype, values sql.NullString
		if err := rows.Scan(&cid, &cfg.Manufacturer, &cfg.Model, &cfg.SourceType, &cfg.ConditionID, &cfg.ConditionName,
			&selected, &unselected, &serials, &count, &sid, &stype, &values); err != nil {
			return c, err
		}
		cfg.ID, cfg.DeviceCount = &cid, &count
		if err := json.Unmarshal([]byte(selected), &cfg.SelectedDevices); err != nil {
			return c, fmt.Errorf("config %d: selected devices: %w", cid, err)
		}
		if err := json.Unmarshal([]byte(serials), &cfg.Serials); err != nil {
			return c, fmt.Errorf("config %d: serials: %w", cid, err)
		}
		// Exclusions are part of the stored selection (the frozen-fleet
		// rule compares them) but never of the read shape.
		withExclusions := cfg
		if err := json.Unmarshal([]byte(unselected), &withExclusions.UnselectedDevices); err != nil {
			return c, fmt.Errorf("config %d: unselected devices: %w", cid, err)
		}
		// An empty settings list, never [null].
		cfg.Settings = []Setting{}
		if sid.Valid {
			var st Setting
			if err := json.Unmarshal([]byte(values.String), &st); err != nil {
				return c, fmt.Errorf("config %d: settings: %w", cid, err)
			}
			st.ID, st.Type = &sid.Int64, stype.String
			cfg.Settings = append(cfg.Settings, onlyHalf(st))
		}
		c.selections[cid] = selectionOf(withExclusions)
		c.Configs = append(c.Configs, cfg)
	}
	return c, rows.Err()
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func timePtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC()
}

// writeCampaign inserts (id nil) or updates the campaign row and returns
// its id.
func (s *Store) writeCampaign(ctx context.Context, tx *sql.Tx, c Campaign, domain int64, user string, now time.Time) (int64, error) {
	a := c.Activation
	if a == nil {
		a = &Activation{}
	}
	r := c.Reactivation
	var reType, reEvery, startsOn any
	count := 0
	if r != nil {
		reType, reEvery, startsOn = r.Type, r.RepeatEvery, timePtr(r.StartsOn)
		if r.ReactivationCount != nil {
			count = *r.ReactivationCount
		}
	}
	args := []any{domain, c.Name, c.Type, nullString(a.Type), timePtr(a.Date), a.OnlyOnlineDevices,
		a.TotalTestDuration, a.SingleTestDuration, a.BatchInterval, a.FailedTestRetries, a.WanUsageRetries,
		a.RequestDeviceConnect, reType, reEvery, startsOn, count}
	if c.ID == nil {
		var id int64
		err := tx.QueryRowContext(ctx, s.q(`INSERT INTO fcc_campaigns (domain_id, name, type, activation_type, activation_date,
			only_online_devices, total_test_duration, single_test_duration, batch_interval, failed_test_retries,
			wan_usage_retries, request_device_connect, reactivation_type, repeat_every, starts_on, reactivation_count,
			state, created_at, created_by, updated_at, updated_by)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
			append(args, StateDraft, now, user, now, user)...).Scan(&id)
		return id, err
	}
	_, err := tx.ExecContext(ctx, s.q(`UPDATE fcc_campaigns SET domain_id = ?, name = ?, type = ?, activation_type = ?,
		activation_date = ?, only_online_devices = ?, total_test_duration = ?, single_test_duration = ?, batch_interval = ?,
		failed_test_retries = ?, wan_usage_retries = ?, request_device_connect = ?, reactivation_type = ?, repeat_every = ?,
		starts_on = ?, reactivation_count = ?, version = version + 1, updated_at = ?, updated_by = ? WHERE id = ?`),
		append(args, now, user, *c.ID)...)
	return *c.ID, err
}

// writeConfig inserts or updates one configuration row with its settings.
func (s *Store) writeConfig(ctx context.Context, tx *sql.Tx, campaign int64, pos int, cfg TestConfig, existing bool) (int64, error) {
	selected, _ := json.Marshal(nonNilInts(cfg.SelectedDevices))
	unselected, _ := json.Marshal(nonNilInts(cfg.UnselectedDevices))
	serials, _ := json.Marshal(nonNilStrings(cfg.Serials))
	var id int64
	if existing {
		id = *cfg.ID
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE fcc_configs SET position = ?, manufacturer = ?, model = ?, source_type = ?,
			condition_id = ?, condition_name = ?, selected_devices = ?, unselected_devices = ?, serials = ? WHERE id = ?`),
			pos, cfg.Manufacturer, cfg.Model, cfg.SourceType, cfg.ConditionID, cfg.ConditionName, string(selected), string(unselected), string(serials), id); err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM fcc_settings WHERE config_id = ?`), id); err != nil {
			return 0, err
		}
	} else {
		err := tx.QueryRowContext(ctx, s.q(`INSERT INTO fcc_configs (campaign_id, position, manufacturer, model, source_type,
			condition_id, condition_name, selected_devices, unselected_devices, serials) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
			campaign, pos, cfg.Manufacturer, cfg.Model, cfg.SourceType, cfg.ConditionID, cfg.ConditionName, string(selected), string(unselected), string(serials)).Scan(&id)
		if err != nil {
			return 0, err
		}
	}
	for _, st := range cfg.Settings {
		half := onlyHalf(st)
		half.ID = nil
		values, err := json.Marshal(half)
		if err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO fcc_settings (config_id, type, "values") VALUES (?, ?, ?)`), id, st.Type, string(values)); err != nil {
			return 0, err
		}
	}
	return id, nil
}

func (s *Store) deleteConfigs(ctx context.Context, tx *sql.Tx, campaign int64, keep []int64) error {
	q := `DELETE FROM fcc_configs WHERE campaign_id = ?`
	args := []any{campaign}
	if len(keep) > 0 {
		q += ` AND id NOT IN (` + strings.TrimSuffix(strings.Repeat("?,", len(keep)), ",") + `)`
		for _, k := range keep {
			args = append(args, k)
		}
	}
	_, err := tx.ExecContext(ctx, s.q(q), args...)
	return err
}

// fleetIDs answers the cpe ids of a config's frozen fleet.
func (s *Store) fleetIDs(ctx context.Context, q querier, config int64) (map[int64]bool, error) {
	rows, err := q.QueryContext(ctx, s.q(`SELECT cpe_id FROM fcc_fleet WHERE config_id = ?`), config)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

// fleetBatch bounds one multi-row insert: 10 columns x 500 rows stays far
// below the placeholder limits of both dialects.
const fleetBatch = 500

// replaceFleet freezes a configuration's fleet.
func (s *Store) replaceFleet(ctx context.Context, tx *sql.Tx, campaign, config int64, devices []fleet.Device) error {
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM fcc_fleet WHERE config_id = ?`), config); err != nil {
		return err
	}
	const head = `INSERT INTO fcc_fleet (config_id, campaign_id, cpe_id, serial, model_id, manufacturer, model, domain_id, protocol, supported_by_acs) VALUES `
	for start := 0; start < len(devices); start += fleetBatch {
		part := devices[start:min(start+fleetBatch, len(devices))]
		var b strings.Builder
		b.WriteString(head)
		args := make([]any, 0, len(part)*10)
		for i, d := range part {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("(?,?,?,?,?,?,?,?,?,?)")
			args = append(args, config, campaign, d.CPEID, d.Serial, d.ModelID, d.Manufacturer, d.Model, d.DomainID, d.Protocol, d.SupportedByACS)
		}
		if _, err := tx.ExecContext(ctx, s.q(b.String()), args...); err != nil {
			return fmt.Errorf("freezing the fleet of config %d: %w", config, err)
		}
	}
	_, err := tx.ExecContext(ctx, s.q(`UPDATE fcc_configs SET device_count = ? WHERE id = ?`), len(devices), config)
	return err
}

func (s *Store) audit(ctx context.Context, tx *sql.Tx, campaign int64, action, user, clientType string, now time.Time, details any) error {
	b, err := json.Marshal(details)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, s.q(`INSERT INTO fcc_audit (campaign_id, action, user_id, client_type, at, details) VALUES (?, ?, ?, ?, ?, ?)`),
		campaign, action, user, clientType, now, string(b))
	return err
}

// AuditRow is one audit entry.
type AuditRow struct {
	CampaignID int64
	Action     string
	UserID     string
	At         time.Time
}

// Audit lists a campaign's audit rows, oldest first.
func (s *Store) Audit(ctx context.Context, campaign int64) ([]AuditRow, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT campaign_id, action, user_id, at FROM fcc_audit WHERE campaign_id = ? ORDER BY id`), campaign)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []AuditRow
	for rows.Next() {
		var a AuditRow
		if err := rows.Scan(&a.CampaignID, &a.Action, &a.UserID, &a.At); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

func nonNilInts(v []int64) []int64 {
	if v == nil {
		return []int64{}
	}
	return v
}

func nonNilStrings(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

// visibleClause restricts fcc_campaigns c to the caller's domains. Above
// inMemoryDomains ids it returns ok=false and the caller filters in memory.
func visibleClause(id Identity) (clause string, args []any, inSQL bool) {
	if id.All {
		return "", nil, true
	}
	if len(id.DomainIDs) > inMemoryDomains {
		return "", nil, false
	}
	return ` AND c.domain_id IN (` + strings.TrimSuffix(strings.Repeat("?,", len(id.DomainIDs)), ",") + `)`, int64sAsAny(id.DomainIDs), true
}

// configFleetCount answers the frozen fleet size of a visible config; an
// invisible or unknown one contributes nothing.

func (s *Store) configFleetCount(ctx context.Context, id Identity, config int64) (int64, error) {
	var n, domain int64
	err := s.db.QueryRowContext(ctx, s.q(`SELECT g.device_count, c.domain_id FROM fcc_configs g JOIN fcc_campaigns c ON c.id = g.campaign_id WHERE g.id = ?`), config).Scan(&n, &domain)
	if errors.Is(err, sql.ErrNoRows) || err == nil && !id.Sees(domain) {
		return 0, nil
	}
	return n, err
}

// fleetCountByCampaigns counts frozen fleet rows of the visible campaigns
// among ids (distinct, non-empty).
func (s *Store) fleetCountByCampaigns(ctx context.Context, id Identity, ids []int64) (int64, error) {
	clause, args, inSQL := visibleClause(id)
	q := `SELECT c.domain_id, COUNT(f.cpe_id) FROM fcc_campaigns c JOIN fcc_fleet f ON f.campaign_id = c.id
		WHERE c.id IN (` + strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",") + `)` + clause + ` GROUP BY c.domain_id`
	rows, err := s.db.QueryContext(ctx, s.q(q), append(int64sAsAny(ids), args...)...)
	if err != nil {
		return 0, fmt.Errorf("counting fleets: %w", err)
	}
	defer rows.Close()
	var total int64
	for rows.Next() {
		var domain, n int64
		if err := rows.Scan(&domain, &n); err != nil {
			return 0, err
		}
		if inSQL || id.Sees(domain) {
			total += n
		}
	}
	return total, rows.Err()
}
