package portainer

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"cpesuite/internal/platform/apperr"
)

// DefaultTimeout bounds one request to Portainer when Config.Timeout is 0.
const DefaultTimeout = 15 * time.Second

// ErrNotConfigured is returned by New when no Portainer is configured. It is
// of kind apperr.ErrUnavailable, so handlers answer 503 as the spec asks for
// operations that need the container-management tool.
var ErrNotConfigured error = apperr.New(apperr.ErrUnavailable, "", "container management (Portainer) is not configured")

// Config says how to reach Portainer. The zero value means "not configured".
type Config struct {
	// URL is Portainer's base URL, for example https://portainer:9443. A
	// path prefix is kept, for a Portainer behind a reverse proxy.
	URL string
	// Username and Password authenticate through /api/auth. The password
	// is never logged and never part of an error.
	Username string
	Password string
	// APIKey is a Portainer access token sent as X-API-Key, an alternative
	// to Username and Password.
	APIKey string
	// EndpointID is the Portainer environment to work in; 0 means the first
	// one GET /api/endpoints returns.
	EndpointID int
	// Timeout bounds each request; 0 means DefaultTimeout.
	Timeout time.Duration
	// InsecureTLS accepts any certificate, which Portainer's default
	// self-signed one needs. It also accepts an attacker's certificate, who
	// could then read the credentials and the stack definitions (with their
	// secrets) on the way: use it only on a network you trust, and prefer
	// giving Portainer a certificate the host trusts.
	InsecureTLS bool
}

// Configured reports whether a Portainer is configured: a URL and a way to
// authenticate.
func (c Config) Configured() bool {
	return c.URL != "" && (c.APIKey != "" || (c.Username != "" && c.Password != ""))
}

// Validate checks the configuration. An entirely empty Config is valid: it
// means container management is off. A partial one (a URL without
// credentials, credentials without a URL) is an error, so that a typo shows
// at start-up rather than as a 503 later.
func (c Config) Validate() error {
	if c.URL == "" && c.Username == "" && c.Password == "" && c.APIKey == "" {
		return nil
	}
	var errs []error
	if c.URL == "" {
		errs = append(errs, errors.New("URL is required when credentials are set"))
	} else if err := validateURL(c.URL); err != nil {
		errs = append(errs, err)
	}
	userPass := c.Username != "" || c.Password != ""
	switch {
	case c.APIKey != "" && userPass:
		errs = append(errs, errors.New("set either APIKey or Username and Password, not both"))
	case c.APIKey == "" && !userPass:
		errs = append(errs, errors.New("APIKey or Username and Password are required"))
	case userPass && (c.Username == "" || c.Password == ""):
		errs = append(errs, errors.New("set Username and Password together"))
	}
	if c.EndpointID < 0 {
		errs = append(errs, fmt.Errorf("EndpointID must not be negative, got %d", c.EndpointID))
	}
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("a negative Timeout (%s) is not allowed", c.Timeout))
	}
	if len(errs) > 0 {
		return fmt.Errorf("portainer config: %w", errors.Join(errs...))
	}
	return nil
}

// validateURL accepts an absolute http(s) URL without credentials, query or
// fragment. Credentials in the URL would end up in transport errors, which
// quote it.
func validateURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("URL is not a valid URL")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("URL must start with http:// or https://, got scheme %q", u.Scheme)
	case u.Host == "":
		return errors.New("URL must name a host")
	case u.User != nil:
		return errors.New("URL must not carry credentials; use Username and Password or APIKey")
	case u.RawQuery != "" || u.Fragment != "":
		return errors.New("URL must not have a query or a fragment")
	}
	return nil
}

// httpClient builds the HTTP client for cfg. Redirects are not followed: a
// redirected POST turns into a GET, and the X-API-Key header would be sent
// on to wherever the redirect points.
func (c Config) httpClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if c.InsecureTLS {
		// Opt-in only; the risk is spelled out on Config.InsecureTLS.
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}
	}
	timeout := c.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
