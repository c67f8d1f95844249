package configsvc

import (
	"context"
	_ "embed"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"cpesuite/internal/buildinfo"
	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
)

// Base is the context path of every route.
const Base = "/configs-service"

// maxBody bounds every JSON request body of the service; its largest body
// is a product-class group.
const maxBody = 256 << 10

// refreshCookie carries the refresh token for browser clients. Its path
// limits it to the auth endpoints.
const refreshCookie = "refresh_token"

//go:embed openapi.json
var openapiDoc []byte

// OpenAPI returns the service's OpenAPI document.
func OpenAPI() []byte { return openapiDoc }

// API is the HTTP layer.
type API struct {
	s *Service
	a httpx.Adapter
}

// NewAPI returns the HTTP layer of s.
func NewAPI(s *Service) *API {
	return &API{s: s, a: httpx.Adapter{Errors: writeError, Log: s.log}}
}

// Routes registers the routes. The actuator health endpoints are mounted
// by the module with the rest of the health registry.
func (a *API) Routes(mux *httpx.Mux) {
	h := a.a.H
	mux.Handle("GET "+Base+"/environment/snapshot", h(a.snapshot))
	mux.Handle("GET "+Base+"/actuator/info", h(a.info))

	mux.Handle("POST "+Base+"/auth/login", h(a.login))
	mux.Handle("POST "+Base+"/auth/refresh", h(a.refresh))
	mux.Handle("POST "+Base+"/auth/logout", a.authed("", a.logout))
	mux.Handle("POST "+Base+"/auth/first-login", h(a.firstLogin))

	mux.Handle("GET "+Base+"/api/me", a.authed("", a.me))
	mux.Handle("GET "+Base+"/api/product-class-groups", a.authed("", a.cachedGroups))

	mux.Handle("GET "+Base+"/api/admin/users", a.authed(RoleAdmin, a.listUsers))
	mux.Handle("POST "+Base+"/api/admin/users", a.authed(RoleAdmin, a.createUser))
	mux.Handle("GET "+Base+"/api/admin/users/{id}", a.authed(RoleAdmin, a.getUser))
	mux.Handle("POST "+Base+"/api/admin/users/{id}/reset-password", a.authed(RoleAdmin, a.resetPassword))
	mux.Handle("POST "+Base+"/api/admin/users/{id}/deletion/request", a.authed(RoleAdmin, a.requestDeletion))
	mux.Handle("POST "+Base+"/api/admin/users/{id}/deletion/confirm", a.authed(RoleAdmin, a.confirmDeletion))
	mux.Handle("GET "+Base+"/api/admin/audit-events", a.authed(RoleAdmin, a.listAudit))
	mux.Handle("GET "+Base+"/api/admin/product-class-groups", a.authed(RoleAdmin, a.listGroups))
	mux.Handle("PUT "+Base+"/api/admin/product-class-groups/{name}", a.authed(RoleAdmin, a.putGroup))
	mux.Handle("DELETE "+Base+"/api/admin/product-class-groups/{name}", a.authed(RoleAdmin, a.deleteGroup))

	httpx.ServeOpenAPI(mux.ServeMux, Base+"/v3/api-docs", Base+"/swagger-ui.html", "Configuration service", openapiDoc)
}

type principalKey struct{}

// authed checks the bearer token (and the role, when one is given) before
// h runs. Without a valid, unrevoked token the request never reaches h.
func (a *API) authed(role Role, h httpx.Handler) http.Handler {
	return a.a.H(func(w http.ResponseWriter, r *http.Request) error {
		token, ok := bearer(r)
		if !ok {
			return errTokenMissing
		}
		p, err := a.s.Authenticate(r.Context(), token)
		if err != nil {
			return err
		}
		if role != "" && p.Role != role {
			return apperr.New(apperr.ErrForbidden, "FORBIDDEN", "this endpoint needs the %s role", role)
		}
		p.ClientIP, p.Request = clientIP(r), httpx.RequestIDFrom(r.Context())
		return h(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

func bearer(r *http.Request) (string, bool) {
	v := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

func principal(r *http.Request) Principal {
	p, _ := r.Context().Value(principalKey{}).(Principal)
	return p
}

// anonymous is the audit identity of an unauthenticated request.
func anonymous(r *http.Request) Principal {
	return Principal{ClientIP: clientIP(r), Request: httpx.RequestIDFrom(r.Context())}
}

// clientIP is the socket peer: forwarded headers are not trusted here.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func decode(r *http.Request, v any) error {
	return httpx.DecodeJSON(r, v, httpx.DecodeOptions{MaxBytes: maxBody, DisallowUnknownFields: true})
}

func pathID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		return 0, apperr.Invalid("INVALID_ID", "user id must be a positive integer")
	}
	return id, nil
}

// Snapshot is the public environment snapshot.
type Snapshot struct {
	Version       string `json:"version"`
	Build         string `json:"build"`
	MailAvailable bool   `json:"mailAvailable"`
}

func (a *API) snapshot(w http.ResponseWriter, _ *http.Request) error {
	bi := buildinfo.Get()
	return httpx.WriteJSON(w, http.StatusOK, Snapshot{Version: bi.Version, Build: bi.Commit, MailAvailable: a.s.mail.Online()})
}

func (a *API) info(w http.ResponseWriter, _ *http.Request) error {
	bi := buildinfo.Get()
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{
		"app":   map[string]any{"name": "configs-service", "version": bi.Version},
		"build": map[string]any{"version": bi.Version, "commit": bi.Commit, "time": bi.BuildTime, "go": bi.GoVersion},
		"mail":  map[string]any{"mode": a.s.mail.Mode()},
	})
}

type loginBody struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

func (a *API) login(w http.ResponseWriter, r *http.Request) error {
	var in loginBody
	if err := decode(r, &in); err != nil {
		return err
	}
	pair, err := a.s.Login(r.Context(), in.Username, in.Password, anonymous(r))
	if err != nil {
		return withRetryAfter(w, err)
	}
	a.setRefreshCookie(w, pair.RefreshToken, a.s.jwt.RefreshTTL())
	return httpx.WriteJSON(w, http.StatusOK, pair)
}

// withRetryAfter sets Retry-After on a refused login (429, 503) and
// returns err.
func withRetryAfter(w http.ResponseWriter, err error) error {
	if n, ok := retryAfter(err); ok {
		w.Header().Set("Retry-After", strconv.Itoa(n))
	}
	return err
}

type refreshBody struct {
	RefreshToken string `json:"refreshToken"`
}

func (a *API) refresh(w http.ResponseWriter, r *http.Request) error {
	var in refreshBody
	if r.ContentLength != 0 {
		if err := decode(r, &in); err != nil {
			return err
		}
	}
	if in.RefreshToken == "" {
		if c, err := r.Cookie(refreshCookie); err == nil {
			in.RefreshToken = c.Value
		}
	}
	pair, err := a.s.Refresh(r.Context(), in.RefreshToken, anonymous(r))
	if err != nil {
		if apperr.Status(err) == http.StatusUnauthorized {
			a.setRefreshCookie(w, "", -1)
		}
		return err
	}
	a.setRefreshCookie(w, pair.RefreshToken, a.s.jwt.RefreshTTL())
	return httpx.WriteJSON(w, http.StatusOK, pair)
}

func (a *API) logout(w http.ResponseWriter, r *http.Request) error {
	if err := a.s.Logout(r.Context(), principal(r)); err != nil {
		return err
	}
	a.setRefreshCookie(w, "", -1)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *API) firstLogin(w http.ResponseWriter, r *http.Request) error {
	var in FirstLoginInput
	if err := decode(r, &in); err != nil {
		return err
	}
	pair, err := a.s.FirstLogin(r.Context(), in, anonymous(r))
	if err != nil {
		return withRetryAfter(w, err)
	}
	a.setRefreshCookie(w, pair.RefreshToken, a.s.jwt.RefreshTTL())
	return httpx.WriteJSON(w, http.StatusOK, pair)
}

// setRefreshCookie sets (or with maxAge < 0 clears) the refresh cookie:
// HttpOnly so scripts cannot read it, SameSite=Strict, scoped to the auth
// endpoints, Secure and Domain from COOKIE_SECURE and COOKIE_DOMAIN.
func (a *API) setRefreshCookie(w http.ResponseWriter, value string, maxAge time.Duration) {
	c := &http.Cookie{
		Name: refreshCookie, Value: value, Path: Base + "/auth", Domain: a.s.cfg.CookieDomain,
		HttpOnly: true, Secure: a.s.cfg.CookieSecure, SameSite: http.SameSiteStrictMode,
	}
	if maxAge < 0 {
		c.MaxAge = -1
	} else {
		c.MaxAge = int(maxAge / time.Second)
	}
	http.SetCookie(w, c)
}

func (a *API) me(w http.ResponseWriter, r *http.Request) error {
	u, err := a.s.st.userByID(r.Context(), principal(r).UserID)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, viewOf(u))
}

// maxPageSize caps page sizes of the list endpoints.
const maxPageSize = 500

func paging(r *http.Request) (page, size int, err error) {
	q := r.URL.Query()
	page, size = 0, 20
	if v := q.Get("page"); v != "" {
		if page, err = strconv.Atoi(v); err != nil || page < 0 || page > 1_000_000 {
			return 0, 0, apperr.Invalid("INVALID_PAGE", "page must be an integer from 0")
		}
	}
	if v := q.Get("size"); v != "" {
		if size, err = strconv.Atoi(v); err != nil || size < 1 || size > maxPageSize {
			return 0, 0, apperr.Invalid("INVALID_PAGE", "size must be an integer from 1 to %d", maxPageSize)
		}
	}
	return page, size, nil
}

func (a *API) listUsers(w http.ResponseWriter, r *http.Request) error {
	page, size, err := paging(r)
	if err != nil {
		return err
	}
	list, total, err := a.s.st.listUsers(r.Context(), page*size, size)
	if err != nil {
		return err
	}
	views := make([]UserView, 0, len(list))
	for _, u := range list {
		views = append(views, viewOf(u))
	}
	return httpx.WriteJSON(w, http.StatusOK, newPage(views, page, size, total))
}

func (a *API) getUser(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	u, err := a.s.st.userByID(r.Context(), id)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, viewOf(u))
}

func (a *API) createUser(w http.ResponseWriter, r *http.Request) error {
	var in UserInput
	if err := decode(r, &in); err != nil {
		return err
	}
	res, err := a.s.CreateUser(r.Context(), principal(r), in)
	if err != nil {
		return err
	}
	w.Header().Set("Location", Base+"/api/admin/users/"+strconv.FormatInt(res.ID, 10))
	return httpx.WriteJSON(w, http.StatusCreated, res)
}

func (a *API) resetPassword(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	res, err := a.s.ResetPassword(r.Context(), principal(r), id)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, res)
}

func (a *API) requestDeletion(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	res, err := a.s.RequestDeletion(r.Context(), principal(r), id)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, res)
}

func (a *API) confirmDeletion(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	var in DeletionConfirm
	// The offline path is a call without token: an empty body is fine.
	if r.ContentLength != 0 {
		if err := decode(r, &in); err != nil {
			return err
		}
	}
	if err := a.s.ConfirmDeletion(r.Context(), principal(r), id, in); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *API) listAudit(w http.ResponseWriter, r *http.Request) error {
	page, size, err := paging(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := AuditFilter{Actor: q.Get("actor"), Action: q.Get("action")}
	for _, p := range []struct {
		name string
		t    *time.Time
	}{{"from", &f.From}, {"to", &f.To}} {
		if v := q.Get(p.name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return apperr.Invalid("INVALID_TIME", "%s must be an RFC 3339 time such as 2026-11-21T03:00:00Z", p.name)
			}
			*p.t = t
		}
	}
	res, err := a.s.ListAudit(r.Context(), f, page, size)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, res)
}

func (a *API) listGroups(w http.ResponseWriter, r *http.Request) error {
	list, err := a.s.st.listGroups(r.Context())
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, list)
}

func (a *API) cachedGroups(w http.ResponseWriter, r *http.Request) error {
	list, err := a.s.link.cachedGroups(r.Context())
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, list)
}

func (a *API) putGroup(w http.ResponseWriter, r *http.Request) error {
	var in GroupInput
	if err := decode(r, &in); err != nil {
		return err
	}
	g, created, err := a.s.PutGroup(r.Context(), principal(r), r.PathValue("name"), in)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return httpx.WriteJSON(w, status, g)
}

func (a *API) deleteGroup(w http.ResponseWriter, r *http.Request) error {
	if err := a.s.DeleteGroup(r.Context(), principal(r), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// ErrorBody is the service's error shape, modelled on the Spring Boot
// error attributes its clients know, plus the machine code.
type ErrorBody struct {
	Timestamp string `json:"timestamp"`
	Status    int    `json:"status"`
	Error     string `json:"error"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	Path      string `json:"path"`
	Details   any    `json:"details,omitempty"`
}

// ErrorWriter returns the writer of the service's error bodies, for the
// middleware outside the routes (panics, CORS).
func ErrorWriter() httpx.ErrorWriter { return writeError }

func writeError(w http.ResponseWriter, r *http.Request, status int, err error) {
	pub := apperr.Public(err)
	body := ErrorBody{
		Timestamp: time.Now().UTC().Format(timeLayout), Status: status, Error: http.StatusText(status),
		Code: pub.Code, Message: pub.Message, Path: r.URL.Path, Details: pub.Details,
	}
	if status >= 500 && status != http.StatusServiceUnavailable {
		body.Message, body.Details = "the service could not complete the request; the request id names it in the service log", nil
	}
	if body.Message == "" {
		body.Message = http.StatusText(status)
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="configs-service"`)
	}
	_ = httpx.WriteJSON(w, status, body)
}
