package smtptest

import (
	"crypto/tls"
	"errors"
	"strings"
	"testing"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

const plainMessage = "From: a@example.org\r\nTo: b@example.org\r\nSubject: =?utf-8?q?Gr=C3=BC=C3=9Fe?=\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nGr=C3=BC=C3=9Fe\r\n"

func TestCredentialsAreEnforced(t *testing.T) {
	srv := Start(t, Options{Username: "u", Password: "p", TLS: true})
	tests := []struct {
		name     string
		auth     sasl.Client // nil: no AUTH
		wantCode int         // 0: delivered
	}{
		{"no auth", nil, 530},
		{"wrong password", sasl.NewPlainClient("", "u", "nope"), 535},
		{"wrong user", sasl.NewPlainClient("", "x", "p"), 535},
		{"right credentials", sasl.NewPlainClient("", "u", "p"), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := smtp.DialStartTLS(srv.Addr(), &tls.Config{RootCAs: srv.RootCAs()})
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			defer c.Close()
			err = sendWith(c, tt.auth)
			var se *smtp.SMTPError
			switch {
			case tt.wantCode == 0 && err != nil:
				t.Fatalf("send: %v", err)
			case tt.wantCode != 0 && (!errors.As(err, &se) || se.Code != tt.wantCode):
				t.Fatalf("send = %v, want SMTP %d", err, tt.wantCode)
			}
		})
	}
	got := srv.WaitMessages(t, 1)
	if len(got) != 1 || got[0].Authenticated != "u" || !got[0].TLS {
		t.Fatalf("messages = %+v", got)
	}
	if got[0].Subject != "Grüße" || got[0].Text != "Grüße\r\n" {
		t.Errorf("decoded subject %q, text %q", got[0].Subject, got[0].Text)
	}
}

func TestAuthNeedsTLSWhenTLSIsOffered(t *testing.T) {
	srv := Start(t, Options{Username: "u", Password: "p", TLS: true})
	c, err := smtp.Dial(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ok, _ := c.Extension("AUTH"); ok {
		t.Error("AUTH offered before STARTTLS")
	}
	if ok, _ := c.Extension("STARTTLS"); !ok {
		t.Error("STARTTLS not offered")
	}
}

func TestRejectRcpt(t *testing.T) {
	srv := Start(t, Options{RejectRcpt: true})
	c, err := smtp.Dial(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var se *smtp.SMTPError
	if err := sendWith(c, nil); !errors.As(err, &se) || se.Code != 550 {
		t.Fatalf("send = %v, want SMTP 550", err)
	}
	if n := len(srv.Messages()); n != 0 {
		t.Fatalf("%d messages recorded", n)
	}
	if srv.Connections() != 1 || srv.RootCAs() != nil {
		t.Errorf("connections = %d, roots = %v", srv.Connections(), srv.RootCAs())
	}
}

func sendWith(c *smtp.Client, auth sasl.Client) error {
	if auth != nil {
		if err := c.Auth(auth); err != nil {
			return err
		}
	}
	return c.SendMail("a@example.org", []string{"b@example.org"}, strings.NewReader(plainMessage))
}
