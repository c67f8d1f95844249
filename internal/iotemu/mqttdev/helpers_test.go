package mqttdev

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"

	"cpesuite/internal/iotemu/proto"
	"cpesuite/internal/iotemu/proto/prototest"
	"cpesuite/internal/testutil"
)

// within is how long a test waits for the broker or a device before it
// calls the wait a hang.
const within = testutil.MinDeadline

// fakeHost is the session's side of one device, as the tests need it:
// it can drop log entries and keeps every status line set.
type fakeHost struct {
	*prototest.Host
	quiet atomic.Bool // drop log entries

	mu       sync.Mutex
	statuses []string
}

func newFakeHost(cfg proto.Config) *fakeHost {
	return &fakeHost{Host: prototest.NewHost(Protocol{}.Params(cfg))}
}

func (h *fakeHost) Log(e proto.Entry) {
	if h.quiet.Load() {
		return
	}
	h.Host.Log(e)
}

func (h *fakeHost) SetStatus(s string) {
	h.mu.Lock()
	h.statuses = append(h.statuses, s)
	h.mu.Unlock()
	h.Host.SetStatus(s)
}

func (h *fakeHost) state() (proto.Connection, string) {
	return h.Connection(), h.Status()
}

func (h *fakeHost) hasEntry(dir, event, optsPart string) bool {
	for _, e := range h.Entries() {
		if e.Direction == dir && e.Event == event && strings.Contains(e.MessageOptions, optsPart) {
			return true
		}
	}
	return false
}

// connects counts the CONNECTs the device sent.
func (h *fakeHost) connects() int {
	n := 0
	for _, e := range h.Entries() {
		if e.Event == evConnect {
			n++
		}
	}
	return n
}

// assertNoSecret fails when secret shows up in anything the device gave
// the host.
func (h *fakeHost) assertNoSecret(t *testing.T, secret string) {
	t.Helper()
	for _, e := range h.Entries() {
		if strings.Contains(fmt.Sprintf("%+v", e), secret) {
			t.Errorf("secret in log entry %+v", e)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.statuses {
		if strings.Contains(s, secret) {
			t.Errorf("secret in status %q", s)
		}
	}
}

func (h *fakeHost) waitConn(t *testing.T, want proto.Connection, statusPart string) {
	t.Helper()
	testutil.Eventually(t, within, fmt.Sprintf("connection %s with status containing %q", want, statusPart), func() bool {
		c, s := h.state()
		return c == want && strings.Contains(s, statusPart)
	})
}

// unique returns a name safe as a topic level and client id, unique per
// run (Mosquitto is shared between tests and runs).
func unique(t *testing.T) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(t.Name(), "-")
	if len(name) > 40 {
		name = name[len(name)-40:]
	}
	return strings.Trim(name, "-") + "-" + hex.EncodeToString(b)
}

// testDevice is a device under test with its host and topics.
type testDevice struct {
	dev    *Device
	host   *fakeHost
	cfg    proto.Config
	prefix string // P/C/
}

// newTestDevice creates (not starts) a device for the broker at brokerURL
// (tcp://host:port) with the given option overrides.
func newTestDevice(t *testing.T, brokerURL string, overrides map[string]string, mod ...func(*proto.Config)) *testDevice {
	t.Helper()
	u, err := url.Parse(brokerURL)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	id := unique(t)
	opts := map[string]string{}
	for _, o := range (Protocol{}).Options() {
		opts[o.Key] = o.Default
	}
	opts[OptTopicPrefix] = "cpesuite-test/" + id
	opts[OptPublishPeriodSec] = "0"
	for k, v := range overrides {
		opts[k] = v
	}
	cfg := proto.Config{
		ClientID: id, SerialNumber: "SN-" + id, Manufacturer: "Acme", ModelName: "S1",
		ServerIP: u.Hostname(), ServerPort: port, SecurityMode: proto.SecurityNone,
		Options: opts, Logger: slog.New(slog.DiscardHandler),
	}
	for _, m := range mod {
		m(&cfg)
	}
	host := newFakeHost(cfg)
	d, err := Protocol{}.New(cfg, host)
	if err != nil {
		t.Fatal(err)
	}
	host.OnChange(d.Changed)
	td := &testDevice{dev: d.(*Device), host: host, cfg: cfg, prefix: opts[OptTopicPrefix] + "/" + id + "/"}
	t.Cleanup(func() { _ = td.dev.Stop(context.Background()) })
	return td
}

func (td *testDevice) start(t *testing.T) {
	t.Helper()
	if err := td.dev.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// message is one message seen by an observer.
type message struct {
	topic    string
	payload  string
	retained bool
}

// observer is an independent MQTT client watching a device's topics.
type observer struct {
	c  mqtt.Client
	mu sync.Mutex
	ms []message
}

// observe subscribes to filter on the broker at brokerURL and records
// every message; it also clears retained messages under filter's prefix
// at cleanup, so the shared broker does not collect them.
func observe(t *testing.T, brokerURL, filter string) *observer {
	t.Helper()
	o := &observer{}
	opts := mqtt.NewClientOptions().AddBroker(brokerURL).SetClientID("obs-" + unique(t)).
		SetAutoReconnect(false).SetOrderMatters(true)
	o.c = mqtt.NewClient(opts)
	if tok := o.c.Connect(); !tok.WaitTimeout(within) || tok.Error() != nil {
		t.Fatalf("observer connect: %v", tok.Error())
	}
	tok := o.c.Subscribe(filter, 2, func(_ mqtt.Client, m mqtt.Message) {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.ms = append(o.ms, message{m.Topic(), string(m.Payload()), m.Retained()})
	})
	if !tok.WaitTimeout(within) || tok.Error() != nil {
		t.Fatalf("observer subscribe: %v", tok.Error())
	}
	t.Cleanup(func() {
		o.mu.Lock()
		retained := map[string]bool{}
		for _, m := range o.ms {
			retained[m.topic] = true
		}
		o.mu.Unlock()
		for topic := range retained {
			o.c.Publish(topic, 1, true, []byte{}).WaitTimeout(within)
		}
		o.c.Disconnect(100)
	})
	return o
}

func (o *observer) messages(topic string) []message {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []message
	for _, m := range o.ms {
		if m.topic == topic {
			out = append(out, m)
		}
	}
	return out
}

// wait returns the first message on topic, after the first skip ones,
// that satisfies ok.
func (o *observer) wait(t *testing.T, topic string, skip int, what string, ok func(message) bool) message {
	t.Helper()
	var found message
	testutil.Eventually(t, within, what+" on "+topic, func() bool {
		ms := o.messages(topic)
		for i := skip; i < len(ms); i++ {
			if ok == nil || ok(ms[i]) {
				found = ms[i]
				return true
			}
		}
		return false
	})
	return found
}

func (o *observer) publish(t *testing.T, topic, payload string) {
	t.Helper()
	if tok := o.c.Publish(topic, 1, false, payload); !tok.WaitTimeout(within) || tok.Error() != nil {
		t.Fatalf("observer publish: %v", tok.Error())
	}
}

func payloadIs(p string) func(message) bool {
	return func(m message) bool { return m.payload == p }
}

// ackOf decodes an ack payload.
func ackOf(t *testing.T, m message) ack {
	t.Helper()
	var a ack
	if err := json.Unmarshal([]byte(m.payload), &a); err != nil {
		t.Fatalf("ack %q: %v", m.payload, err)
	}
	return a
}

func ackWithID(id string) func(message) bool {
	return func(m message) bool {
		var a ack
		return json.Unmarshal([]byte(m.payload), &a) == nil && bytes.Equal(a.ID, []byte(id))
	}
}

// broker is an embedded mochi broker for the tests that need to control
// the broker: credentials, restarts, TLS.
type broker struct {
	srv  *mochi.Server
	addr string
}

type brokerOpts struct {
	user, pass string        // when set, only this pair is admitted
	tls        *tls.Config   // when set, the listener is TLS
	pings      *atomic.Int64 // when set, counts PINGREQs received
}

// startBroker starts a mochi broker on addr ("127.0.0.1:0" for any port).
func startBroker(t *testing.T, addr string, o brokerOpts) *broker {
	t.Helper()
	srv := mochi.New(&mochi.Options{Logger: slog.New(slog.DiscardHandler)})
	if err := srv.AddHook(&authHook{user: o.user, pass: o.pass, pings: o.pings}, nil); err != nil {
		t.Fatal(err)
	}
	l := listeners.NewTCP(listeners.Config{ID: "t", Address: addr, TLSConfig: o.tls})
	if err := srv.AddListener(l); err != nil {
		t.Fatal(err)
	}
	if err := srv.Serve(); err != nil {
		t.Fatal(err)
	}
	b := &broker{srv: srv, addr: l.Address()}
	t.Cleanup(b.close)
	return b
}

func (b *broker) url() string { return "tcp://" + b.addr }

var closedBrokers sync.Map

func (b *broker) close() {
	if _, done := closedBrokers.LoadOrStore(b, true); !done {
		_ = b.srv.Close()
	}
}

type authHook struct {
	mochi.HookBase
	user, pass string
	pings      *atomic.Int64
}

func (*authHook) ID() string { return "test-auth" }

func (h *authHook) Provides(b byte) bool {
	return b == mochi.OnConnectAuthenticate || b == mochi.OnACLCheck || (b == mochi.OnPacketRead && h.pings != nil)
}

func (h *authHook) OnPacketRead(_ *mochi.Client, pk packets.Packet) (packets.Packet, error) {
	if pk.FixedHeader.Type == packets.Pingreq {
		h.pings.Add(1)
	}
	return pk, nil
}

func (h *authHook) OnConnectAuthenticate(_ *mochi.Client, pk packets.Packet) bool {
	if h.user == "" {
		return true
	}
	return string(pk.Connect.Username) == h.user && string(pk.Connect.Password) == h.pass
}

func (*authHook) OnACLCheck(*mochi.Client, string, bool) bool { return true }

// testPKI is a CA with a server certificate for 127.0.0.1 and a client
// certificate, written as PEM files into a temporary directory.
type testPKI struct {
	caPEM, clientPEM, otherCAPEM string // file paths
	server                       tls.Certificate
	pool                         *x509.CertPool
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
	issue := func(tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, signer *ecdsa.PrivateKey) *x509.Certificate {
		serial++
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore = time.Now().Add(-time.Hour)
		tmpl.NotAfter = time.Now().Add(time.Hour)
		if parent == nil {
			parent = tmpl
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
		if err != nil {
			t.Fatal(err)
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	certPEM := func(c *x509.Certificate) []byte {
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	keyPEM := func(k *ecdsa.PrivateKey) []byte {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	}
	write := func(name string, parts ...[]byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, bytes.Join(parts, nil), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	caTmpl := func(cn string) *x509.Certificate {
		return &x509.Certificate{Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true,
			KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	}

	caKey := newKey()
	ca := issue(caTmpl("test CA"), nil, &caKey.PublicKey, caKey)
	otherKey := newKey()
	other := issue(caTmpl("other CA"), nil, &otherKey.PublicKey, otherKey)

	srvKey := newKey()
	srv := issue(&x509.Certificate{Subject: pkix.Name{CommonName: "broker"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage:    x509.KeyUsageDigitalSignature}, ca, &srvKey.PublicKey, caKey)
	cliKey := newKey()
	cli := issue(&x509.Certificate{Subject: pkix.Name{CommonName: "device"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		KeyUsage:    x509.KeyUsageDigitalSignature}, ca, &cliKey.PublicKey, caKey)

	server, err := tls.X509KeyPair(certPEM(srv), keyPEM(srvKey))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &testPKI{
		caPEM:      write("ca.pem", certPEM(ca)),
		otherCAPEM: write("other-ca.pem", certPEM(other)),
		clientPEM:  write("client.pem", certPEM(cli), keyPEM(cliKey)),
		server:     server,
		pool:       pool,
	}
}

// serverTLS requires a client certificate issued by the test CA.
func (p *testPKI) serverTLS() *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{p.server},
		ClientCAs:    p.pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS12,
	}
}
