package ingest

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"strings"
	"time"

	"cpesuite/internal/platform/sqlstore"
)

// Reason says why a result row was parked instead of stored.
type Reason string

// The parking reasons.
const (
	// ReasonLate: the result reached the grid after its run's stopped_at
	// plus svc.fcc.stop-grace.
	ReasonLate Reason = "LATE"
	// ReasonBufferFull: the in-memory buffer held svc.fcc.result.queue-capacity
	// rows (the result store was down or slow for long).
	ReasonBufferFull Reason = "BUFFER_FULL"
	// ReasonInvalid: the message broke the wire contract. It is kept for
	// inspection and never resent.
	ReasonInvalid Reason = "INVALID"
)

// maxDetail bounds the stored explanation (a validation error can quote
// much of the message).
const maxDetail = 512

// Parked is one row of the dead-letter store.
type Parked struct {
	ID int64
	// NaturalKey is the result's natural key; for an INVALID message, whose
	// key cannot be trusted, "invalid." and a hash of its bytes.
	NaturalKey   string
	Reason       Reason
	ActivationID int64 // 0 when unknown (INVALID)
	Detail       string
	// Payload is the message as it came off the grid.
	Payload  []byte
	ParkedAt time.Time
	ResentAt *time.Time
}

// DeadLetters is the store of parked rows.
type DeadLetters interface {
	// Park stores rows, all or none. A row whose natural key is already
	// parked for the same reason is left as it is, so parking a redelivered
	// message again is harmless.
	Park(ctx context.Context, rows []Parked) error
	// Pending returns up to limit rows that may be resent (not INVALID, not
	// resent yet), oldest first.
	Pending(ctx context.Context, limit int) ([]Parked, error)
	// MarkResent records that the rows ids were stored in the result store.
	MarkResent(ctx context.Context, ids []int64, at time.Time) error
	// CountPending counts the rows Pending would eventually return.
	CountPending(ctx context.Context) (int, error)
	// List returns up to limit rows of any state, oldest first (operators
	// and tests).
	List(ctx context.Context, limit int) ([]Parked, error)
}

//go:embed migrations
var migrations embed.FS

// migrationService names this package's schema in schema_migrations, apart
// from the campaign tables of internal/fcc/migrations.
const migrationService = "fcc-dead-letters"

// SQLDeadLetters keeps parked rows in the campaign service's own database
// (SQLite or PostgreSQL).
type SQLDeadLetters struct {
	db *sqlstore.DB
}

// OpenDeadLetters migrates the dead-letter table in db and returns the
// store. db stays the caller's to close.
func OpenDeadLetters(ctx context.Context, db *sqlstore.DB) (*SQLDeadLetters, error) {
	if d := db.Dialect(); d != sqlstore.SQLite && d != sqlstore.Postgres {
		return nil, fmt.Errorf("dead-letter store: dialect %s is not supported (sqlite, postgres)", d)
	}
	if err := sqlstore.Migrate(ctx, db, migrationService, migrations); err != nil {
		return nil, fmt.Errorf("dead-letter store: %w", err)
	}
	return &SQLDeadLetters{db: db}, nil
}

// Park implements DeadLetters.
func (s *SQLDeadLetters) Park(ctx context.Context, rows []Parked) error {
	if len(rows) == 0 {
		return nil
	}
	q := s.db.Rebind(`INSERT INTO fcc_result_dead_letters
		(natural_key, reason, activation_id, detail, payload, parked_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (natural_key, reason) DO NOTHING`)
	return s.db.InTx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("parking result rows: %w", err)
		}
		defer st.Close()
		for _, r := range rows {
			var act sql.NullInt64
			if r.ActivationID > 0 {
				act = sql.NullInt64{Int64: r.ActivationID, Valid: true}
			}
			at := r.ParkedAt
			if at.IsZero() {
				at = time.Now()
			}
			if _, err := st.ExecContext(ctx, r.NaturalKey, string(r.Reason), act, truncate(r.Detail, maxDetail), r.Payload, at.UTC()); err != nil {
				return fmt.Errorf("parking result row %s: %w", r.NaturalKey, err)
			}
		}
		return nil
	})
}

const selectParked = `SELECT id, natural_key, reason, activation_id, detail, payload, parked_at, resent_at
	FROM fcc_result_dead_letters`

// Pending implements DeadLetters.
func (s *SQLDeadLetters) Pending(ctx context.Context, limit int) ([]Parked, error) {
	return s.query(ctx, selectParked+` WHERE resent_at IS NULL AND reason <> 'INVALID' ORDER BY id LIMIT ?`, limit)
}

// List implements DeadLetters.
func (s *SQLDeadLetters) List(ctx context.Context, limit int) ([]Parked, error) {
	return s.query(ctx, selectParked+` ORDER BY id LIMIT ?`, limit)
}

func (s *SQLDeadLetters) query(ctx context.Context, q string, limit int) ([]Parked, error) {
	rows, err := s.db.QueryContext(ctx, s.db.Rebind(q), limit)
	if err != nil {
		return nil, fmt.Errorf("reading parked result rows: %w", err)
	}
	defer rows.Close()
	var out []Parked
	for rows.Next() {
		var (
			p      Parked
			reason string
			act    sql.NullInt64
			resent sql.NullTime
		)
		if err := rows.Scan(&p.ID, &p.NaturalKey, &reason, &act, &p.Detail, &p.Payload, &p.ParkedAt, &resent); err != nil {
			return nil, fmt.Errorf("reading parked result rows: %w", err)
		}
		p.Reason, p.ActivationID = Reason(reason), act.Int64
		if resent.Valid {
			t := resent.Time
			p.ResentAt = &t
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading parked result rows: %w", err)
	}
	return out, nil
}

// MarkResent implements DeadLetters.
func (s *SQLDeadLetters) MarkResent(ctx context.Context, ids []int64, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	// ids come from one Pending call, at most svc.fcc.dead-letter.resend-batch-size
	// of them, so one IN list stays small.
	q := s.db.Rebind(`UPDATE fcc_result_dead_letters SET resent_at = ? WHERE resent_at IS NULL AND id IN (?` +
		strings.Repeat(", ?", len(ids)-1) + `)`)
	args := make([]any, 0, len(ids)+1)
	args = append(args, at.UTC())
	for _, id := range ids {
		args = append(args, id)
	}
	if _, err := s.db.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("marking parked result rows resent: %w", err)
	}
	return nil
}

// CountPending implements DeadLetters.
func (s *SQLDeadLetters) CountPending(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM fcc_result_dead_letters WHERE resent_at IS NULL AND reason <> 'INVALID'`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("counting parked result rows: %w", err)
	}
	return n, nil
}

// truncate cuts s to at most n bytes of valid UTF-8: PostgreSQL refuses
// text with a rune cut in half, and a validation error may quote anything.
func truncate(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.ToValidUTF8(s, "")
}

var _ DeadLetters = (*SQLDeadLetters)(nil)
