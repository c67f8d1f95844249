package mailer

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"net/mail"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"cpesuite/internal/configsvc/mailer/smtptest"
	"cpesuite/internal/testutil"
)

const (
	smtpUser = "mailer@cpesuite.local"
	smtpPass = "Sm7p-Pa55-w0rd!"
	fromAddr = "no-reply@cpesuite.local"
)

// logBuffer collects log output; the mutex makes reads safe while a send
// may still be logging.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newLogger() (*slog.Logger, *logBuffer) {
	buf := &logBuffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

// onlineConfig points a Mailer at srv with STARTTLS and AUTH, the default
// production shape.
func onlineConfig(srv *smtptest.Server) Config {
	return Config{
		Mode:     "AUTO",
		Host:     srv.Host(),
		Port:     srv.Port(),
		Username: smtpUser,
		Password: smtpPass,
		Protocol: "smtp",
		Auth:     true,
		StartTLS: true,
		From:     fromAddr,
		TLS:      &tls.Config{RootCAs: srv.RootCAs()},
	}
}

func TestResolveMode(t *testing.T) {
	tests := []struct {
		raw       string
		wantMode  string
		wantValid bool
	}{
		{"AUTO", ModeAuto, true},
		{"auto", ModeAuto, true},
		{"Auto", ModeAuto, true},
		{"OFFLINE", ModeOffline, true},
		{" Offline ", ModeOffline, true},
		{"\toffline\n", ModeOffline, true},
		{"", ModeAuto, false},
		{"   ", ModeAuto, false},
		{"bogus", ModeAuto, false},
		{"ONLINE", ModeAuto, false},
		{"OFF LINE", ModeAuto, false},
	}
	for _, tt := range tests {
		mode, valid := ResolveMode(tt.raw)
		if mode != tt.wantMode || valid != tt.wantValid {
			t.Errorf("ResolveMode(%q) = %q, %v; want %q, %v", tt.raw, mode, valid, tt.wantMode, tt.wantValid)
		}
	}
}

func TestNewResolvesMode(t *testing.T) {
	full := Config{Host: "smtp.example.org", Port: 587, Username: smtpUser, Password: smtpPass, From: fromAddr}
	with := func(mode string, edit func(*Config)) Config {
		c := full
		c.Mode = mode
		if edit != nil {
			edit(&c)
		}
		return c
	}
	tests := []struct {
		name       string
		cfg        Config
		wantOnline bool
		wantWarn   string   // substring of a WARN line; "" means no warning about the mode
		wantLog    []string // substrings of the output
	}{
		{name: "auto all set", cfg: with("AUTO", nil), wantOnline: true,
			wantLog: []string{"configured=AUTO", "resolved=online", "host=smtp.example.org"}},
		{name: "auto lower case", cfg: with("auto", nil), wantOnline: true,
			wantLog: []string{"resolved=online"}},
		{name: "auto blank host", cfg: with("AUTO", func(c *Config) { c.Host = " " }),
			wantLog: []string{"resolved=offline", "blank=host"}},
		{name: "auto blank username", cfg: with("AUTO", func(c *Config) { c.Username = "" }),
			wantLog: []string{"resolved=offline", "blank=username"}},
		{name: "auto blank password", cfg: with("AUTO", func(c *Config) { c.Password = "" }),
			wantLog: []string{"resolved=offline", "blank=password"}},
		{name: "auto all blank", cfg: Config{Mode: "AUTO"},
			wantLog: []string{"resolved=offline", "blank=host,username,password"}},
		{name: "offline all set", cfg: with(" offline ", nil),
			wantLog: []string{"configured=OFFLINE", "resolved=offline"}},
		{name: "blank mode falls back to auto", cfg: with("", nil), wantOnline: true,
			wantWarn: `MAIL_MODE \"\" is blank or unknown, falling back to AUTO`,
			wantLog:  []string{"configured=AUTO", "resolved=online"}},
		{name: "unknown mode falls back to auto", cfg: with("bogus", nil), wantOnline: true,
			wantWarn: `MAIL_MODE \"bogus\" is blank or unknown, falling back to AUTO`,
			wantLog:  []string{"configured=AUTO"}},
		{name: "unknown mode and blank password", cfg: with("NEVER", func(c *Config) { c.Password = "" }),
			wantWarn: `MAIL_MODE \"NEVER\"`,
			wantLog:  []string{"resolved=offline", "blank=password"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, buf := newLogger()
			m := New(tt.cfg, log)
			if m.Online() != tt.wantOnline {
				t.Fatalf("Online() = %v, want %v", m.Online(), tt.wantOnline)
			}
			wantMode := ResolvedOffline
			if tt.wantOnline {
				wantMode = ResolvedOnline
			}
			if m.Mode() != wantMode {
				t.Fatalf("Mode() = %q, want %q", m.Mode(), wantMode)
			}
			out := buf.String()
			warned := false
			for line := range strings.Lines(out) {
				if strings.Contains(line, "level=WARN") && strings.Contains(line, "MAIL_MODE") {
					warned = true
					if tt.wantWarn == "" || !strings.Contains(line, tt.wantWarn) {
						t.Errorf("unexpected or wrong MAIL_MODE warning %q (want %q)", line, tt.wantWarn)
					}
				}
			}
			if tt.wantWarn != "" && !warned {
				t.Errorf("no MAIL_MODE warning in log:\n%s", out)
			}
			if n := strings.Count(out, "mail delivery mode resolved"); n != 1 {
				t.Errorf("want exactly one resolution line, got %d:\n%s", n, out)
			}
			for _, s := range tt.wantLog {
				if !strings.Contains(out, s) {
					t.Errorf("log lacks %q:\n%s", s, out)
				}
			}
			if strings.Contains(out, smtpPass) {
				t.Errorf("log contains the password:\n%s", out)
			}
		})
	}
}

func TestNewNilLogger(t *testing.T) {
	m := New(Config{Mode: "bogus"}, nil)
	if m.Online() {
		t.Fatal("blank settings resolved online")
	}
}

func TestSendOnline(t *testing.T) {
	const rcpt = "alice@example.org"
	tests := []struct {
		name         string
		locale       string
		loginURL     string
		username     string
		reset        bool
		wantSubject  string
		wantText     []string
		wantHTML     []string
		notWantHTML  []string
		notWantText  []string
		wantHTMLLang string
	}{
		{
			name: "english account created with login url", locale: "", loginURL: "https://portal.example.org/login?from=mail&x=1",
			username: "alice", wantSubject: "Your cpesuite account has been created",
			wantText:     []string{"Temporary password: " + "Tmp-Secret-42", "Sign in at https://portal.example.org/login?from=mail&x=1", "An account has been created"},
			wantHTML:     []string{`href="https://portal.example.org/login?from=mail&amp;x=1"`, ">Sign in</a>", "Tmp-Secret-42"},
			notWantText:  []string{"sign-in page"},
			wantHTMLLang: `lang="en"`,
		},
		{
			name: "russian password reset", locale: "ru_RU", loginURL: "http://portal.example.org/",
			username: "boris", reset: true, wantSubject: "Ваш пароль cpesuite сброшен",
			wantText:     []string{"Временный пароль: Tmp-Secret-42", "Войти: http://portal.example.org/", "сброшен"},
			wantHTML:     []string{`href="http://portal.example.org/"`, ">Войти</a>", "Tmp-Secret-42", "Здравствуйте, boris!"},
			wantHTMLLang: `lang="ru"`,
		},
		{
			name: "html escapes the username", locale: "en-GB", loginURL: "https://portal.example.org/",
			username: `<script>alert("x")</script>`, wantSubject: "Your cpesuite account has been created",
			wantText:    []string{`Hello <script>alert("x")</script>,`},
			wantHTML:    []string{"&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;"},
			notWantHTML: []string{"<script>"},
		},
		{
			name: "blank login url shows the hint", locale: "EN", loginURL: "",
			username: "carol", reset: true, wantSubject: "Your cpesuite password has been reset",
			wantText:    []string{"Sign in on the cpesuite sign-in page with this password."},
			wantHTML:    []string{"Sign in on the cpesuite sign-in page with this password."},
			notWantHTML: []string{"href="},
			notWantText: []string{"Sign in at"},
		},
		{
			name: "ftp login url shows the hint", locale: "RU", loginURL: "ftp://x",
			username: "dmitry", wantSubject: "Ваша учётная запись cpesuite создана",
			wantText:    []string{"Войдите с этим паролем на странице входа cpesuite."},
			wantHTML:    []string{"Войдите с этим паролем на странице входа cpesuite."},
			notWantHTML: []string{"href=", "ftp://"},
			notWantText: []string{"ftp://"},
		},
		{
			name: "unparsable login url shows the hint", locale: "ru-RU", loginURL: "https://%zz",
			username: "eva", wantSubject: "Ваша учётная запись cpesuite создана",
			wantText:    []string{"Войдите с этим паролем"},
			notWantHTML: []string{"href="},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := smtptest.Start(t, smtptest.Options{Username: smtpUser, Password: smtpPass, TLS: true})
			cfg := onlineConfig(srv)
			cfg.LoginURL = tt.loginURL
			log, logs := newLogger()
			m := newMailer(cfg, log)
			err := m.Send(context.Background(), Message{
				Kind: KindTemporaryPassword, To: rcpt, Locale: tt.locale,
				Username: tt.username, Password: "Tmp-Secret-42", Reset: tt.reset,
			})
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			srv.WaitMessages(t, 1)
			msgs := srv.Messages()
			if len(msgs) != 1 {
				t.Fatalf("server received %d messages, want 1", len(msgs))
			}
			got := msgs[0]
			if len(got.To) != 1 || got.To[0] != rcpt {
				t.Errorf("RCPT = %v, want [%s]", got.To, rcpt)
			}
			if got.From != fromAddr {
				t.Errorf("MAIL FROM = %q, want %q", got.From, fromAddr)
			}
			if !got.TLS || got.Authenticated != smtpUser {
				t.Errorf("TLS = %v, authenticated as %q; want STARTTLS and %q", got.TLS, got.Authenticated, smtpUser)
			}
			from, err := mail.ParseAddress(got.Header.Get("From"))
			if err != nil {
				t.Fatalf("From header %q: %v", got.Header.Get("From"), err)
			}
			if from.Name != "cpesuite" || from.Address != fromAddr {
				t.Errorf("From = %q <%s>, want the catalogue's brand.name and %s", from.Name, from.Address, fromAddr)
			}
			if got.Header.Get("From") != `"cpesuite" <`+fromAddr+`>` {
				t.Errorf("From header = %q", got.Header.Get("From"))
			}
			if to := got.Header.Get("To"); to != "<"+rcpt+">" {
				t.Errorf("To header = %q", to)
			}
			if got.Subject != tt.wantSubject {
				t.Errorf("Subject = %q, want %q", got.Subject, tt.wantSubject)
			}
			if !strings.Contains(got.Text, "Tmp-Secret-42") || !strings.Contains(got.HTML, "Tmp-Secret-42") {
				t.Errorf("temporary password missing from a part:\ntext: %s\nhtml: %s", got.Text, got.HTML)
			}
			for _, s := range tt.wantText {
				if !strings.Contains(got.Text, s) {
					t.Errorf("text lacks %q:\n%s", s, got.Text)
				}
			}
			for _, s := range tt.notWantText {
				if strings.Contains(got.Text, s) {
					t.Errorf("text contains %q:\n%s", s, got.Text)
				}
			}
			for _, s := range tt.wantHTML {
				if !strings.Contains(got.HTML, s) {
					t.Errorf("html lacks %q:\n%s", s, got.HTML)
				}
			}
			for _, s := range tt.notWantHTML {
				if strings.Contains(got.HTML, s) {
					t.Errorf("html contains %q:\n%s", s, got.HTML)
				}
			}
			if tt.wantHTMLLang != "" && !strings.Contains(got.HTML, tt.wantHTMLLang) {
				t.Errorf("html lacks %s", tt.wantHTMLLang)
			}
			checkHeaders(t, got)
			if strings.Contains(logs.String(), smtpPass) {
				t.Errorf("log contains the SMTP password")
			}
		})
	}
}

func checkHeaders(t *testing.T, got smtptest.Message) {
	t.Helper()
	if v := got.Header.Get("MIME-Version"); v != "1.0" {
		t.Errorf("MIME-Version = %q", v)
	}
	if ct := got.Header.Get("Content-Type"); !strings.HasPrefix(ct, "multipart/alternative;") {
		t.Errorf("Content-Type = %q", ct)
	}
	if id := got.Header.Get("Message-ID"); !strings.HasPrefix(id, "<") || !strings.HasSuffix(id, "@cpesuite.local>") {
		t.Errorf("Message-ID = %q, want <random@cpesuite.local>", id)
	}
	if _, err := got.Header.Date(); err != nil {
		t.Errorf("Date: %v", err)
	}
	raw := string(got.Data)
	for _, want := range []string{
		"Content-Type: text/plain; charset=utf-8",
		"Content-Type: text/html; charset=utf-8",
		"Content-Transfer-Encoding: quoted-printable",
	} {
		if !strings.Contains(raw, want) {
			t.Errorf("raw message lacks %q", want)
		}
	}
	if !isASCII(raw) {
		t.Errorf("raw message is not 7-bit: quoted-printable or RFC 2047 encoding is missing")
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func TestSendRussianSubjectIsEncoded(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{Username: smtpUser, Password: smtpPass, TLS: true})
	m := newMailer(onlineConfig(srv), nil)
	if err := m.Send(context.Background(), Message{
		Kind: KindTemporaryPassword, To: "Борис <boris@example.org>", Locale: "ru",
		Username: "boris", Password: "pw-1",
	}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := srv.WaitMessages(t, 1)[0]
	if raw := got.Header.Get("Subject"); !strings.HasPrefix(raw, "=?utf-8?q?") {
		t.Errorf("raw Subject %q is not RFC 2047 encoded", raw)
	}
	if got.Subject != "Ваша учётная запись cpesuite создана" {
		t.Errorf("decoded Subject = %q", got.Subject)
	}
	to, err := mail.ParseAddress(got.Header.Get("To"))
	if err != nil || to.Name != "Борис" || to.Address != "boris@example.org" {
		t.Errorf("To header %q parsed as %v, %v", got.Header.Get("To"), to, err)
	}
	checkHeaders(t, got)
}

func TestSendDeletionOTP(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{Username: smtpUser, Password: smtpPass, TLS: true})
	m := newMailer(onlineConfig(srv), nil)
	expires := time.Date(2030, 4, 5, 6, 7, 0, 0, time.UTC)
	if err := m.Send(context.Background(), Message{
		Kind: KindDeletionOTP, To: "admin@example.org", Locale: "ru-RU",
		TargetUsername: "victim", OTP: "482913", ExpiresAt: expires, AttemptLimit: 3,
	}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := srv.WaitMessages(t, 1)[0]
	if got.Subject != "cpesuite: подтверждение удаления учётной записи" {
		t.Errorf("Subject = %q", got.Subject)
	}
	for _, part := range []string{got.Text, got.HTML} {
		for _, want := range []string{"482913", "05.04.2030 06:07 UTC", "не более 3", "victim"} {
			if !strings.Contains(part, want) {
				t.Errorf("part lacks %q:\n%s", want, part)
			}
		}
	}
}

func TestSendImplicitTLS(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{Username: smtpUser, Password: smtpPass, ImplicitTLS: true})
	cfg := onlineConfig(srv)
	cfg.Protocol = "SMTPS"
	cfg.StartTLS = false
	m := newMailer(cfg, nil)
	if err := m.Send(context.Background(), Message{Kind: KindTemporaryPassword, To: "a@example.org", Username: "a", Password: "pw"}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := srv.WaitMessages(t, 1)[0]
	if !got.TLS || got.Authenticated != smtpUser {
		t.Errorf("TLS = %v, authenticated as %q", got.TLS, got.Authenticated)
	}
}

func TestSendPlainWithoutAuth(t *testing.T) {
	// MAIL_SMTP_AUTH=false and MAIL_SMTP_STARTTLS=false: an internal relay.
	srv := smtptest.Start(t, smtptest.Options{})
	cfg := onlineConfig(srv)
	cfg.Auth, cfg.StartTLS, cfg.TLS = false, false, nil
	m := newMailer(cfg, nil)
	if err := m.Send(context.Background(), Message{Kind: KindTemporaryPassword, To: "a@example.org", Username: "a", Password: "pw"}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := srv.WaitMessages(t, 1)[0]
	if got.TLS || got.Authenticated != "" {
		t.Errorf("TLS = %v, authenticated as %q; want neither", got.TLS, got.Authenticated)
	}
}

func TestSendOffline(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{Username: smtpUser, Password: smtpPass, TLS: true})
	tests := []struct {
		name string
		edit func(*Config)
	}{
		{"offline mode with everything set", func(c *Config) { c.Mode = "OFFLINE" }},
		{"auto with blank password", func(c *Config) { c.Password = "" }},
		{"auto with blank host", func(c *Config) { c.Host = "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := onlineConfig(srv)
			tt.edit(&cfg)
			m := New(cfg, nil)
			// Even an invalid message reports ErrOffline: the caller only
			// needs to know it must take the offline path.
			for _, msg := range []Message{
				{Kind: KindTemporaryPassword, To: "a@example.org", Username: "a", Password: "pw"},
				{Kind: KindDeletionOTP, To: "bad\r\naddress"},
			} {
				if err := m.Send(context.Background(), msg); !errors.Is(err, ErrOffline) {
					t.Fatalf("Send = %v, want ErrOffline", err)
				}
			}
		})
	}
	if n := srv.Connections(); n != 0 {
		t.Errorf("server accepted %d connections while mail was offline", n)
	}
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("server received %d messages while mail was offline", n)
	}
}

// silentListener accepts TCP connections and never writes, like a host
// whose SMTP daemon hangs.
// newMailer is New with the SMTP step time-out raised to a safety net. The
// specification's 5 s per step is the subject only of the tests that set
// m.timeout themselves; elsewhere a busy machine must not turn a slow TLS
// handshake with the local test server into a failure.
func newMailer(cfg Config, log *slog.Logger) *Mailer {
	m := New(cfg, log)
	m.timeout = testutil.MinDeadline
	return m
}

func silentListener(t *testing.T) *net.TCPAddr {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		done  = make(chan struct{})
	)
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().(*net.TCPAddr)
}

func TestSendFailures(t *testing.T) {
	valid := Message{Kind: KindTemporaryPassword, To: "alice@example.org", Username: "alice", Password: "Tmp-Secret-42"}
	hostPort := func(t *testing.T, addr string) (string, int) {
		t.Helper()
		a, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		return a.IP.String(), a.Port
	}
	tests := []struct {
		name   string
		opts   *smtptest.Options // nil: no smtptest server
		setup  func(t *testing.T, m *Mailer)
		msg    *Message
		ctx    func(t *testing.T) context.Context
		wantIs error
		check  func(t *testing.T, err error)
	}{
		{
			name: "unreachable server",
			setup: func(t *testing.T, m *Mailer) {
				m.cfg.Host, m.cfg.Port = hostPort(t, testutil.FreeAddr(t))
			},
			check: func(t *testing.T, err error) {
				var ne *net.OpError
				if !errors.As(err, &ne) || ne.Op != "dial" {
					t.Errorf("want a dial error, got %v", err)
				}
			},
		},
		{
			name: "wrong password",
			opts: &smtptest.Options{Username: smtpUser, Password: "the-right-one", TLS: true},
			check: func(t *testing.T, err error) {
				var se *smtp.SMTPError
				if !errors.As(err, &se) || se.Code != 535 {
					t.Errorf("want a 535 SMTP error, got %v", err)
				}
			},
		},
		{
			name: "starttls required but not offered",
			opts: &smtptest.Options{Username: smtpUser, Password: smtpPass},
			setup: func(t *testing.T, m *Mailer) {
				m.cfg.StartTLS = true
			},
			wantIs: ErrStartTLSUnavailable,
		},
		{
			name:   "auth required but not offered",
			opts:   &smtptest.Options{TLS: true, NoAuth: true},
			wantIs: ErrAuthUnavailable,
		},
		{
			name: "recipient rejected",
			opts: &smtptest.Options{Username: smtpUser, Password: smtpPass, TLS: true, RejectRcpt: true},
			check: func(t *testing.T, err error) {
				var se *smtp.SMTPError
				if !errors.As(err, &se) || se.Code != 550 {
					t.Errorf("want a 550 SMTP error, got %v", err)
				}
			},
		},
		{
			name: "untrusted certificate",
			opts: &smtptest.Options{Username: smtpUser, Password: smtpPass, TLS: true},
			setup: func(t *testing.T, m *Mailer) {
				m.cfg.TLS = &tls.Config{RootCAs: nil, ServerName: "127.0.0.1"}
			},
			check: func(t *testing.T, err error) {
				var ue x509.UnknownAuthorityError
				if !errors.As(err, &ue) {
					t.Errorf("want a certificate verification error, got %v", err)
				}
			},
		},
		{
			name: "server accepts tcp but never answers",
			setup: func(t *testing.T, m *Mailer) {
				a := silentListener(t)
				m.cfg.Host, m.cfg.Port = a.IP.String(), a.Port
				m.timeout = 150 * time.Millisecond
			},
			wantIs: os.ErrDeadlineExceeded,
		},
		{
			name: "context deadline before the server answers",
			setup: func(t *testing.T, m *Mailer) {
				a := silentListener(t)
				m.cfg.Host, m.cfg.Port = a.IP.String(), a.Port
			},
			ctx: func(t *testing.T) context.Context {
				ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
				t.Cleanup(cancel)
				return ctx
			},
			wantIs: context.DeadlineExceeded,
		},
		{
			name:   "line feed in recipient",
			opts:   &smtptest.Options{Username: smtpUser, Password: smtpPass, TLS: true},
			msg:    &Message{Kind: KindTemporaryPassword, To: "alice@example.org\nBcc: eve@example.org", Username: "a", Password: "p"},
			wantIs: ErrInvalidMessage,
		},
		{
			name:   "carriage return in recipient",
			opts:   &smtptest.Options{Username: smtpUser, Password: smtpPass, TLS: true},
			msg:    &Message{Kind: KindTemporaryPassword, To: "alice@example.org\r", Username: "a", Password: "p"},
			wantIs: ErrInvalidMessage,
		},
		{
			name:   "unparsable recipient",
			opts:   &smtptest.Options{Username: smtpUser, Password: smtpPass, TLS: true},
			msg:    &Message{Kind: KindTemporaryPassword, To: "not an address", Username: "a", Password: "p"},
			wantIs: ErrInvalidMessage,
		},
		{
			name:   "unknown kind",
			opts:   &smtptest.Options{Username: smtpUser, Password: smtpPass, TLS: true},
			msg:    &Message{Kind: 99, To: "alice@example.org"},
			wantIs: ErrInvalidMessage,
		},
		{
			name: "unknown protocol",
			opts: &smtptest.Options{Username: smtpUser, Password: smtpPass, TLS: true},
			setup: func(t *testing.T, m *Mailer) {
				m.cfg.Protocol = "lmtp"
			},
			check: func(t *testing.T, err error) {
				if !strings.Contains(err.Error(), "MAIL_PROTOCOL") {
					t.Errorf("want a MAIL_PROTOCOL error, got %v", err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var srv *smtptest.Server
			cfg := Config{Mode: "AUTO", Host: "127.0.0.1", Port: 1, Username: smtpUser, Password: smtpPass,
				Protocol: "smtp", Auth: true, StartTLS: true, From: fromAddr}
			if tt.opts != nil {
				srv = smtptest.Start(t, *tt.opts)
				cfg = onlineConfig(srv)
				if !tt.opts.TLS {
					cfg.StartTLS = false
				}
			}
			log, logs := newLogger()
			m := newMailer(cfg, log)
			if tt.setup != nil {
				tt.setup(t, m)
			}
			msg := valid
			if tt.msg != nil {
				msg = *tt.msg
			}
			ctx := context.Background()
			if tt.ctx != nil {
				ctx = tt.ctx(t)
			}
			// A send that never returns is the failure a silent server
			// provokes; the wait below only catches that hang. That the
			// time-out (not something else) ended the send is held by wantIs.
			sent := make(chan error, 1)
			go func() { sent <- m.Send(ctx, msg) }()
			var err error
			select {
			case err = <-sent:
			case <-time.After(testutil.MinDeadline):
				t.Fatalf("Send still blocked after %s: no time-out ended it", testutil.MinDeadline)
			}
			if err == nil {
				t.Fatal("Send succeeded, want an error")
			}
			if errors.Is(err, ErrOffline) {
				t.Fatalf("Send = %v; a failed online send must not look like offline mode", err)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("Send = %v, want errors.Is %v", err, tt.wantIs)
			}
			if tt.check != nil {
				tt.check(t, err)
			}
			if strings.Contains(err.Error(), m.cfg.Password) {
				t.Errorf("error text contains the password: %v", err)
			}
			if strings.Contains(logs.String(), m.cfg.Password) {
				t.Errorf("log contains the password:\n%s", logs.String())
			}
			if srv != nil {
				if n := len(srv.Messages()); n != 0 {
					t.Errorf("server received %d messages, want none", n)
				}
			}
		})
	}
}

func TestRedactedError(t *testing.T) {
	m := New(Config{Password: "hunter2"}, nil)
	base := errors.New("server said: bad password hunter2")
	err := m.redact(base)
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("redacted error still has the password: %v", err)
	}
	if !errors.Is(err, base) {
		t.Errorf("redaction broke the error chain")
	}
	if other := errors.New("unrelated"); m.redact(other) != other {
		t.Errorf("an error without the password should pass through unchanged")
	}
}

func TestSendConcurrent(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{Username: smtpUser, Password: smtpPass, TLS: true})
	m := newMailer(onlineConfig(srv), nil)
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		go func() {
			errs <- m.Send(context.Background(), Message{
				Kind: KindTemporaryPassword, To: "user@example.org",
				Username: "u", Password: "pw-" + string(rune('a'+i)),
			})
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("Send: %v", err)
		}
	}
	if got := len(srv.WaitMessages(t, n)); got != n {
		t.Errorf("server received %d messages, want %d", got, n)
	}
}
