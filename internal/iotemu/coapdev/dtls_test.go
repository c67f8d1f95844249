package coapdev

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	piondtls "github.com/pion/dtls/v3"
	"github.com/plgd-dev/go-coap/v3/dtls"
	"github.com/plgd-dev/go-coap/v3/message/pool"
	udpClient "github.com/plgd-dev/go-coap/v3/udp/client"

	"cpesuite/internal/iotemu/proto"
	"cpesuite/internal/testutil"
)

// testPKI is a CA with a server certificate for the device (the key
// store), a client certificate it signed and a self-signed rogue one.
type testPKI struct {
	caPEM     string // CA certificate file (trust store)
	serverPEM string // server chain and key file (key store)
	roots     *x509.CertPool
	client    tls.Certificate
	rogue     tls.Certificate
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	serial := int64(0)
	issue := func(tmpl *x509.Certificate, key *ecdsa.PrivateKey, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, []byte) {
		serial++
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore = time.Now().Add(-time.Hour)
		tmpl.NotAfter = time.Now().Add(time.Hour)
		if parent == nil {
			parent, parentKey = tmpl, key
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
		if err != nil {
			t.Fatal(err)
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		return c, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	}
	keyPEM := func(k *ecdsa.PrivateKey) []byte {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	}
	pair := func(certPEM, kPEM []byte) tls.Certificate {
		c, err := tls.X509KeyPair(certPEM, kPEM)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	caKey := newKey()
	ca, caCert := issue(&x509.Certificate{Subject: pkix.Name{CommonName: "test CA"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}, caKey, nil, nil)
	srvKey := newKey()
	_, srvCert := issue(&x509.Certificate{Subject: pkix.Name{CommonName: "device.local"}, DNSNames: []string{"device.local"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}, srvKey, ca, caKey)
	cliKey := newKey()
	_, cliCert := issue(&x509.Certificate{Subject: pkix.Name{CommonName: "server"}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, cliKey, ca, caKey)
	rogueKey := newKey()
	_, rogueCert := issue(&x509.Certificate{Subject: pkix.Name{CommonName: "rogue"}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, rogueKey, nil, nil)

	p := &testPKI{
		caPEM:     filepath.Join(dir, "ca.pem"),
		serverPEM: filepath.Join(dir, "device.pem"),
		roots:     x509.NewCertPool(),
		client:    pair(cliCert, keyPEM(cliKey)),
		rogue:     pair(rogueCert, keyPEM(rogueKey)),
	}
	p.roots.AddCert(ca)
	if err := os.WriteFile(p.caPEM, caCert, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.serverPEM, append(append(srvCert, caCert...), keyPEM(srvKey)...), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDTLSGoCoap(t *testing.T) {
	pki := newTestPKI(t)
	key := []byte("go-coap-psk")
	psk := proto.Config{SecurityMode: proto.SecurityPSK, PSKID: "gc", PSKKey: hex.EncodeToString(key)}
	x509cfg := proto.Config{SecurityMode: proto.SecurityX509, AuthKeyStorePath: pki.serverPEM}
	x509trust := x509cfg
	x509trust.TrustStorePath = pki.caPEM
	otherRoots := x509.NewCertPool()
	otherRoots.AddCert(pki.rogue.Leaf)

	pskOpts := func(k []byte) []piondtls.ClientOption {
		return []piondtls.ClientOption{
			piondtls.WithPSK(func([]byte) ([]byte, error) { return k, nil }),
			piondtls.WithPSKIdentityHint([]byte("gc")),
			piondtls.WithCipherSuites(piondtls.TLS_PSK_WITH_AES_128_CCM_8),
		}
	}
	x509Opts := func(roots *x509.CertPool, cert *tls.Certificate) []piondtls.ClientOption {
		opts := []piondtls.ClientOption{piondtls.WithRootCAs(roots), piondtls.WithServerName("device.local")}
		if cert != nil {
			// Offered whatever CAs the device asks for, so that the rogue
			// certificate is really presented.
			opts = append(opts, piondtls.WithGetClientCertificate(func(*piondtls.CertificateRequestInfo) (*tls.Certificate, error) {
				return cert, nil
			}))
		}
		return opts
	}
	tests := []struct {
		name   string
		cfg    proto.Config
		client []piondtls.ClientOption
		ok     bool
	}{
		{"psk", psk, pskOpts(key), true},
		{"psk wrong key", psk, pskOpts([]byte("nope")), false},
		{"x509 anonymous client", x509cfg, x509Opts(pki.roots, nil), true},
		{"x509 trust store, anonymous client", x509trust, x509Opts(pki.roots, nil), true},
		{"x509 trust store, trusted client", x509trust, x509Opts(pki.roots, &pki.client), true},
		{"x509 trust store, rogue client", x509trust, x509Opts(pki.roots, &pki.rogue), false},
		{"x509 server not trusted by client", x509cfg, x509Opts(otherRoots, nil), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHost()
			d := startDevice(t, &Protocol{}, tt.cfg, h)
			within := testutil.MinDeadline
			if !tt.ok {
				// A wrong PSK is not answered (DTLS drops records it cannot
				// authenticate), so that case ends by timing out: the short
				// wait is the case, and passing does not depend on speed.
				within = 2 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), within)
			defer cancel()
			c, err := dialDTLS(ctx, d, tt.client)
			var resp *pool.Message
			if err == nil {
				defer c.Close()
				resp, err = c.Get(ctx, "/params/Temperature")
			}
			if !tt.ok {
				if err == nil {
					t.Fatalf("request succeeded: %v", resp)
				}
				return
			}
			if code, body := result(t, resp, err); code != "2.05" || body != "21.5" {
				t.Fatalf("GET = %s %q", code, body)
			}
			if tt.cfg.SecurityMode != proto.SecurityPSK {
				return
			}
			// Observe works over DTLS too.
			var n notes
			obs, err := c.Observe(ctx, "/params/Switch", n.add)
			if err != nil {
				t.Fatal(err)
			}
			testutil.Eventually(t, testutil.MinDeadline, "registration", func() bool { return n.last() == "false" })
			d.Changed("Switch", "true")
			testutil.Eventually(t, testutil.MinDeadline, "notification over DTLS", func() bool { return n.last() == "true" })
			if err := obs.Cancel(ctx); err != nil {
				t.Fatal(err)
			}
			testutil.Eventually(t, testutil.MinDeadline, "deregistration", func() bool { return observers(d) == 0 })
		})
	}
}

// dialDTLS handshakes within ctx before handing the connection to
// go-coap: go-coap's dtls.Dial handshakes lazily, and a handshake the
// device rejects would then block the first request without a deadline.
func dialDTLS(ctx context.Context, d *Device, opts []piondtls.ClientOption) (*udpClient.Conn, error) {
	conn, err := piondtls.DialWithOptions("udp", d.Addr().(*net.UDPAddr), opts...)
	if err != nil {
		return nil, err
	}
	if err := conn.HandshakeContext(ctx); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return dtls.Client(conn), nil
}

func TestX509KeyStoreErrors(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	pki := newTestPKI(t)
	tests := []struct {
		name string
		cfg  proto.Config
	}{
		{"missing key store", proto.Config{SecurityMode: proto.SecurityX509, AuthKeyStorePath: filepath.Join(dir, "none.pem")}},
		{"garbage key store", proto.Config{SecurityMode: proto.SecurityX509, AuthKeyStorePath: garbage}},
		{"garbage trust store", proto.Config{SecurityMode: proto.SecurityX509, AuthKeyStorePath: pki.serverPEM, TrustStorePath: garbage}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHost()
			tt.cfg.ClientIP = "127.0.0.1"
			d, err := (&Protocol{}).New(tt.cfg, h)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Start(context.Background()); err == nil {
				_ = d.Stop(context.Background())
				t.Fatal("Start succeeded")
			}
			if status, _ := h.getStatus(); status == "" {
				t.Error("no status after a failed start")
			}
		})
	}
}
