package accounts

import (
	"net/netip"
	"time"

	"cpesuite/internal/platform/passwd"
)

// Login rate limit: MaxFailures failed logins within FailureWindow for one
// (username, client address) pair make further attempts of that pair
// answer 429 until the oldest failure leaves the window.
const (
	MaxFailures   = 5
	FailureWindow = 60 * time.Second
)

// MaxAddrFailures failed logins within FailureWindow from one client
// address, whatever the usernames, make that address's further attempts
// answer 429 too. Without it, a new username on every attempt is a new
// pair, and one address can make the gateway compute argon2 without end
// (issue 18). Twenty leaves room for an office behind one NAT address in
// which several people mistype at once, and still cuts a flood from one
// address to one hash every three seconds.
const MaxAddrFailures = 20

// maxLimiterKeys bounds the limiter's memory: each pair costs about 200
// bytes, so the limit is about 20 MB.
const maxLimiterKeys = 100_000

// limiter is the login failure window of the passwd package, keyed per
// pair or per address.
type limiter = passwd.FailureLimiter[limitKey]

type limitKey struct{ user, addr string }

func newLimiter(max int, window time.Duration, maxKeys int) *limiter {
	return passwd.NewFailureLimiter[limitKey](max, window, maxKeys)
}

// addrLimitKey is the key of an address in the per-address limiter. An
// IPv6 client usually holds a whole /64 and can pick a new address in it
// for every attempt, so IPv6 addresses count per /64.
func addrLimitKey(a netip.Addr) limitKey {
	if a.Is6() && !a.Is4In6() {
		p, err := a.Prefix(64)
		if err == nil {
			return limitKey{addr: p.String()}
		}
	}
	return limitKey{addr: addrString(a)}
}
