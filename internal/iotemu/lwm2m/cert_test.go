package lwm2m

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plgd-dev/go-coap/v3/message/codes"

	"cpesuite/internal/iotemu/lwm2m/codec"
	"cpesuite/internal/iotemu/lwm2m/lwm2mtest"
	"cpesuite/internal/iotemu/proto"
)

// testCA is an ECDSA certificate authority for DTLS tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

var certSerial atomic.Int64

func nextSerial() *big.Int { return big.NewInt(certSerial.Add(1)) }

func newCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          nextSerial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a leaf certificate and key, PEM-encoded (certificate
// first), for a server (with an IP SAN) or a client.
func (ca *testCA) issue(t *testing.T, cn string, server bool) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: nextSerial(),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	out := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return append(out, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})...)
}

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// certServer starts a DTLS server whose certificate ca signed and which
// trusts client certificates of ca.
func certServer(t *testing.T, ca *testCA) *lwm2mtest.Server {
	t.Helper()
	pair := ca.issue(t, "lwm2m-server", true)
	cert, err := tls.X509KeyPair(pair, pair)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	return lwm2mtest.New(t, lwm2mtest.WithCertificate(cert, pool), lwm2mtest.WithKindOf(KindOf))
}

func TestDTLSCertificates(t *testing.T) {
	ca := newCA(t, "test CA")
	srv := certServer(t, ca)
	keyStore := writeFile(t, "client.pem", ca.issue(t, "client", false))
	trustStore := writeFile(t, "ca.pem", ca.pem)
	td := newTestDevice(t, srv, func(c *proto.Config) {
		c.SecurityMode = proto.SecurityX509
		c.AuthKeyStorePath = keyStore
		c.TrustStorePath = trustStore
	})
	td.startRegistered(t)
	ctx := ctxT(t)
	if td.host.Params().Value("Security.0.SecurityMode") != "2" {
		t.Errorf("security mode %s", td.host.Params().Value("Security.0.SecurityMode"))
	}
	if _, body, err := srv.Read(ctx, td.ep, "/3/0/0", codec.FormatText); err != nil || string(body) != "Acme" {
		t.Fatalf("read %q %v", body, err)
	}
	if code, _ := srv.Write(ctx, td.ep, "/3/0/15", codec.FormatText, []byte("Europe/Prague"), true); code != codes.Changed {
		t.Fatalf("write %v", code)
	}
	if ok, err := td.Update(ctx); !ok || err != nil {
		t.Fatalf("update %t %v", ok, err)
	}
	if err := td.Stop(ctx); err != nil || srv.DeregisterCount(td.ep) != 1 {
		t.Fatalf("stop %v, deregisters %d", err, srv.DeregisterCount(td.ep))
	}
	noViolations(t, srv)
}

func TestDTLSCertificateRejected(t *testing.T) {
	ca := newCA(t, "server CA")
	other := newCA(t, "other CA")
	srv := certServer(t, ca)
	tests := []struct {
		name       string
		keyStore   []byte
		trustStore []byte
	}{
		{"server not trusted", ca.issue(t, "client", false), other.pem},
		{"client not trusted", other.issue(t, "client", false), ca.pem},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			td := newTestDevice(t, srv, func(c *proto.Config) {
				c.SecurityMode = proto.SecurityX509
				c.AuthKeyStorePath = writeFile(t, "client.pem", tc.keyStore)
				c.TrustStorePath = writeFile(t, "ca.pem", tc.trustStore)
			})
			if err := td.Start(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			if td.host.Connection() != proto.Disconnected || !strings.Contains(td.host.Status(), "dtls handshake") {
				t.Fatalf("%s %q", td.host.Connection(), td.host.Status())
			}
		})
	}
}

func TestX509MissingFiles(t *testing.T) {
	srv := lwm2mtest.New(t)
	td := newTestDevice(t, srv, func(c *proto.Config) {
		c.SecurityMode = proto.SecurityX509
		c.AuthKeyStorePath = filepath.Join(t.TempDir(), "missing.pem")
	})
	if err := td.Start(ctxT(t)); err == nil {
		t.Fatal("Start without a key store succeeded")
	}
}
