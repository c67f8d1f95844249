package accounts

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/testrunner/identity"
)

// TokenPrefix starts every session token, so that a token found in a
// file or a paste is recognisable (and secret scanners can match it).
const TokenPrefix = "trg_"

// tokenBytes is the entropy of a token: 256 bits, beyond guessing.
const tokenBytes = 32

// tokenLen is the length of every token this package issues.
var tokenLen = len(TokenPrefix) + base64.RawURLEncoding.EncodedLen(tokenBytes)

func randomToken() (string, error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("reading random token: %w", err)
	}
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// hashToken is the stored form of a token.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// wellFormed tells tokens this package could have issued from anything
// else, which is refused without a database read.
func wellFormed(token string) bool {
	return len(token) == tokenLen && strings.HasPrefix(token, TokenPrefix)
}

var errInvalidToken = apperr.New(apperr.ErrUnauthorized, "INVALID_TOKEN", "invalid or expired token")

// session is an authenticated token.
type session struct {
	id      identity.Identity
	expires time.Time
}

// issueToken stores a new session for the user with key and returns its
// token. The user's expired sessions are deleted on the way, which keeps
// the table small without a timer.
func (s *Service) issueToken(ctx context.Context, key string) (string, time.Time, error) {
	token, err := randomToken()
	if err != nil {
		return "", time.Time{}, err
	}
	now := s.now()
	expires := fromMillis(millis(now.Add(s.ttl)))
	err = s.db.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.db.Rebind(
			"DELETE FROM gw_tokens WHERE username_key = ? AND expires_at <= ?"), key, millis(now)); err != nil {
			return fmt.Errorf("purging expired tokens: %w", err)
		}
		_, err := tx.ExecContext(ctx, s.db.Rebind(
			"INSERT INTO gw_tokens (token_hash, username_key, created_at, expires_at) VALUES (?, ?, ?, ?)"),
			hashToken(token), key, millis(now), millis(expires))
		if sqlstore.IsForeignKeyViolation(err) {
			// The account was deleted while its password was being checked.
			return apperr.Wrap(apperr.ErrUnauthorized, err, "INVALID_CREDENTIALS", invalidCredentials)
		}
		if err != nil {
			return fmt.Errorf("storing token: %w", err)
		}
		return nil
	})
	if err != nil {
		return "", time.Time{}, err
	}
	return token, expires, nil
}

// Authenticate returns the identity a token stands for, with the
// account's current role and stand. Unknown, malformed and expired tokens
// are a 401.
func (s *Service) Authenticate(ctx context.Context, token string) (identity.Identity, error) {
	sess, err := s.authenticate(ctx, token)
	return sess.id, err
}

func (s *Service) authenticate(ctx context.Context, token string) (session, error) {
	if !wellFormed(token) {
		return session{}, errInvalidToken
	}
	h := hashToken(token)
	var (
		sess    session
		expires int64
	)
	err := s.db.QueryRowContext(ctx, s.db.Rebind(
		`SELECT u.username, u.role, u.stand, t.expires_at
		 FROM gw_tokens t JOIN gw_users u ON u.username_key = t.username_key
		 WHERE t.token_hash = ?`), h).Scan(&sess.id.Username, &sess.id.Role, &sess.id.Stand, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return session{}, errInvalidToken
	}
	if err != nil {
		return session{}, fmt.Errorf("reading token: %w", err)
	}
	sess.expires = fromMillis(expires)
	if !s.now().Before(sess.expires) {
		if _, err := s.db.ExecContext(ctx, s.db.Rebind("DELETE FROM gw_tokens WHERE token_hash = ?"), h); err != nil {
			s.log.WarnContext(ctx, "deleting an expired gateway token failed", "error", err)
		}
		return session{}, errInvalidToken
	}
	return sess, nil
}

// Logout ends the session of token. Unknown, malformed and expired tokens
// are not an error: logging out twice is harmless, and answering
// differently would tell a caller which tokens exist.
func (s *Service) Logout(ctx context.Context, token string) error {
	_, err := s.logout(ctx, token, "")
	return err
}

// logout deletes the session and audits it; client is the caller's
// address for the audit log.
func (s *Service) logout(ctx context.Context, token, client string) (bool, error) {
	if !wellFormed(token) {
		return false, nil
	}
	h := hashToken(token)
	var username string
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, s.db.Rebind(
			`SELECT u.username FROM gw_tokens t JOIN gw_users u ON u.username_key = t.username_key
			 WHERE t.token_hash = ?`), h).Scan(&username)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading token: %w", err)
		}
		if _, err := tx.ExecContext(ctx, s.db.Rebind("DELETE FROM gw_tokens WHERE token_hash = ?"), h); err != nil {
			return fmt.Errorf("deleting token: %w", err)
		}
		return nil
	})
	if err != nil || username == "" {
		return false, err
	}
	s.Record(ctx, Entry{Username: username, Action: ActionLogout, ClientAddr: client, Success: true})
	s.log.InfoContext(ctx, "gateway logout", "username", username, "client", client)
	return true, nil
}

// PurgeExpired deletes every expired session and returns how many there
// were. Expired tokens are refused whether or not this runs; it only keeps
// the table from growing with sessions nobody ended.
func (s *Service) PurgeExpired(ctx context.Context) (int64, error) {
	res, err := s.db.ExecContext(ctx, s.db.Rebind("DELETE FROM gw_tokens WHERE expires_at <= ?"), millis(s.now()))
	if err != nil {
		return 0, fmt.Errorf("purging expired tokens: %w", err)
	}
	return res.RowsAffected()
}

// deleteTokensOf ends every session of the user with key.
func deleteTokensOf(ctx context.Context, tx *sql.Tx, db *sqlstore.DB, key string) (int64, error) {
	res, err := tx.ExecContext(ctx, db.Rebind("DELETE FROM gw_tokens WHERE username_key = ?"), key)
	if err != nil {
		return 0, fmt.Errorf("ending sessions: %w", err)
	}
	return res.RowsAffected()
}
