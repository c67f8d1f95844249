// Package configsvc is the configuration service (/configs-service): user
// accounts with temporary passwords and one-time-password deletion, JWT
// authentication with revocation through the data grid, e-mail by delivery
// mode, audit events with bounded retention, the product-class groups it
// publishes to the grid, and the actuator. The contract is
// the platform services specification, part B (configuration service).
package configsvc

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"cpesuite/internal/configsvc/jwtauth"
	"cpesuite/internal/configsvc/mailer"
	"cpesuite/internal/platform/grid"
	"cpesuite/internal/platform/passwd"
	"cpesuite/internal/platform/sqlstore"
)

// dummyHash is verified for logins of unknown users, so that they cost
// what a known user's does and response times do not reveal which
// usernames exist. It has the parameters passwd.Hash uses; being a
// constant, it costs nothing at start-up.
const dummyHash = "$argon2id$v=19$m=19456,t=2,p=1$tCMPPE00QC11TXEYdB6zhw$3vQ0BLkPRNK4LfxzHuoSjUCMPtbxW35p51gaQcPl3s4"

// JWTKeyFile holds the generated signing key when JWT_SECRET is unset.
const JWTKeyFile = "configs-jwt.key"

// Service is the configuration service.
type Service struct {
	cfg      Config
	log      *slog.Logger
	db       *sqlstore.DB
	st       *store
	mail     *mailer.Mailer
	jwt      *jwtauth.Issuer
	link     *gridLink
	audit    *auditor
	logins   *loginGuard
	metrics  *serviceMetrics
	now      func() time.Time
	location *time.Location
	// retentionDays is AUDIT_RETENTION_DAYS after clamping, resolved once
	// so the clamp warning is logged once.
	retentionDays int
	// bootstrapped is set when Open created the first administrator.
	bootstrapped bool
}

// CreatedBootstrapAdmin reports whether Open created the first
// administrator (the store had no account), so that a caller that chose
// the password knows whether it is the one in force.
func (s *Service) CreatedBootstrapAdmin() bool { return s.bootstrapped }

// Deps are what the module hands the service: a connected grid client and
// the process's metrics registry.
type Deps struct {
	Grid    *grid.Grid
	Metrics prometheus.Registerer
	// Hashing bounds the argon2 work of logins; nil means passwd.Shared(),
	// the one limiter of the process.
	Hashing *passwd.Limiter
	// DB, when set, is used instead of opening the profile's database
	// (tests hand in a fresh schema); Open still migrates it.
	DB *sqlstore.DB
}

// Open opens the database, applies migrations, creates the bootstrap
// administrator on first start and publishes the cache snapshots to the
// grid. cfg must have passed Validate.
func Open(ctx context.Context, cfg Config, deps Deps, log *slog.Logger) (*Service, error) {
	key, source, err := signingKey(cfg)
	if err != nil {
		return nil, err
	}
	iss, err := jwtauth.NewIssuer(key, cfg.JWTExpiration, cfg.JWTRefreshTTL)
	if err != nil {
		return nil, err
	}
	log.Info("JWT signing key", "from", source)
	loc, err := time.LoadLocation(cfg.TZ)
	if err != nil {
		return nil, fmt.Errorf("TZ: %w", err)
	}
	db := deps.DB
	if db == nil {
		if db, err = openDB(ctx, &cfg); err != nil {
			return nil, err
		}
	} else if err := sqlstore.Migrate(ctx, db, serviceName, migrations); err != nil {
		return nil, err
	}
	s := &Service{
		cfg: cfg, log: log, db: db, st: &store{db: db},
		mail: mailer.New(cfg.Mail, log), jwt: iss, now: time.Now, location: loc,
		metrics: newServiceMetrics(deps.Metrics), retentionDays: cfg.RetentionDays(log),
		logins: newLoginGuard(deps.Hashing),
	}
	s.audit = newAuditor(s.st, cfg.AuditRedaction, log)
	if err := s.bootstrap(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if s.link, err = newGridLink(ctx, deps.Grid, s.st, cfg.GridClusterName, cfg.ExclusionCacheName, cfg.JWTExpiration, s.metrics.republished.Inc, log); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close releases the grid listener and the database.
func (s *Service) Close() error {
	s.link.close()
	return s.db.Close()
}

// signingKey decodes JWT_SECRET, or for a development start without one,
// loads or creates a random key in the data directory (never logged).
func signingKey(cfg Config) ([]byte, string, error) {
	if cfg.JWTSecret != "" {
		key, err := jwtauth.DecodeSecret(cfg.JWTSecret)
		return key, "JWT_SECRET", err
	}
	path := filepath.Join(cfg.DataDir, JWTKeyFile)
	if b, err := os.ReadFile(path); err == nil {
		key, err := jwtauth.DecodeSecret(string(b))
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", path, err)
		}
		return key, path, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, "", fmt.Errorf("reading %s: %w", path, err)
	}
	key := make([]byte, 48)
	if _, err := rand.Read(key); err != nil {
		return nil, "", err
	}
	if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		return nil, "", fmt.Errorf("writing %s: %w", path, err)
	}
	return key, path + " (generated; set JWT_SECRET in production)", nil
}

// bootstrap creates the first administrator when the store has no account
// at all. Without CFG_BOOTSTRAP_ADMIN_PASSWORD nothing is created: an
// account without a password would be an open door.
func (s *Service) bootstrap(ctx context.Context) error {
	n, err := s.st.countUsers(ctx, "")
	if err != nil || n > 0 {
		return err
	}
	if s.cfg.BootstrapPassword == "" {
		s.log.Warn("no accounts and CFG_BOOTSTRAP_ADMIN_PASSWORD is unset: no administrator created")
		return nil
	}
	in := UserInput{Username: s.cfg.BootstrapUsername, Email: s.cfg.BootstrapEmail, Locale: s.cfg.BootstrapLocale, Role: RoleAdmin}
	if err := in.validate(); err != nil {
		return fmt.Errorf("CFG_BOOTSTRAP_ADMIN_*: %w", err)
	}
	hash, err := passwd.Hash(s.cfg.BootstrapPassword)
	if err != nil {
		return err
	}
	now := s.now()
	u := User{Username: in.Username, Email: in.Email, Locale: in.Locale, Role: RoleAdmin, PasswordHash: hash, MustChangePassword: true, CreatedAt: now, UpdatedAt: now}
	if err := s.st.createUser(ctx, &u); err != nil {
		return fmt.Errorf("creating bootstrap administrator: %w", err)
	}
	s.bootstrapped = true
	s.log.Info("bootstrap administrator created; rotate its password with POST /configs-service/auth/first-login", "username", u.Username)
	s.audit.record(ctx, Principal{Username: "system"}, "BOOTSTRAP_ADMIN_CREATED", u.Username, "SUCCESS", map[string]any{"username": u.Username})
	return nil
}

// randomToken returns 128 random bits, base64url.
func randomToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// normalizeLocale keeps a locale tag in the form en, ru or ru-RU.
func normalizeLocale(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "_", "-")
}
