package mailer

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"strings"
	"time"
)

// parseRecipient validates Message.To. CR and LF are refused before parsing
// because a recipient comes from user data and would otherwise be a way to
// smuggle headers or SMTP commands.
func parseRecipient(raw string) (*mail.Address, error) {
	if strings.ContainsAny(raw, "\r\n") {
		return nil, fmt.Errorf("%w: recipient contains a line break", ErrInvalidMessage)
	}
	a, err := mail.ParseAddress(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: recipient: %v", ErrInvalidMessage, err)
	}
	return a, nil
}

// parseSender validates MAIL_FROM; only the address is kept because the
// display name comes from the catalogue.
func parseSender(raw string) (*mail.Address, error) {
	if strings.ContainsAny(raw, "\r\n") {
		return nil, fmt.Errorf("MAIL_FROM contains a line break")
	}
	a, err := mail.ParseAddress(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("MAIL_FROM %q: %w", raw, err)
	}
	return &mail.Address{Address: a.Address}, nil
}

// buildMIME assembles a multipart/alternative message. Every header value
// goes through an encoder (mail.Address, RFC 2047), so user data cannot add
// headers; both bodies are quoted-printable so long lines and UTF-8 survive
// any relay.
func buildMIME(brand string, from, to *mail.Address, subject, text, html string, now time.Time) ([]byte, error) {
	msgID, err := messageID(from.Address)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)

	sender := mail.Address{Name: brand, Address: from.Address}
	header := func(k, v string) { b.WriteString(k + ": " + v + "\r\n") }
	header("From", sender.String())
	header("To", to.String())
	header("Subject", mime.QEncoding.Encode("utf-8", subject))
	header("Date", now.Format(time.RFC1123Z))
	header("Message-ID", msgID)
	header("MIME-Version", "1.0")
	// Mail that only carries secrets should not trigger vacation replies.
	header("Auto-Submitted", "auto-generated")
	header("Content-Type", mime.FormatMediaType("multipart/alternative", map[string]string{"boundary": mw.Boundary()}))
	b.WriteString("\r\n")

	// Plain text first: clients show the last alternative they understand.
	for _, p := range []struct{ ctype, body string }{
		{"text/plain; charset=utf-8", text},
		{"text/html; charset=utf-8", html},
	} {
		w, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {p.ctype},
			"Content-Transfer-Encoding": {"quoted-printable"},
		})
		if err != nil {
			return nil, err
		}
		qp := quotedprintable.NewWriter(w)
		if _, err := qp.Write([]byte(p.body)); err != nil {
			return nil, err
		}
		if err := qp.Close(); err != nil {
			return nil, err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// messageID is random so that two mails with the same content are still
// distinct, and uses the sender's domain as RFC 5322 recommends.
func messageID(from string) (string, error) {
	var r [16]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", fmt.Errorf("message id: %w", err)
	}
	domain := "localhost"
	if _, d, ok := strings.Cut(from, "@"); ok && d != "" {
		domain = d
	}
	return "<" + hex.EncodeToString(r[:]) + "@" + domain + ">", nil
}
