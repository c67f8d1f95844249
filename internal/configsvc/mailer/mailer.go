package mailer

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Timeout is the fixed connect, read and write time-out of every SMTP
// operation (spec: 5000 ms).
const Timeout = 5 * time.Second

// Configured MAIL_MODE values.
const (
	ModeAuto    = "AUTO"
	ModeOffline = "OFFLINE"
)

// Resolved delivery modes, as Mode reports them.
const (
	ResolvedOnline  = "online"
	ResolvedOffline = "offline"
)

// Supported MAIL_PROTOCOL values.
const (
	ProtocolSMTP  = "smtp"  // plain SMTP, upgraded with STARTTLS when Config.StartTLS
	ProtocolSMTPS = "smtps" // TLS from the first byte
)

// ErrOffline is returned by Send when mail is offline; the caller takes the
// offline path (secret returned in the response, deletion without OTP).
var ErrOffline = errors.New("mail is offline")

// ErrInvalidMessage wraps the reasons a message cannot be rendered or
// addressed (unknown kind, missing secret, bad recipient); retrying with the
// same message cannot succeed.
var ErrInvalidMessage = errors.New("invalid mail message")

// Config is the MAIL_* settings.
type Config struct {
	Mode     string // raw MAIL_MODE value
	Host     string // MAIL_HOST
	Port     int    // MAIL_PORT (default 587 is applied by the caller; 0 still means 587, or 465 for smtps)
	Username string // MAIL_USERNAME
	Password string // MAIL_PASSWORD (secret: never logged, never in an error)
	// Protocol is MAIL_PROTOCOL: "smtp" (STARTTLS or plain) or "smtps"
	// (implicit TLS); case-insensitive, blank means smtp.
	Protocol string
	Auth     bool // MAIL_SMTP_AUTH
	// StartTLS is MAIL_SMTP_STARTTLS. When true STARTTLS is required: Send
	// refuses to go on if the server does not offer it, so credentials and
	// secrets never travel in clear. When false with smtp the session stays
	// plain even if the server offers STARTTLS, as the setting asks.
	StartTLS bool
	From     string // MAIL_FROM address (plain address, e.g. no-reply@cpesuite.local)
	// LoginURL is MAIL_LOGIN_URL: an http/https URL becomes a button in the
	// HTML part and the URL in the text part; anything else (blank, other
	// scheme, unparsable) is replaced by a localised text hint.
	LoginURL string
	// TLS is optional; nil means system roots with ServerName = Host.
	TLS *tls.Config
}

// ResolveMode normalises MAIL_MODE: "AUTO" or "OFFLINE", case-insensitive,
// surrounding blanks ignored. valid is false for blank or unknown values; mode
// is then AUTO, which the specification prescribes as the fallback.
func ResolveMode(raw string) (mode string, valid bool) {
	switch strings.ToUpper(strings.TrimSpace(raw)) {
	case ModeAuto:
		return ModeAuto, true
	case ModeOffline:
		return ModeOffline, true
	default:
		return ModeAuto, false
	}
}

// Mailer renders and sends the service's e-mail. It is safe for concurrent
// use: every Send opens its own SMTP connection.
type Mailer struct {
	cfg        Config
	log        *slog.Logger
	configured string // AUTO or OFFLINE
	online     bool
	loginURL   string // validated http(s) URL or ""
	// timeout bounds every dial, read and write; a field rather than the
	// constant so tests can shorten the "server never answers" case.
	timeout time.Duration
}

// New resolves the mode once. AUTO resolves to online only when Host,
// Username and Password are all non-blank; OFFLINE never sends. It logs a
// warning for a blank or unknown MAIL_MODE and one info line with the
// configured and resolved modes (and, when AUTO ends offline, which settings
// are blank). A nil log discards the lines.
func New(cfg Config, log *slog.Logger) *Mailer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	mode, valid := ResolveMode(cfg.Mode)
	if !valid {
		log.Warn(fmt.Sprintf("MAIL_MODE %q is blank or unknown, falling back to AUTO", cfg.Mode),
			"value", cfg.Mode)
	}
	m := &Mailer{
		cfg:        cfg,
		log:        log,
		configured: mode,
		loginURL:   validLoginURL(cfg.LoginURL),
		timeout:    Timeout,
	}

	var blank []string
	for _, s := range []struct{ name, value string }{
		{"host", cfg.Host}, {"username", cfg.Username}, {"password", cfg.Password},
	} {
		if strings.TrimSpace(s.value) == "" {
			blank = append(blank, s.name)
		}
	}
	m.online = mode == ModeAuto && len(blank) == 0

	attrs := []any{"configured", mode, "resolved", m.Mode()}
	switch {
	case m.online:
		attrs = append(attrs, "host", cfg.Host, "port", cfg.Port,
			"protocol", m.protocol(), "starttls", cfg.StartTLS, "auth", cfg.Auth)
	case mode == ModeAuto:
		attrs = append(attrs, "blank", strings.Join(blank, ","))
	}
	log.Info("mail delivery mode resolved", attrs...)
	if m.online && !validProtocol(m.protocol()) {
		log.Warn(fmt.Sprintf("MAIL_PROTOCOL %q is not smtp or smtps, every send will fail", cfg.Protocol))
	}
	if m.online && cfg.Auth && !cfg.StartTLS && m.protocol() == ProtocolSMTP {
		log.Warn("MAIL_SMTP_AUTH is on without STARTTLS or smtps: credentials travel in clear")
	}
	return m
}

// Online reports whether mail is resolved online (a configuration check,
// no live probe); the environment snapshot publishes it as mailAvailable.
func (m *Mailer) Online() bool { return m.online }

// Mode returns "online" or "offline".
func (m *Mailer) Mode() string {
	if m.online {
		return ResolvedOnline
	}
	return ResolvedOffline
}

// ConfiguredMode returns the normalised MAIL_MODE, AUTO or OFFLINE.
func (m *Mailer) ConfiguredMode() string { return m.configured }

// Send renders msg and delivers it over SMTP. It returns ErrOffline, without
// any network I/O, when mail is offline. Every other failure (bad message,
// dial, TLS, auth, rejected recipient, time-out, ctx done) is returned
// wrapped and free of the password; the caller then falls back to the
// offline behaviour for that operation.
func (m *Mailer) Send(ctx context.Context, msg Message) error {
	if !m.online {
		return ErrOffline
	}
	to, err := parseRecipient(msg.To)
	if err != nil {
		return err
	}
	from, err := parseSender(m.cfg.From)
	if err != nil {
		return err
	}
	lang := langFor(msg.Locale)
	subject, text, html, err := m.render(lang, msg)
	if err != nil {
		return err
	}
	data, err := buildMIME(lang.brand(), from, to, subject, text, html, time.Now())
	if err != nil {
		return fmt.Errorf("building mail: %w", err)
	}
	if err := m.deliver(ctx, from.Address, to.Address, data); err != nil {
		err = m.redact(err)
		m.log.Warn("mail delivery failed, the operation falls back to offline behaviour",
			"kind", msg.Kind.String(), "host", m.cfg.Host, "port", m.cfg.Port, "error", err.Error())
		return err
	}
	return nil
}

func (m *Mailer) protocol() string {
	p := strings.ToLower(strings.TrimSpace(m.cfg.Protocol))
	if p == "" {
		return ProtocolSMTP
	}
	return p
}

func validProtocol(p string) bool { return p == ProtocolSMTP || p == ProtocolSMTPS }

// redact makes sure the password cannot leak through an error text, even if
// a server or library echoes it back.
func (m *Mailer) redact(err error) error {
	if m.cfg.Password == "" || !strings.Contains(err.Error(), m.cfg.Password) {
		return err
	}
	return &redactedError{err: err, secret: m.cfg.Password}
}

type redactedError struct {
	err    error
	secret string
}

func (e *redactedError) Error() string {
	return strings.ReplaceAll(e.err.Error(), e.secret, "[redacted]")
}

func (e *redactedError) Unwrap() error { return e.err }
