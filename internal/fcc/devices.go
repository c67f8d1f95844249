package fcc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"cpesuite/internal/fcc/fleet"
	"cpesuite/internal/platform/apperr"
)

// ResolveRequest is the JSON body of POST /FCC/devices/resolve and
// /FCC/devices/count, and the optional request part of their multipart
// form (where the uploaded file is the whole selection).
type ResolveRequest struct {
	SourceType        string           `json:"sourceType"`
	Manufacturer      string           `json:"manufacturer"`
	Model             string           `json:"model"`
	Condition         *fleet.Condition `json:"condition"`
	ConditionID       *int64           `json:"conditionId"`
	Serials           []string         `json:"serials"`
	SelectedDevices   []int64          `json:"selectedDevices"`
	UnselectedDevices []int64          `json:"unselectedDevices"`
	PageNumbers       PageNumber       `json:"pageNumbers"`
	PageSize          *int             `json:"pageSize"`
}

// ResolveResponse is the resolve answer: one page and the counters of the
// whole match.
type ResolveResponse struct {
	Items       []fleet.Device `json:"items"`
	PageDetails PageDetails    `json:"pageDetails"`
	fleet.Counts
}

// selectionFor turns a request into a resolver selection; the saved
// condition, when named, is read and held to the translated subset.
func (s *Service) selectionFor(ctx context.Context, req ResolveRequest) (fleet.Selection, error) {
	if req.SourceType == "" {
		return fleet.Selection{}, invalid("sourceType is required (%s)", sourceTypeList)
	}
	src, err := fleet.ParseSourceType(req.SourceType)
	if err != nil {
		return fleet.Selection{}, invalid("sourceType: %v", err)
	}
	sel := fleet.Selection{Source: src, Serials: req.Serials, DeviceIDs: req.SelectedDevices, Exclude: req.UnselectedDevices}
	// As at save time (fleetSelection): the chosen manufacturer and model
	// narrow ALL and CONDITION sources and only label device and serial
	// lists, so the wizard counts what a save would freeze.
	if src == fleet.SourceAll || src == fleet.SourceCondition {
		sel.Manufacturer, sel.Model = strings.TrimSpace(req.Manufacturer), strings.TrimSpace(req.Model)
	}
	if req.Condition != nil {
		sel.Condition = *req.Condition
		sel.Condition.Rules = nil // rules come from saved conditions only
	}
	if req.ConditionID != nil {
		if !s.cfg.IOTWEnabled {
			return sel, invalid("conditionId is refused: saved conditions are switched off (svc.fcc.iotw.enabled=false)")
		}
		cond, err := s.fleet.LoadCondition(ctx, *req.ConditionID)
		if errors.Is(err, apperr.ErrNotFound) {
			return sel, invalid("conditionId %d does not name a saved condition", *req.ConditionID)
		}
		if err != nil {
			return sel, err
		}
		if err := fleet.CheckRules(cond.Condition.Rules); err != nil {
			return sel, err
		}
		merged := cond.Condition
		if req.Condition != nil {
			// The request's named fields narrow the saved condition.
			merged.ManufacturerIDs = append(merged.ManufacturerIDs, req.Condition.ManufacturerIDs...)
			merged.ModelIDs = append(merged.ModelIDs, req.Condition.ModelIDs...)
			merged.OnlyOnline = merged.OnlyOnline || req.Condition.OnlyOnline
			if req.Condition.DomainIDs != nil {
				merged.DomainIDs = req.Condition.DomainIDs
			}
		}
		sel.Condition = merged
	}
	if src == fleet.SourceCondition && req.Condition == nil && req.ConditionID == nil {
		return sel, invalid("sourceType CONDITION needs condition or conditionId")
	}
	return sel, nil
}

// Resolve answers POST /FCC/devices/resolve.
func (s *Service) Resolve(ctx context.Context, id Identity, req ResolveRequest) (ResolveResponse, error) {
	page, size, err := pageParams(req.PageNumbers, req.PageSize, s.cfg.ResolvePageSize, s.cfg.MaxDevicesPerTest)
	if err != nil {
		return ResolveResponse{}, err
	}
	sel, err := s.selectionFor(ctx, req)
	if err != nil {
		return ResolveResponse{}, err
	}
	res, err := s.fleet.Resolve(ctx, id.Scope(), sel, fleet.Page{Number: page, Size: size})
	if err != nil {
		return ResolveResponse{}, err
	}
	return ResolveResponse{Items: res.Items, PageDetails: pageDetails(page, size, len(res.Items), res.TotalCount), Counts: res.Counts}, nil
}

// Count answers POST /FCC/devices/count: the resolve figures without a page.
func (s *Service) Count(ctx context.Context, id Identity, req ResolveRequest) (fleet.Counts, error) {
	sel, err := s.selectionFor(ctx, req)
	if err != nil {
		return fleet.Counts{}, err
	}
	return s.fleet.Count(ctx, id.Scope(), sel)
}

// GroupConfig is one element of POST /FCC/activate/devices/countByGroupConfigs.
type GroupConfig struct {
	ID           *int64 `json:"id"`
	Manufacturer string `json:"manufacturer"`
	Model        string `json:"model"`
	SourceType   string `json:"sourceType"`
	ConditionID  *int64 `json:"conditionId"`
}

// CountResponse is {count}.
type CountResponse struct {
	Count int64 `json:"count"`
}

// CountByGroupConfigs sums the device counts of configurations (a sum, not
// a union). Device and serial lists are not part of this request: their
// count is the stored fleet of the named configuration id, if visible.
func (s *Service) CountByGroupConfigs(ctx context.Context, id Identity, cfgs []GroupConfig) (int64, error) {
	for i, c := range cfgs {
		if c.SourceType == "" {
			return 0, invalid("configs[%d].sourceType is required (%s)", i, sourceTypeList)
		}
		if _, err := fleet.ParseSourceType(c.SourceType); err != nil {
			return 0, invalid("configs[%d].sourceType: %v", i, err)
		}
	}
	var total int64
	for i, c := range cfgs {
		switch fleet.SourceType(c.SourceType) {
		case fleet.SourceAll, fleet.SourceCondition:
			req := ResolveRequest{SourceType: c.SourceType, Manufacturer: c.Manufacturer, Model: c.Model, ConditionID: c.ConditionID}
			if fleet.SourceType(c.SourceType) == fleet.SourceCondition && c.ConditionID == nil {
				return 0, invalid("configs[%d]: sourceType CONDITION needs conditionId", i)
			}
			counts, err := s.Count(ctx, id, req)
			if err != nil {
				return 0, err
			}
			total += counts.TotalCount
		default:
			if c.ID == nil {
				continue
			}
			n, err := s.store.configFleetCount(ctx, id, *c.ID)
			if err != nil {
				return 0, err
			}
			total += n
		}
	}
	return total, nil
}

// CountByGroupIDs counts the frozen fleet rows of visible campaigns.
func (s *Service) CountByGroupIDs(ctx context.Context, id Identity, ids []int64) (int64, error) {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) == 0 || id.Scope().Empty() {
		return 0, nil
	}
	return s.store.fleetCountByCampaigns(ctx, id, ids)
}

// CatalogRequest is the body of POST /FCC/manufacturerAndModelByTestType.
type CatalogRequest struct {
	Type      string  `json:"type"`
	DomainIDs []int64 `json:"domainIds"`
}

// CatalogResponse lists models with visible devices.
type CatalogResponse struct {
	Type  string               `json:"type"`
	Items []fleet.CatalogEntry `json:"items"`
}

// Catalog answers POST /FCC/manufacturerAndModelByTestType. Both test kinds
// measure through TR-143 diagnostics, so the type does not narrow the list;
// models the ACS cannot drive are listed and flagged (supportedByAcs).
func (s *Service) Catalog(ctx context.Context, id Identity, req CatalogRequest) (CatalogResponse, error) {
	if req.Type == "" {
		return CatalogResponse{}, invalid("type is required (%s)", strings.Join(testTypes, ", "))
	}
	if err := checkEnum("type", req.Type, testTypes); err != nil {
		return CatalogResponse{}, err
	}
	scope, empty := id.Scope().Narrow(req.DomainIDs)
	if empty {
		return CatalogResponse{Type: req.Type, Items: []fleet.CatalogEntry{}}, nil
	}
	items, err := s.fleet.Catalog(ctx, scope)
	if err != nil {
		return CatalogResponse{}, fmt.Errorf("reading the model catalog: %w", err)
	}
	if items == nil {
		items = []fleet.CatalogEntry{}
	}
	return CatalogResponse{Type: req.Type, Items: items}, nil
}

// countByGroupConfigs and countByGroupIDs are the wire shapes of the two
// activation counts: {configs} or {ids} in, {count} out.
func (s *Service) countByGroupConfigs(ctx context.Context, id Identity, b struct {
	Configs []GroupConfig `json:"configs"`
}) (CountResponse, error) {
	n, err := s.CountByGroupConfigs(ctx, id, b.Configs)
	return CountResponse{Count: n}, err
}

func (s *Service) countByGroupIDs(ctx context.Context, id Identity, b struct {
	IDs []int64 `json:"ids"`
}) (CountResponse, error) {
	n, err := s.CountByGroupIDs(ctx, id, b.IDs)
	return CountResponse{Count: n}, err
}
