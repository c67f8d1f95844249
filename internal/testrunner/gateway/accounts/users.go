package accounts

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/testrunner/identity"
)

// User is an account as the API shows it; the password hash never leaves
// the package.
type User struct {
	Username  string    `json:"username"`
	Role      string    `json:"role"`
	Stand     string    `json:"stand"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func errUserNotFound(username string) error {
	return apperr.NotFound("USER_NOT_FOUND", "user %q not found", clean(username, maxNameField))
}

const userColumns = "username, role, stand, created_at, updated_at"

type rowScanner interface{ Scan(dest ...any) error }

func scanUser(row rowScanner, extra ...any) (User, error) {
	var (
		u                User
		created, updated int64
	)
	dest := append([]any{&u.Username, &u.Role, &u.Stand, &created, &updated}, extra...)
	if err := row.Scan(dest...); err != nil {
		return User{}, err
	}
	u.CreatedAt, u.UpdatedAt = fromMillis(created), fromMillis(updated)
	return u, nil
}

// Users returns every account, ordered by username.
func (s *Service) Users(ctx context.Context) ([]User, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT "+userColumns+" FROM gw_users ORDER BY username_key")
	if err != nil {
		return nil, fmt.Errorf("listing users: %w", err)
	}
	defer rows.Close()
	users := []User{}
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, fmt.Errorf("listing users: %w", err)
		}
		users = append(users, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing users: %w", err)
	}
	return users, nil
}

// User returns one account, looked up regardless of case.
func (s *Service) User(ctx context.Context, username string) (User, error) {
	if err := validUsername(username); err != nil {
		return User{}, errUserNotFound(username)
	}
	u, err := scanUser(s.db.QueryRowContext(ctx,
		s.db.Rebind("SELECT "+userColumns+" FROM gw_users WHERE username_key = ?"), userKey(username)))
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, errUserNotFound(username)
	}
	if err != nil {
		return User{}, fmt.Errorf("reading user: %w", err)
	}
	return u, nil
}

// CreateUser creates an account on behalf of actor, who must be an admin.
// role defaults to editor; stand is optional.
func (s *Service) CreateUser(ctx context.Context, actor identity.Identity, username, password, role, stand string) (User, error) {
	if err := adminActor(actor); err != nil {
		return User{}, err
	}
	role, err := s.checkNewUser(username, password, role, stand)
	if err != nil {
		return User{}, err
	}
	hash, err := s.hashing.Hash(ctx, password)
	if err != nil {
		return User{}, hashError(err)
	}
	u, err := s.insertUser(ctx, s.db.DB, username, hash, role, stand)
	if err != nil {
		return User{}, err
	}
	s.Record(ctx, Entry{Username: actor.Username, Action: ActionUserCreate, Target: u.Username,
		Detail: describeUser(u), Success: true})
	s.log.InfoContext(ctx, "gateway user created", "actor", actor.Username, "username", u.Username, "role", u.Role)
	return u, nil
}

// adminActor repeats the HTTP layer's admin check, so that a caller of the
// Go API that forgot RequireAdmin fails closed.
func adminActor(actor identity.Identity) error {
	if !actor.IsAdmin() {
		return errAdminRequired
	}
	return nil
}

func (s *Service) checkNewUser(username, password, role, stand string) (string, error) {
	if err := validUsername(username); err != nil {
		return "", err
	}
	role, err := validRole(role)
	if err != nil {
		return "", err
	}
	if err := validStand(stand); err != nil {
		return "", err
	}
	return role, validPassword(password, username)
}

func describeUser(u User) string {
	if u.Stand == "" {
		return "role=" + u.Role
	}
	return "role=" + u.Role + " stand=" + u.Stand
}

// execer is what insertUser needs of a *sql.DB or *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// insertUser stores an account whose password is already hashed: hashing
// takes tens of milliseconds and must not happen while a transaction holds
// SQLite's write lock.
func (s *Service) insertUser(ctx context.Context, ex execer, username, hash, role, stand string) (User, error) {
	now := s.now()
	_, err := ex.ExecContext(ctx, s.db.Rebind(
		"INSERT INTO gw_users (username_key, username, role, stand, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)"),
		userKey(username), username, role, stand, hash, millis(now), millis(now))
	if sqlstore.IsUniqueViolation(err) {
		return User{}, apperr.Conflict("USER_EXISTS", "user %q already exists", username)
	}
	if err != nil {
		return User{}, fmt.Errorf("creating user: %w", err)
	}
	now = fromMillis(millis(now))
	return User{Username: username, Role: role, Stand: stand, CreatedAt: now, UpdatedAt: now}, nil
}

// ResetPassword sets a new password for username and ends all of that
// user's sessions. actor must be an admin.
func (s *Service) ResetPassword(ctx context.Context, actor identity.Identity, username, password string) error {
	_, err := s.resetPassword(ctx, actor, username, password)
	return err
}

// resetPassword returns the stored spelling of the username.
func (s *Service) resetPassword(ctx context.Context, actor identity.Identity, username, password string) (string, error) {
	if err := adminActor(actor); err != nil {
		return "", err
	}
	if err := validUsername(username); err != nil {
		return "", errUserNotFound(username)
	}
	if err := validPassword(password, username); err != nil {
		return "", err
	}
	hash, err := s.hashing.Hash(ctx, password)
	if err != nil {
		return "", hashError(err)
	}
	key := userKey(username)
	var (
		stored string
		ended  int64
	)
	err = s.db.InTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, s.db.Rebind(
			"UPDATE gw_users SET password_hash = ?, updated_at = ? WHERE username_key = ? RETURNING username"),
			hash, millis(s.now()), key).Scan(&stored)
		if errors.Is(err, sql.ErrNoRows) {
			return errUserNotFound(username)
		}
		if err != nil {
			return fmt.Errorf("resetting password: %w", err)
		}
		ended, err = deleteTokensOf(ctx, tx, s.db, key)
		return err
	})
	if err != nil {
		return "", err
	}
	s.Record(ctx, Entry{Username: actor.Username, Action: ActionUserResetPassword, Target: stored,
		Detail: fmt.Sprintf("sessions ended: %d", ended), Success: true})
	s.log.InfoContext(ctx, "gateway password reset", "actor", actor.Username, "username", stored, "sessions_ended", ended)
	return stored, nil
}

// DeleteUser removes an account and its sessions on behalf of actor, who
// must be an admin. An admin cannot delete
// their own account, and the last admin cannot be deleted, so the gateway
// can never be left without someone who can manage it.
func (s *Service) DeleteUser(ctx context.Context, actor identity.Identity, username string) error {
	if err := adminActor(actor); err != nil {
		return err
	}
	if err := validUsername(username); err != nil {
		return errUserNotFound(username)
	}
	key := userKey(username)
	if key == userKey(actor.Username) {
		return apperr.Conflict("CANNOT_DELETE_SELF", "you cannot delete your own account")
	}
	var deleted User
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		if err := s.lockUsers(ctx, tx); err != nil {
			return err
		}
		u, err := scanUser(tx.QueryRowContext(ctx,
			s.db.Rebind("SELECT "+userColumns+" FROM gw_users WHERE username_key = ?"), key))
		if errors.Is(err, sql.ErrNoRows) {
			return errUserNotFound(username)
		}
		if err != nil {
			return fmt.Errorf("reading user: %w", err)
		}
		if u.Role == identity.RoleAdmin {
			var admins int
			if err := tx.QueryRowContext(ctx, s.db.Rebind("SELECT COUNT(*) FROM gw_users WHERE role = ?"),
				identity.RoleAdmin).Scan(&admins); err != nil {
				return fmt.Errorf("counting admins: %w", err)
			}
			if admins <= 1 {
				return apperr.Conflict("LAST_ADMIN", "the last admin cannot be deleted")
			}
		}
		// Deleted explicitly rather than through ON DELETE CASCADE alone,
		// so that sessions end even on a connection without foreign keys.
		if _, err := deleteTokensOf(ctx, tx, s.db, key); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.db.Rebind("DELETE FROM gw_users WHERE username_key = ?"), key); err != nil {
			return fmt.Errorf("deleting user: %w", err)
		}
		deleted = u
		return nil
	})
	if err != nil {
		return err
	}
	s.Record(ctx, Entry{Username: actor.Username, Action: ActionUserDelete, Target: deleted.Username,
		Detail: describeUser(deleted), Success: true})
	s.log.InfoContext(ctx, "gateway user deleted", "actor", actor.Username, "username", deleted.Username)
	return nil
}

// lockUsers serialises the transactions that check a property of the whole
// account table before changing it (last admin, empty table). SQLite needs
// nothing: sqlstore begins every read-write transaction IMMEDIATE, which
// takes the database's only write lock. PostgreSQL under READ COMMITTED
// would let two such transactions both pass their check; this lock mode
// conflicts with itself and with writers but not with readers.
func (s *Service) lockUsers(ctx context.Context, tx *sql.Tx) error {
	if s.db.Dialect() != sqlstore.Postgres {
		return nil
	}
	if _, err := tx.ExecContext(ctx, "LOCK TABLE gw_users IN SHARE ROW EXCLUSIVE MODE"); err != nil {
		return fmt.Errorf("locking users: %w", err)
	}
	return nil
}
