package jwtauth

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Kind tells access tokens from refresh tokens, so that a refresh token
// (long-lived, kept by the client for one purpose) cannot be used to call
// the API, nor an access token to obtain new tokens.
type Kind string

// The two kinds of token.
const (
	Access  Kind = "access"
	Refresh Kind = "refresh"
)

// DefaultIssuer is the iss claim of every token, checked on parsing so that
// tokens of another service sharing the secret are refused.
const DefaultIssuer = "cpesuite-configs"

// Claims are the claims of a token. Subject is the username and ID (jti) a
// random 128-bit value in unpadded base64url, by which the service revokes
// a token.
type Claims struct {
	jwt.RegisteredClaims
	Kind   Kind   `json:"typ"`
	UserID int64  `json:"uid"`
	Role   string `json:"role,omitempty"`
	// Family ties a refresh token to its rotation chain (reuse detection
	// happens in the service).
	Family string `json:"fam,omitempty"`
	// Epoch is the account's credential epoch (Unix ms of its last
	// password change) when the token was issued. Revoking a user stores
	// a new epoch; older tokens are then refused without listing them.
	Epoch int64 `json:"epc,omitempty"`
}

// Errors returned by Parse. Their messages, and those of the errors that
// wrap them, are fixed phrases: safe to return to a client and to log,
// because they never contain the token.
var (
	// ErrExpired means the token was valid but its lifetime is over; the
	// client should refresh or sign in again.
	ErrExpired = errors.New("jwtauth: token has expired")
	// ErrWrongKind means an authentic token of the other kind was presented,
	// such as a refresh token in place of an access token.
	ErrWrongKind = errors.New("jwtauth: wrong kind of token")
	// ErrInvalid means anything else: malformed, tampered, signed with
	// another algorithm or key, missing claims, another issuer, or not yet
	// valid.
	ErrInvalid = errors.New("jwtauth: invalid token")
)

const (
	// clockSkew tolerates clocks of replicas that differ slightly: without
	// it a token issued by one replica could be "issued in the future" for
	// another that reads it within the same second.
	clockSkew = 5 * time.Second
	// maxTokenLen bounds the work spent on a token before its signature is
	// checked. Tokens issued here are a few hundred bytes; browsers cap a
	// cookie at 4 KiB.
	maxTokenLen = 4096
)

// Issuer signs and verifies tokens with one key. It is safe for concurrent
// use once configured.
type Issuer struct {
	key        []byte
	accessTTL  time.Duration
	refreshTTL time.Duration
	parser     *jwt.Parser

	// Now is the clock, time.Now when nil. Tests set it to issue tokens in
	// the past or the future.
	Now func() time.Time
}

// NewIssuer returns an Issuer that signs with key, which must be at least
// MinKeyLen bytes, and gives access and refresh tokens the given positive
// lifetimes.
func NewIssuer(key []byte, accessTTL, refreshTTL time.Duration) (*Issuer, error) {
	if len(key) < MinKeyLen {
		return nil, fmt.Errorf("jwtauth: key is %d bytes; at least %d are required", len(key), MinKeyLen)
	}
	if accessTTL <= 0 || refreshTTL <= 0 {
		return nil, fmt.Errorf("jwtauth: token lifetimes must be positive (access %v, refresh %v)", accessTTL, refreshTTL)
	}
	return &Issuer{
		key:        append([]byte(nil), key...),
		accessTTL:  accessTTL,
		refreshTTL: refreshTTL,
		// Claims are validated by Parse itself so that the error reported
		// for a token wrong in several ways is deterministic: the library
		// joins all its findings, and "expired" must only be reported for a
		// token that is otherwise good.
		parser: jwt.NewParser(
			jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
			jwt.WithStrictDecoding(),
			jwt.WithoutClaimsValidation(),
		),
	}, nil
}

// AccessTTL returns the lifetime of access tokens.
func (i *Issuer) AccessTTL() time.Duration { return i.accessTTL }

// RefreshTTL returns the lifetime of refresh tokens.
func (i *Issuer) RefreshTTL() time.Duration { return i.refreshTTL }

func (i *Issuer) now() time.Time {
	if i.Now != nil {
		return i.Now()
	}
	return time.Now()
}

func (i *Issuer) ttl(kind Kind) (time.Duration, bool) {
	switch kind {
	case Access:
		return i.accessTTL, true
	case Refresh:
		return i.refreshTTL, true
	}
	return 0, false
}

// Issue signs a token of the given kind with HS256. It sets a fresh ID,
// Issuer, IssuedAt and NotBefore (now), ExpiresAt (now plus the kind's
// lifetime) and Kind; the other fields come from c. It returns the token
// and its claims as signed, times truncated to whole seconds as the token
// carries them.
func (i *Issuer) Issue(kind Kind, c Claims) (string, Claims, error) {
	ttl, ok := i.ttl(kind)
	if !ok {
		return "", Claims{}, fmt.Errorf("jwtauth: unknown token kind %q", kind)
	}
	id, err := newID()
	if err != nil {
		return "", Claims{}, err
	}
	now := i.now()
	c.ID = id
	c.Issuer = DefaultIssuer
	c.IssuedAt = jwt.NewNumericDate(now)
	c.NotBefore = c.IssuedAt
	c.ExpiresAt = jwt.NewNumericDate(now.Add(ttl))
	c.Kind = kind
	token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(i.key)
	if err != nil {
		return "", Claims{}, fmt.Errorf("jwtauth: signing token: %w", err)
	}
	return token, c, nil
}

func newID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("jwtauth: reading random token id: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

func invalid(reason string) error {
	return fmt.Errorf("%w: %s", ErrInvalid, reason)
}

// Parse verifies token and returns its claims if it is an authentic HS256
// token of this issuer and of kind want, with exp, iat and jti present,
// already valid (nbf, iat) and not expired. Errors wrap ErrExpired,
// ErrWrongKind or ErrInvalid.
//
// Only HS256 is accepted, whatever the header says: honouring "none" or
// another algorithm would let a forger choose how the token is checked.
func (i *Issuer) Parse(token string, want Kind) (*Claims, error) {
	if _, ok := i.ttl(want); !ok {
		return nil, invalid("unknown token kind requested")
	}
	if len(token) > maxTokenLen {
		return nil, invalid("token too long")
	}
	var c Claims
	_, err := i.parser.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		// WithValidMethods already refuses other algorithms; checking the
		// method type again keeps the key from ever reaching another
		// verifier should that option be dropped.
		if t.Method != jwt.SigningMethodHS256 {
			return nil, errors.New("unexpected signing method")
		}
		return i.key, nil
	})
	if err != nil {
		// The library's messages can quote parts of the token (JSON
		// decoding errors do), so only its categories are passed on.
		switch {
		case errors.Is(err, jwt.ErrTokenMalformed):
			return nil, invalid("malformed token")
		case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
			return nil, invalid("signature or algorithm not accepted")
		default:
			return nil, invalid("token not accepted")
		}
	}
	if err := i.validate(&c, want); err != nil {
		return nil, err
	}
	return &c, nil
}

// validate checks the claims of an authentic token. Expiry comes last so
// that ErrExpired, which invites the client to refresh, is only reported
// for a token that would otherwise be accepted.
func (i *Issuer) validate(c *Claims, want Kind) error {
	now := i.now()
	switch {
	case c.Issuer != DefaultIssuer:
		return invalid("wrong issuer")
	case c.ExpiresAt == nil:
		return invalid("missing expiry")
	case c.IssuedAt == nil:
		return invalid("missing issue time")
	case c.ID == "":
		// Without an ID the token could not be revoked.
		return invalid("missing token id")
	case c.IssuedAt.After(now.Add(clockSkew)):
		return invalid("issued in the future")
	case c.NotBefore != nil && c.NotBefore.After(now.Add(clockSkew)):
		return invalid("not valid yet")
	}
	if c.Kind != want {
		if _, known := i.ttl(c.Kind); known {
			return fmt.Errorf("%w: %s token presented where %s token expected", ErrWrongKind, c.Kind, want)
		}
		return invalid("unknown token kind")
	}
	if !now.Add(-clockSkew).Before(c.ExpiresAt.Time) {
		return ErrExpired
	}
	return nil
}
