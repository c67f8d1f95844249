// Package identity carries the caller's identity from the test-runner
// gateway to a worker. The gateway authenticates the caller and signs the
// identity with a secret it shares with its workers; a worker trusts only
// identities whose signature it can verify, so a client that reaches a
// worker directly cannot claim to be someone else.
//
// The header value is
//
//	v1.<base64url(JSON payload)>.<base64url(HMAC-SHA256(secret, "v1." + payload))>
//
// The payload names the user, role and stand, the request's method and
// path, and a validity window of a minute. Binding method and path means
// a header seen in a log or a packet capture opens only the request it was
// made for, and only briefly.
package identity

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"cpesuite/internal/platform/fsx"
)

// Header is the request header that carries the signed identity.
const Header = "X-Testrunner-Identity"

// Roles of the test runner.
const (
	RoleAdmin  = "admin"
	RoleEditor = "editor"
)

// TTL is how long a signed header is valid; Skew is the clock difference
// between gateway and worker that is tolerated.
const (
	TTL  = time.Minute
	Skew = 30 * time.Second
)

// MinSecretLen is the shortest shared secret accepted, in bytes.
const MinSecretLen = 32

// Identity is who is calling.
type Identity struct {
	Username string `json:"u"`
	Role     string `json:"r"`
	Stand    string `json:"s,omitempty"`
}

// IsAdmin reports whether the caller has the admin role.
func (id Identity) IsAdmin() bool { return id.Role == RoleAdmin }

type payload struct {
	Identity
	Method string `json:"m"`
	Path   string `json:"p"`
	Issued int64  `json:"iat"`
}

// ErrInvalid is returned for a missing, malformed, forged, expired or
// misdirected identity header.
var ErrInvalid = errors.New("invalid caller identity")

const version = "v1."

// Sign returns the header value for a request with the given method and
// path (the URL path, without query) made now on behalf of id.
func Sign(secret []byte, id Identity, method, path string, now time.Time) string {
	body, _ := json.Marshal(payload{Identity: id, Method: method, Path: path, Issued: now.Unix()})
	p := base64.RawURLEncoding.EncodeToString(body)
	return version + p + "." + base64.RawURLEncoding.EncodeToString(mac(secret, p))
}

func mac(secret []byte, p string) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(version))
	h.Write([]byte(p))
	return h.Sum(nil)
}

// Verify checks a header value against the request it arrived with.
func Verify(secret []byte, value, method, path string, now time.Time) (Identity, error) {
	rest, ok := strings.CutPrefix(value, version)
	if !ok {
		return Identity{}, fmt.Errorf("%w: unknown version", ErrInvalid)
	}
	p, sig, ok := strings.Cut(rest, ".")
	if !ok {
		return Identity{}, fmt.Errorf("%w: malformed", ErrInvalid)
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, mac(secret, p)) {
		return Identity{}, fmt.Errorf("%w: bad signature", ErrInvalid)
	}
	body, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return Identity{}, fmt.Errorf("%w: malformed payload", ErrInvalid)
	}
	var pl payload
	if err := json.Unmarshal(body, &pl); err != nil {
		return Identity{}, fmt.Errorf("%w: malformed payload", ErrInvalid)
	}
	issued := time.Unix(pl.Issued, 0)
	if now.Before(issued.Add(-Skew)) || now.After(issued.Add(TTL+Skew)) {
		return Identity{}, fmt.Errorf("%w: expired", ErrInvalid)
	}
	if pl.Method != method || pl.Path != path {
		return Identity{}, fmt.Errorf("%w: signed for another request", ErrInvalid)
	}
	if pl.Username == "" || (pl.Role != RoleAdmin && pl.Role != RoleEditor) {
		return Identity{}, fmt.Errorf("%w: no user or unknown role", ErrInvalid)
	}
	return pl.Identity, nil
}

// SignRequest sets the header on an outgoing request.
func SignRequest(secret []byte, r *http.Request, id Identity, now time.Time) {
	r.Header.Set(Header, Sign(secret, id, r.Method, r.URL.Path, now))
}

// VerifyRequest checks the header of an incoming request.
func VerifyRequest(secret []byte, r *http.Request, now time.Time) (Identity, error) {
	v := r.Header.Get(Header)
	if v == "" {
		return Identity{}, fmt.Errorf("%w: missing %s header", ErrInvalid, Header)
	}
	return Verify(secret, v, r.Method, r.URL.Path, now)
}

type ctxKey struct{}

// NewContext returns ctx carrying id.
func NewContext(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// FromContext returns the identity stored by NewContext.
func FromContext(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(ctxKey{}).(Identity)
	return id, ok
}

// SecretFileName is the file under the data directory holding the
// generated shared secret when none is configured.
const SecretFileName = "testrunner-secret"

// EnsureSecret returns the configured secret (hex or any string of at
// least MinSecretLen bytes) or, when none is configured, the one in
// <dataDir>/testrunner-secret, generating that file on first use. A
// gateway and a worker that share a data directory (cpesuite up) thus
// agree without configuration; separate processes must be given the same
// CPESUITE_TESTRUNNER_SECRET.
func EnsureSecret(configured, dataDir string) (secret []byte, source string, err error) {
	if configured != "" {
		if len(configured) < MinSecretLen {
			return nil, "", fmt.Errorf("CPESUITE_TESTRUNNER_SECRET must be at least %d bytes", MinSecretLen)
		}
		return []byte(configured), "CPESUITE_TESTRUNNER_SECRET", nil
	}
	path := filepath.Join(dataDir, SecretFileName)
	b, err := os.ReadFile(path)
	if err == nil {
		s := strings.TrimSpace(string(b))
		if len(s) < MinSecretLen {
			return nil, "", fmt.Errorf("%s: secret shorter than %d bytes", SecretFileName, MinSecretLen)
		}
		return []byte(s), path, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("reading %s: %w", SecretFileName, err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, "", err
	}
	s := hex.EncodeToString(raw)
	if err := fsx.WriteFileAtomic(path, []byte(s+"\n")); err != nil {
		return nil, "", fmt.Errorf("writing %s: %w", SecretFileName, err)
	}
	return []byte(s), path + " (generated)", nil
}
