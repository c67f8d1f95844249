// Package results is the campaign service's result store: one interface,
// two engines (embedded DuckDB, ClickHouse), one conformance suite
// (package storetest), and the health probe whose state gates activation
// and the reports (the spec's 503 / 9503 rule).
package results

import (
	"context"
	"time"

	"cpesuite/internal/fcc/fccwire"
)

// State is the result-store indicator's state, as the spec names them.
type State string

// The indicator states.
const (
	StateUp           State = "UP"
	StateUnavailable  State = "UNAVAILABLE"
	StateSchemaBehind State = "SCHEMA_BEHIND"
)

// Status is what a probe found.
type Status struct {
	State State
	// Reason is a short human text without secrets (no DSN), e.g. the
	// driver's error or "2 migrations pending".
	Reason    string
	CheckedAt time.Time
}

// Sources of a row.
const (
	SourceACS    = "ACS"
	SourceLegacy = "LEGACY_IMPORT"
)

// Row is one stored result: the wire's RESULT plus what the service adds
// (the spec's common block: hubbId, source, legacyUgId, legacyResultId,
// created). Its natural key is (ActivationID, Serial, Direction,
// Iteration).
type Row struct {
	fccwire.Result
	HubbID         string
	Source         string
	LegacyUgID     *int64
	LegacyResultID *int64
	Created        time.Time
}

// Store is a result store engine.
type Store interface {
	// Migrate applies pending schema migrations.
	Migrate(ctx context.Context) error
	// Check reports reachability and schema state within ctx.
	Check(ctx context.Context) Status
	// Insert stores rows idempotently: a row whose natural key is already
	// stored is not stored again. It returns how many rows were new.
	// An error means nothing of the batch may be assumed stored.
	Insert(ctx context.Context, rows []Row) (int, error)
	// Rows reads the stored rows of one activation, in natural key order
	// (each natural key once).
	Rows(ctx context.Context, activationID int64) ([]Row, error)
	Close() error
}
