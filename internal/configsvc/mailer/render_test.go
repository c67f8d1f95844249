package mailer

import (
	"errors"
	"maps"
	"mime"
	"net/mail"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLangFor(t *testing.T) {
	tests := []struct {
		locale string
		want   string
	}{
		{"ru", "ru"}, {"ru-RU", "ru"}, {"ru_RU", "ru"}, {"RU", "ru"}, {" ru ", "ru"}, {"ru-UA", "ru"},
		{"", "en"}, {"en", "en"}, {"en-US", "en"}, {"de_DE", "en"}, {"rus", "en"}, {"uk", "en"}, {"-ru", "en"},
	}
	for _, tt := range tests {
		if got := langFor(tt.locale).tag; got != tt.want {
			t.Errorf("langFor(%q) = %s, want %s", tt.locale, got, tt.want)
		}
	}
}

func TestCataloguesHaveTheSameKeys(t *testing.T) {
	en, ru := slices.Sorted(maps.Keys(english.messages)), slices.Sorted(maps.Keys(russian.messages))
	if !slices.Equal(en, ru) {
		t.Errorf("catalogue keys differ:\nen: %v\nru: %v", en, ru)
	}
	for _, l := range []*language{english, russian} {
		if l.brand() == "" {
			t.Errorf("%s: brand.name is empty", l.tag)
		}
		for _, name := range []string{"temporary_password", "deletion_otp"} {
			if l.text.Lookup(name+".txt.tmpl") == nil || l.html.Lookup(name+".html.tmpl") == nil {
				t.Errorf("%s: template %s missing", l.tag, name)
			}
		}
	}
}

func TestValidLoginURL(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"https://portal.example.org/login", "https://portal.example.org/login"},
		{" http://10.0.0.1:8080/ ", "http://10.0.0.1:8080/"},
		{"HTTPS://portal.example.org", "https://portal.example.org"},
		{"", ""},
		{"ftp://x", ""},
		{"javascript:alert(1)", ""},
		{"portal.example.org/login", ""},
		{"https://", ""},
		{"https://%zz", ""},
		{"mailto:a@example.org", ""},
	}
	for _, tt := range tests {
		if got := validLoginURL(tt.raw); got != tt.want {
			t.Errorf("validLoginURL(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

func TestRenderDeletionOTP(t *testing.T) {
	m := New(Config{LoginURL: "https://portal.example.org/"}, nil)
	expires := time.Date(2030, 4, 5, 6, 7, 0, 0, time.UTC)
	tests := []struct {
		locale      string
		wantSubject string
		want        []string
	}{
		{"en", "cpesuite: confirm the account deletion",
			[]string{"739104", "2030-04-05 06:07 UTC", "at most 5 times", "o&#39;brien"}},
		{"ru_RU", "cpesuite: подтверждение удаления учётной записи",
			[]string{"739104", "05.04.2030 06:07 UTC", "не более 5", "o&#39;brien"}},
	}
	for _, tt := range tests {
		t.Run(tt.locale, func(t *testing.T) {
			subject, text, html, err := m.Render(Message{
				Kind: KindDeletionOTP, Locale: tt.locale,
				TargetUsername: "o'brien", OTP: "739104", ExpiresAt: expires, AttemptLimit: 5,
			})
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if subject != tt.wantSubject {
				t.Errorf("subject = %q, want %q", subject, tt.wantSubject)
			}
			for _, w := range tt.want {
				if !strings.Contains(html, w) {
					t.Errorf("html lacks %q:\n%s", w, html)
				}
				// The text part is not HTML: the username appears verbatim.
				w = strings.ReplaceAll(w, "&#39;", "'")
				if !strings.Contains(text, w) {
					t.Errorf("text lacks %q:\n%s", w, text)
				}
			}
			if strings.Contains(html, "href=") {
				t.Errorf("deletion mail links to the login page; the OTP is entered where the deletion was requested")
			}
		})
	}
}

func TestRenderRejectsIncompleteMessages(t *testing.T) {
	m := New(Config{}, nil)
	valid := time.Now().Add(time.Minute)
	tests := []struct {
		name string
		msg  Message
	}{
		{"zero kind", Message{}},
		{"unknown kind", Message{Kind: 42}},
		{"temporary password without password", Message{Kind: KindTemporaryPassword, Username: "a"}},
		{"temporary password without username", Message{Kind: KindTemporaryPassword, Password: "p"}},
		{"otp without otp", Message{Kind: KindDeletionOTP, TargetUsername: "a", ExpiresAt: valid, AttemptLimit: 3}},
		{"otp without expiry", Message{Kind: KindDeletionOTP, TargetUsername: "a", OTP: "1", AttemptLimit: 3}},
		{"otp without attempt limit", Message{Kind: KindDeletionOTP, TargetUsername: "a", OTP: "1", ExpiresAt: valid}},
		{"otp without target", Message{Kind: KindDeletionOTP, OTP: "1", ExpiresAt: valid, AttemptLimit: 3}},
	}
	for _, tt := range tests {
		if _, _, _, err := m.Render(tt.msg); !errors.Is(err, ErrInvalidMessage) {
			t.Errorf("%s: Render = %v, want ErrInvalidMessage", tt.name, err)
		}
	}
}

func TestBuildMIMEEncodesHeaders(t *testing.T) {
	from := &mail.Address{Address: "no-reply@cpesuite.local"}
	to := &mail.Address{Name: "Eve \"the\" <admin>", Address: "eve@example.org"}
	data, err := buildMIME("Сервис cpesuite", from, to, "Тема\r\nBcc: x@example.org", "text", "<p>html</p>", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	msg, err := mail.ReadMessage(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if got := msg.Header.Get("Bcc"); got != "" {
		t.Errorf("a line break in the subject produced a Bcc header: %q", got)
	}
	if raw := msg.Header.Get("From"); !strings.HasPrefix(raw, "=?utf-8?q?") {
		t.Errorf("non-ASCII display name not RFC 2047 encoded: %q", raw)
	}
	addr, err := (&mail.AddressParser{WordDecoder: &mime.WordDecoder{}}).Parse(msg.Header.Get("From"))
	if err != nil || addr.Name != "Сервис cpesuite" || addr.Address != from.Address {
		t.Errorf("From parsed as %v, %v", addr, err)
	}
	toAddr, err := mail.ParseAddress(msg.Header.Get("To"))
	if err != nil || toAddr.Name != to.Name {
		t.Errorf("To parsed as %v, %v", toAddr, err)
	}
}

func TestParseSender(t *testing.T) {
	for _, raw := range []string{"", "no-reply", "a@b\r\nBcc: c@d"} {
		if _, err := parseSender(raw); err == nil {
			t.Errorf("parseSender(%q) accepted", raw)
		}
	}
	a, err := parseSender("Ignored Name <no-reply@cpesuite.local>")
	if err != nil || a.Name != "" || a.Address != "no-reply@cpesuite.local" {
		t.Errorf("parseSender kept %v, %v; want the bare address", a, err)
	}
}
