package accounts

import (
	"context"
	"database/sql"
	"fmt"

	"cpesuite/internal/platform/passwd"
	"cpesuite/internal/testrunner/identity"
)

// bootstrapActor names the start-up code in the audit log. It is not a
// valid username, so it cannot be mistaken for a person.
const bootstrapActor = "(bootstrap)"

// Bootstrap creates the first admin on an empty account table and reports
// whether it did. With any account present it does nothing, whatever the
// name: the configured bootstrap credentials only ever open a fresh
// installation. The input is validated either way, so a bad setting is
// reported on every start, not only on the first.
func (s *Service) Bootstrap(ctx context.Context, username, password string) (bool, error) {
	if err := validUsername(username); err != nil {
		return false, err
	}
	if err := validPassword(password, username); err != nil {
		return false, err
	}
	if n, err := countUsers(ctx, s.db.DB); err != nil || n > 0 {
		return false, err
	}
	hash, err := passwd.Hash(password)
	if err != nil {
		return false, fmt.Errorf("hashing password: %w", err)
	}
	var created User
	err = s.db.InTx(ctx, func(tx *sql.Tx) error {
		if err := s.lockUsers(ctx, tx); err != nil {
			return err
		}
		// Counted again under the lock: another gateway process may have
		// bootstrapped since the first count.
		if n, err := countUsers(ctx, tx); err != nil || n > 0 {
			return err
		}
		u, err := s.insertUser(ctx, tx, username, hash, identity.RoleAdmin, "")
		created = u
		return err
	})
	if err != nil || created.Username == "" {
		return false, err
	}
	s.Record(ctx, Entry{Username: bootstrapActor, Action: ActionUserCreate, Target: created.Username,
		Detail: "first admin; " + describeUser(created), Success: true})
	s.log.InfoContext(ctx, "gateway bootstrap admin created", "username", created.Username)
	return true, nil
}

type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func countUsers(ctx context.Context, q queryRower) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, "SELECT COUNT(*) FROM gw_users").Scan(&n); err != nil {
		return 0, fmt.Errorf("counting users: %w", err)
	}
	return n, nil
}
