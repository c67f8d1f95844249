package acs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/sqlstore"
)

// ---------------------------------------------------------------- domains

// CreateDomain adds a location under parent (nil: a new root).
func (s *Store) CreateDomain(ctx context.Context, name string, parent *int64) (Domain, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return Domain{}, apperr.Invalid("INVALID_NAME", "name must not be blank")
	}
	d := Domain{Name: name, ParentID: parent, CreatedAt: time.Now().UTC()}
	err := s.db.QueryRowContext(ctx, s.q(`INSERT INTO acs_domains (parent_id, name, created_at) VALUES (?, ?, ?) RETURNING id`),
		parent, name, d.CreatedAt).Scan(&d.ID)
	if sqlstore.IsForeignKeyViolation(err) {
		return d, apperr.Invalid("UNKNOWN_PARENT", "parent domain %d does not exist", *parent)
	}
	return d, err
}

// Domains lists all domains by id.
func (s *Store) Domains(ctx context.Context) ([]Domain, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, parent_id, name, created_at FROM acs_domains ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Domain{}
	for rows.Next() {
		var d Domain
		var parent sql.NullInt64
		if err := rows.Scan(&d.ID, &parent, &d.Name, &d.CreatedAt); err != nil {
			return nil, err
		}
		d.ParentID, d.CreatedAt = nullInt(parent), d.CreatedAt.UTC()
		out = append(out, d)
	}
	return out, rows.Err()
}

// DeleteDomain removes an empty domain: one with no sub-domains, devices
// or conditions.
func (s *Store) DeleteDomain(ctx context.Context, id int64) error {
	res, err := s.db.ExecContext(ctx, s.q(`DELETE FROM acs_domains WHERE id = ?`), id)
	if sqlstore.IsForeignKeyViolation(err) {
		return apperr.Conflict("DOMAIN_IN_USE", "domain %d still has sub-domains, devices or conditions", id)
	}
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("domain", id)
	}
	return nil
}

// ---------------------------------------------------------------- catalogue

// Manufacturers lists the manufacturers by name.
func (s *Store) Manufacturers(ctx context.Context) ([]Manufacturer, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, name FROM acs_manufacturers ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Manufacturer{}
	for rows.Next() {
		var m Manufacturer
		if err := rows.Scan(&m.ID, &m.Name); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

const classSelect = `SELECT pc.id, pc.manufacturer_id, COALESCE(m.name, ''), pc.oui, pc.product_class, pc.model_name,
	pc.protocol_id, COALESCE(p.name, 'TR069'), COALESCE(p.supported_by_acs, TRUE), pc.created_at
	FROM acs_product_classes pc
	LEFT JOIN acs_manufacturers m ON m.id = pc.manufacturer_id
	LEFT JOIN acs_protocols p ON p.id = COALESCE(pc.protocol_id, 1)`

func scanClass(sc scanner) (ProductClass, error) {
	var c ProductClass
	var mf, proto sql.NullInt64
	err := sc.Scan(&c.ID, &mf, &c.Manufacturer, &c.OUI, &c.ProductClass, &c.ModelName, &proto, &c.Protocol, &c.SupportedByACS, &c.CreatedAt)
	c.ManufacturerID = nullInt(mf)
	if proto.Valid {
		p := int(proto.Int64)
		c.ProtocolID = &p
	}
	c.CreatedAt = c.CreatedAt.UTC()
	return c, err
}

// ProductClasses lists the device models.
func (s *Store) ProductClasses(ctx context.Context) ([]ProductClass, error) {
	rows, err := s.db.QueryContext(ctx, classSelect+` ORDER BY pc.id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []ProductClass{}
	for rows.Next() {
		c, err := scanClass(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ProductClass returns one model.
func (s *Store) ProductClass(ctx context.Context, id int64) (ProductClass, error) {
	c, err := scanClass(s.db.QueryRowContext(ctx, s.q(classSelect+` WHERE pc.id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, notFound("product class", id)
	}
	return c, err
}

// ProductClassUpdate changes a model's display fields; nil fields stay.
type ProductClassUpdate struct {
	ModelName    *string `json:"modelName"`
	Manufacturer *string `json:"manufacturer"`
	ProtocolID   *int    `json:"protocolId"`
}

// UpdateProductClass applies u to model id.
func (s *Store) UpdateProductClass(ctx context.Context, id int64, u ProductClassUpdate) (ProductClass, error) {
	if u.ProtocolID != nil && (*u.ProtocolID < ProtocolTR069 || *u.ProtocolID > ProtocolUnknown) {
		return ProductClass{}, apperr.Invalid("INVALID_PROTOCOL", "protocolId must be 1 (TR069), 2 (TR181), 3 (USP) or 4 (UNKNOWN)")
	}
	if u.ModelName != nil && strings.TrimSpace(*u.ModelName) == "" {
		return ProductClass{}, apperr.Invalid("INVALID_NAME", "modelName must not be blank")
	}
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		var sets []string
		var args []any
		if u.Manufacturer != nil {
			name := strings.TrimSpace(*u.Manufacturer)
			if name == "" {
				return apperr.Invalid("INVALID_NAME", "manufacturer must not be blank")
			}
			if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO acs_manufacturers (name) VALUES (?) ON CONFLICT (name) DO NOTHING`), name); err != nil {
				return err
			}
			var mf int64
			if err := tx.QueryRowContext(ctx, s.q(`SELECT id FROM acs_manufacturers WHERE name = ?`), name).Scan(&mf); err != nil {
				return err
			}
			sets, args = append(sets, "manufacturer_id = ?"), append(args, mf)
		}
		if u.ModelName != nil {
			sets, args = append(sets, "model_name = ?"), append(args, strings.TrimSpace(*u.ModelName))
		}
		if u.ProtocolID != nil {
			sets, args = append(sets, "protocol_id = ?"), append(args, *u.ProtocolID)
		}
		if len(sets) == 0 {
			return nil
		}
		res, err := tx.ExecContext(ctx, s.q(`UPDATE acs_product_classes SET `+strings.Join(sets, ", ")+` WHERE id = ?`), append(args, id)...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("product class", id)
		}
		return nil
	})
	if err != nil {
		return ProductClass{}, err
	}
	return s.ProductClass(ctx, id)
}

// ---------------------------------------------------------------- conditions

// SaveCondition creates (ID 0) or updates a saved condition.
func (s *Store) SaveCondition(ctx context.Context, c Condition) (Condition, error) {
	c.Name = strings.TrimSpace(c.Name)
	if c.Name == "" {
		return c, apperr.Invalid("INVALID_NAME", "name must not be blank")
	}
	if err := c.Criteria.Validate(); err != nil {
		return c, apperr.Invalid("INVALID_CRITERIA", "criteria: %v", err)
	}
	crit, err := json.Marshal(c.Criteria)
	if err != nil {
		return c, err
	}
	now := time.Now().UTC()
	c.UpdatedAt = now
	if c.ID == 0 {
		c.CreatedAt = now
		err = s.db.QueryRowContext(ctx, s.q(`INSERT INTO acs_conditions (name, domain_id, criteria, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING id`),
			c.Name, c.DomainID, string(crit), now, now).Scan(&c.ID)
	} else {
		var res sql.Result
		res, err = s.db.ExecContext(ctx, s.q(`UPDATE acs_conditions SET name = ?, domain_id = ?, criteria = ?, updated_at = ? WHERE id = ?`),
			c.Name, c.DomainID, string(crit), now, c.ID)
		if err == nil {
			if n, _ := res.RowsAffected(); n == 0 {
				return c, notFound("condition", c.ID)
			}
			return s.Condition(ctx, c.ID)
		}
	}
	if sqlstore.IsForeignKeyViolation(err) {
		return c, apperr.Invalid("UNKNOWN_DOMAIN", "domain %d does not exist", *c.DomainID)
	}
	return c, err
}

const conditionSelect = `SELECT id, name, domain_id, criteria, created_at, updated_at FROM acs_conditions`

func scanCondition(sc scanner) (Condition, error) {
	var c Condition
	var dom sql.NullInt64
	var crit string
	if err := sc.Scan(&c.ID, &c.Name, &dom, &crit, &c.CreatedAt, &c.UpdatedAt); err != nil {
		return c, err
	}
	c.DomainID = nullInt(dom)
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	if err := json.Unmarshal([]byte(crit), &c.Criteria); err != nil {
		return c, fmt.Errorf("condition %d criteria: %w", c.ID, err)
	}
	return c, nil
}

// Condition returns one saved condition.
func (s *Store) Condition(ctx context.Context, id int64) (Condition, error) {
	c, err := scanCondition(s.db.QueryRowContext(ctx, s.q(conditionSelect+` WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, notFound("condition", id)
	}
	return c, err
}

// Conditions lists saved conditions, optionally of some domains only.
func (s *Store) Conditions(ctx context.Context, domainIDs []int64) ([]Condition, error) {
	q, args := conditionSelect, []any{}
	if domainIDs != nil {
		if len(domainIDs) == 0 {
			return []Condition{}, nil
		}
		q += ` WHERE domain_id IN (` + placeholders(len(domainIDs)) + `)`
		args = appendInts(args, domainIDs)
	}
	rows, err := s.db.QueryContext(ctx, s.q(q+` ORDER BY id`), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Condition{}
	for rows.Next() {
		c, err := scanCondition(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// DeleteCondition removes a saved condition.
func (s *Store) DeleteCondition(ctx context.Context, id int64) error {
	res, err := s.db.ExecContext(ctx, s.q(`DELETE FROM acs_conditions WHERE id = ?`), id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("condition", id)
	}
	return nil
}

// ConditionDeviceIDs selects the devices a condition matches: its named
// criteria as a device filter plus its rules, for a group update.
func (s *Store) ConditionDeviceIDs(ctx context.Context, c Condition, limit int) ([]int64, error) {
	f := DeviceFilter{ModelIDs: c.Criteria.ModelIDs, ManufacturerIDs: c.Criteria.ManufacturerIDs}
	if len(c.Criteria.DomainIDs) > 0 {
		f.DomainIDs = c.Criteria.DomainIDs
	}
	if c.Criteria.OnlyOnline {
		t := true
		f.Online = &t
	}
	where, args, any := f.where()
	if !any {
		return nil, nil
	}
	var conds []string
	if where != "" {
		conds = append(conds, strings.TrimPrefix(where, " WHERE "))
	}
	for _, r := range c.Criteria.Rules {
		col := ruleColumns[r.Key] // validated on save
		switch r.Op {
		case "eq":
			conds, args = append(conds, col+" = ?"), append(args, r.Value)
		case "ne":
			conds, args = append(conds, col+" <> ?"), append(args, r.Value)
		case "in", "notIn":
			op := " IN ("
			if r.Op == "notIn" {
				op = " NOT IN ("
			}
			conds = append(conds, col+op+placeholders(len(r.Values))+")")
			for _, v := range r.Values {
				args = append(args, v)
			}
		case "startsWith":
			conds, args = append(conds, col+" LIKE ? ESCAPE '\\'"), append(args, likePrefix(r.Value))
		case "contains":
			conds, args = append(conds, col+" LIKE ? ESCAPE '\\'"), append(args, "%"+strings.TrimSuffix(likePrefix(r.Value), "%")+"%")
		}
	}
	q := `SELECT d.id` + deviceFrom
	if len(conds) > 0 {
		q += " WHERE " + strings.Join(conds, " AND ")
	}
	rows, err := s.db.QueryContext(ctx, s.q(q+` ORDER BY d.id LIMIT ?`), append(args, limit)...)
	if err != nil {
		return nil, err
	}
	return scanIDs(rows)
}
