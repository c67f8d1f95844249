package browsertools

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"cpesuite/internal/platform/apperr"
)

// Argument limits. They keep one call from tying up the tab: typing is three
// key events per character.
const (
	maxURLLen      = 8 << 10
	maxSelectorLen = 1 << 10
	maxTypeRunes   = 10_000
	maxTextBytes   = 64 << 10 // read_text output
)

// checkURL accepts absolute http and https URLs only: the browser must not
// read local files (file:), its own pages (chrome:), or run code a case
// smuggles in (javascript:, data:).
func checkURL(raw string) (string, error) {
	if raw == "" {
		return "", apperr.Invalid("INVALID_URL", "url is required")
	}
	if len(raw) > maxURLLen {
		return "", apperr.Invalid("INVALID_URL", "url is longer than %d bytes", maxURLLen)
	}
	if strings.TrimSpace(raw) != raw {
		return "", apperr.Invalid("INVALID_URL", "url must not start or end with white space")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// The URL is not echoed: it may carry a password (user:pw@host).
		return "", apperr.Invalid("INVALID_URL", "url is not a valid URL")
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return "", apperr.Invalid("INVALID_URL", "url must be absolute and start with http:// or https://")
	default:
		return "", apperr.Invalid("URL_SCHEME_REFUSED", "url scheme %q is refused; only http and https pages can be opened", u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" {
		return "", apperr.Invalid("INVALID_URL", "url has no host")
	}
	return u.String(), nil
}

// checkSelector validates a CSS selector argument. required is false for
// tools that default to the whole page.
func checkSelector(sel string, required bool) error {
	if strings.TrimSpace(sel) == "" {
		if required {
			return apperr.Invalid("INVALID_SELECTOR", "selector is required (a CSS selector such as #submit or form input[name=user])")
		}
		return nil
	}
	if len(sel) > maxSelectorLen {
		return apperr.Invalid("INVALID_SELECTOR", "selector is longer than %d bytes", maxSelectorLen)
	}
	if !utf8.ValidString(sel) || strings.ContainsRune(sel, 0) {
		return apperr.Invalid("INVALID_SELECTOR", "selector must be valid UTF-8 text without NUL")
	}
	return nil
}

// truncateText cuts s to at most max bytes on a rune boundary.
func truncateText(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}
