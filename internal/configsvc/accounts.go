package configsvc

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/mail"
	"regexp"
	"strings"

	"cpesuite/internal/configsvc/mailer"
	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/passwd"
)

// Password delivery values of the account results.
const (
	DeliveryReturned = "RETURNED"
	DeliveryEmail    = "EMAIL"
)

// UserInput is the body of POST /api/admin/users.
type UserInput struct {
	Username string `json:"username"`
	Email    string `json:"email,omitempty"`
	Locale   string `json:"locale,omitempty"`
	Role     Role   `json:"role,omitempty"`
}

var (
	usernameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{2,63}$`)
	localeRE   = regexp.MustCompile(`^[A-Za-z]{2,3}([-_][A-Za-z]{2})?$`)
)

func (in *UserInput) validate() error {
	in.Username = strings.TrimSpace(in.Username)
	in.Email = strings.TrimSpace(in.Email)
	in.Locale = normalizeLocale(in.Locale)
	if !usernameRE.MatchString(in.Username) {
		return apperr.Invalid("INVALID_USERNAME", "username must be 3 to 64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit")
	}
	if in.Email != "" {
		a, err := mail.ParseAddress(in.Email)
		if err != nil || a.Name != "" || a.Address != in.Email || len(in.Email) > 254 {
			return apperr.Invalid("INVALID_EMAIL", "email is not a plain e-mail address")
		}
	}
	if in.Locale != "" && !localeRE.MatchString(in.Locale) {
		return apperr.Invalid("INVALID_LOCALE", "locale must be a language tag such as en or ru-RU")
	}
	switch in.Role {
	case "":
		in.Role = RoleUser
	case RoleAdmin, RoleUser:
	default:
		return apperr.Invalid("INVALID_ROLE", "role must be ADMIN or USER")
	}
	return nil
}

// AccountResult is the result of account creation and password reset.
// TemporaryPassword is null when the password went out by e-mail.
type AccountResult struct {
	ID                int64   `json:"id"`
	Username          string  `json:"username"`
	PasswordDelivery  string  `json:"passwordDelivery"`
	TemporaryPassword *string `json:"temporaryPassword"`
}

// CreateUser creates an account with a temporary password, which is
// e-mailed when mail is online and the user has an address, and returned
// otherwise.
func (s *Service) CreateUser(ctx context.Context, actor Principal, in UserInput) (AccountResult, error) {
	if err := in.validate(); err != nil {
		return AccountResult{}, err
	}
	temp, hash, err := newTemporary()
	if err != nil {
		return AccountResult{}, err
	}
	now := s.now()
	u := User{Username: in.Username, Email: in.Email, Locale: in.Locale, Role: in.Role, PasswordHash: hash, MustChangePassword: true, CreatedAt: now, UpdatedAt: now}
	if err := s.st.createUser(ctx, &u); err != nil {
		s.audit.record(ctx, actor, "USER_CREATE", in.Username, outcomeOf(err), map[string]any{"username": in.Username, "error": apperr.PublicMessage(err)})
		return AccountResult{}, err
	}
	res := s.deliverPassword(ctx, u, temp, false)
	s.audit.record(ctx, actor, "USER_CREATE", u.Username, "SUCCESS", map[string]any{
		"id": u.ID, "username": u.Username, "email": u.Email, "role": u.Role, "passwordDelivery": res.PasswordDelivery,
	})
	return res, nil
}

// ResetPassword gives the account a new temporary password and ends its
// sessions.
func (s *Service) ResetPassword(ctx context.Context, actor Principal, id int64) (AccountResult, error) {
	u, err := s.st.userByID(ctx, id)
	if err != nil {
		return AccountResult{}, err
	}
	temp, hash, err := newTemporary()
	if err != nil {
		return AccountResult{}, err
	}
	// Revoke first: if the grid cannot take the revocation, nothing has
	// changed and the caller can retry; the reverse order could leave a
	// new password that nobody was told.
	now := s.now()
	if err := s.link.revokeUser(ctx, u.ID, now); err != nil {
		return AccountResult{}, err
	}
	if err := s.st.setPassword(ctx, u.ID, hash, true, now); err != nil {
		return AccountResult{}, err
	}
	res := s.deliverPassword(ctx, u, temp, true)
	s.audit.record(ctx, actor, "USER_PASSWORD_RESET", u.Username, "SUCCESS", map[string]any{"id": u.ID, "passwordDelivery": res.PasswordDelivery})
	return res, nil
}

func newTemporary() (temp, hash string, err error) {
	if temp, err = passwd.Temporary(); err != nil {
		return "", "", err
	}
	hash, err = passwd.Hash(temp)
	return temp, hash, err
}

// deliverPassword e-mails temp when mail is online and the user has an
// address. Any failure falls back to the offline behaviour for this
// operation: the password is returned.
func (s *Service) deliverPassword(ctx context.Context, u User, temp string, reset bool) AccountResult {
	res := AccountResult{ID: u.ID, Username: u.Username, PasswordDelivery: DeliveryReturned, TemporaryPassword: &temp}
	if !s.mail.Online() || u.Email == "" {
		return res
	}
	err := s.mail.Send(ctx, mailer.Message{Kind: mailer.KindTemporaryPassword, To: u.Email, Locale: u.Locale, Username: u.Username, Password: temp, Reset: reset})
	s.metrics.mailSent(err)
	if err != nil {
		s.log.Warn("sending the temporary password failed; returning it in the response", "username", u.Username, "err", err)
		return res
	}
	res.PasswordDelivery, res.TemporaryPassword = DeliveryEmail, nil
	return res
}

// DeletionRequestResult says whether the deletion needs a one-time
// password; the other fields are present only when it does.
type DeletionRequestResult struct {
	OTPRequired  bool    `json:"otpRequired"`
	Token        string  `json:"token,omitempty"`
	Expiry       *string `json:"expiry,omitempty"`
	OTPLength    int     `json:"otpLength,omitempty"`
	AttemptLimit int     `json:"attemptLimit,omitempty"`
}

// DeletionConfirm is the body of the confirm call; both fields are empty
// on the no-OTP path.
type DeletionConfirm struct {
	Token string `json:"token,omitempty"`
	OTP   string `json:"otp,omitempty"`
}

// RequestDeletion starts the deletion of account id. Online, a one-time
// password goes to the initiating administrator, who must have an e-mail
// address; offline, or when the send fails, the request needs none.
func (s *Service) RequestDeletion(ctx context.Context, actor Principal, id int64) (DeletionRequestResult, error) {
	target, err := s.deletable(ctx, actor, id)
	if err != nil {
		return DeletionRequestResult{}, err
	}
	now := s.now()
	token, err := randomToken()
	if err != nil {
		return DeletionRequestResult{}, err
	}
	req := DeletionRequest{UserID: target.ID, Token: token, RequestedBy: actor.UserID, AttemptLimit: s.cfg.OTPAttempts, ExpiresAt: now.Add(s.cfg.OTPTTL), CreatedAt: now}
	if s.mail.Online() {
		admin, err := s.st.userByID(ctx, actor.UserID)
		if err != nil {
			return DeletionRequestResult{}, err
		}
		if admin.Email == "" {
			s.audit.record(ctx, actor, "USER_DELETION_REQUEST", target.Username, "FAILURE", map[string]any{"id": target.ID, "error": "USER_DELETION_EMAIL_REQUIRED"})
			return DeletionRequestResult{}, apperr.Invalid("USER_DELETION_EMAIL_REQUIRED", "the one-time password is e-mailed to the requesting administrator, who has no e-mail address; add one first")
		}
		otp, err := passwd.OTP(s.cfg.OTPLength)
		if err != nil {
			return DeletionRequestResult{}, err
		}
		err = s.mail.Send(ctx, mailer.Message{Kind: mailer.KindDeletionOTP, To: admin.Email, Locale: admin.Locale, Username: admin.Username, TargetUsername: target.Username, OTP: otp, ExpiresAt: req.ExpiresAt, AttemptLimit: req.AttemptLimit})
		s.metrics.mailSent(err)
		if err != nil {
			s.log.Warn("sending the deletion one-time password failed; the deletion takes the no-OTP path", "target", target.Username, "err", err)
		} else {
			if req.OTPHash, err = passwd.Hash(otp); err != nil {
				return DeletionRequestResult{}, err
			}
			req.OTPRequired = true
		}
	}
	if err := s.st.putDeletionRequest(ctx, req); err != nil {
		return DeletionRequestResult{}, err
	}
	s.audit.record(ctx, actor, "USER_DELETION_REQUEST", target.Username, "SUCCESS", map[string]any{"id": target.ID, "otpRequired": req.OTPRequired})
	if !req.OTPRequired {
		return DeletionRequestResult{OTPRequired: false}, nil
	}
	exp := req.ExpiresAt.UTC().Format(timeLayout)
	return DeletionRequestResult{OTPRequired: true, Token: req.Token, Expiry: &exp, OTPLength: s.cfg.OTPLength, AttemptLimit: req.AttemptLimit}, nil
}

// deletable loads the target and refuses deletions that would lock the
// service out: one's own account and the last administrator.
func (s *Service) deletable(ctx context.Context, actor Principal, id int64) (User, error) {
	target, err := s.st.userByID(ctx, id)
	if err != nil {
		return User{}, err
	}
	if target.ID == actor.UserID {
		return User{}, apperr.Conflict("CANNOT_DELETE_SELF", "an administrator cannot delete their own account")
	}
	if target.Role == RoleAdmin {
		n, err := s.st.countUsers(ctx, RoleAdmin)
		if err != nil {
			return User{}, err
		}
		if n <= 1 {
			return User{}, apperr.Conflict("LAST_ADMIN", "the last administrator cannot be deleted")
		}
	}
	return target, nil
}

// ConfirmDeletion completes a pending deletion. A request that needs a
// one-time password takes the token and the OTP; every wrong OTP counts,
// and at the limit the request is void. A request without OTP is confirmed
// by the call alone.
func (s *Service) ConfirmDeletion(ctx context.Context, actor Principal, id int64, in DeletionConfirm) error {
	target, err := s.deletable(ctx, actor, id)
	if err != nil {
		return err
	}
	req, err := s.st.deletionRequest(ctx, target.ID)
	if err != nil {
		return err
	}
	fail := func(code string, err error) error {
		s.audit.record(ctx, actor, "USER_DELETION_CONFIRM", target.Username, "FAILURE", map[string]any{"id": target.ID, "error": code})
		return err
	}
	if req.RequestedBy != actor.UserID {
		return fail("DELETION_REQUESTED_BY_OTHER", apperr.Conflict("DELETION_REQUESTED_BY_OTHER", "another administrator started this deletion; only they can confirm it, or request it again yourself"))
	}
	if !s.now().Before(req.ExpiresAt) {
		if err := s.st.dropDeletionRequest(ctx, target.ID); err != nil {
			return err
		}
		return fail("DELETION_EXPIRED", apperr.Conflict("DELETION_EXPIRED", "the deletion request has expired; request a new one"))
	}
	if req.OTPRequired {
		if in.Token == "" || in.OTP == "" {
			return fail("OTP_REQUIRED", apperr.Invalid("OTP_REQUIRED", "this deletion needs the token and the one-time password sent by e-mail"))
		}
		if subtle.ConstantTimeCompare([]byte(in.Token), []byte(req.Token)) != 1 {
			return fail("DELETION_TOKEN_INVALID", apperr.Invalid("DELETION_TOKEN_INVALID", "the token does not belong to this deletion request"))
		}
		ok, err := passwd.Verify(req.OTPHash, in.OTP)
		if err != nil {
			return err
		}
		if !ok {
			n, err := s.st.countAttempt(ctx, target.ID)
			if err != nil {
				return err
			}
			if n >= req.AttemptLimit {
				if err := s.st.dropDeletionRequest(ctx, target.ID); err != nil {
					return err
				}
				return fail("OTP_ATTEMPTS_EXHAUSTED", apperr.Conflict("OTP_ATTEMPTS_EXHAUSTED", "too many wrong one-time passwords; the deletion request is void, request a new one"))
			}
			return fail("OTP_INVALID", apperr.Invalid("OTP_INVALID", "the one-time password is wrong").WithDetails(map[string]any{"attempts": n, "attemptsRemaining": req.AttemptLimit - n}))
		}
	}
	// Tokens carry the role, so the account's tokens are revoked before it
	// goes; without the revocation the deletion does not happen.
	if err := s.link.revokeUser(ctx, target.ID, s.now()); err != nil {
		return err
	}
	if err := s.st.deleteUser(ctx, target.ID); err != nil {
		return err
	}
	s.audit.record(ctx, actor, "USER_DELETE", target.Username, "SUCCESS", map[string]any{"id": target.ID, "otpRequired": req.OTPRequired})
	return nil
}

// UserView is an account as the API shows it (never the hash).
type UserView struct {
	ID                 int64  `json:"id"`
	Username           string `json:"username"`
	Email              string `json:"email,omitempty"`
	Locale             string `json:"locale,omitempty"`
	Role               Role   `json:"role"`
	MustChangePassword bool   `json:"mustChangePassword"`
	CreatedAt          string `json:"createdAt"`
	UpdatedAt          string `json:"updatedAt"`
}

func viewOf(u User) UserView {
	return UserView{ID: u.ID, Username: u.Username, Email: u.Email, Locale: u.Locale, Role: u.Role, MustChangePassword: u.MustChangePassword,
		CreatedAt: u.CreatedAt.Format(timeLayout), UpdatedAt: u.UpdatedAt.Format(timeLayout)}
}

const timeLayout = "2006-01-02T15:04:05.000Z07:00"

func outcomeOf(err error) string {
	if err == nil {
		return "SUCCESS"
	}
	var ae *apperr.Error
	if errors.As(err, &ae) && ae.Code != "" {
		return "FAILURE"
	}
	return "ERROR"
}
