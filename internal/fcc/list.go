package fcc

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// List page bounds of POST /FCC/items.
const (
	listDefaultPageSize = 25
	listMaxPageSize     = 500
	// inMemoryDomains is the size above which an IN list of domain ids is
	// applied in memory instead of in SQL.
	inMemoryDomains = 1000
)

// ListRequest is the flat body of POST /FCC/items: filters beside paging.
// There is no domain field: the identity headers decide visibility.
type ListRequest struct {
	Manufacturer   string      `json:"manufacturer"`
	Model          string      `json:"model"`
	ID             *int64      `json:"id"`
	Name           string      `json:"name"`
	Type           string      `json:"type"`
	State          string      `json:"state"`
	ActivationType string      `json:"activationType"`
	CreatedBy      string      `json:"createdBy"`
	PageNumbers    PageNumber  `json:"pageNumbers"`
	PageSize       *int        `json:"pageSize"`
	Sort           []SortEntry `json:"sort"`
}

// SortEntry orders a list by a whitelisted field.
type SortEntry struct {
	Field     string `json:"field"`
	Direction string `json:"direction"`
}

// ListItem is one campaign row of POST /FCC/items.
type ListItem struct {
	ID                int64      `json:"id"`
	DomainID          int64      `json:"domainId"`
	Name              string     `json:"name"`
	Type              string     `json:"type"`
	State             string     `json:"state"`
	ActivationType    *string    `json:"activationType"`
	ActivationDate    *time.Time `json:"activationDate"`
	ReactivationCount int        `json:"reactivationCount"`
	ActivationCount   int        `json:"activationCount"`
	ConfigCount       int        `json:"configCount"`
	DeviceCount       int64      `json:"deviceCount"`
	Created           time.Time  `json:"created"`
	Updated           time.Time  `json:"updated"`
	CreatedBy         string     `json:"createdBy"`
	UpdatedBy         string     `json:"updatedBy"`
}

// ListPage is the answer of POST /FCC/items.
type ListPage struct {
	Items       []ListItem  `json:"items"`
	PageDetails PageDetails `json:"pageDetails"`
}

var listSortColumns = map[string]string{
	"id": "c.id", "name": "c.name", "type": "c.type", "state": "c.state", "domainId": "c.domain_id",
	"created": "c.created_at", "updated": "c.updated_at", "activationDate": "c.activation_date",
}

// List answers a page of visible campaigns.
func (s *Service) List(ctx context.Context, id Identity, req ListRequest) (ListPage, error) {
	page, size, err := pageParams(req.PageNumbers, req.PageSize, listDefaultPageSize, listMaxPageSize)
	if err != nil {
		return ListPage{}, err
	}
	var where []string
	var args []any
	add := func(cond string, a ...any) { where, args = append(where, cond), append(args, a...) }
	// Manufacturer and model match the frozen fleet only, never the labels
	// chosen on a configuration: a campaign is found by what it measures.
	if m := strings.TrimSpace(req.Manufacturer); m != "" {
		add(`EXISTS (SELECT 1 FROM fcc_fleet f WHERE f.campaign_id = c.id AND lower(f.manufacturer) = lower(?))`, m)
	}
	if m := strings.TrimSpace(req.Model); m != "" {
		add(`EXISTS (SELECT 1 FROM fcc_fleet f WHERE f.campaign_id = c.id AND lower(f.model) = lower(?))`, m)
	}
	if req.ID != nil {
		add(`c.id = ?`, *req.ID)
	}
	if req.Name != "" {
		add(`c.name = ?`, req.Name)
	}
	if req.Type != "" {
		if err := checkEnum("type", req.Type, testTypes); err != nil {
			return ListPage{}, err
		}
		add(`c.type = ?`, req.Type)
	}
	if req.State != "" {
		if err := checkEnum("state", req.State, campaignStates); err != nil {
			return ListPage{}, err
		}
		add(`c.state = ?`, req.State)
	}
	if req.ActivationType != "" {
		if err := checkEnum("activationType", req.ActivationType, activationTypes); err != nil {
			return ListPage{}, err
		}
		add(`c.activation_type = ?`, req.ActivationType)
	}
	if req.CreatedBy != "" {
		add(`c.created_by = ?`, req.CreatedBy)
	}
	inMemory := !id.All && len(id.DomainIDs) > inMemoryDomains
	if !id.All && !inMemory {
		if len(id.DomainIDs) == 0 {
			return ListPage{Items: []ListItem{}, PageDetails: pageDetails(page, size, 0, 0)}, nil
		}
		add(`c.domain_id IN (`+strings.TrimSuffix(strings.Repeat("?,", len(id.DomainIDs)), ",")+`)`, int64sAsAny(id.DomainIDs)...)
	}
	var order []string
	for i, e := range req.Sort {
		col, ok := listSortColumns[e.Field]
		if !ok {
			return ListPage{}, invalid("sort[%d].field %q cannot be sorted on (id, name, type, state, domainId, created, updated, activationDate)", i, e.Field)
		}
		dir := strings.ToUpper(e.Direction)
		switch dir {
		case "", "ASC":
			dir = "ASC"
		case "DESC":
		default:
			return ListPage{}, invalid("sort[%d].direction %q is not one of ASC, DESC", i, e.Direction)
		}
		order = append(order, col+" "+dir)
	}
	if len(order) == 0 {
		order = append(order, "c.id DESC")
	}
	order = append(order, "c.id")
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	query := `SELECT c.id, c.domain_id, c.name, c.type, c.state, c.activation_type, c.activation_date, c.reactivation_count,
		c.activation_count, c.created_at, c.updated_at, c.created_by, c.updated_by,
		(SELECT COUNT(*) FROM fcc_configs g WHERE g.campaign_id = c.id),
		(SELECT COALESCE(SUM(g.device_count), 0) FROM fcc_configs g WHERE g.campaign_id = c.id)
		FROM fcc_campaigns c` + cond + ` ORDER BY ` + strings.Join(order, ", ")
	var total int64
	if !inMemory {
		if err := s.store.db.QueryRowContext(ctx, s.store.q(`SELECT COUNT(*) FROM fcc_campaigns c`+cond), args...).Scan(&total); err != nil {
			return ListPage{}, fmt.Errorf("counting campaigns: %w", err)
		}
		query += ` LIMIT ? OFFSET ?`
		args = append(args, size, (page-1)*size)
	}
	rows, err := s.store.db.QueryContext(ctx, s.store.q(query), args...)
	if err != nil {
		return ListPage{}, fmt.Errorf("listing campaigns: %w", err)
	}
	defer rows.Close()
	items := []ListItem{}
	for rows.Next() {
		var it ListItem
		if err := rows.Scan(&it.ID, &it.DomainID, &it.Name, &it.Type, &it.State, &it.ActivationType, &it.ActivationDate,
			&it.ReactivationCount, &it.ActivationCount, &it.Created, &it.Updated, &it.CreatedBy, &it.UpdatedBy,
			&it.ConfigCount, &it.DeviceCount); err != nil {
			return ListPage{}, err
		}
		it.Created, it.Updated = it.Created.UTC(), it.Updated.UTC()
		if it.ActivationDate != nil {
			t := it.ActivationDate.UTC()
			it.ActivationDate = &t
		}
		if inMemory && !id.Sees(it.DomainID) {
			continue
		}
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return ListPage{}, err
	}
	if inMemory {
		total = int64(len(items))
		lo := min((page-1)*size, len(items))
		items = items[lo:min(lo+size, len(items))]
	}
	return ListPage{Items: items, PageDetails: pageDetails(page, size, len(items), total)}, nil
}

func int64sAsAny(v []int64) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = x
	}
	return out
}
