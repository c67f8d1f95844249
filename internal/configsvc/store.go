package configsvc

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/sqlstore"
)

// Role is an account's role.
type Role string

// Roles. ADMIN manages accounts, configuration and audit; USER may read
// the configuration.
const (
	RoleAdmin Role = "ADMIN"
	RoleUser  Role = "USER"
)

// User is an account.
type User struct {
	ID                 int64
	Username           string
	Email              string
	Locale             string
	Role               Role
	PasswordHash       string
	MustChangePassword bool
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// DeletionRequest is a pending account deletion.
type DeletionRequest struct {
	UserID       int64
	Token        string
	RequestedBy  int64
	OTPHash      string // empty when no OTP is required
	OTPRequired  bool
	Attempts     int
	AttemptLimit int
	ExpiresAt    time.Time
	CreatedAt    time.Time
}

// AuditEvent is one recorded operation.
type AuditEvent struct {
	ID         int64          `json:"id"`
	OccurredAt time.Time      `json:"occurredAt"`
	Actor      string         `json:"actor"`
	Action     string         `json:"action"`
	Target     string         `json:"target,omitempty"`
	Outcome    string         `json:"outcome"`
	Details    map[string]any `json:"details,omitempty"`
	ClientIP   string         `json:"clientIp,omitempty"`
	RequestID  string         `json:"requestId,omitempty"`
}

// AuditFilter narrows an audit read.
type AuditFilter struct {
	Actor  string
	Action string
	From   time.Time
	To     time.Time
}

// ProductClassGroup is a named set of product classes (the ACS exclusion
// models of QoE campaigns).
type ProductClassGroup struct {
	Name           string    `json:"name"`
	Description    string    `json:"description,omitempty"`
	ProductClasses []string  `json:"productClasses"`
	UpdatedAt      time.Time `json:"updatedAt"`
}

// refreshState is what UseRefresh found.
type refreshState int

const (
	refreshOK refreshState = iota + 1
	refreshMissing
	refreshReused
	refreshRevoked
)

// store is the service's SQL storage. Queries are written once with ?
// placeholders; Rebind adapts them, and the three statements whose syntax
// differs by engine say so.
type store struct {
	db *sqlstore.DB
}

func ms(t time.Time) int64            { return t.UnixMilli() }
func fromMS(v int64) time.Time        { return time.UnixMilli(v).UTC() }
func boolInt(b bool) int              { return map[bool]int{false: 0, true: 1}[b] }
func nullStr(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

var errUsernameTaken = apperr.Conflict("USERNAME_TAKEN", "the username is already taken")

func (s *store) q(query string) string { return s.db.Rebind(query) }

const userCols = `id, username, email, locale, role, password_hash, must_change_password, created_at, updated_at`

func scanUser(sc interface{ Scan(...any) error }) (User, error) {
	var u User
	var email, locale sql.NullString
	var must int
	var created, updated int64
	if err := sc.Scan(&u.ID, &u.Username, &email, &locale, &u.Role, &u.PasswordHash, &must, &created, &updated); err != nil {
		return User{}, err
	}
	u.Email, u.Locale, u.MustChangePassword = email.String, locale.String, must != 0
	u.CreatedAt, u.UpdatedAt = fromMS(created), fromMS(updated)
	return u, nil
}

// createUser inserts u and sets its ID.
func (s *store) createUser(ctx context.Context, u *User) error {
	args := []any{u.Username, strings.ToLower(u.Username), nullStr(u.Email), nullStr(u.Locale), string(u.Role), u.PasswordHash, boolInt(u.MustChangePassword), ms(u.CreatedAt), ms(u.UpdatedAt)}
	const ins = `INSERT INTO cfg_users (username, username_key, email, locale, role, password_hash, must_change_password, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	var err error
	if s.db.Dialect() == sqlstore.MySQL {
		var res sql.Result
		if res, err = s.db.ExecContext(ctx, ins, args...); err == nil {
			u.ID, err = res.LastInsertId()
		}
	} else {
		err = s.db.QueryRowContext(ctx, s.q(ins+` RETURNING id`), args...).Scan(&u.ID)
	}
	if sqlstore.IsUniqueViolation(err) {
		return errUsernameTaken
	}
	if err != nil {
		return fmt.Errorf("inserting user: %w", err)
	}
	return nil
}

func (s *store) userBy(ctx context.Context, where string, arg any) (User, error) {
	u, err := scanUser(s.db.QueryRowContext(ctx, s.q(`SELECT `+userCols+` FROM cfg_users WHERE `+where), arg))
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, apperr.NotFound("USER_NOT_FOUND", "no such user")
	}
	if err != nil {
		return User{}, fmt.Errorf("reading user: %w", err)
	}
	return u, nil
}

func (s *store) userByID(ctx context.Context, id int64) (User, error) {
	return s.userBy(ctx, `id = ?`, id)
}

func (s *store) userByName(ctx context.Context, name string) (User, error) {
	return s.userBy(ctx, `username_key = ?`, strings.ToLower(name))
}

func (s *store) listUsers(ctx context.Context, offset, limit int) ([]User, int64, error) {
	var total int64
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM cfg_users`).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("counting users: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT `+userCols+` FROM cfg_users ORDER BY id LIMIT ? OFFSET ?`), limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("listing users: %w", err)
	}
	defer rows.Close()
	var out []User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("listing users: %w", err)
		}
		out = append(out, u)
	}
	return out, total, rows.Err()
}

func (s *store) countUsers(ctx context.Context, role Role) (int64, error) {
	var n int64
	q, args := `SELECT COUNT(*) FROM cfg_users`, []any{}
	if role != "" {
		q, args = q+` WHERE role = ?`, append(args, string(role))
	}
	if err := s.db.QueryRowContext(ctx, s.q(q), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting users: %w", err)
	}
	return n, nil
}

// setPassword replaces a password and, in the same transaction, ends every
// refresh chain of the account: a new password must log out old sessions.
func (s *store) setPassword(ctx context.Context, id int64, hash string, mustChange bool, now time.Time) error {
	return s.db.InTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`UPDATE cfg_users SET password_hash = ?, must_change_password = ?, updated_at = ? WHERE id = ?`), hash, boolInt(mustChange), ms(now), id)
		if err != nil {
			return fmt.Errorf("updating password: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return apperr.NotFound("USER_NOT_FOUND", "no such user")
		}
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE cfg_refresh_tokens SET revoked = 1 WHERE user_id = ?`), id); err != nil {
			return fmt.Errorf("revoking refresh tokens: %w", err)
		}
		return nil
	})
}

// putDeletionRequest replaces the pending request of r.UserID.
func (s *store) putDeletionRequest(ctx context.Context, r DeletionRequest) error {
	return s.db.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM cfg_deletion_requests WHERE user_id = ?`), r.UserID); err != nil {
			return fmt.Errorf("replacing deletion request: %w", err)
		}
		_, err := tx.ExecContext(ctx, s.q(`INSERT INTO cfg_deletion_requests (user_id, token, requested_by, otp_hash, otp_required, attempts, attempt_limit, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
			r.UserID, r.Token, r.RequestedBy, nullStr(r.OTPHash), boolInt(r.OTPRequired), r.Attempts, r.AttemptLimit, ms(r.ExpiresAt), ms(r.CreatedAt))
		if err != nil {
			return fmt.Errorf("inserting deletion request: %w", err)
		}
		return nil
	})
}

func (s *store) deletionRequest(ctx context.Context, userID int64) (DeletionRequest, error) {
	var r DeletionRequest
	var otp sql.NullString
	var req int
	var exp, created int64
	err := s.db.QueryRowContext(ctx, s.q(`SELECT user_id, token, requested_by, otp_hash, otp_required, attempts, attempt_limit, expires_at, created_at FROM cfg_deletion_requests WHERE user_id = ?`), userID).
		Scan(&r.UserID, &r.Token, &r.RequestedBy, &otp, &req, &r.Attempts, &r.AttemptLimit, &exp, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return DeletionRequest{}, apperr.Conflict("DELETION_NOT_REQUESTED", "no pending deletion request for this user; request one first")
	}
	if err != nil {
		return DeletionRequest{}, fmt.Errorf("reading deletion request: %w", err)
	}
	r.OTPHash, r.OTPRequired = otp.String, req != 0
	r.ExpiresAt, r.CreatedAt = fromMS(exp), fromMS(created)
	return r, nil
}

// countAttempt records one wrong OTP and returns the attempts so far. The
// increment is one statement, so concurrent guesses cannot share a count.
func (s *store) countAttempt(ctx context.Context, userID int64) (int, error) {
	var n int
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE cfg_deletion_requests SET attempts = attempts + 1 WHERE user_id = ?`), userID); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, s.q(`SELECT attempts FROM cfg_deletion_requests WHERE user_id = ?`), userID).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("counting OTP attempt: %w", err)
	}
	return n, nil
}

func (s *store) dropDeletionRequest(ctx context.Context, userID int64) error {
	if _, err := s.db.ExecContext(ctx, s.q(`DELETE FROM cfg_deletion_requests WHERE user_id = ?`), userID); err != nil {
		return fmt.Errorf("dropping deletion request: %w", err)
	}
	return nil
}

// deleteUser removes the account; its deletion request and refresh tokens
// go with it (ON DELETE CASCADE).
func (s *store) deleteUser(ctx context.Context, id int64) error {
	res, err := s.db.ExecContext(ctx, s.q(`DELETE FROM cfg_users WHERE id = ?`), id)
	if err != nil {
		return fmt.Errorf("deleting user: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return apperr.NotFound("USER_NOT_FOUND", "no such user")
	}
	return nil
}

func (s *store) insertRefresh(ctx context.Context, jti, family string, userID int64, exp time.Time) error {
	_, err := s.db.ExecContext(ctx, s.q(`INSERT INTO cfg_refresh_tokens (jti, family, user_id, expires_at, revoked) VALUES (?, ?, ?, ?, 0)`), jti, family, userID, ms(exp))
	if err != nil {
		return fmt.Errorf("recording refresh token: %w", err)
	}
	return nil
}

// useRefresh marks a refresh token used, once. A second use of the same
// token is the sign of a stolen token: the caller then ends its family.
func (s *store) useRefresh(ctx context.Context, jti string, now time.Time) (refreshState, error) {
	res, err := s.db.ExecContext(ctx, s.q(`UPDATE cfg_refresh_tokens SET used_at = ? WHERE jti = ? AND used_at IS NULL AND revoked = 0`), ms(now), jti)
	if err != nil {
		return 0, fmt.Errorf("using refresh token: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return refreshOK, nil
	}
	var used sql.NullInt64
	var revoked int
	err = s.db.QueryRowContext(ctx, s.q(`SELECT used_at, revoked FROM cfg_refresh_tokens WHERE jti = ?`), jti).Scan(&used, &revoked)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return refreshMissing, nil
	case err != nil:
		return 0, fmt.Errorf("reading refresh token: %w", err)
	case revoked != 0:
		return refreshRevoked, nil
	}
	return refreshReused, nil
}

func (s *store) revokeFamily(ctx context.Context, family string) error {
	if _, err := s.db.ExecContext(ctx, s.q(`UPDATE cfg_refresh_tokens SET revoked = 1 WHERE family = ?`), family); err != nil {
		return fmt.Errorf("revoking refresh family: %w", err)
	}
	return nil
}

// recordRevoked keeps a durable copy of a revoked access token, so that a
// grid that lost its data can be given the list again on reconnect.
func (s *store) recordRevoked(ctx context.Context, jti string, exp time.Time) error {
	var q string
	switch s.db.Dialect() {
	case sqlstore.MySQL:
		q = `INSERT IGNORE INTO cfg_revoked_tokens (jti, expires_at) VALUES (?, ?)`
	default:
		q = `INSERT INTO cfg_revoked_tokens (jti, expires_at) VALUES (?, ?) ON CONFLICT (jti) DO NOTHING`
	}
	if _, err := s.db.ExecContext(ctx, s.q(q), jti, ms(exp)); err != nil {
		return fmt.Errorf("recording revoked token: %w", err)
	}
	return nil
}

type revokedToken struct {
	JTI       string
	ExpiresAt time.Time
}

func (s *store) liveRevoked(ctx context.Context, now time.Time) ([]revokedToken, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT jti, expires_at FROM cfg_revoked_tokens WHERE expires_at > ?`), ms(now))
	if err != nil {
		return nil, fmt.Errorf("listing revoked tokens: %w", err)
	}
	defer rows.Close()
	var out []revokedToken
	for rows.Next() {
		var r revokedToken
		var exp int64
		if err := rows.Scan(&r.JTI, &exp); err != nil {
			return nil, err
		}
		r.ExpiresAt = fromMS(exp)
		out = append(out, r)
	}
	return out, rows.Err()
}

// purgeExpired drops rows whose lifetime is over: refresh tokens, revoked
// access tokens and deletion requests.
func (s *store) purgeExpired(ctx context.Context, now time.Time) error {
	for _, q := range []string{
		`DELETE FROM cfg_refresh_tokens WHERE expires_at <= ?`,
		`DELETE FROM cfg_revoked_tokens WHERE expires_at <= ?`,
		`DELETE FROM cfg_deletion_requests WHERE expires_at <= ?`,
	} {
		if _, err := s.db.ExecContext(ctx, s.q(q), ms(now)); err != nil {
			return fmt.Errorf("purging expired rows: %w", err)
		}
	}
	return nil
}

func (s *store) insertAudit(ctx context.Context, e AuditEvent) error {
	var details sql.NullString
	if len(e.Details) > 0 {
		b, err := json.Marshal(e.Details)
		if err != nil {
			return fmt.Errorf("encoding audit details: %w", err)
		}
		details = sql.NullString{String: string(b), Valid: true}
	}
	_, err := s.db.ExecContext(ctx, s.q(`INSERT INTO cfg_audit_events (occurred_at, actor, action, target, outcome, details, client_ip, request_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
		ms(e.OccurredAt), clip(e.Actor, 64), e.Action, nullStr(clip(e.Target, 255)), e.Outcome, details, nullStr(clip(e.ClientIP, 64)), nullStr(clip(e.RequestID, 64)))
	if err != nil {
		return fmt.Errorf("inserting audit event: %w", err)
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

func (s *store) listAudit(ctx context.Context, f AuditFilter, offset, limit int) ([]AuditEvent, int64, error) {
	var where []string
	var args []any
	if f.Actor != "" {
		where, args = append(where, `actor = ?`), append(args, f.Actor)
	}
	if f.Action != "" {
		where, args = append(where, `action = ?`), append(args, f.Action)
	}
	if !f.From.IsZero() {
		where, args = append(where, `occurred_at >= ?`), append(args, ms(f.From))
	}
	if !f.To.IsZero() {
		where, args = append(where, `occurred_at < ?`), append(args, ms(f.To))
	}
	cond := ""
	if len(where) > 0 {
		cond = ` WHERE ` + strings.Join(where, ` AND `)
	}
	var total int64
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM cfg_audit_events`+cond), args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("counting audit events: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id, occurred_at, actor, action, target, outcome, details, client_ip, request_id FROM cfg_audit_events`+cond+` ORDER BY occurred_at DESC, id DESC LIMIT ? OFFSET ?`), append(args, limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("listing audit events: %w", err)
	}
	defer rows.Close()
	out := []AuditEvent{}
	for rows.Next() {
		var e AuditEvent
		var at int64
		var target, details, ip, rid sql.NullString
		if err := rows.Scan(&e.ID, &at, &e.Actor, &e.Action, &target, &e.Outcome, &details, &ip, &rid); err != nil {
			return nil, 0, fmt.Errorf("listing audit events: %w", err)
		}
		e.OccurredAt, e.Target, e.ClientIP, e.RequestID = fromMS(at), target.String, ip.String, rid.String
		if details.Valid {
			_ = json.Unmarshal([]byte(details.String), &e.Details)
		}
		out = append(out, e)
	}
	return out, total, rows.Err()
}

func (s *store) deleteAuditBefore(ctx context.Context, t time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, s.q(`DELETE FROM cfg_audit_events WHERE occurred_at < ?`), ms(t))
	if err != nil {
		return 0, fmt.Errorf("deleting old audit events: %w", err)
	}
	return res.RowsAffected()
}

// putGroup creates or replaces a group; created reports which.
func (s *store) putGroup(ctx context.Context, g ProductClassGroup) (created bool, err error) {
	classes, err := json.Marshal(g.ProductClasses)
	if err != nil {
		return false, err
	}
	err = s.db.InTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`UPDATE cfg_product_class_groups SET description = ?, product_classes = ?, updated_at = ? WHERE name = ?`), nullStr(g.Description), string(classes), ms(g.UpdatedAt), g.Name)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n > 0 {
			return nil
		}
		created = true
		_, err = tx.ExecContext(ctx, s.q(`INSERT INTO cfg_product_class_groups (name, description, product_classes, updated_at) VALUES (?, ?, ?, ?)`), g.Name, nullStr(g.Description), string(classes), ms(g.UpdatedAt))
		return err
	})
	if err != nil {
		return false, fmt.Errorf("saving product-class group: %w", err)
	}
	return created, nil
}

func (s *store) deleteGroup(ctx context.Context, name string) error {
	res, err := s.db.ExecContext(ctx, s.q(`DELETE FROM cfg_product_class_groups WHERE name = ?`), name)
	if err != nil {
		return fmt.Errorf("deleting product-class group: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return apperr.NotFound("GROUP_NOT_FOUND", "no such product-class group")
	}
	return nil
}

func (s *store) listGroups(ctx context.Context) ([]ProductClassGroup, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, description, product_classes, updated_at FROM cfg_product_class_groups ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("listing product-class groups: %w", err)
	}
	defer rows.Close()
	out := []ProductClassGroup{}
	for rows.Next() {
		var g ProductClassGroup
		var desc sql.NullString
		var classes string
		var at int64
		if err := rows.Scan(&g.Name, &desc, &classes, &at); err != nil {
			return nil, fmt.Errorf("listing product-class groups: %w", err)
		}
		g.Description, g.UpdatedAt = desc.String, fromMS(at)
		if err := json.Unmarshal([]byte(classes), &g.ProductClasses); err != nil {
			return nil, fmt.Errorf("product-class group %q: %w", g.Name, err)
		}
		out = append(out, g)
	}
	return out, rows.Err()
}
