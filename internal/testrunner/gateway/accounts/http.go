package accounts

import (
	"net/http"
	"strconv"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
)

// maxBodyBytes bounds the small JSON bodies of these routes.
const maxBodyBytes = 64 << 10

// Routes mounts the accounts API on mux. Login and logout must be open in
// the Middleware's open function; the others rely on it for the caller's
// identity and refuse (401) requests that arrive without one.
func (s *Service) Routes(mux *httpx.Mux, a httpx.Adapter) {
	mux.Handle("POST /api/auth/login", a.H(s.handleLogin))
	mux.Handle("POST /api/auth/logout", a.H(s.handleLogout))
	mux.Handle("GET /api/auth/me", a.H(s.handleMe))
	mux.Handle("GET /api/users", a.H(s.handleUsers))
	mux.Handle("POST /api/users", a.H(s.handleCreateUser))
	mux.Handle("POST /api/users/{username}/reset-password", a.H(s.handleResetPassword))
	mux.Handle("DELETE /api/users/{username}", a.H(s.handleDeleteUser))
	mux.Handle("GET /api/activity", a.H(s.handleActivity))
}

// sessionUser is the user part of the login answer.
type sessionUser struct {
	Username string `json:"username"`
	Role     string `json:"role"`
	Stand    string `json:"stand"`
}

type loginResponse struct {
	Token     string      `json:"token"`
	TokenType string      `json:"token_type"`
	ExpiresAt time.Time   `json:"expires_at"`
	User      sessionUser `json:"user"`
}

func (s *Service) handleLogin(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Username string `json:"username"`
		Password string `json:"password"`
	}
	if err := httpx.DecodeJSON(r, &body, httpx.DecodeOptions{MaxBytes: maxBodyBytes}); err != nil {
		return err
	}
	token, u, expires, err := s.Login(r.Context(), body.Username, body.Password, ClientAddr(r, s.trusted))
	if err != nil {
		return withRetryAfter(w, err)
	}
	// The body holds a credential: no cache may keep it (RFC 6749, 5.1).
	w.Header().Set("Cache-Control", "no-store")
	return httpx.WriteJSON(w, http.StatusOK, loginResponse{
		Token: token, TokenType: "Bearer", ExpiresAt: expires,
		User: sessionUser{Username: u.Username, Role: u.Role, Stand: u.Stand},
	})
}

// withRetryAfter sets Retry-After for a refusal that has a wait (429 rate
// limit, 503 busy password checks) and returns err.
func withRetryAfter(w http.ResponseWriter, err error) error {
	if d, ok := RetryAfter(err); ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(d/time.Second)))
	}
	return err
}

func (s *Service) handleLogout(w http.ResponseWriter, r *http.Request) error {
	if token, ok := bearerToken(r); ok {
		if _, err := s.logout(r.Context(), token, addrString(ClientAddr(r, s.trusted))); err != nil {
			return err
		}
	}
	return httpx.WriteJSON(w, http.StatusOK, map[string]bool{"logged_out": true})
}

type meResponse struct {
	Username       string    `json:"username"`
	Role           string    `json:"role"`
	Stand          string    `json:"stand"`
	CreatedAt      time.Time `json:"created_at"`
	TokenExpiresAt time.Time `json:"token_expires_at"`
}

func (s *Service) handleMe(w http.ResponseWriter, r *http.Request) error {
	sess, ok := sessionFrom(r.Context())
	if !ok {
		return errAuthRequired
	}
	u, err := s.User(r.Context(), sess.id.Username)
	if apperr.Status(err) == http.StatusNotFound {
		return errInvalidToken // Deleted since the middleware looked.
	}
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, meResponse{
		Username: u.Username, Role: u.Role, Stand: u.Stand,
		CreatedAt: u.CreatedAt, TokenExpiresAt: sess.expires,
	})
}

func (s *Service) handleUsers(w http.ResponseWriter, r *http.Request) error {
	if err := RequireAdmin(r); err != nil {
		return err
	}
	users, err := s.Users(r.Context())
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, users)
}

func (s *Service) handleCreateUser(w http.ResponseWriter, r *http.Request) error {
	if err := RequireAdmin(r); err != nil {
		return err
	}
	var body struct {
		Username string `json:"username"`
		Password string `json:"password"`
		Role     string `json:"role"`
		Stand    string `json:"stand"`
	}
	if err := httpx.DecodeJSON(r, &body, httpx.DecodeOptions{MaxBytes: maxBodyBytes}); err != nil {
		return err
	}
	actor, _ := Caller(r)
	u, err := s.CreateUser(r.Context(), actor, body.Username, body.Password, body.Role, body.Stand)
	if err != nil {
		return withRetryAfter(w, err)
	}
	return httpx.WriteJSON(w, http.StatusCreated, u)
}

func (s *Service) handleResetPassword(w http.ResponseWriter, r *http.Request) error {
	if err := RequireAdmin(r); err != nil {
		return err
	}
	var body struct {
		Password string `json:"password"`
	}
	if err := httpx.DecodeJSON(r, &body, httpx.DecodeOptions{MaxBytes: maxBodyBytes}); err != nil {
		return err
	}
	actor, _ := Caller(r)
	username, err := s.resetPassword(r.Context(), actor, r.PathValue("username"), body.Password)
	if err != nil {
		return withRetryAfter(w, err)
	}
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"username": username, "password_reset": true})
}

func (s *Service) handleDeleteUser(w http.ResponseWriter, r *http.Request) error {
	if err := RequireAdmin(r); err != nil {
		return err
	}
	actor, _ := Caller(r)
	if err := s.DeleteUser(r.Context(), actor, r.PathValue("username")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// activityPage is the answer of GET /api/activity.
type activityPage struct {
	Items  []Entry `json:"items"`
	Limit  int     `json:"limit"`
	Offset int     `json:"offset"`
}

func (s *Service) handleActivity(w http.ResponseWriter, r *http.Request) error {
	if err := RequireAdmin(r); err != nil {
		return err
	}
	q := r.URL.Query()
	f := Filter{Username: q.Get("username"), Action: q.Get("action"), Limit: DefaultActivityLimit}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxActivityLimit {
			return apperr.Invalid("INVALID_LIMIT", "limit must be an integer between 1 and %d", MaxActivityLimit)
		}
		f.Limit = n
	}
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return apperr.Invalid("INVALID_OFFSET", "offset must be an integer of 0 or more")
		}
		f.Offset = n
	}
	items, err := s.Activity(r.Context(), f)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, activityPage{Items: items, Limit: f.Limit, Offset: f.Offset})
}
