package accounts

import (
	"context"
	"embed"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"cpesuite/internal/platform/passwd"
	"cpesuite/internal/platform/sqlstore"
)

//go:embed migrations
var migrations embed.FS

// serviceKey keys this package's rows in schema_migrations.
const serviceKey = "gateway-accounts"

// DefaultTokenTTL is how long a session token lasts when Config.TokenTTL
// is zero: a working day, so that nobody logs in twice a day and a
// forgotten browser tab does not stay signed in overnight.
const DefaultTokenTTL = 12 * time.Hour

// Config tunes a Service. The zero value is usable.
type Config struct {
	// TokenTTL is the lifetime of a session token; 0 means DefaultTokenTTL.
	TokenTTL time.Duration
	// TrustedProxies are the peers whose X-Forwarded-For header is
	// believed when finding the client address (see ClientAddr).
	TrustedProxies []netip.Prefix
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Hashing bounds the password hashing of logins and password changes;
	// nil means passwd.Shared(), the one limiter of the process.
	Hashing *passwd.Limiter
}

// Service manages the gateway's accounts, sessions and audit log.
type Service struct {
	db      *sqlstore.DB
	ttl     time.Duration
	trusted []netip.Prefix
	now     func() time.Time
	log     *slog.Logger
	limiter *limiter
	// addrLimiter counts failures per client address across usernames.
	addrLimiter *limiter
	refusals    *passwd.RefusalLog
	hashing     *passwd.Limiter
	dummyHash   string
}

// Open migrates the schema and returns a Service on db. Only SQLite and
// PostgreSQL are supported.
func Open(ctx context.Context, db *sqlstore.DB, cfg Config, log *slog.Logger) (*Service, error) {
	if db == nil {
		return nil, fmt.Errorf("gateway accounts: no database")
	}
	if d := db.Dialect(); d != sqlstore.SQLite && d != sqlstore.Postgres {
		return nil, fmt.Errorf("gateway accounts: dialect %s is not supported (sqlite or postgres)", d)
	}
	if cfg.TokenTTL < 0 {
		return nil, fmt.Errorf("gateway accounts: token lifetime %s is negative", cfg.TokenTTL)
	}
	if cfg.TokenTTL == 0 {
		cfg.TokenTTL = DefaultTokenTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if log == nil {
		log = slog.Default()
	}
	if cfg.Hashing == nil {
		cfg.Hashing = passwd.Shared()
	}
	if err := sqlstore.Migrate(ctx, db, serviceKey, migrations); err != nil {
		return nil, err
	}
	// The dummy hash has the parameters of real ones, so verifying against
	// it costs what a real verification costs. Its password is random and
	// forgotten, so nothing can match it.
	secret, err := randomToken()
	if err != nil {
		return nil, err
	}
	dummy, err := passwd.Hash(secret)
	if err != nil {
		return nil, fmt.Errorf("gateway accounts: %w", err)
	}
	return &Service{
		db:          db,
		ttl:         cfg.TokenTTL,
		trusted:     append([]netip.Prefix(nil), cfg.TrustedProxies...),
		now:         func() time.Time { return cfg.Now().UTC() },
		log:         log,
		limiter:     newLimiter(MaxFailures, FailureWindow, maxLimiterKeys),
		addrLimiter: newLimiter(MaxAddrFailures, FailureWindow, maxLimiterKeys),
		refusals:    passwd.NewRefusalLog(FailureWindow, maxLimiterKeys),
		hashing:     cfg.Hashing,
		dummyHash:   dummy,
	}, nil
}

// TrustedProxies returns the configured trusted-proxy prefixes, for the
// gateway's own use of ClientAddr.
func (s *Service) TrustedProxies() []netip.Prefix {
	return append([]netip.Prefix(nil), s.trusted...)
}

// millis and fromMillis convert between times and the stored Unix
// milliseconds.
func millis(t time.Time) int64 { return t.UnixMilli() }

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
