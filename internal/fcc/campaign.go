package fcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"cpesuite/internal/fcc/fleet"
	"cpesuite/internal/platform/apperr"
)

// maxReported caps id and serial lists quoted in one error message.
const maxReported = 20

// selection is what decides a configuration's fleet; two equal selections
// resolve the same devices, so a save that keeps them is no fleet edit.
type selection struct {
	source, manufacturer, model string
	condition                   int64
	selected, unselected        string
	serials                     string
}

func selectionOf(c TestConfig) selection {
	ids := func(v []int64) string {
		v = slices.Clone(v)
		slices.Sort(v)
		v = slices.Compact(v)
		return fmt.Sprint(v)
	}
	serials := make([]string, 0, len(c.Serials))
	for _, s := range c.Serials {
		if s = strings.ToLower(strings.TrimSpace(s)); s != "" {
			serials = append(serials, s)
		}
	}
	slices.Sort(serials)
	serials = slices.Compact(serials)
	var cond int64
	if c.ConditionID != nil {
		cond = *c.ConditionID
	}
	return selection{
		source: c.SourceType, manufacturer: strings.ToLower(c.Manufacturer), model: strings.ToLower(c.Model),
		condition: cond, selected: ids(c.SelectedDevices), unselected: ids(c.UnselectedDevices),
		serials: strings.Join(serials, "\x00"),
	}
}

// fleetSelection turns a configuration into what the resolver reads. The
// chosen manufacturer and model narrow ALL and CONDITION sources; for
// device and serial lists they are labels only, so a listed device is never
// silently dropped for carrying another model.
func fleetSelection(c TestConfig, cond *fleet.SavedCondition) fleet.Selection {
	sel := fleet.Selection{Source: fleet.SourceType(c.SourceType), Exclude: c.UnselectedDevices}
	switch sel.Source {
	case fleet.SourceAll:
		sel.Manufacturer, sel.Model = c.Manufacturer, c.Model
	case fleet.SourceCondition:
		sel.Manufacturer, sel.Model = c.Manufacturer, c.Model
		sel.Condition = cond.Condition
	case fleet.SourceDevices:
		sel.DeviceIDs = c.SelectedDevices
	case fleet.SourceSerials:
		sel.Serials = c.Serials
	}
	return sel
}

// frozenConfig is one configuration ready to be written.
type frozenConfig struct {
	cfg      TestConfig
	existing bool
	devices  []fleet.Device // nil with keep
	keep     bool           // the stored fleet stays as it is
}

// Save creates or updates a campaign (PUT /FCC/item/details) and answers
// its id. Everything it writes, the audit row included, is written in one
// transaction.
func (s *Service) Save(ctx context.Context, id Identity, c Campaign) (int64, error) {
	// Rule 12: an update outside the caller's scope is a 404 before any
	// body check.
	var stored *storedCampaign
	if c.ID != nil {
		st, err := s.visibleCampaign(ctx, id, *c.ID)
		if err != nil {
			return 0, err
		}
		stored = &st
	}
	if err := validateShape(&c, s.cfg.MaxConfigsPerTest, s.cfg.IOTWEnabled); err != nil {
		return 0, err
	}
	domain, err := s.campaignDomain(id, c, stored)
	if err != nil {
		return 0, err
	}
	if err := s.checkConfigIDs(c, stored); err != nil {
		return 0, err
	}
	// The chain's default levels belong to the campaign's own domain and
	// are read once for the whole save.
	defs, err := s.loadDefaults(ctx, domain)
	if err != nil {
		return 0, err
	}
	for i := range c.Configs {
		st := resolveSetting(c.Configs[i].Settings[0], defs)
		if err := validateSetting(i, st); err != nil {
			return 0, err
		}
		c.Configs[i].Settings = []Setting{st}
	}
	conds, err := s.loadConditions(ctx, c.Configs)
	if err != nil {
		return 0, err
	}
	for i := range c.Configs {
		if cid := c.Configs[i].ConditionID; cid != nil {
			name := conds[*cid].Name
			c.Configs[i].ConditionName = &name
		} else {
			c.Configs[i].ConditionName = nil
		}
	}
	frozen, err := s.freeze(ctx, id, c, stored, conds)
	if err != nil {
		return 0, err
	}
	if err := s.checkConnections(ctx, c, frozen); err != nil {
		return 0, err
	}

	now, user := s.now(), s.auditUser(id)
	var campaignID int64
	err = s.store.db.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		if campaignID, err = s.store.writeCampaign(ctx, tx, c, domain, user, now); err != nil {
			return fmt.Errorf("writing campaign: %w", err)
		}
		var keep []int64
		for _, f := range frozen {
			if f.existing {
				keep = append(keep, *f.cfg.ID)
			}
		}
		if stored != nil {
			if err := s.store.deleteConfigs(ctx, tx, campaignID, keep); err != nil {
				return fmt.Errorf("removing configs: %w", err)
			}
		}
		for pos, f := range frozen {
			cid, err := s.store.writeConfig(ctx, tx, campaignID, pos, f.cfg, f.existing)
			if err != nil {
				return fmt.Errorf("writing config %d: %w", pos, err)
			}
			if !f.keep {
				if err := s.store.replaceFleet(ctx, tx, campaignID, cid, f.devices); err != nil {
					return err
				}
			}
		}
		action := "CREATE"
		if stored != nil {
			action = "UPDATE"
		}
		return s.store.audit(ctx, tx, campaignID, action, user, id.ClientType, now, map[string]any{"name": c.Name, "configs": len(c.Configs)})
	})
	if err != nil {
		return 0, err
	}
	s.log.Info("campaign saved", "id", campaignID, "domain", domain, "user", user, "update", stored != nil)
	return campaignID, nil
}

// campaignDomain decides the domain: the header under scope LIST (the body
// can never widen the scope), the body under scope ALL. An update keeps the
// stored domain unless a scope-ALL caller names another.
func (s *Service) campaignDomain(id Identity, c Campaign, stored *storedCampaign) (int64, error) {
	if id.All {
		switch {
		case c.DomainID != nil:
			if *c.DomainID < 1 {
				return 0, invalid("domainId must be a positive domain id")
			}
			return *c.DomainID, nil
		case stored != nil:
			return *stored.DomainID, nil
		case id.DomainID != nil:
			return *id.DomainID, nil
		}
		return 0, invalid("domainId is required to create a campaign with scope ALL")
	}
	if stored != nil {
		return *stored.DomainID, nil
	}
	if id.DomainID == nil {
		return 0, invalid("header %s is required to create a campaign with scope LIST", HeaderDomainID)
	}
	if !id.Sees(*id.DomainID) {
		return 0, denied("domain %d is not among the visible domains (%s)", *id.DomainID, HeaderDomainIDs)
	}
	return *id.DomainID, nil
}

// checkConfigIDs refuses configuration ids that are not the campaign's own.
func (s *Service) checkConfigIDs(c Campaign, stored *storedCampaign) error {
	seen := map[int64]bool{}
	for i, cfg := range c.Configs {
		if cfg.ID == nil {
			continue
		}
		if stored == nil {
			return invalid("configs[%d].id must be null when the campaign is created", i)
		}
		if _, ok := stored.selections[*cfg.ID]; !ok {
			return invalid("configs[%d].id %d is not a configuration of campaign %d", i, *cfg.ID, *stored.ID)
		}
		if seen[*cfg.ID] {
			return invalid("configs[%d].id %d appears twice", i, *cfg.ID)
		}
		seen[*cfg.ID] = true
	}
	return nil
}

func (s *Service) loadDefaults(ctx context.Context, domain int64) (Defaults, error) {
	s.defaultsLoads.Add(1)
	return s.store.defaults(ctx, domain)
}

// loadConditions reads each distinct saved condition once and holds it to
// the subset the service translates (rule 5).
func (s *Service) loadConditions(ctx context.Context, cfgs []TestConfig) (map[int64]fleet.SavedCondition, error) {
	out := map[int64]fleet.SavedCondition{}
	for i, cfg := range cfgs {
		if cfg.ConditionID == nil {
			continue
		}
		if _, ok := out[*cfg.ConditionID]; ok {
			continue
		}
		cond, err := s.fleet.LoadCondition(ctx, *cfg.ConditionID)
		if errors.Is(err, apperr.ErrNotFound) {
			return nil, invalid("configs[%d].conditionId %d does not name a saved condition", i, *cfg.ConditionID)
		}
		if err != nil {
			return nil, err
		}
		if err := fleet.CheckRules(cond.Condition.Rules); err != nil {
			return nil, invalid("configs[%d].conditionId %d: %s", i, *cfg.ConditionID, apperr.PublicMessage(err))
		}
		out[*cfg.ConditionID] = cond
	}
	return out, nil
}

// freeze resolves each configuration's fleet (rules 7 to 11).
func (s *Service) freeze(ctx context.Context, id Identity, c Campaign, stored *storedCampaign, conds map[int64]fleet.SavedCondition) ([]frozenConfig, error) {
	out := make([]frozenConfig, len(c.Configs))
	// Rule 11: once activated, the fleet is frozen for good.
	if stored != nil && stored.ActivationCount > 0 {
		edited := len(c.Configs) != len(stored.selections)
		for i, cfg := range c.Configs {
			if cfg.ID == nil || stored.selections[*cfg.ID] != selectionOf(cfg) {
				edited = true
				break
			}
			out[i] = frozenConfig{cfg: cfg, existing: true, keep: true}
		}
		if edited {
			return nil, conflict("campaign %d has been activated %d time(s); its fleet is frozen and cannot be edited", *stored.ID, stored.ActivationCount)
		}
		return out, nil
	}
	for i, cfg := range c.Configs {
		var cond *fleet.SavedCondition
		if cfg.ConditionID != nil {
			cd := conds[*cfg.ConditionID]
			cond = &cd
		}
		devices, counts, err := s.fleet.Fleet(ctx, id.Scope(), fleetSelection(cfg, cond), s.cfg.MaxDevicesPerTest)
		if err != nil {
			var le *fleet.LimitError
			if errors.As(err, &le) {
				return nil, invalid("configs[%d]: the selection resolves to %d devices; at most %d are allowed per configuration (svc.fcc.max-devices-per-test)", i, le.Count, le.Limit)
			}
			if _, ok := apperr.As(err); ok {
				return nil, err
			}
			return nil, fmt.Errorf("resolving the fleet of configs[%d]: %w", i, err)
		}
		// Rule 8: every submitted cpeId must be visible.
		if len(cfg.SelectedDevices) > 0 {
			found := map[int64]bool{}
			for _, d := range devices {
				found[d.CPEID] = true
			}
			var unknown []string
			for _, cpe := range cfg.SelectedDevices {
				if !found[cpe] && !slices.Contains(cfg.UnselectedDevices, cpe) {
					unknown = append(unknown, fmt.Sprint(cpe))
				}
			}
			if len(unknown) > 0 {
				return nil, invalid("configs[%d]: %d cpeId(s) unknown to the caller's visible devices: %s", i, len(unknown), capList(unknown))
			}
		}
		// Rule 10: a serial that matches nothing fails the save;
		// duplicates are kept.
		if len(counts.NotFoundSerials) > 0 {
			return nil, invalid("configs[%d]: %d serial(s) match no visible device: %s", i, len(counts.NotFoundSerials), capList(counts.NotFoundSerials))
		}
		// Rule 9: only devices new to the fleet are checked for a serial.
		var known map[int64]bool
		if cfg.ID != nil {
			if known, err = s.store.fleetIDs(ctx, s.store.db, *cfg.ID); err != nil {
				return nil, err
			}
		}
		var blank []string
		for _, d := range devices {
			if strings.TrimSpace(d.Serial) == "" && !known[d.CPEID] {
				blank = append(blank, fmt.Sprint(d.CPEID))
			}
		}
		if len(blank) > 0 {
			return nil, invalid("configs[%d]: %d device(s) have no serial number and cannot be measured: cpeId %s", i, len(blank), capList(blank))
		}
		out[i] = frozenConfig{cfg: cfg, existing: cfg.ID != nil, devices: devices}
	}
	return out, nil
}

// checkConnections holds downloadConnections and uploadConnections to the
// ceiling of every model in the configuration's fleet.
func (s *Service) checkConnections(ctx context.Context, c Campaign, frozen []frozenConfig) error {
	models := map[int64]fleet.Device{}
	for _, f := range frozen {
		for _, d := range f.devices {
			if d.ModelID != nil {
				models[*d.ModelID] = d
			}
		}
	}
	ids := make([]int64, 0, len(models))
	for m := range models {
		ids = append(ids, m)
	}
	slices.Sort(ids)
	caps, err := s.store.capabilities(ctx, ids)
	if err != nil {
		return err
	}
	for i, f := range frozen {
		st := c.Configs[i].Settings[0]
		if st.DownloadConnections == nil && st.UploadConnections == nil {
			continue
		}
		seen := map[int64]bool{}
		for _, d := range f.devices {
			limDown, limUp := int64(s.cfg.DefaultConnections), int64(s.cfg.DefaultConnections)
			var mid int64
			if d.ModelID != nil {
				mid = *d.ModelID
				if seen[mid] {
					continue
				}
				seen[mid] = true
				if m, ok := caps[mid]; ok {
					limDown, limUp = int64(m.MaxDownloadConnections), int64(m.MaxUploadConnections)
				}
			}
			name := strings.TrimSpace(d.Manufacturer + " " + d.Model)
			if name == "" {
				name = "without a model"
			}
			if st.DownloadConnections != nil && *st.DownloadConnections > limDown {
				return invalid("configs[%d].settings[0].downloadConnections %d exceeds the ceiling of %d of model %s (modelId %d)", i, *st.DownloadConnections, limDown, name, mid)
			}
			if st.UploadConnections != nil && *st.UploadConnections > limUp {
				return invalid("configs[%d].settings[0].uploadConnections %d exceeds the ceiling of %d of model %s (modelId %d)", i, *st.UploadConnections, limUp, name, mid)
			}
		}
	}
	return nil
}

// capList quotes at most maxReported entries and says how many were left.
func capList(v []string) string {
	if len(v) <= maxReported {
		return strings.Join(v, ", ")
	}
	return strings.Join(v[:maxReported], ", ") + fmt.Sprintf(" and %d more", len(v)-maxReported)
}

// Get reads a campaign in the save shape (POST /FCC/item/details).
func (s *Service) Get(ctx context.Context, id Identity, campaign int64) (Campaign, error) {
	st, err := s.visibleCampaign(ctx, id, campaign)
	if err != nil {
		return Campaign{}, err
	}
	return st.Campaign, nil
}

// saveRPC and getRPC are the wire shapes of PUT and POST /FCC/item/details.
func (s *Service) saveRPC(ctx context.Context, id Identity, c Campaign) (map[string]int64, error) {
	n, err := s.Save(ctx, id, c)
	return map[string]int64{"id": n}, err
}

func (s *Service) getRPC(ctx context.Context, id Identity, b idBody) (Campaign, error) {
	n, err := b.need()
	if err != nil {
		return Campaign{}, err
	}
	return s.Get(ctx, id, n)
}
