package fcc

import (
	"context"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"cpesuite/internal/fcc/fleet"
	"cpesuite/internal/fcc/legacy"
	"cpesuite/internal/platform/sqlstore"
)

// Service is the campaign service: domain logic over the campaign store and
// the ACS device tables. Handlers in api.go stay thin around it.
type Service struct {
	cfg   Config
	store *Store
	fleet *fleet.Resolver
	log   *slog.Logger
	now   func() time.Time

	// defaultsLoads counts walks of the settings chain's default levels;
	// the chain is walked exactly once per save, which a test holds.
	defaultsLoads atomic.Int64

	acsDB *sqlstore.DB // nil in tests that pass a resolver of their own

	// results gates activation and the reports (results_gate.go); runs is
	// the activation machinery (runs*.go). Both are set after New.
	results resultHooks
	runs    *runEngine
	// legacy runs the legacy import (legacy_import.go); set after New.
	legacy *legacy.Importer
}

// New returns the service. acs reads the ACS device tables.
func New(cfg Config, store *Store, acs *fleet.Resolver, log *slog.Logger) *Service {
	return &Service{cfg: cfg, store: store, fleet: acs, log: log, now: func() time.Time { return time.Now().UTC() }}
}

func itoa(i int) string { return strconv.Itoa(i) }

// auditUser is the user recorded in audit columns: the header, or the
// configured fallback literal when the gateway did not send one.
func (s *Service) auditUser(id Identity) string {
	if id.UserID != "" {
		return id.UserID
	}
	return s.cfg.UserFallback
}

// visibleCampaign loads a campaign the caller may see; an invisible one is
// reported missing, never forbidden.
func (s *Service) visibleCampaign(ctx context.Context, id Identity, campaign int64) (storedCampaign, error) {
	st, err := s.store.campaign(ctx, s.store.db, campaign)
	if err != nil {
		return storedCampaign{}, err
	}
	if !id.Sees(*st.DomainID) {
		return storedCampaign{}, notFound("campaign %d not found", campaign)
	}
	return st, nil
}
