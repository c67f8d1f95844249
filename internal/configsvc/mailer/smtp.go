package mailer

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// ErrStartTLSUnavailable is returned when MAIL_SMTP_STARTTLS is on and the
// server does not offer STARTTLS: sending anyway would expose the
// credentials and the secret in the message.
var ErrStartTLSUnavailable = errors.New("smtp server does not offer STARTTLS")

// ErrAuthUnavailable is returned when MAIL_SMTP_AUTH is on and the server
// offers no AUTH mechanism (typically before TLS).
var ErrAuthUnavailable = errors.New("smtp server offers no AUTH")

// helloName is what we say in EHLO. go-smtp always greets as "localhost"
// before STARTTLS, and relays accept it; using the same name after TLS keeps
// both greetings consistent.
const helloName = "localhost"

func (m *Mailer) deliver(ctx context.Context, from, to string, data []byte) (err error) {
	proto := m.protocol()
	if !validProtocol(proto) {
		return fmt.Errorf("MAIL_PROTOCOL %q is not smtp or smtps", m.cfg.Protocol)
	}
	port := m.cfg.Port
	if port <= 0 {
		port = 587
		if proto == ProtocolSMTPS {
			port = 465
		}
	}
	host := strings.TrimSpace(m.cfg.Host)
	addr := net.JoinHostPort(host, strconv.Itoa(port))

	d := net.Dialer{Timeout: m.timeout}
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", addr, err)
	}
	var conn net.Conn = &deadlineConn{Conn: raw, timeout: m.timeout}
	// Closing the connection is the only way to interrupt a blocked read, so
	// that is how ctx cancellation reaches the SMTP exchange.
	stop := context.AfterFunc(ctx, func() { raw.Close() })
	defer func() {
		stop()
		raw.Close()
		if err != nil && ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
	}()

	tlsCfg := m.tlsConfig(host)
	if proto == ProtocolSMTPS {
		tc := tls.Client(conn, tlsCfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			return fmt.Errorf("tls handshake with %s: %w", addr, err)
		}
		conn = tc
	}

	// NewClientStartTLS greets and negotiates with go-smtp's default command
	// time-out; deadlineConn bounds those reads to m.timeout all the same.
	var c *smtp.Client
	if proto == ProtocolSMTP && m.cfg.StartTLS {
		c, err = smtp.NewClientStartTLS(conn, tlsCfg)
		if err != nil {
			if isStartTLSUnsupported(err) {
				return fmt.Errorf("%s: %w", addr, ErrStartTLSUnavailable)
			}
			return fmt.Errorf("starting tls with %s: %w", addr, err)
		}
	} else {
		c = smtp.NewClient(conn)
	}
	defer c.Close()
	c.CommandTimeout = m.timeout
	c.SubmissionTimeout = m.timeout
	if err := c.Hello(helloName); err != nil {
		return fmt.Errorf("greeting %s: %w", addr, err)
	}

	if m.cfg.Auth {
		if ok, _ := c.Extension("AUTH"); !ok {
			return fmt.Errorf("%s: %w", addr, ErrAuthUnavailable)
		}
		if err := c.Auth(sasl.NewPlainClient("", m.cfg.Username, m.cfg.Password)); err != nil {
			return fmt.Errorf("authenticating as %q: %w", m.cfg.Username, err)
		}
	}
	if err := c.Mail(from, nil); err != nil {
		return fmt.Errorf("mail from: %w", err)
	}
	if err := c.Rcpt(to, nil); err != nil {
		return fmt.Errorf("rcpt to: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("data: %w", err)
	}
	if _, err := w.Write(data); err != nil {
		return fmt.Errorf("writing message: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("submitting message: %w", err)
	}
	// The server has accepted the message; a failed QUIT must not make the
	// caller fall back and hand the secret out a second way.
	_ = c.Quit()
	return nil
}

// isStartTLSUnsupported recognises go-smtp's refusal in NewClientStartTLS,
// which has no sentinel; TestSendStartTLSRequired pins the text for the
// version in go.mod.
func isStartTLSUnsupported(err error) bool {
	var se *smtp.SMTPError
	var ne net.Error
	return !errors.As(err, &se) && !errors.As(err, &ne) &&
		strings.Contains(err.Error(), "support STARTTLS")
}

func (m *Mailer) tlsConfig(host string) *tls.Config {
	var c *tls.Config
	if m.cfg.TLS != nil {
		c = m.cfg.TLS.Clone()
	} else {
		c = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if c.ServerName == "" {
		c.ServerName = host
	}
	return c
}

// deadlineConn gives every Read and Write its own deadline: that is the
// spec's read and write time-out, and it also covers the phases where
// go-smtp clears the connection deadline (between commands, while the DATA
// body is written).
type deadlineConn struct {
	net.Conn
	timeout time.Duration
}

func (c *deadlineConn) Read(b []byte) (int, error) {
	if err := c.Conn.SetReadDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, err
	}
	return c.Conn.Read(b)
}

func (c *deadlineConn) Write(b []byte) (int, error) {
	if err := c.Conn.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}
