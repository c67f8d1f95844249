package mcpclient

import (
	"net/url"
	"regexp"
	"strings"
)

// userinfoInText matches the userinfo of any URL in a text, including the
// user:***@ form net/http prints for a URL with a password.
var userinfoInText = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.\-]*://)[^/?#@\s"'<>]*@`)

// redactor removes one server URL's credentials from the texts it shows.
type redactor struct {
	secrets []string // the password and user name, raw and escaped
}

func newRedactor(raw string) redactor {
	var r redactor
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return r
	}
	add := func(s string) {
		// One- and two-letter values would mangle every message they
		// occur in; the URL pattern still catches them where they matter.
		if len(s) >= 3 {
			r.secrets = append(r.secrets, s)
		}
	}
	if p, ok := u.User.Password(); ok {
		add(p)
		add(url.QueryEscape(p))
		add(url.PathEscape(p))
	}
	add(u.User.Username())
	return r
}

// text returns s without URL userinfo or this server's credentials.
func (r redactor) text(s string) string {
	s = userinfoInText.ReplaceAllString(s, "${1}")
	for _, secret := range r.secrets {
		s = strings.ReplaceAll(s, secret, "***")
	}
	return s
}

// shownURL is raw without userinfo, for status, diag and logs.
func shownURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return userinfoInText.ReplaceAllString(raw, "${1}")
	}
	u.User = nil
	return u.String()
}

// redactedError keeps the cause for errors.Is while showing only the
// scrubbed text.
type redactedError struct {
	msg   string
	cause error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.cause }

func (r redactor) err(err error) error {
	if err == nil {
		return nil
	}
	return &redactedError{msg: r.text(err.Error()), cause: err}
}
