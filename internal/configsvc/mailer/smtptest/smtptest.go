// Package smtptest runs an in-process SMTP server for tests of code that
// sends mail. It records every accepted message already decoded (RFC 2047
// subject, quoted-printable text and HTML parts), so tests assert on what a
// reader would see rather than on transfer encodings.
package smtptest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"cpesuite/internal/testutil"
)

// Options shape the server.
type Options struct {
	// Username and Password, when Username is set, make AUTH PLAIN mandatory
	// and reject other credentials with 535. With Username blank any
	// credentials are accepted and AUTH is optional.
	Username, Password string
	// TLS offers STARTTLS with a self-signed certificate for 127.0.0.1; AUTH
	// is then only offered after STARTTLS, as real submission servers do.
	TLS bool
	// RejectRcpt refuses every recipient with 550.
	RejectRcpt bool
	// NoAuth offers no AUTH extension at all.
	NoAuth bool
	// ImplicitTLS speaks TLS from the first byte (smtps) with the same
	// self-signed certificate; STARTTLS is then not offered.
	ImplicitTLS bool
}

// Message is one accepted message.
type Message struct {
	From          string
	To            []string
	Data          []byte // raw message as received
	Header        mail.Header
	Subject       string // decoded
	Text, HTML    string // decoded parts
	Authenticated string // username used in AUTH, "" without AUTH
	TLS           bool   // whether the session ran over TLS
}

// Server is a running test server.
type Server struct {
	opts  Options
	srv   *smtp.Server
	ln    net.Listener
	roots *x509.CertPool
	conns atomic.Int64

	mu      sync.Mutex
	msgs    []Message
	changed chan struct{} // closed and replaced on every new message
}

// Start runs a server on 127.0.0.1 with a random port; it is closed when the
// test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{opts: opts, changed: make(chan struct{})}
	s.srv = smtp.NewServer(smtp.BackendFunc(s.newSession))
	s.srv.Domain = "smtptest.local"
	s.srv.ReadTimeout = 30 * time.Second
	s.srv.WriteTimeout = 30 * time.Second
	s.srv.MaxMessageBytes = 1 << 20
	s.srv.MaxRecipients = 10
	// Disconnects by clients under test (time-outs, refusals) are expected;
	// logging them through t would race with the test's end.
	s.srv.ErrorLog = log.New(io.Discard, "", 0)
	s.srv.AllowInsecureAuth = !opts.TLS && !opts.ImplicitTLS
	var tlsCfg *tls.Config
	if opts.TLS || opts.ImplicitTLS {
		cert, roots, err := selfSigned()
		if err != nil {
			t.Fatalf("smtptest: certificate: %v", err)
		}
		s.roots = roots
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	if opts.TLS && !opts.ImplicitTLS {
		s.srv.TLSConfig = tlsCfg
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("smtptest: listen: %v", err)
	}
	s.ln = ln
	var serveLn net.Listener = &countingListener{Listener: ln, n: &s.conns}
	if opts.ImplicitTLS {
		serveLn = tls.NewListener(serveLn, tlsCfg)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.srv.Serve(serveLn)
	}()
	t.Cleanup(func() {
		_ = s.srv.Close()
		_ = ln.Close()
		<-done
	})
	return s
}

// Host is the listening IP address.
func (s *Server) Host() string { return s.ln.Addr().(*net.TCPAddr).IP.String() }

// Port is the listening port.
func (s *Server) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// Addr is host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// RootCAs trusts the server's self-signed certificate; nil without TLS or
// ImplicitTLS.
func (s *Server) RootCAs() *x509.CertPool { return s.roots }

// Connections is the number of TCP connections accepted so far; tests of
// offline paths use it to show that no connection was even attempted.
func (s *Server) Connections() int { return int(s.conns.Load()) }

// Messages returns a snapshot of the accepted messages.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// WaitMessages waits until at least n messages have been accepted and
// returns them all, failing the test after testutil.MinDeadline: a safety
// net against a hang, sized for a busy machine.
func (s *Server) WaitMessages(t testing.TB, n int) []Message {
	t.Helper()
	timer := time.NewTimer(testutil.MinDeadline)
	defer timer.Stop()
	for {
		s.mu.Lock()
		msgs, changed := append([]Message(nil), s.msgs...), s.changed
		s.mu.Unlock()
		if len(msgs) >= n {
			return msgs
		}
		select {
		case <-changed:
		case <-timer.C:
			t.Fatalf("smtptest: waited %s for %d messages, got %d", testutil.MinDeadline, n, len(msgs))
			return nil
		}
	}
}

func (s *Server) record(m Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs = append(s.msgs, m)
	close(s.changed)
	s.changed = make(chan struct{})
}

type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

var errAuthRequired = &smtp.SMTPError{
	Code:         530,
	EnhancedCode: smtp.EnhancedCode{5, 7, 0},
	Message:      "Authentication required",
}

type session struct {
	s    *Server
	conn *smtp.Conn
	user string
	from string
	to   []string
}

var _ smtp.AuthSession = (*session)(nil)

func (s *Server) newSession(c *smtp.Conn) (smtp.Session, error) {
	return &session{s: s, conn: c}, nil
}

func (se *session) AuthMechanisms() []string {
	if se.s.opts.NoAuth {
		return nil
	}
	return []string{sasl.Plain}
}

func (se *session) Auth(mech string) (sasl.Server, error) {
	if se.s.opts.NoAuth || mech != sasl.Plain {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if identity != "" && identity != username {
			return smtp.ErrAuthFailed
		}
		if se.s.opts.Username != "" &&
			(username != se.s.opts.Username || password != se.s.opts.Password) {
			return smtp.ErrAuthFailed
		}
		se.user = username
		return nil
	}), nil
}

func (se *session) Mail(from string, _ *smtp.MailOptions) error {
	if se.s.opts.Username != "" && se.user == "" {
		return errAuthRequired
	}
	se.from = from
	return nil
}

func (se *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if se.s.opts.RejectRcpt {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "Recipient rejected"}
	}
	se.to = append(se.to, to)
	return nil
}

func (se *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m := Message{
		From:          se.from,
		To:            append([]string(nil), se.to...),
		Data:          raw,
		Authenticated: se.user,
	}
	_, m.TLS = se.conn.TLSConnectionState()
	if err := decode(&m); err != nil {
		// A message the test cannot read is a bug in the sender; refusing it
		// makes the sender's test fail at the send.
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: "undecodable message: " + err.Error()}
	}
	se.s.record(m)
	return nil
}

func (se *session) Reset() { se.from, se.to = "", nil }

func (se *session) Logout() error { return nil }

// decode fills Header, Subject, Text and HTML from Data.
func decode(m *Message) error {
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		return fmt.Errorf("header: %w", err)
	}
	m.Header = msg.Header
	dec := mime.WordDecoder{}
	if m.Subject, err = dec.DecodeHeader(msg.Header.Get("Subject")); err != nil {
		return fmt.Errorf("subject: %w", err)
	}
	ctype := msg.Header.Get("Content-Type")
	if ctype == "" {
		ctype = "text/plain"
	}
	media, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		return fmt.Errorf("content-type: %w", err)
	}
	if !strings.HasPrefix(media, "multipart/") {
		body, err := decodeBody(msg.Body, msg.Header.Get("Content-Transfer-Encoding"))
		if err != nil {
			return err
		}
		m.setPart(media, body)
		return nil
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		// NextPart removes quoted-printable transparently.
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("multipart: %w", err)
		}
		pmedia, _, err := mime.ParseMediaType(p.Header.Get("Content-Type"))
		if err != nil {
			return fmt.Errorf("part content-type: %w", err)
		}
		body, err := io.ReadAll(p)
		if err != nil {
			return fmt.Errorf("part body: %w", err)
		}
		m.setPart(pmedia, string(body))
	}
}

func decodeBody(r io.Reader, cte string) (string, error) {
	if strings.EqualFold(strings.TrimSpace(cte), "quoted-printable") {
		r = quotedprintable.NewReader(r)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return "", fmt.Errorf("body: %w", err)
	}
	return string(b), nil
}

func (m *Message) setPart(media, body string) {
	switch media {
	case "text/plain":
		m.Text = body
	case "text/html":
		m.HTML = body
	}
}

// selfSigned makes a certificate valid for 127.0.0.1 and localhost, and a
// pool that trusts it, so clients verify the chain instead of skipping
// verification.
func selfSigned() (tls.Certificate, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "smtptest"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool, nil
}
