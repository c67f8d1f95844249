package fcc

import (
	"context"
	"slices"
)

// DomainSettingRequest names one default element: domainId null is the
// global level.
type DomainSettingRequest struct {
	DomainID *int64   `json:"domainId"`
	Type     string   `json:"type"`
	Settings *Setting `json:"settings"`
}

// DomainSettingList is the body of POST /FCC/admin/domain-setting/list.
type DomainSettingList struct {
	DomainIDs []int64 `json:"domainIds"`
}

// checkDomainAccess: the global level needs scope ALL; a domain must be
// visible. Both refusals are the "domain denied" 403.
func checkDomainAccess(id Identity, domain *int64) (int64, error) {
	if domain == nil {
		if !id.All {
			return 0, denied("the global default level needs scope ALL")
		}
		return GlobalDomain, nil
	}
	if *domain < 1 {
		return 0, invalid("domainId must be a positive domain id, or null for the global level")
	}
	if !id.Sees(*domain) {
		return 0, denied("domain %d is not among the visible domains", *domain)
	}
	return *domain, nil
}

// DomainSettings lists the defaults the caller may see: the global level
// and the visible domains, narrowed by domainIds when given.
func (s *Service) DomainSettings(ctx context.Context, id Identity, req DomainSettingList) ([]DomainSetting, error) {
	scope, empty := id.Scope().Narrow(req.DomainIDs)
	switch {
	case empty:
		// The global level applies to everyone and is always listed.
		return s.store.domainSettings(ctx, []int64{GlobalDomain})
	case scope.All:
		return s.store.allDomainSettings(ctx)
	}
	return s.store.domainSettings(ctx, append([]int64{GlobalDomain}, scope.DomainIDs...))
}

// PutDomainSetting stores one default element. Only the half of its type
// is kept; the values are checked like a campaign's resolved setting.
// Saved campaigns keep what they resolved at save time.
func (s *Service) PutDomainSetting(ctx context.Context, id Identity, req DomainSettingRequest) (DomainSetting, error) {
	domain, err := checkDomainAccess(id, req.DomainID)
	if err != nil {
		return DomainSetting{}, err
	}
	if err := checkEnum("type", req.Type, testTypes); err != nil {
		return DomainSetting{}, err
	}
	if req.Settings == nil {
		return DomainSetting{}, invalid("settings is required")
	}
	st := *req.Settings
	if st.Type != "" && st.Type != req.Type {
		return DomainSetting{}, invalid("settings.type %q differs from type %q", st.Type, req.Type)
	}
	st.Type, st.ID = req.Type, nil
	if other := presentFields(st, otherKind(req.Type)); len(other) > 0 {
		return DomainSetting{}, invalid("a %s default carries %s fields (%v)", req.Type, otherKind(req.Type), other)
	}
	// Blank strings are absent, as in the chain.
	st = resolveSettingFields(st)
	if err := validateDefault(st); err != nil {
		return DomainSetting{}, err
	}
	ds := DomainSetting{DomainID: req.DomainID, Type: req.Type, Settings: onlyHalf(st), UpdatedAt: s.now(), UpdatedBy: s.auditUser(id)}
	if err := s.store.putDomainSetting(ctx, domain, ds); err != nil {
		return DomainSetting{}, err
	}
	s.log.Info("default settings stored", "domain", domain, "type", req.Type, "user", ds.UpdatedBy)
	return ds, nil
}

// resolveSettingFields keeps only present fields (blank strings dropped).
func resolveSettingFields(st Setting) Setting {
	return resolveSetting(st, Defaults{})
}

// validateDefault applies the setting rules that make sense for one level
// alone: a default need not name a ping host, campaigns may bring one.
func validateDefault(st Setting) error {
	if st.Type == TypeLatency && st.TestHost == nil {
		host := "localhost"
		st.TestHost = &host
	}
	return validateSetting(0, st)
}

// DeleteDomainSetting removes one default element.
func (s *Service) DeleteDomainSetting(ctx context.Context, id Identity, req DomainSettingRequest) error {
	domain, err := checkDomainAccess(id, req.DomainID)
	if err != nil {
		return err
	}
	if err := checkEnum("type", req.Type, testTypes); err != nil {
		return err
	}
	ok, err := s.store.deleteDomainSetting(ctx, domain, req.Type)
	if err != nil {
		return err
	}
	if !ok {
		return notFound("no %s default for this level", req.Type)
	}
	return nil
}

// Capabilities lists the per-model connection ceilings (scope ALL).
func (s *Service) Capabilities(ctx context.Context, id Identity) ([]ModelCapability, error) {
	if !id.All {
		return nil, denied("model capabilities need scope ALL")
	}
	m, err := s.store.capabilities(ctx, nil)
	if err != nil {
		return nil, err
	}
	out := make([]ModelCapability, 0, len(m))
	for _, c := range m {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b ModelCapability) int { return int(a.ModelID - b.ModelID) })
	return out, nil
}

// PutCapability stores one model's connection ceiling (scope ALL).
func (s *Service) PutCapability(ctx context.Context, id Identity, m ModelCapability) (ModelCapability, error) {
	if !id.All {
		return m, denied("model capabilities need scope ALL")
	}
	if m.ModelID < 1 {
		return m, invalid("modelId must be a positive model id")
	}
	if m.MaxDownloadConnections < 1 || m.MaxUploadConnections < 1 {
		return m, invalid("maxDownloadConnections and maxUploadConnections must be at least 1")
	}
	m.UpdatedAt = s.now()
	return m, s.store.putCapability(ctx, m)
}
