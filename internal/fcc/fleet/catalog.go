package fleet

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"cpesuite/internal/platform/apperr"
)

// Catalog lists the models that have at least one visible device, with
// their protocol, ordered by manufacturer and model (case-insensitively,
// then by model id, so both dialects answer the same order whatever the
// database collation). One statement; none for an empty scope.
func (r *Resolver) Catalog(ctx context.Context, scope Scope) ([]CatalogEntry, error) {
	out := []CatalogEntry{}
	if scope.Empty() {
		return out, nil
	}
	p := &plan{scope: scope}
	if !scope.All && len(scope.DomainIDs) > maxInList {
		p.visible = make(map[int64]bool, len(scope.DomainIDs))
		for _, id := range scope.DomainIDs {
			p.visible[id] = true
		}
	}
	q := newQuery(r.dialect)
	// A device without a product class has no model to list.
	q.where("d.product_class_id IS NOT NULL")
	if !scope.All && p.visible == nil {
		q.inList("d.domain_id", scope.DomainIDs, false)
	}
	group := "pc.id, pc.manufacturer_id, m.name, pc.model_name, p.name, p.supported_by_acs"
	domainCol := ""
	if p.visible != nil {
		group += ", d.domain_id"
		domainCol = ", d.domain_id"
	}
	stmt := `SELECT pc.manufacturer_id, COALESCE(m.name, ''), pc.id, pc.model_name,
       COALESCE(p.name, 'TR069'), COALESCE(p.supported_by_acs, TRUE)` + domainCol + `, COUNT(*)` +
		fromClause + q.whereClause() + "\nGROUP BY " + group
	rows, err := r.db.QueryContext(ctx, stmt, q.args...)
	if err != nil {
		return nil, fmt.Errorf("reading catalog: %w", err)
	}
	defer rows.Close()
	byModel := map[int64]int{}
	for rows.Next() {
		var (
			e        CatalogEntry
			mfID     sql.NullInt64
			domainID sql.NullInt64
		)
		dest := []any{&mfID, &e.Manufacturer, &e.ModelID, &e.Model, &e.Protocol, &e.SupportedByACS}
		if p.visible != nil {
			dest = append(dest, &domainID)
		}
		dest = append(dest, &e.DeviceCount)
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("reading catalog: %w", err)
		}
		if p.visible != nil && (!domainID.Valid || !p.visible[domainID.Int64]) {
			continue
		}
		if i, ok := byModel[e.ModelID]; ok {
			out[i].DeviceCount += e.DeviceCount
			continue
		}
		e.ManufacturerID = nullableID(mfID)
		byModel[e.ModelID] = len(out)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading catalog: %w", err)
	}
	slices.SortFunc(out, func(a, b CatalogEntry) int {
		return cmp.Or(
			strings.Compare(strings.ToLower(a.Manufacturer), strings.ToLower(b.Manufacturer)),
			strings.Compare(strings.ToLower(a.Model), strings.ToLower(b.Model)),
			cmp.Compare(a.ModelID, b.ModelID),
		)
	})
	return out, nil
}

// LoadCondition reads one saved condition (one statement).
func (r *Resolver) LoadCondition(ctx context.Context, id int64) (SavedCondition, error) {
	q := newQuery(r.dialect)
	stmt := `SELECT id, name, domain_id, criteria FROM acs_conditions WHERE id = ` + q.arg(id)
	rows, err := r.db.QueryContext(ctx, stmt, q.args...)
	if err != nil {
		return SavedCondition{}, fmt.Errorf("loading condition %d: %w", id, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return SavedCondition{}, fmt.Errorf("loading condition %d: %w", id, err)
		}
		return SavedCondition{}, apperr.NotFound("", "condition %d not found", id)
	}
	var (
		c        SavedCondition
		domainID sql.NullInt64
		criteria string
	)
	if err := rows.Scan(&c.ID, &c.Name, &domainID, &criteria); err != nil {
		return SavedCondition{}, fmt.Errorf("loading condition %d: %w", id, err)
	}
	c.DomainID = nullableID(domainID)
	if err := json.Unmarshal([]byte(criteria), &c.Condition); err != nil {
		return SavedCondition{}, fmt.Errorf("loading condition %d: criteria: %w", id, err)
	}
	// The ACS writes criteria with domainIds omitted when empty and treats
	// an empty list as "no domain restriction"; keep that meaning here
	// instead of letting [] narrow the caller to nothing. Narrowing can
	// never widen the caller's own scope either way.
	if len(c.Condition.DomainIDs) == 0 {
		c.Condition.DomainIDs = nil
	}
	return c, rows.Err()
}
