package accounts

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/passwd"
)

// invalidCredentials is the one answer to a wrong username and to a wrong
// password, so the answer does not tell which usernames exist.
const invalidCredentials = "invalid username or password"

// rateLimited is the cause of a 429 from Login; RetryAfter reads it.
type rateLimited struct{ after time.Duration }

func (e *rateLimited) Error() string { return "login rate limited for " + e.after.String() }

// RetryAfter returns how long a caller refused by the login rate limit
// must wait, rounded up to whole seconds (at least one), for the
// Retry-After header.
func RetryAfter(err error) (time.Duration, bool) {
	var rl *rateLimited
	if !errors.As(err, &rl) {
		return 0, false
	}
	return retrySeconds(rl.after), true
}

func retrySeconds(d time.Duration) time.Duration {
	return time.Duration(max(1, math.Ceil(d.Seconds()))) * time.Second
}

// Login checks a username and password and opens a session. client is the
// caller's address (see ClientAddr); together with the username it keys
// the rate limit. A wrong username and a wrong password both give a 401
// INVALID_CREDENTIALS; an over-limit pair gives a 429 LOGIN_RATE_LIMITED
// whose wait RetryAfter returns.
func (s *Service) Login(ctx context.Context, username, password string, client netip.Addr) (token string, u User, expires time.Time, err error) {
	if username == "" || password == "" {
		return "", User{}, time.Time{}, apperr.Invalid("CREDENTIALS_REQUIRED", "username and password are required")
	}
	// Attempted names are untrusted: bounded and cleaned before they key
	// the limiter or reach the audit log.
	attempted := clean(username, maxNameField)
	addr := addrString(client)
	key := limitKey{user: userKey(attempted), addr: addr}

	ok, wait := s.limiter.begin(key, s.now())
	if !ok {
		wait = retrySeconds(wait)
		if s.limiter.firstRefusal(key) {
			s.Record(ctx, Entry{Username: attempted, Action: ActionLoginRateLimited, ClientAddr: addr,
				Detail: "retry after " + strconv.Itoa(int(wait/time.Second)) + "s; later refusals in this window are not recorded"})
			s.log.WarnContext(ctx, "gateway login rate limited", "username", attempted, "client", addr)
		}
		return "", User{}, time.Time{}, apperr.Wrap(apperr.ErrTooManyRequests, &rateLimited{after: wait},
			"LOGIN_RATE_LIMITED", "too many failed logins; try again later").
			WithDetails(map[string]any{"retry_after": int(wait / time.Second)})
	}
	failed := true
	defer func() { s.limiter.end(key, s.now(), failed) }()

	u, hash, err := s.credentials(ctx, username)
	if err != nil {
		// Not the caller's fault, so not counted as a failure.
		failed = false
		return "", User{}, time.Time{}, err
	}
	match, verr := passwd.Verify(hash, password)
	if verr != nil {
		// A damaged hash row: the account cannot log in until its password
		// is reset; say so in the log, not to the caller.
		s.log.ErrorContext(ctx, "gateway user has a malformed password hash", "username", u.Username, "error", verr)
	}
	if !match || u.Username == "" {
		s.Record(ctx, Entry{Username: attempted, Action: ActionLoginFailed, ClientAddr: addr})
		s.log.InfoContext(ctx, "gateway login failed", "username", attempted, "client", addr)
		return "", User{}, time.Time{}, apperr.New(apperr.ErrUnauthorized, "INVALID_CREDENTIALS", invalidCredentials)
	}
	failed = false
	token, expires, err = s.issueToken(ctx, userKey(u.Username))
	if err != nil {
		return "", User{}, time.Time{}, err
	}
	s.Record(ctx, Entry{Username: u.Username, Action: ActionLogin, ClientAddr: addr, Success: true})
	s.log.InfoContext(ctx, "gateway login", "username", u.Username, "client", addr)
	return token, u, expires, nil
}

// credentials returns the account and its hash; for an unknown or
// impossible username it returns the dummy hash and a zero User, so that
// the caller spends the same argon2 time either way.
func (s *Service) credentials(ctx context.Context, username string) (User, string, error) {
	if validUsername(username) != nil {
		return User{}, s.dummyHash, nil
	}
	var hash string
	u, err := scanUser(s.db.QueryRowContext(ctx,
		s.db.Rebind("SELECT "+userColumns+", password_hash FROM gw_users WHERE username_key = ?"),
		userKey(username)), &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, s.dummyHash, nil
	}
	if err != nil {
		return User{}, "", fmt.Errorf("reading user: %w", err)
	}
	return u, hash, nil
}

// addrString is the stored and logged form of a client address.
func addrString(a netip.Addr) string {
	if !a.IsValid() {
		return "unknown"
	}
	return a.String()
}
