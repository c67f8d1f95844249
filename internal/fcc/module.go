package fcc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"cpesuite/internal/fcc/fleet"
	"cpesuite/internal/platform/health"
	"cpesuite/internal/platform/sqlstore"
)

// Open opens the campaign store and the ACS device tables and returns the
// service with a function that closes both databases.
func Open(ctx context.Context, cfg Config, log *slog.Logger) (*Service, func() error, error) {
	db, err := sqlstore.OpenService(ctx, cfg.DBDialect, cfg.DBDSN, filepath.Join(cfg.DataDir, "fcc.db"))
	if err != nil {
		return nil, nil, fmt.Errorf("fcc campaign store: %w", err)
	}
	store, err := OpenStore(ctx, db)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	acsDB, err := sqlstore.OpenService(ctx, cfg.ACSDBDialect, cfg.ACSDBDSN, filepath.Join(cfg.DataDir, "acs.db"))
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("fcc: ACS device tables: %w", err)
	}
	closeAll := func() error { return errors.Join(acsDB.Close(), db.Close()) }
	if cfg.ACSSchemaCheck {
		if err := CheckACSSchema(ctx, acsDB); err != nil {
			closeAll()
			return nil, nil, err
		}
	}
	svc := New(cfg, store, fleet.New(acsDB.DB, acsDB.Dialect(), cfg.MaxDevicesPerTest), log)
	svc.acsDB = acsDB
	return svc, closeAll, nil
}

// CheckACSSchema verifies that the ACS device tables the service reads
// exist with the columns of the contract (internal/acs/schema.md).
func CheckACSSchema(ctx context.Context, db *sqlstore.DB) error {
	for _, q := range []string{
		`SELECT id, serial, product_class_id, domain_id, online, software_version FROM acs_devices WHERE 1 = 0`,
		`SELECT id, manufacturer_id, model_name, protocol_id FROM acs_product_classes WHERE 1 = 0`,
		`SELECT id, name FROM acs_manufacturers WHERE 1 = 0`,
		`SELECT id, name, supported_by_acs FROM acs_protocols WHERE 1 = 0`,
		`SELECT id, name, domain_id, criteria FROM acs_conditions WHERE 1 = 0`,
	} {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			return fmt.Errorf("fcc: the ACS device tables are not readable (%v); start the ACS first or point CPESUITE_FCC_ACS_DB_DSN at its database (SVC_FCC_FTACS_SCHEMA_CHECK_ENABLED=false skips this check)", err)
		}
		rows.Close()
	}
	return nil
}

// RegisterHealth adds the service's indicators: both databases.
func (s *Service) RegisterHealth(hr *health.Registry) {
	hr.Register("db", health.Ping(s.store.db.PingContext), "readiness")
	if s.acsDB != nil {
		hr.Register("acsDb", health.Ping(s.acsDB.PingContext), "readiness")
	}
}

// DB returns the campaign store's database, which also holds the result
// dead letters (package ingest).
func (s *Service) DB() *sqlstore.DB { return s.store.db }

// ACSDB returns the ACS device tables the service reads (nil in tests that
// pass a resolver of their own).
func (s *Service) ACSDB() *sqlstore.DB { return s.acsDB }
