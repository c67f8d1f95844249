package configsvc

import (
	"context"
	"errors"
	"time"

	"cpesuite/internal/configsvc/jwtauth"
	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/passwd"
)

// Principal is the authenticated caller of a request.
type Principal struct {
	UserID   int64
	Username string
	Role     Role
	TokenID  string
	Family   string
	Expires  time.Time
	ClientIP string
	Request  string
}

// TokenPair is the answer of login, refresh and first-login.
type TokenPair struct {
	AccessToken      string   `json:"accessToken"`
	TokenType        string   `json:"tokenType"`
	ExpiresIn        int64    `json:"expiresIn"`
	RefreshToken     string   `json:"refreshToken"`
	RefreshExpiresIn int64    `json:"refreshExpiresIn"`
	User             UserView `json:"user"`
}

var (
	errBadCredentials = apperr.New(apperr.ErrUnauthorized, "BAD_CREDENTIALS", "wrong username or password")
	errTokenInvalid   = apperr.New(apperr.ErrUnauthorized, "TOKEN_INVALID", "the access token is invalid")
	errTokenExpired   = apperr.New(apperr.ErrUnauthorized, "TOKEN_EXPIRED", "the access token has expired")
	errTokenRevoked   = apperr.New(apperr.ErrUnauthorized, "TOKEN_REVOKED", "the access token has been revoked")
	errTokenMissing   = apperr.New(apperr.ErrUnauthorized, "TOKEN_MISSING", "this endpoint needs Authorization: Bearer <access token>")
	errRefreshInvalid = apperr.New(apperr.ErrUnauthorized, "REFRESH_TOKEN_INVALID", "the refresh token is invalid, expired or revoked; log in again")
	errRefreshReused  = apperr.New(apperr.ErrUnauthorized, "REFRESH_TOKEN_REUSED", "the refresh token was already used; every session of this login is ended, log in again")
)

// Login checks a username and password and opens a session: an access
// token and the first refresh token of a new rotation family. An account
// that still has a temporary password must rotate it with first-login.
func (s *Service) Login(ctx context.Context, username, password string, who Principal) (TokenPair, error) {
	u, ref, err := s.checkPassword(ctx, username, password, who)
	if err != nil {
		s.metrics.logins.WithLabelValues("failure").Inc()
		if !ref.refused || ref.audit {
			who.Username = username
			s.audit.record(ctx, who, "LOGIN", username, "FAILURE", map[string]any{"error": apperr.PublicMessage(err)})
		}
		return TokenPair{}, err
	}
	if u.MustChangePassword {
		s.metrics.logins.WithLabelValues("password_change_required").Inc()
		return TokenPair{}, apperr.New(apperr.ErrForbidden, "PASSWORD_CHANGE_REQUIRED", "the password is temporary; set a new one with POST /configs-service/auth/first-login")
	}
	pair, err := s.openSession(ctx, u, "")
	if err != nil {
		return TokenPair{}, err
	}
	s.metrics.logins.WithLabelValues("success").Inc()
	who.UserID, who.Username = u.ID, u.Username
	s.audit.record(ctx, who, "LOGIN", u.Username, "SUCCESS", nil)
	return pair, nil
}

// checkPassword returns the user when the password matches. An unknown
// username costs one hash verification too. Attempts are limited per
// username and address and per address (429), the hash runs within the
// process's hashing limiter (503 when saturated), and nothing is computed
// for a client that has left; ref says whether the attempt was refused
// unchecked and whether that refusal is to be audited.
func (s *Service) checkPassword(ctx context.Context, username, password string, who Principal) (User, refusal, error) {
	if username == "" || password == "" {
		return User{}, refusal{}, apperr.Invalid("CREDENTIALS_REQUIRED", "username and password are required")
	}
	var u User
	ref, err := s.logins.check(ctx, username, who.ClientIP, s.now, func(ctx context.Context) (failed bool, err error) {
		// The hashing slot first, then the lookup inside it: a login
		// refused because every slot is taken costs no database query.
		if herr := s.logins.hashing.Do(ctx, func() {
			failed, err = s.verifyAccount(ctx, username, password, &u)
		}); herr != nil {
			return false, herr
		}
		return failed, err
	})
	if err != nil {
		return User{}, ref, err
	}
	return u, ref, nil
}

// verifyAccount looks the account up and checks its password (an unknown
// user against dummyHash, so both cost the same); the caller holds a
// hashing slot. failed reports a wrong password or an unknown user.
func (s *Service) verifyAccount(ctx context.Context, username, password string, u *User) (failed bool, err error) {
	*u, err = s.st.userByName(ctx, username)
	hash := u.PasswordHash
	switch {
	case errors.Is(err, apperr.ErrNotFound):
		hash = dummyHash
	case err != nil:
		return false, err
	}
	ok, verr := passwd.Verify(hash, password)
	if verr != nil && !errors.Is(err, apperr.ErrNotFound) {
		return false, verr
	}
	if !ok || err != nil {
		return true, errBadCredentials
	}
	return false, nil
}

// openSession issues an access token and a refresh token. An empty family
// starts a new rotation chain.
func (s *Service) openSession(ctx context.Context, u User, family string) (TokenPair, error) {
	if family == "" {
		var err error
		if family, err = randomToken(); err != nil {
			return TokenPair{}, err
		}
	}
	base := jwtauth.Claims{UserID: u.ID, Role: string(u.Role), Family: family, Epoch: u.UpdatedAt.UnixMilli()}
	base.Subject = u.Username
	access, _, err := s.jwt.Issue(jwtauth.Access, base)
	if err != nil {
		return TokenPair{}, err
	}
	refresh, rc, err := s.jwt.Issue(jwtauth.Refresh, base)
	if err != nil {
		return TokenPair{}, err
	}
	if err := s.st.insertRefresh(ctx, rc.ID, family, u.ID, rc.ExpiresAt.Time); err != nil {
		return TokenPair{}, err
	}
	return TokenPair{
		AccessToken: access, TokenType: "Bearer", ExpiresIn: int64(s.jwt.AccessTTL() / time.Second),
		RefreshToken: refresh, RefreshExpiresIn: int64(s.jwt.RefreshTTL() / time.Second), User: viewOf(u),
	}, nil
}

// Refresh exchanges a refresh token for a new pair. Each refresh token
// works once; presenting a used one again ends its whole family, because
// then two parties hold it and one of them is not the user.
func (s *Service) Refresh(ctx context.Context, token string, who Principal) (TokenPair, error) {
	if token == "" {
		return TokenPair{}, apperr.Invalid("REFRESH_TOKEN_REQUIRED", "send the refresh token in the body (refreshToken) or the refresh_token cookie")
	}
	c, err := s.jwt.Parse(token, jwtauth.Refresh)
	if err != nil {
		return TokenPair{}, errRefreshInvalid
	}
	state, err := s.st.useRefresh(ctx, c.ID, s.now())
	if err != nil {
		return TokenPair{}, err
	}
	switch state {
	case refreshReused:
		if err := s.st.revokeFamily(ctx, c.Family); err != nil {
			return TokenPair{}, err
		}
		who.UserID, who.Username = c.UserID, c.Subject
		s.audit.record(ctx, who, "REFRESH_TOKEN_REUSE", c.Subject, "FAILURE", map[string]any{"family": c.Family})
		return TokenPair{}, errRefreshReused
	case refreshOK:
	default:
		return TokenPair{}, errRefreshInvalid
	}
	u, err := s.st.userByID(ctx, c.UserID)
	if err != nil {
		return TokenPair{}, errRefreshInvalid
	}
	return s.openSession(ctx, u, c.Family)
}

// Logout revokes the caller's access token until it expires and ends the
// refresh family of its session.
func (s *Service) Logout(ctx context.Context, p Principal) error {
	if err := s.link.revokeToken(ctx, p.TokenID, p.Expires); err != nil {
		return err
	}
	if p.Family != "" {
		if err := s.st.revokeFamily(ctx, p.Family); err != nil {
			return err
		}
	}
	s.audit.record(ctx, p, "LOGOUT", p.Username, "SUCCESS", nil)
	return nil
}

// FirstLoginInput is the body of POST /auth/first-login.
type FirstLoginInput struct {
	Username        string `json:"username"`
	CurrentPassword string `json:"currentPassword"`
	NewPassword     string `json:"newPassword"`
}

// FirstLogin replaces a temporary password (the bootstrap administrator's,
// or one from creation or reset) by one the user chose, and logs in.
func (s *Service) FirstLogin(ctx context.Context, in FirstLoginInput, who Principal) (TokenPair, error) {
	u, ref, err := s.checkPassword(ctx, in.Username, in.CurrentPassword, who)
	if err != nil {
		if !ref.refused || ref.audit {
			who.Username = in.Username
			s.audit.record(ctx, who, "FIRST_LOGIN", in.Username, "FAILURE", map[string]any{"error": apperr.PublicMessage(err)})
		}
		return TokenPair{}, err
	}
	if !u.MustChangePassword {
		return TokenPair{}, apperr.Conflict("PASSWORD_ALREADY_SET", "this account has no temporary password to rotate")
	}
	if in.NewPassword == in.CurrentPassword {
		return TokenPair{}, apperr.Invalid("PASSWORD_UNCHANGED", "the new password must differ from the current one")
	}
	if err := passwd.Check(in.NewPassword, u.Username); err != nil {
		return TokenPair{}, apperr.Invalid("PASSWORD_POLICY", "%s", err.Error())
	}
	hash, err := s.logins.hashing.Hash(ctx, in.NewPassword)
	if err != nil {
		if errors.Is(err, passwd.ErrBusy) {
			return TokenPair{}, busy(err)
		}
		return TokenPair{}, err
	}
	now := s.now()
	if err := s.st.setPassword(ctx, u.ID, hash, false, now); err != nil {
		return TokenPair{}, err
	}
	u.MustChangePassword, u.UpdatedAt = false, now.Truncate(time.Millisecond)
	who.UserID, who.Username = u.ID, u.Username
	s.audit.record(ctx, who, "FIRST_LOGIN", u.Username, "SUCCESS", map[string]any{"newPassword": in.NewPassword})
	return s.openSession(ctx, u, "")
}

// Authenticate verifies an access token: signature, lifetime, kind, then
// the revocation list in the grid. While the grid is unreachable every
// token is refused (errGridDown).
func (s *Service) Authenticate(ctx context.Context, token string) (Principal, error) {
	if token == "" {
		return Principal{}, errTokenMissing
	}
	c, err := s.jwt.Parse(token, jwtauth.Access)
	switch {
	case errors.Is(err, jwtauth.ErrExpired):
		s.metrics.tokenChecks.WithLabelValues("expired").Inc()
		return Principal{}, errTokenExpired
	case err != nil:
		s.metrics.tokenChecks.WithLabelValues("invalid").Inc()
		return Principal{}, errTokenInvalid
	}
	revoked, err := s.link.checkRevoked(ctx, c.ID, c.UserID, c.Epoch)
	if err != nil {
		s.metrics.tokenChecks.WithLabelValues("grid_unavailable").Inc()
		return Principal{}, err
	}
	if revoked {
		s.metrics.tokenChecks.WithLabelValues("revoked").Inc()
		return Principal{}, errTokenRevoked
	}
	s.metrics.tokenChecks.WithLabelValues("valid").Inc()
	return Principal{UserID: c.UserID, Username: c.Subject, Role: Role(c.Role), TokenID: c.ID, Family: c.Family, Expires: c.ExpiresAt.Time}, nil
}
