package configsvc

import (
	"context"
	"errors"
	"math"
	"strings"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/passwd"
)

// Login limits. The spec sets none for this service, but its /auth/login
// and /auth/first-login run argon2 for anyone, like the gateway's login,
// so they get the gateway's policy (spec part A, rule 3, and issue 18):
// 5 failures per 60 s per username and address pair, 20 per address
// whatever the usernames, then 429 with Retry-After.
const (
	loginMaxFailures     = 5
	loginMaxAddrFailures = 20
	loginFailureWindow   = 60 * time.Second
	// loginLimiterKeys bounds each table's memory (about 200 bytes a key).
	loginLimiterKeys = 100_000
)

// loginGuard holds the login limits of one service.
type loginGuard struct {
	hashing  *passwd.Limiter
	pairs    *passwd.FailureLimiter[[2]string]
	addrs    *passwd.FailureLimiter[string]
	refusals *passwd.RefusalLog
}

func newLoginGuard(hashing *passwd.Limiter) *loginGuard {
	if hashing == nil {
		hashing = passwd.Shared()
	}
	return &loginGuard{
		hashing:  hashing,
		pairs:    passwd.NewFailureLimiter[[2]string](loginMaxFailures, loginFailureWindow, loginLimiterKeys),
		addrs:    passwd.NewFailureLimiter[string](loginMaxAddrFailures, loginFailureWindow, loginLimiterKeys),
		refusals: passwd.NewRefusalLog(loginFailureWindow, loginLimiterKeys),
	}
}

// waitError is a refusal that tells the client when to come back; the
// handlers turn it into Retry-After.
type waitError struct{ after time.Duration }

func (e *waitError) Error() string { return "retry after " + e.after.String() }

// retryAfter returns the whole seconds, at least one, a refused login must
// wait.
func retryAfter(err error) (int, bool) {
	var we *waitError
	if !errors.As(err, &we) {
		return 0, false
	}
	return int(max(1, math.Ceil(we.after.Seconds()))), true
}

func rateLimited(wait time.Duration) error {
	we := &waitError{after: wait}
	n, _ := retryAfter(we)
	return apperr.Wrap(apperr.ErrTooManyRequests, we, "LOGIN_RATE_LIMITED", "too many failed logins; try again later").
		WithDetails(map[string]any{"retryAfter": n})
}

func busy(cause error) error {
	d, _ := passwd.RetryAfter(cause)
	we := &waitError{after: d}
	n, _ := retryAfter(we)
	return apperr.Wrap(apperr.ErrUnavailable, errors.Join(we, cause), "LOGIN_BUSY", "too many logins are being checked; try again shortly").
		WithDetails(map[string]any{"retryAfter": n})
}

// refusal says whether a checkPassword error refused the attempt without
// checking the password, and whether it is the first such refusal of its
// run, which alone is audited so that a flood cannot grow the audit table.
type refusal struct {
	refused, audit bool
}

// check runs verify for username from ip within the limits. verify runs
// the argon2 work through the hashing limiter; it returns whether the
// attempt failed (a wrong password or unknown user).
func (g *loginGuard) check(ctx context.Context, username, ip string, now func() time.Time, verify func(ctx context.Context) (failed bool, err error)) (refusal, error) {
	pair := [2]string{normUsername(username), ip}
	t := now()
	if ok, wait := g.addrs.Begin(ip, t); !ok {
		return refusal{refused: true, audit: g.addrs.FirstRefusal(ip)}, rateLimited(wait)
	}
	if ok, wait := g.pairs.Begin(pair, t); !ok {
		g.addrs.End(ip, t, false)
		return refusal{refused: true, audit: g.pairs.FirstRefusal(pair)}, rateLimited(wait)
	}
	failed, err := verify(ctx)
	unchecked := errors.Is(err, passwd.ErrBusy) || (err != nil && ctx.Err() != nil)
	if unchecked {
		failed = false
	}
	end := now()
	g.pairs.End(pair, end, failed)
	g.addrs.End(ip, end, failed)
	if errors.Is(err, passwd.ErrBusy) {
		return refusal{refused: true, audit: g.refusals.First(ip, end)}, busy(err)
	}
	if unchecked {
		return refusal{refused: true}, apperr.Wrap(apperr.ErrUnavailable, ctx.Err(), "LOGIN_ABANDONED", "the client left before the password was checked")
	}
	return refusal{}, err
}

// normUsername keys the pair table: usernames match case-insensitively,
// and an attempted one is untrusted, so it is cut short.
func normUsername(u string) string {
	u = strings.ToLower(u)
	if len(u) > 256 {
		u = u[:256]
	}
	return u
}
