package fcc

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// GlobalDomain is the domain id of the global default level: below every
// domain's own defaults, above nothing.
const GlobalDomain int64 = 0

// DomainSetting is one default settings element of a domain (or of the
// global level) for one test type.
type DomainSetting struct {
	DomainID  *int64    `json:"domainId"` // null: the global level
	Type      string    `json:"type"`
	Settings  Setting   `json:"settings"`
	UpdatedAt time.Time `json:"updated"`
	UpdatedBy string    `json:"updatedBy"`
}

// defaults loads both default levels of a campaign's domain in one
// statement.
func (s *Store) defaults(ctx context.Context, domain int64) (Defaults, error) {
	d := Defaults{Domain: map[string]*Setting{}, Global: map[string]*Setting{}}
	list, err := s.domainSettings(ctx, []int64{domain, GlobalDomain})
	if err != nil {
		return d, err
	}
	for _, ds := range list {
		st := ds.Settings
		if ds.DomainID != nil && *ds.DomainID == domain {
			d.Domain[ds.Type] = &st
		} else {
			d.Global[ds.Type] = &st
		}
	}
	return d, nil
}

func (s *Store) domainSettings(ctx context.Context, domains []int64) ([]DomainSetting, error) {
	args := make([]any, len(domains))
	for i, d := range domains {
		args[i] = d
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT domain_id, type, "values", updated_at, updated_by FROM fcc_domain_settings
		WHERE domain_id IN (`+strings.TrimSuffix(strings.Repeat("?,", len(domains)), ",")+`) ORDER BY domain_id, type`), args...)
	if err != nil {
		return nil, fmt.Errorf("loading default settings: %w", err)
	}
	defer rows.Close()
	out := []DomainSetting{}
	for rows.Next() {
		var ds DomainSetting
		var values string
		var domain int64
		if err := rows.Scan(&domain, &ds.Type, &values, &ds.UpdatedAt, &ds.UpdatedBy); err != nil {
			return nil, err
		}
		if domain != GlobalDomain {
			ds.DomainID = &domain
		}
		if err := json.Unmarshal([]byte(values), &ds.Settings); err != nil {
			return nil, fmt.Errorf("default settings of domain %d: %w", domain, err)
		}
		ds.Settings.Type = ds.Type
		ds.Settings = onlyHalf(ds.Settings)
		ds.UpdatedAt = ds.UpdatedAt.UTC()
		out = append(out, ds)
	}
	return out, rows.Err()
}

// putDomainSetting stores (replaces) one default element of domain
// (GlobalDomain for the global level).
func (s *Store) putDomainSetting(ctx context.Context, domain int64, ds DomainSetting) error {
	half := onlyHalf(ds.Settings)
	half.ID = nil
	values, err := json.Marshal(half)
	if err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM fcc_domain_settings WHERE domain_id = ? AND type = ?`), domain, ds.Type); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, s.q(`INSERT INTO fcc_domain_settings (domain_id, type, "values", updated_at, updated_by) VALUES (?, ?, ?, ?, ?)`),
			domain, ds.Type, string(values), ds.UpdatedAt, ds.UpdatedBy)
		return err
	})
}

func (s *Store) deleteDomainSetting(ctx context.Context, domain int64, typ string) (bool, error) {
	res, err := s.db.ExecContext(ctx, s.q(`DELETE FROM fcc_domain_settings WHERE domain_id = ? AND type = ?`), domain, typ)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// ModelCapability is the TR-143 connection ceiling of one device model.
type ModelCapability struct {
	ModelID                int64     `json:"modelId"`
	MaxDownloadConnections int       `json:"maxDownloadConnections"`
	MaxUploadConnections   int       `json:"maxUploadConnections"`
	UpdatedAt              time.Time `json:"updated"`
}

func (s *Store) capabilities(ctx context.Context, models []int64) (map[int64]ModelCapability, error) {
	out := map[int64]ModelCapability{}
	q := `SELECT model_id, max_download_connections, max_upload_connections, updated_at FROM fcc_model_capabilities`
	var args []any
	if models != nil {
		if len(models) == 0 {
			return out, nil
		}
		q += ` WHERE model_id IN (` + strings.TrimSuffix(strings.Repeat("?,", len(models)), ",") + `)`
		for _, m := range models {
			args = append(args, m)
		}
	}
	rows, err := s.db.QueryContext(ctx, s.q(q+` ORDER BY model_id`), args...)
	if err != nil {
		return nil, fmt.Errorf("loading model capabilities: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var m ModelCapability
		if err := rows.Scan(&m.ModelID, &m.MaxDownloadConnections, &m.MaxUploadConnections, &m.UpdatedAt); err != nil {
			return nil, err
		}
		m.UpdatedAt = m.UpdatedAt.UTC()
		out[m.ModelID] = m
	}
	return out, rows.Err()
}

func (s *Store) putCapability(ctx context.Context, m ModelCapability) error {
	return s.db.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM fcc_model_capabilities WHERE model_id = ?`), m.ModelID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, s.q(`INSERT INTO fcc_model_capabilities (model_id, max_download_connections, max_upload_connections, updated_at) VALUES (?, ?, ?, ?)`),
			m.ModelID, m.MaxDownloadConnections, m.MaxUploadConnections, m.UpdatedAt)
		return err
	})
}

func (s *Store) allDomainSettings(ctx context.Context) ([]DomainSetting, error) {
	var ids []int64
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT domain_id FROM fcc_domain_settings`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return []DomainSetting{}, nil
	}
	return s.domainSettings(ctx, ids)
}
