package acs

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/sqlstore"
)

//go:embed migrations
var migrations embed.FS

// MaxInformBatch bounds one batched registry write (rows x columns stays
// far below the placeholder limits of PostgreSQL and SQLite).
const MaxInformBatch = 256

// Store is the ACS's relational store: device registry, catalogue, saved
// conditions and the task queue. It runs on SQLite and PostgreSQL.
type Store struct {
	db            *sqlstore.DB
	stmts         *stmtCache
	defaultDomain int64

	mu      sync.Mutex
	classes map[string]int64 // oui + "\x00" + productClass -> product class id
}

// OpenStore migrates db and returns the store. New devices are placed in
// defaultDomain.
func OpenStore(ctx context.Context, db *sqlstore.DB, defaultDomain int64) (*Store, error) {
	switch db.Dialect() {
	case sqlstore.SQLite, sqlstore.Postgres:
	default:
		return nil, fmt.Errorf("acs store: dialect %s is not supported (use sqlite or postgres)", db.Dialect())
	}
	if err := sqlstore.Migrate(ctx, db, "acs", migrations); err != nil {
		return nil, fmt.Errorf("acs store: %w", err)
	}
	return &Store{db: db, stmts: newStmtCache(db.DB), defaultDomain: defaultDomain, classes: map[string]int64{}}, nil
}

// DB exposes the database for health checks.
func (s *Store) DB() *sqlstore.DB { return s.db }

func (s *Store) pg() bool { return s.db.Dialect() == sqlstore.Postgres }

// q rebinds a query written with ? placeholders for the dialect.
func (s *Store) q(query string) string { return s.db.Rebind(query) }

// jsonParam is the placeholder of a JSON value.
func (s *Store) jsonParam() string {
	if s.pg() {
		return "?::jsonb"
	}
	return "?"
}

// mergeParams is the SQL expression merging new parameter values into the
// cache column: values given win, others stay.
func (s *Store) mergeParams(old, new string) string {
	if s.pg() {
		return old + " || " + new
	}
	return "json_patch(" + old + ", " + new + ")"
}

func notFound(what string, id int64) error {
	return apperr.NotFound("NOT_FOUND", "%s %d not found", what, id)
}

// ---------------------------------------------------------------- informs

// ApplyInforms writes a batch of Informs in one transaction: catalogue
// entries for new models, then one multi-row upsert of the devices. The
// results are in the order of ups. Callers must not put the same device
// twice in one batch.
func (s *Store) ApplyInforms(ctx context.Context, ups []InformUpdate) ([]InformResult, error) {
	if len(ups) == 0 {
		return nil, nil
	}
	if len(ups) > MaxInformBatch {
		return nil, fmt.Errorf("inform batch of %d exceeds %d", len(ups), MaxInformBatch)
	}
	results := make([]InformResult, len(ups))
	newClasses := map[string]int64{}
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		classIDs := make([]int64, len(ups))
		for i, u := range ups {
			id, err := s.productClassID(ctx, tx, u, newClasses)
			if err != nil {
				return err
			}
			classIDs[i] = id
		}
		return s.upsertDevices(ctx, tx, ups, classIDs, results)
	})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	for k, v := range newClasses {
		s.classes[k] = v
	}
	s.mu.Unlock()
	return results, nil
}

func classKey(oui, pc string) string { return oui + "\x00" + pc }

// productClassID finds or creates the catalogue entry of u's model. The
// cache is filled only after commit, so a rolled-back id never lingers.
func (s *Store) productClassID(ctx context.Context, tx *sql.Tx, u InformUpdate, fresh map[string]int64) (int64, error) {
	key := classKey(u.Key.OUI, u.Key.ProductClass)
	s.mu.Lock()
	id, ok := s.classes[key]
	s.mu.Unlock()
	if ok {
		return id, nil
	}
	if id, ok := fresh[key]; ok {
		return id, nil
	}
	var mfID sql.NullInt64
	if u.Manufacturer != "" {
		if _, err := s.txExec(ctx, tx, s.q(`INSERT INTO acs_manufacturers (name) VALUES (?) ON CONFLICT (name) DO NOTHING`), u.Manufacturer); err != nil {
			return 0, fmt.Errorf("manufacturer: %w", err)
		}
		if err := s.txQueryRow(ctx, tx, s.q(`SELECT id FROM acs_manufacturers WHERE name = ?`), u.Manufacturer).Scan(&mfID); err != nil {
			return 0, fmt.Errorf("manufacturer: %w", err)
		}
	}
	model := u.ModelName
	if model == "" {
		model = u.Key.ProductClass
	}
	proto := ProtocolTR069
	if u.DataModel == DataModelTR181 {
		proto = ProtocolTR181
	}
	if _, err := s.txExec(ctx, tx, s.q(`INSERT INTO acs_product_classes (manufacturer_id, oui, product_class, model_name, protocol_id)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (oui, product_class) DO NOTHING`),
		mfID, u.Key.OUI, u.Key.ProductClass, model, proto); err != nil {
		return 0, fmt.Errorf("product class: %w", err)
	}
	if err := s.txQueryRow(ctx, tx, s.q(`SELECT id FROM acs_product_classes WHERE oui = ? AND product_class = ?`),
		u.Key.OUI, u.Key.ProductClass).Scan(&id); err != nil {
		return 0, fmt.Errorf("product class: %w", err)
	}
	fresh[key] = id
	return id, nil
}

const deviceInsertCols = `oui, product_class, serial, product_class_id, domain_id, software_version, hardware_version,
	cwmp_version, data_model, conn_req_url, external_ip, periodic_interval, params, last_events,
	last_inform_at, last_boot_at, last_contact_at, online, online_until, created_at, updated_at`

func (s *Store) upsertDevices(ctx context.Context, tx *sql.Tx, ups []InformUpdate, classIDs []int64, results []InformResult) error {
	var b strings.Builder
	b.WriteString("INSERT INTO acs_devices (" + deviceInsertCols + ") VALUES ")
	row := "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, " + s.jsonParam() + ", ?, ?, ?, ?, ?, ?, ?, ?)"
	args := make([]any, 0, len(ups)*21)
	for i, u := range ups {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
		var boot any
		if u.Boot {
			boot = u.At.UTC()
		}
		at := u.At.UTC()
		args = append(args, u.Key.OUI, u.Key.ProductClass, u.Key.Serial, classIDs[i], s.defaultDomain,
			u.SoftwareVersion, u.HardwareVersion, u.CWMPVersion, u.DataModel, u.ConnReqURL, u.ExternalIP,
			u.PeriodicInterval, u.Params.JSON(), strings.Join(u.Events, ","), at, boot, at, true,
			u.OnlineUntil.UTC(), at, at)
	}
	keep := func(col string) string {
		return col + " = CASE WHEN excluded." + col + " <> '' THEN excluded." + col + " ELSE acs_devices." + col + " END"
	}
	b.WriteString(` ON CONFLICT (oui, product_class, serial) DO UPDATE SET
		product_class_id = excluded.product_class_id,
		` + keep("software_version") + `,
		` + keep("hardware_version") + `,
		` + keep("cwmp_version") + `,
		` + keep("data_model") + `,
		` + keep("conn_req_url") + `,
		` + keep("external_ip") + `,
		periodic_interval = CASE WHEN excluded.periodic_interval > 0 THEN excluded.periodic_interval ELSE acs_devices.periodic_interval END,
		params = ` + s.mergeParams("acs_devices.params", "excluded.params") + `,
		last_events = excluded.last_events,
		last_inform_at = excluded.last_inform_at,
		last_boot_at = COALESCE(excluded.last_boot_at, acs_devices.last_boot_at),
		last_contact_at = excluded.last_contact_at,
		online = excluded.online,
		online_until = excluded.online_until,
		updated_at = excluded.updated_at
		RETURNING id, oui, product_class, serial, auth_username, auth_password`)
	rows, err := s.txQuery(ctx, tx, s.q(b.String()), args...)
	if err != nil {
		return fmt.Errorf("upsert devices: %w", err)
	}
	defer rows.Close()
	index := make(map[DeviceKey]int, len(ups))
	for i, u := range ups {
		index[u.Key] = i
	}
	seen := 0
	for rows.Next() {
		var r InformResult
		var k DeviceKey
		if err := rows.Scan(&r.DeviceID, &k.OUI, &k.ProductClass, &k.Serial, &r.AuthUsername, &r.AuthPassword); err != nil {
			return err
		}
		i, ok := index[k]
		if !ok {
			return fmt.Errorf("upsert devices: unexpected row %s", k)
		}
		results[i] = r
		seen++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("upsert devices: %w", err)
	}
	if seen != len(ups) {
		return fmt.Errorf("upsert devices: %d rows returned for %d informs", seen, len(ups))
	}
	return nil
}

// ---------------------------------------------------------------- devices

const deviceSelect = `SELECT d.id, d.oui, d.product_class, d.serial, d.product_class_id,
	COALESCE(m.name, ''), COALESCE(pc.model_name, ''), COALESCE(p.name, 'TR069'), COALESCE(p.supported_by_acs, TRUE),
	d.domain_id, d.software_version, d.hardware_version, d.cwmp_version, d.data_model,
	d.conn_req_url, d.conn_req_username, d.conn_req_password, d.auth_username, d.auth_password,
	d.external_ip, d.periodic_interval, d.last_events, d.last_inform_at, d.last_boot_at, d.last_contact_at,
	d.online, d.created_at, d.updated_at
	FROM acs_devices d
	LEFT JOIN acs_product_classes pc ON pc.id = d.product_class_id
	LEFT JOIN acs_manufacturers m ON m.id = pc.manufacturer_id
	LEFT JOIN acs_protocols p ON p.id = COALESCE(pc.protocol_id, 1)`

type scanner interface{ Scan(...any) error }

func scanDevice(sc scanner) (Device, error) {
	var d Device
	var model, domain sql.NullInt64
	var inform, boot, contact sql.NullTime
	err := sc.Scan(&d.ID, &d.OUI, &d.ProductClass, &d.Serial, &model, &d.Manufacturer, &d.ModelName, &d.Protocol,
		&d.SupportedByACS, &domain, &d.SoftwareVersion, &d.HardwareVersion, &d.CWMPVersion, &d.DataModel,
		&d.ConnReqURL, &d.ConnReqUsername, &d.ConnReqPassword, &d.AuthUsername, &d.AuthPassword,
		&d.ExternalIP, &d.PeriodicInterval, &d.LastEvents, &inform, &boot, &contact,
		&d.Online, &d.CreatedAt, &d.UpdatedAt)
	if err != nil {
		return d, err
	}
	d.ModelID = nullInt(model)
	d.DomainID = nullInt(domain)
	d.LastInformAt, d.LastBootAt, d.LastContactAt = nullTime(inform), nullTime(boot), nullTime(contact)
	d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	return d, nil
}

func nullInt(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	v := n.Int64
	return &v
}

func nullTime(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	v := t.Time.UTC()
	return &v
}

// Device returns one device.
func (s *Store) Device(ctx context.Context, id int64) (Device, error) {
	d, err := scanDevice(s.queryRow(ctx, s.q(deviceSelect+` WHERE d.id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return d, notFound("device", id)
	}
	return d, err
}

// DeviceByKey returns the device with a CWMP identity.
func (s *Store) DeviceByKey(ctx context.Context, k DeviceKey) (Device, error) {
	d, err := scanDevice(s.queryRow(ctx, s.q(deviceSelect+` WHERE d.oui = ? AND d.product_class = ? AND d.serial = ?`), k.OUI, k.ProductClass, k.Serial))
	if errors.Is(err, sql.ErrNoRows) {
		return d, apperr.NotFound("NOT_FOUND", "device %s not found", k)
	}
	return d, err
}

// where builds the predicate of a device filter.
func (f DeviceFilter) where() (string, []any, bool) {
	var conds []string
	var args []any
	if f.DomainIDs != nil {
		if len(f.DomainIDs) == 0 {
			return "", nil, false // an empty visible set sees nothing
		}
		conds = append(conds, "d.domain_id IN ("+placeholders(len(f.DomainIDs))+")")
		args = appendInts(args, f.DomainIDs)
	}
	if f.Serial != "" {
		conds = append(conds, "lower(d.serial) = lower(?)")
		args = append(args, f.Serial)
	}
	if f.SerialPrefix != "" {
		conds = append(conds, "lower(d.serial) LIKE ? ESCAPE '\\'")
		args = append(args, likePrefix(strings.ToLower(f.SerialPrefix)))
	}
	if len(f.ModelIDs) > 0 {
		conds = append(conds, "d.product_class_id IN ("+placeholders(len(f.ModelIDs))+")")
		args = appendInts(args, f.ModelIDs)
	}
	if len(f.ManufacturerIDs) > 0 {
		conds = append(conds, "pc.manufacturer_id IN ("+placeholders(len(f.ManufacturerIDs))+")")
		args = appendInts(args, f.ManufacturerIDs)
	}
	if f.Online != nil {
		conds = append(conds, "d.online = ?")
		args = append(args, *f.Online)
	}
	for col, v := range map[string]string{"d.software_version": f.SoftwareVersion, "d.product_class": f.ProductClass, "d.oui": f.OUI} {
		if v != "" {
			conds = append(conds, col+" = ?")
			args = append(args, v)
		}
	}
	if len(conds) == 0 {
		return "", nil, true
	}
	return " WHERE " + strings.Join(conds, " AND "), args, true
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func appendInts(args []any, ids []int64) []any {
	for _, id := range ids {
		args = append(args, id)
	}
	return args
}

// likePrefix escapes LIKE wildcards so user input matches literally.
func likePrefix(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s) + "%"
}

const deviceFrom = ` FROM acs_devices d LEFT JOIN acs_product_classes pc ON pc.id = d.product_class_id`

// ListDevices returns one page of matching devices, ordered by id, and the
// number of all matching devices.
func (s *Store) ListDevices(ctx context.Context, f DeviceFilter, p Page) ([]Device, int64, error) {
	where, args, any := f.where()
	if !any {
		return []Device{}, 0, nil
	}
	var total int64
	if err := s.queryRow(ctx, s.q(`SELECT COUNT(*)`+deviceFrom+where), args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count devices: %w", err)
	}
	rows, err := s.query(ctx, s.q(deviceSelect+where+` ORDER BY d.id LIMIT ? OFFSET ?`),
		append(args, p.Size, (p.Number-1)*p.Size)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list devices: %w", err)
	}
	defer rows.Close()
	out := []Device{}
	for rows.Next() {
		d, err := scanDevice(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, d)
	}
	return out, total, rows.Err()
}

// DeviceIDs returns the ids of all devices matching f (for group tasks).
func (s *Store) DeviceIDs(ctx context.Context, f DeviceFilter, limit int) ([]int64, error) {
	where, args, any := f.where()
	if !any {
		return nil, nil
	}
	rows, err := s.query(ctx, s.q(`SELECT d.id`+deviceFrom+where+` ORDER BY d.id LIMIT ?`), append(args, limit)...)
	if err != nil {
		return nil, err
	}
	return scanIDs(rows)
}

// DeleteDevice removes a device and its tasks.
func (s *Store) DeleteDevice(ctx context.Context, id int64) error {
	res, err := s.exec(ctx, s.q(`DELETE FROM acs_devices WHERE id = ?`), id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("device", id)
	}
	return nil
}

// DeviceUpdate changes operator-managed fields; nil fields stay.
type DeviceUpdate struct {
	DomainID        *int64  `json:"domainId"`
	ConnReqUsername *string `json:"connectionRequestUsername"`
	ConnReqPassword *string `json:"connectionRequestPassword"`
	AuthUsername    *string `json:"authUsername"`
	AuthPassword    *string `json:"authPassword"`
}

// UpdateDevice applies u to device id.
func (s *Store) UpdateDevice(ctx context.Context, id int64, u DeviceUpdate) error {
	var sets []string
	var args []any
	add := func(col string, v any) { sets = append(sets, col+" = ?"); args = append(args, v) }
	if u.DomainID != nil {
		add("domain_id", *u.DomainID)
	}
	if u.ConnReqUsername != nil {
		add("conn_req_username", *u.ConnReqUsername)
	}
	if u.ConnReqPassword != nil {
		add("conn_req_password", *u.ConnReqPassword)
	}
	if u.AuthUsername != nil {
		add("auth_username", *u.AuthUsername)
	}
	if u.AuthPassword != nil {
		add("auth_password", *u.AuthPassword)
	}
	if len(sets) == 0 {
		_, err := s.Device(ctx, id)
		return err
	}
	add("updated_at", time.Now().UTC())
	res, err := s.exec(ctx, s.q(`UPDATE acs_devices SET `+strings.Join(sets, ", ")+` WHERE id = ?`), append(args, id)...)
	if err != nil {
		if sqlstore.IsForeignKeyViolation(err) {
			return apperr.Invalid("UNKNOWN_DOMAIN", "domain %d does not exist", *u.DomainID)
		}
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("device", id)
	}
	return nil
}

// Params returns the device's cached parameter values.
func (s *Store) Params(ctx context.Context, id int64) (Params, error) {
	var raw string
	err := s.queryRow(ctx, s.q(`SELECT params FROM acs_devices WHERE id = ?`), id).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("device", id)
	}
	if err != nil {
		return nil, err
	}
	p := Params{}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return nil, fmt.Errorf("device %d params: %w", id, err)
	}
	return p, nil
}

// MergeParams merges values (from a GPV result) into the device's cache.
func (s *Store) MergeParams(ctx context.Context, id int64, p Params) error {
	if len(p) == 0 {
		return nil
	}
	_, err := s.exec(ctx, s.mergeParamsQuery(), p.JSON(), time.Now().UTC(), id)
	return err
}

func (s *Store) mergeParamsQuery() string {
	return s.q(`UPDATE acs_devices SET params = ` + s.mergeParams("params", s.jsonParam()) + `, updated_at = ? WHERE id = ?`)
}

const periodicQuery = `UPDATE acs_devices SET periodic_interval = ?, updated_at = ? WHERE id = ?`

// SetPeriodicInterval records the device's periodic inform interval in
// seconds, learnt outside an Inform (a GPV or SPV result).
func (s *Store) SetPeriodicInterval(ctx context.Context, id int64, seconds int) error {
	_, err := s.exec(ctx, s.q(periodicQuery), seconds, time.Now().UTC(), id)
	return err
}

// MarkOnline records a contact that proves the device reachable until
// until (a successful connection request, or a session message).
func (s *Store) MarkOnline(ctx context.Context, id int64, at, until time.Time) error {
	_, err := s.exec(ctx, s.q(markOnlineQuery), true, until.UTC(), at.UTC(), id)
	return err
}

const markOnlineQuery = `UPDATE acs_devices SET online = ?, online_until = ?, last_contact_at = ? WHERE id = ?`

// SweepOffline flips devices whose online window has passed to offline.
func (s *Store) SweepOffline(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.exec(ctx, s.q(`UPDATE acs_devices SET online = ? WHERE online = ? AND online_until < ?`), false, true, now.UTC())
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// CountDevices returns the number of devices and how many are online.
func (s *Store) CountDevices(ctx context.Context) (total, online int64, err error) {
	err = s.queryRow(ctx, s.q(`SELECT COUNT(*), COALESCE(SUM(CASE WHEN online = ? THEN 1 ELSE 0 END), 0) FROM acs_devices`), true).Scan(&total, &online)
	return total, online, err
}

// AuthPassword returns the per-device CPE password for username.
func (s *Store) AuthPassword(ctx context.Context, username string) (string, bool, error) {
	var pw string
	err := s.queryRow(ctx, s.q(`SELECT auth_password FROM acs_devices WHERE auth_username = ? AND auth_password <> '' LIMIT 1`), username).Scan(&pw)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return pw, err == nil, err
}

// scanIDs reads a one-column result of ids and closes rows.
func scanIDs(rows *sql.Rows) ([]int64, error) {
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
