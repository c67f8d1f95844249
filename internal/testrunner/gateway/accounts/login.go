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
// (429) or by the bound on concurrent password checks (503) must wait,
// rounded up to whole seconds (at least one), for the Retry-After header.
func RetryAfter(err error) (time.Duration, bool) {
	var rl *rateLimited
	if errors.As(err, &rl) {
		return retrySeconds(rl.after), true
	}
	if d, ok := passwd.RetryAfter(err); ok {
		return retrySeconds(d), true
	}
	return 0, false
}

func retrySeconds(d time.Duration) time.Duration {
	return time.Duration(max(1, math.Ceil(d.Seconds()))) * time.Second
}

// ActionLoginBusy audits a login refused because every password check
// slot was taken (503).
const ActionLoginBusy = "login_busy"

// hashError turns a failed passwd.Limiter.Hash into an answer: a busy
// limiter is a 503 with Retry-After, like a busy login.
func hashError(err error) error {
	if d, ok := passwd.RetryAfter(err); ok {
		return apperr.Wrap(apperr.ErrUnavailable, err, "PASSWORD_CHECKS_BUSY", "too many passwords are being hashed; try again shortly").
			WithDetails(map[string]any{"retry_after": int(retrySeconds(d) / time.Second)})
	}
	return fmt.Errorf("hashing password: %w", err)
}

// Login checks a username and password and opens a session. client is the
// caller's address (see ClientAddr); together with the username it keys
// the rate limit, and alone it keys the per-address limit. A wrong
// username and a wrong password both give a 401 INVALID_CREDENTIALS; an
// over-limit pair or address gives a 429 LOGIN_RATE_LIMITED, and a login
// that finds every hashing slot and queue place taken a 503 LOGIN_BUSY;
// RetryAfter returns the wait of both.
//
// When ctx ends before the password is checked (the client hung up) no
// hash is computed and no failure is counted.
func (s *Service) Login(ctx context.Context, username, password string, client netip.Addr) (token string, u User, expires time.Time, err error) {
	if username == "" || password == "" {
		return "", User{}, time.Time{}, apperr.Invalid("CREDENTIALS_REQUIRED", "username and password are required")
	}
	// Attempted names are untrusted: bounded and cleaned before they key
	// the limiter or reach the audit log.
	attempted := clean(username, maxNameField)
	addr := addrString(client)
	key := limitKey{user: userKey(attempted), addr: addr}
	akey := addrLimitKey(client)
	now := s.now()

	// The address first: a refused address must not make the pair table
	// grow with every random username it tries.
	if ok, wait := s.addrLimiter.Begin(akey, now); !ok {
		return "", User{}, time.Time{}, s.refuseLimited(ctx, s.addrLimiter, akey, attempted, addr, wait, "address")
	}
	if ok, wait := s.limiter.Begin(key, now); !ok {
		s.addrLimiter.End(akey, now, false)
		return "", User{}, time.Time{}, s.refuseLimited(ctx, s.limiter, key, attempted, addr, wait, "pair")
	}
	failed := true
	defer func() {
		end := s.now()
		s.limiter.End(key, end, failed)
		s.addrLimiter.End(akey, end, failed)
	}()

	// The hashing slot first, then the account lookup inside it: a login
	// refused because every slot is taken costs no database query (under
	// a flood the lookups of refused attempts were the gateway's largest
	// cost after argon2 itself).
	var (
		hash       string
		match      bool
		cerr, verr error
	)
	herr := s.hashing.Do(ctx, func() {
		if u, hash, cerr = s.credentials(ctx, username); cerr == nil {
			match, verr = passwd.Verify(hash, password)
		}
	})
	if herr != nil || ctx.Err() != nil {
		// No password was checked: neither a failure of the caller's nor
		// an answer about the account.
		failed = false
		return "", User{}, time.Time{}, s.refuseUnchecked(ctx, herr, attempted, addr, akey)
	}
	if cerr != nil {
		// Not the caller's fault, so not counted as a failure.
		failed = false
		return "", User{}, time.Time{}, cerr
	}
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

// refuseLimited answers an attempt refused by limiter l (the pair's or the
// address's) and audits the first refusal of each run of them.
func (s *Service) refuseLimited(ctx context.Context, l *limiter, key limitKey, attempted, addr string, wait time.Duration, scope string) error {
	wait = retrySeconds(wait)
	if l.FirstRefusal(key) {
		s.Record(ctx, Entry{Username: attempted, Action: ActionLoginRateLimited, ClientAddr: addr,
			Detail: "limit per " + scope + "; retry after " + strconv.Itoa(int(wait/time.Second)) + "s; later refusals in this window are not recorded"})
		s.log.WarnContext(ctx, "gateway login rate limited", "username", attempted, "client", addr, "limit", scope)
	}
	return apperr.Wrap(apperr.ErrTooManyRequests, &rateLimited{after: wait},
		"LOGIN_RATE_LIMITED", "too many failed logins; try again later").
		WithDetails(map[string]any{"retry_after": int(wait / time.Second)})
}

// refuseUnchecked answers a login whose password was never checked: every
// hashing slot was taken (503 with Retry-After), or the client left while
// it waited (nobody reads that answer). The first busy refusal per address
// and window is audited.
func (s *Service) refuseUnchecked(ctx context.Context, cause error, attempted, addr string, akey limitKey) error {
	if d, busy := passwd.RetryAfter(cause); busy {
		d = retrySeconds(d)
		if s.refusals.First(ActionLoginBusy+" "+akey.addr, s.now()) {
			s.Record(ctx, Entry{Username: attempted, Action: ActionLoginBusy, ClientAddr: addr,
				Detail: "every password check slot taken; later refusals of this address within " + FailureWindow.String() + " are not recorded"})
			s.log.WarnContext(ctx, "gateway login refused: password checks saturated", "username", attempted, "client", addr)
		}
		return apperr.Wrap(apperr.ErrUnavailable, cause, "LOGIN_BUSY", "too many logins are being checked; try again shortly").
			WithDetails(map[string]any{"retry_after": int(d / time.Second)})
	}
	if cause == nil {
		cause = ctx.Err()
	}
	return apperr.Wrap(apperr.ErrUnavailable, cause, "LOGIN_ABANDONED", "the client left before the password was checked")
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
