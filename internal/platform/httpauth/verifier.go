package httpauth

import (
	"cmp"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults of the Verifier, in one place.
const (
	DefaultRealm            = "cpesuite"
	DefaultNonceTTL         = 5 * time.Minute
	DefaultMaxTrackedNonces = 100_000
)

// DefaultAlgorithms are offered when Verifier.Algorithms is empty: SHA-256
// for clients that have it, MD5 for the many TR-069 CPEs that do not.
var DefaultAlgorithms = []Algorithm{SHA256, MD5}

// nonceFutureSkew tolerates nonces stamped slightly in the future, which
// happens when Verifiers sharing a Key run on machines whose clocks differ.
const nonceFutureSkew = time.Minute

// Verifier authenticates incoming requests with Basic and/or Digest. Set its
// fields before first use and do not change or copy it afterwards; it is
// safe for concurrent use.
type Verifier struct {
	// Realm names the protection space; DefaultRealm when empty.
	Realm string
	// Basic and Digest enable the schemes. With neither set, Digest is on:
	// Basic sends the password in the clear and should be an explicit
	// choice.
	Basic  bool
	Digest bool
	// Algorithms are the Digest algorithms offered and accepted;
	// DefaultAlgorithms when empty. Challenges list them strongest first
	// whatever their order here (RFC 7616 §3.7).
	Algorithms []Algorithm
	// NonceTTL is how long a Digest nonce is accepted; DefaultNonceTTL when
	// zero. A correct response with an older nonce gets ErrStale.
	NonceTTL time.Duration
	// AllowNoQop accepts RFC 2069 Digest responses, which carry no qop and
	// no nonce count and so cannot be protected against replay within the
	// nonce's lifetime. Only for old clients.
	AllowNoQop bool
	// MaxTrackedNonces bounds the nonces whose counts are remembered;
	// DefaultMaxTrackedNonces when zero. Past it the oldest are forgotten
	// and their clients are asked, with stale=true, to take a new nonce.
	MaxTrackedNonces int
	// Key signs nonces; random when empty. Verifiers that share a Key (of at
	// least 16 bytes) accept each other's nonces, so that requests of one
	// client may land on any replica. Nonce-count replay tracking stays per
	// Verifier.
	Key []byte
	// Creds looks up passwords. Required.
	Creds Credentials
	// ErrorHandler answers requests for which Verify failed for another
	// reason than the credentials (store failure, bad configuration), in
	// Reject and Middleware. When nil they get a bare 500.
	ErrorHandler func(w http.ResponseWriter, r *http.Request, err error)
	// Now is the clock; time.Now when nil. Tests set it to expire nonces
	// without sleeping.
	Now func() time.Time

	once sync.Once
	st   *verifierState
}

// verifierState is the configuration resolved on first use.
type verifierState struct {
	err        error
	realm      string
	basic      bool
	digest     bool
	algs       []Algorithm // strongest first
	ttl        time.Duration
	allowNoQop bool
	signer     *nonceSigner
	opaque     string
	replay     *replayGuard
	now        func() time.Time
	// Challenge pieces around the nonce, one pair per algorithm, built once.
	digestPrefix []string
	digestSuffix string
	basicHeader  string
}

// Validate reports configuration errors: unknown algorithms, a short Key,
// negative durations or a missing Creds.
func (v *Verifier) Validate() error {
	var errs []error
	for _, a := range v.Algorithms {
		if !a.Valid() {
			errs = append(errs, fmt.Errorf("unsupported algorithm %q", a))
		}
	}
	if len(v.Key) > 0 && len(v.Key) < 16 {
		errs = append(errs, errors.New("key shorter than 16 bytes"))
	}
	if v.NonceTTL < 0 {
		errs = append(errs, errors.New("negative nonce TTL"))
	}
	if v.MaxTrackedNonces < 0 {
		errs = append(errs, errors.New("negative max tracked nonces"))
	}
	if v.Creds == nil {
		errs = append(errs, errors.New("no credentials store"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("httpauth: invalid verifier: %w", err)
	}
	return nil
}

func (v *Verifier) state() *verifierState {
	v.once.Do(func() { v.st = v.resolve() })
	return v.st
}

func (v *Verifier) resolve() *verifierState {
	if err := v.Validate(); err != nil {
		return &verifierState{err: err, realm: DefaultRealm}
	}
	st := &verifierState{
		realm:      cmp.Or(v.Realm, DefaultRealm),
		basic:      v.Basic,
		digest:     v.Digest || !v.Basic,
		ttl:        cmp.Or(v.NonceTTL, DefaultNonceTTL),
		allowNoQop: v.AllowNoQop,
		now:        v.Now,
	}
	if st.now == nil {
		st.now = time.Now
	}
	st.algs = slices.Clone(v.Algorithms)
	if len(st.algs) == 0 {
		st.algs = slices.Clone(DefaultAlgorithms)
	}
	slices.SortFunc(st.algs, func(a, b Algorithm) int { return b.rank() - a.rank() })
	st.algs = slices.Compact(st.algs)

	key := v.Key
	if len(key) == 0 {
		key = make([]byte, 32)
		rand.Read(key)
	}
	st.signer = newNonceSigner(key)
	st.opaque = st.signer.opaque(st.realm)
	st.replay = newReplayGuard(cmp.Or(v.MaxTrackedNonces, DefaultMaxTrackedNonces))

	var b strings.Builder
	writeQuoted(&b, st.realm)
	quotedRealm := b.String()
	for _, a := range st.algs {
		st.digestPrefix = append(st.digestPrefix,
			`Digest realm=`+quotedRealm+`, qop="auth", algorithm=`+string(a)+`, nonce="`)
	}
	st.digestSuffix = `", opaque="` + st.opaque + `"`
	st.basicHeader = `Basic realm=` + quotedRealm
	return st
}

// Verify checks the Authorization header of r and returns the
// authenticated username. It returns ErrNoCredentials, ErrBadCredentials or
// ErrStale (possibly wrapped) when a 401 challenge is the answer, and any
// other error when the credential store or the configuration failed.
func (v *Verifier) Verify(r *http.Request) (username string, err error) {
	st := v.state()
	if st.err != nil {
		return "", st.err
	}
	values := r.Header["Authorization"]
	switch {
	case len(values) == 0:
		return "", ErrNoCredentials
	case len(values) > 1:
		return "", badCredentials("several authorization headers")
	}
	value := values[0]
	i := skipOWS(value, 0)
	j := scanToken(value, i)
	scheme := value[i:j]
	switch {
	case st.digest && strings.EqualFold(scheme, "Digest"):
		return v.verifyDigest(st, r, value)
	case st.basic && strings.EqualFold(scheme, "Basic"):
		return v.verifyBasic(r, value[j:])
	case scheme == "":
		return "", badCredentials("malformed authorization")
	default:
		return "", badCredentials("unsupported scheme")
	}
}

// verifyDigest checks Digest credentials (RFC 7616 §3.4). Checks that need
// no password come first, so that garbage costs no store lookup; the nonce
// count is recorded last, only for a correct response, so that someone
// without the password cannot burn the counts of an honest client.
func (v *Verifier) verifyDigest(st *verifierState, r *http.Request, value string) (string, error) {
	d, err := ParseDigestAuthorization(value)
	if err != nil {
		return "", badCredentials("malformed digest credentials")
	}
	alg, ok := ParseAlgorithm(d.Algorithm)
	if !ok || !slices.Contains(st.algs, alg) {
		return "", badCredentials("algorithm not offered")
	}
	if d.Userhash {
		return "", badCredentials("userhash not supported")
	}
	if d.Username == "" || d.Nonce == "" || d.URI == "" || d.Response == "" {
		return "", badCredentials("missing digest parameter")
	}
	if d.Realm != st.realm {
		return "", badCredentials("wrong realm")
	}
	var nc uint32
	switch {
	case strings.EqualFold(d.QOP, "auth"):
		if nc, ok = parseNC(d.NC); !ok || d.CNonce == "" {
			return "", badCredentials("missing or malformed nc or cnonce")
		}
	case d.QOP == "" && st.allowNoQop && !alg.sess():
	case d.QOP == "":
		return "", badCredentials("qop missing")
	default:
		return "", badCredentials("unsupported qop")
	}
	if !uriMatches(d.URI, r) {
		return "", badCredentials("uri does not match the request")
	}
	if subtle.ConstantTimeCompare([]byte(d.Opaque), []byte(st.opaque)) != 1 {
		return "", badCredentials("wrong opaque")
	}
	id, ok := st.signer.open(d.Nonce)
	if !ok {
		return "", badCredentials("nonce not issued here")
	}
	age := st.now().Sub(time.Unix(0, id.issued()))
	if age < -nonceFutureSkew {
		return "", badCredentials("nonce from the future")
	}

	password, found, err := v.lookup(r, d.Username)
	if err != nil {
		return "", err
	}
	var buf [128]byte
	want := appendResponse(buf[:0], alg, &d, r.Method, password)
	// Hex digits may come in upper case. The copy into an array also spares
	// the allocation a []byte(string) conversion would cost.
	var gotBuf [128]byte
	got := gotBuf[:0]
	if len(d.Response) == len(want) {
		got = appendLowerASCII(got, d.Response)
	}
	if subtle.ConstantTimeCompare(got, want) != 1 || !found {
		return "", badCredentials("wrong digest response")
	}
	if age > st.ttl {
		return "", ErrStale
	}
	if d.QOP != "" {
		switch st.replay.use(&id, nc) {
		case ncReplayed:
			return "", badCredentials("nonce count replayed")
		case ncForgotten:
			return "", ErrStale
		}
	}
	return d.Username, nil
}

// lookup asks the credential store. An unknown user gets a password nobody
// can know, so that the response is still computed and compared and takes
// as long as for a known user.
func (v *Verifier) lookup(r *http.Request, username string) (string, bool, error) {
	password, ok, err := v.Creds.Lookup(r.Context(), username)
	if err != nil {
		return "", false, fmt.Errorf("httpauth: looking up credentials: %w", err)
	}
	if !ok {
		return "\x00unknown user", false, nil
	}
	return password, true, nil
}

func appendLowerASCII(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// parseNC parses a nonce count: 1 to 8 hex digits, not zero. RFC 7616 asks
// for exactly 8, but the count is hashed as sent, so a shorter one is no
// weaker and some clients send it.
func parseNC(s string) (uint32, bool) {
	if len(s) == 0 || len(s) > 8 {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 16, 32)
	if err != nil || n == 0 {
		return 0, false
	}
	return uint32(n), true
}

// uriMatches reports whether the uri parameter names the request's target.
// It must be the request-target exactly as sent; only when one side is in
// absolute form (through a proxy) are path and query compared instead.
func uriMatches(uri string, r *http.Request) bool {
	target := r.RequestURI
	if target == "" {
		target = r.URL.RequestURI()
	}
	if uri == target {
		return true
	}
	if !isAbsoluteURI(uri) && !isAbsoluteURI(target) {
		return false
	}
	u, err := url.ParseRequestURI(uri)
	if err != nil {
		return false
	}
	t, err := url.ParseRequestURI(target)
	if err != nil {
		return false
	}
	return u.RequestURI() == t.RequestURI()
}

func isAbsoluteURI(s string) bool {
	return !strings.HasPrefix(s, "/") && strings.Contains(s, "://")
}

// SetChallenges adds the WWW-Authenticate headers to h without writing a
// status, for callers that write their own 401 body. All Digest challenges
// share one fresh nonce. stale marks them stale=true (RFC 7616 §3.3).
func (v *Verifier) SetChallenges(h http.Header, stale bool) {
	st := v.state()
	if st.digest && st.signer != nil {
		nonce := st.signer.issue(st.now())
		suffix := st.digestSuffix
		if stale {
			suffix += ", stale=true"
		}
		for _, prefix := range st.digestPrefix {
			h.Add("WWW-Authenticate", prefix+nonce+suffix)
		}
	}
	if st.basic {
		h.Add("WWW-Authenticate", st.basicHeader)
	}
}

// Challenge answers 401 with fresh challenges for every enabled scheme and
// algorithm, strongest first, and an empty body.
func (v *Verifier) Challenge(w http.ResponseWriter) {
	v.SetChallenges(w.Header(), false)
	w.WriteHeader(http.StatusUnauthorized)
}

// Reject answers a request whose Verify failed with err: a 401 challenge
// for credential errors (stale=true for ErrStale), and ErrorHandler or a
// bare 500 for anything else.
func (v *Verifier) Reject(w http.ResponseWriter, r *http.Request, err error) {
	if !isAuthFailure(err) {
		if v.ErrorHandler != nil {
			v.ErrorHandler(w, r, err)
			return
		}
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
		return
	}
	v.SetChallenges(w.Header(), errors.Is(err, ErrStale))
	w.WriteHeader(http.StatusUnauthorized)
}
