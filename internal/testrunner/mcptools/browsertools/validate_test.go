package browsertools

import (
	"strings"
	"testing"

	"cpesuite/internal/platform/apperr"
)

func TestCheckURL(t *testing.T) {
	tests := []struct {
		in       string
		want     string // normalised URL when accepted
		wantCode string // error code when refused
	}{
		{in: "http://127.0.0.1:8084/prov-portal/", want: "http://127.0.0.1:8084/prov-portal/"},
		{in: "HTTPS://example.test/a?b=c#d", want: "https://example.test/a?b=c#d"},
		{in: "http://user:pw@device.local/", want: "http://user:pw@device.local/"},
		{in: "", wantCode: "INVALID_URL"},
		{in: " http://x/", wantCode: "INVALID_URL"},
		{in: "/relative/path", wantCode: "INVALID_URL"},
		{in: "//example.test/", wantCode: "INVALID_URL"},
		{in: "http:///nohost", wantCode: "INVALID_URL"},
		{in: "http://[::1", wantCode: "INVALID_URL"},
		{in: "http://" + strings.Repeat("a", maxURLLen), wantCode: "INVALID_URL"},
		{in: "file:///etc/passwd", wantCode: "URL_SCHEME_REFUSED"},
		{in: "chrome://version", wantCode: "URL_SCHEME_REFUSED"},
		{in: "chrome-extension://abc/x.html", wantCode: "URL_SCHEME_REFUSED"},
		{in: "data:text/html,<script>alert(1)</script>", wantCode: "URL_SCHEME_REFUSED"},
		{in: "javascript:alert(1)", wantCode: "URL_SCHEME_REFUSED"},
		{in: "JavaScript:alert(1)", wantCode: "URL_SCHEME_REFUSED"},
		{in: "view-source:http://x/", wantCode: "URL_SCHEME_REFUSED"},
		{in: "about:blank", wantCode: "URL_SCHEME_REFUSED"},
		{in: "ftp://x/", wantCode: "URL_SCHEME_REFUSED"},
		{in: "blob:http://x/1", wantCode: "URL_SCHEME_REFUSED"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := checkURL(tt.in)
			if tt.wantCode == "" {
				if err != nil || got != tt.want {
					t.Fatalf("checkURL(%q) = %q, %v; want %q, nil", tt.in, got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("checkURL(%q) = %q, nil; want error %s", tt.in, got, tt.wantCode)
			}
			if code := apperr.Code(err); code != tt.wantCode {
				t.Fatalf("checkURL(%q) code = %s (%v), want %s", tt.in, code, err, tt.wantCode)
			}
		})
	}
}

func TestCheckSelector(t *testing.T) {
	tests := []struct {
		sel      string
		required bool
		ok       bool
	}{
		{"#go", true, true},
		{"form input[name=user]", true, true},
		{"", false, true},
		{"", true, false},
		{"   ", true, false},
		{strings.Repeat("a", maxSelectorLen+1), true, false},
		{"a\x00b", true, false},
		{"\xff", true, false},
	}
	for _, tt := range tests {
		err := checkSelector(tt.sel, tt.required)
		if (err == nil) != tt.ok {
			t.Errorf("checkSelector(%q, %v) = %v, want ok=%v", tt.sel, tt.required, err, tt.ok)
		}
		if err != nil && apperr.Code(err) != "INVALID_SELECTOR" {
			t.Errorf("checkSelector(%q) code = %s, want INVALID_SELECTOR", tt.sel, apperr.Code(err))
		}
	}
}

func TestTruncateText(t *testing.T) {
	tests := []struct {
		in      string
		max     int
		want    string
		wantCut bool
	}{
		{"hello", 10, "hello", false},
		{"hello", 5, "hello", false},
		{"hello", 3, "hel", true},
		{"aé", 2, "a", true}, // é is two bytes: never cut inside a rune
		{"日本", 4, "日", true},
	}
	for _, tt := range tests {
		got, cut := truncateText(tt.in, tt.max)
		if got != tt.want || cut != tt.wantCut {
			t.Errorf("truncateText(%q, %d) = %q, %v; want %q, %v", tt.in, tt.max, got, cut, tt.want, tt.wantCut)
		}
	}
}

func TestConfigDefaultsAndValidation(t *testing.T) {
	c := Config{}.withDefaults()
	if c.ChromiumPath != "/usr/bin/chromium" || c.Timeout != DefaultTimeout || c.MaxSessions != 4 || c.IdleTimeout != DefaultIdleTimeout || c.Log == nil {
		t.Fatalf("defaults = %+v", c)
	}
	for _, bad := range []Config{{Timeout: -1}, {MaxSessions: -1}, {IdleTimeout: -1}} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%+v) accepted a negative value", bad)
		}
	}
}

func TestTailBufferKeepsTheEnd(t *testing.T) {
	b := &tailBuffer{max: 8}
	for _, w := range []string{"abc", "defgh", "ijk"} {
		if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	if got := b.tail(100); got != "defghijk" {
		t.Fatalf("tail(100) = %q, want the last 8 bytes", got)
	}
	if got := b.tail(3); got != "ijk" {
		t.Fatalf("tail(3) = %q", got)
	}
}
