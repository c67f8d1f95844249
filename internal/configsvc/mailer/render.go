package mailer

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	htmltemplate "html/template"
	"net/url"
	"strings"
	texttemplate "text/template"
	"time"
)

// Kind selects the template of a message.
type Kind int

const (
	KindTemporaryPassword Kind = iota + 1 // account created or password reset
	KindDeletionOTP                       // one-time password to confirm an account deletion
)

func (k Kind) String() string {
	switch k {
	case KindTemporaryPassword:
		return "temporary_password"
	case KindDeletionOTP:
		return "deletion_otp"
	default:
		return fmt.Sprintf("kind(%d)", int(k))
	}
}

// Message is one e-mail to render and send.
type Message struct {
	Kind Kind
	// To is the recipient address, validated with net/mail; CR and LF are
	// refused anywhere.
	To string
	// Locale is the recipient user's locale: "ru", "ru-RU", "ru_RU", "RU"
	// select Russian; anything else (blank included) selects English.
	Locale string

	// KindTemporaryPassword
	Username string
	Password string
	Reset    bool // false: account created; true: password reset

	// KindDeletionOTP
	TargetUsername string
	OTP            string
	ExpiresAt      time.Time
	AttemptLimit   int
}

// Catalogue keys. brand.name is the sender display name: MAIL_FROM_NAME no
// longer exists, so branding lives with the other translated strings.
const (
	keyBrandName       = "brand.name"
	keySubjectCreated  = "subject.account_created"
	keySubjectReset    = "subject.password_reset"
	keySubjectDeletion = "subject.deletion_otp"
	keyLoginHint       = "login.hint"
	keyDateTimeLayout  = "format.datetime"
)

var catalogueKeys = []string{
	keyBrandName, keySubjectCreated, keySubjectReset, keySubjectDeletion,
	keyLoginHint, keyDateTimeLayout,
}

//go:embed i18n/*.json templates
var assets embed.FS

// language is one embedded set of catalogue and templates.
type language struct {
	tag      string
	messages map[string]string
	text     *texttemplate.Template
	html     *htmltemplate.Template
}

func (l *language) brand() string { return l.messages[keyBrandName] }

// get returns a catalogue string with {brand} filled in, so a rebrand is one
// key per language.
func (l *language) get(key string) string {
	return strings.ReplaceAll(l.messages[key], "{brand}", l.brand())
}

// The assets are compiled in, so a broken one is a programming error caught
// by the package's tests; failing at init keeps Render free of that case.
var (
	english = mustLoadLanguage("en")
	russian = mustLoadLanguage("ru")
)

func mustLoadLanguage(tag string) *language {
	l, err := loadLanguage(tag)
	if err != nil {
		panic(fmt.Sprintf("mailer: embedded %s assets: %v", tag, err))
	}
	return l
}

func loadLanguage(tag string) (*language, error) {
	raw, err := assets.ReadFile("i18n/messages_" + tag + ".json")
	if err != nil {
		return nil, err
	}
	l := &language{tag: tag}
	if err := json.Unmarshal(raw, &l.messages); err != nil {
		return nil, fmt.Errorf("catalogue: %w", err)
	}
	for _, k := range catalogueKeys {
		if strings.TrimSpace(l.messages[k]) == "" {
			return nil, fmt.Errorf("catalogue: key %q missing", k)
		}
	}
	dir := "templates/" + tag + "/"
	if l.text, err = texttemplate.New("").Option("missingkey=error").ParseFS(assets, dir+"*.txt.tmpl"); err != nil {
		return nil, err
	}
	if l.html, err = htmltemplate.New("").Option("missingkey=error").ParseFS(assets, dir+"*.html.tmpl"); err != nil {
		return nil, err
	}
	return l, nil
}

// langFor maps a user's locale to a template set. Only the primary subtag
// matters: every Russian variant reads the same text.
func langFor(locale string) *language {
	primary, _, _ := strings.Cut(strings.TrimSpace(locale), "-")
	primary, _, _ = strings.Cut(primary, "_")
	if strings.EqualFold(primary, "ru") {
		return russian
	}
	return english
}

// validLoginURL keeps only absolute http(s) URLs: anything else would be a
// dead or dangerous link, so the templates show a text hint instead.
func validLoginURL(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return ""
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return u.String()
	default:
		return ""
	}
}

// templateData is what both templates of a message see.
type templateData struct {
	Brand     string
	LoginURL  string // "" when MAIL_LOGIN_URL is not an http(s) URL
	LoginHint string

	Username string
	Password string
	Reset    bool

	TargetUsername string
	OTP            string
	ExpiresAt      string // formatted with the catalogue's layout
	AttemptLimit   int
}

// Render builds the localised subject, plain text and HTML bodies, so the
// service and tests can check content without SMTP.
func (m *Mailer) Render(msg Message) (subject, text, html string, err error) {
	return m.render(langFor(msg.Locale), msg)
}

func (m *Mailer) render(lang *language, msg Message) (subject, text, html string, err error) {
	data := templateData{
		Brand:     lang.brand(),
		LoginURL:  m.loginURL,
		LoginHint: lang.get(keyLoginHint),
	}
	var name string
	switch msg.Kind {
	case KindTemporaryPassword:
		if msg.Username == "" || msg.Password == "" {
			return "", "", "", fmt.Errorf("%w: temporary password mail needs a username and a password", ErrInvalidMessage)
		}
		name = "temporary_password"
		subject = lang.get(keySubjectCreated)
		if msg.Reset {
			subject = lang.get(keySubjectReset)
		}
		data.Username, data.Password, data.Reset = msg.Username, msg.Password, msg.Reset
	case KindDeletionOTP:
		if msg.TargetUsername == "" || msg.OTP == "" || msg.ExpiresAt.IsZero() || msg.AttemptLimit <= 0 {
			return "", "", "", fmt.Errorf("%w: deletion mail needs a target username, an OTP, an expiry and an attempt limit", ErrInvalidMessage)
		}
		name = "deletion_otp"
		subject = lang.get(keySubjectDeletion)
		data.TargetUsername, data.OTP, data.AttemptLimit = msg.TargetUsername, msg.OTP, msg.AttemptLimit
		data.ExpiresAt = msg.ExpiresAt.Format(lang.messages[keyDateTimeLayout])
	default:
		return "", "", "", fmt.Errorf("%w: unknown kind %d", ErrInvalidMessage, int(msg.Kind))
	}

	var tb, hb bytes.Buffer
	if err := lang.text.ExecuteTemplate(&tb, name+".txt.tmpl", data); err != nil {
		return "", "", "", fmt.Errorf("rendering %s text: %w", name, err)
	}
	if err := lang.html.ExecuteTemplate(&hb, name+".html.tmpl", data); err != nil {
		return "", "", "", fmt.Errorf("rendering %s html: %w", name, err)
	}
	return subject, tb.String(), hb.String(), nil
}
