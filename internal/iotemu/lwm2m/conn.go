package lwm2m

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	piondtls "github.com/pion/dtls/v3"
	dtlsnet "github.com/pion/dtls/v3/pkg/net"
	"github.com/pion/logging"
	coapdtls "github.com/plgd-dev/go-coap/v3/dtls"
	"github.com/plgd-dev/go-coap/v3/message"
	"github.com/plgd-dev/go-coap/v3/message/codes"
	"github.com/plgd-dev/go-coap/v3/message/pool"
	"github.com/plgd-dev/go-coap/v3/options"
	"github.com/plgd-dev/go-coap/v3/udp"
	udpclient "github.com/plgd-dev/go-coap/v3/udp/client"
	"github.com/plgd-dev/go-coap/v3/udp/coder"

	"cpesuite/internal/iotemu/proto"
)

// runnerTick is how often the shared runner lets every connection check
// its retransmissions and caches. go-coap retransmits a confirmable
// request only from this check, so it bounds the retransmission jitter;
// the acknowledgement time-out is 2 s.
const runnerTick = time.Second

// sharedRunner replaces go-coap's default periodic runner, which starts a
// goroutine per connection, with one goroutine for all of them. It runs
// only while connections exist.
type sharedRunner struct {
	mu      sync.Mutex
	fns     []func(time.Time) bool
	running bool
}

var runner sharedRunner

func (r *sharedRunner) add(f func(time.Time) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fns = append(r.fns, f)
	if !r.running {
		r.running = true
		go r.loop()
	}
}

func (r *sharedRunner) loop() {
	t := time.NewTicker(runnerTick)
	defer t.Stop()
	for now := range t.C {
		r.mu.Lock()
		fns := r.fns
		r.fns = nil
		r.mu.Unlock()
		// The functions run outside the lock: they take go-coap's locks
		// and a connection being created meanwhile must not wait.
		kept := fns[:0]
		for _, f := range fns {
			if f(now) {
				kept = append(kept, f)
			}
		}
		r.mu.Lock()
		r.fns = append(kept, r.fns...)
		if len(r.fns) == 0 {
			r.running = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
	}
}

// security is the parsed DTLS material of a device, prepared once at
// Start so that a broken key or file fails Start instead of every
// reconnection.
type security struct {
	opts []piondtls.ClientOption
}

// nopLoggerFactory silences pion's logger: handshake failures are reported
// through the device status instead of stderr, once per device.
type nopLoggerFactory struct{}

type nopLogger struct{}

func (nopLoggerFactory) NewLogger(string) logging.LeveledLogger { return nopLogger{} }
func (nopLogger) Trace(string)                                  {}
func (nopLogger) Tracef(string, ...any)                         {}
func (nopLogger) Debug(string)                                  {}
func (nopLogger) Debugf(string, ...any)                         {}
func (nopLogger) Info(string)                                   {}
func (nopLogger) Infof(string, ...any)                          {}
func (nopLogger) Warn(string)                                   {}
func (nopLogger) Warnf(string, ...any)                          {}
func (nopLogger) Error(string)                                  {}
func (nopLogger) Errorf(string, ...any)                         {}

// securityConfig prepares the DTLS client options of cfg, or nil for
// plain CoAP.
func securityConfig(cfg proto.Config) (*security, error) {
	switch cfg.SecurityMode {
	case "", proto.SecurityNone:
		return nil, nil
	case proto.SecurityPSK:
		key, err := hex.DecodeString(strings.TrimSpace(cfg.PSKKey))
		if err != nil || len(key) == 0 {
			// The key itself must not appear in the error.
			return nil, errors.New("pskKey is not a hex-encoded key")
		}
		return &security{opts: []piondtls.ClientOption{
			piondtls.WithPSK(func([]byte) ([]byte, error) { return key, nil }),
			piondtls.WithPSKIdentityHint([]byte(cfg.PSKID)),
			piondtls.WithCipherSuites(piondtls.TLS_PSK_WITH_AES_128_CCM_8, piondtls.TLS_PSK_WITH_AES_128_CBC_SHA256),
			piondtls.WithLoggerFactory(nopLoggerFactory{}),
		}}, nil
	case proto.SecurityX509:
		cert, err := loadKeyPair(cfg.AuthKeyStorePath)
		if err != nil {
			return nil, err
		}
		opts := []piondtls.ClientOption{
			piondtls.WithCertificates(cert),
			piondtls.WithCipherSuites(piondtls.TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8, piondtls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256),
			piondtls.WithLoggerFactory(nopLoggerFactory{}),
		}
		if cfg.TrustStorePath != "" {
			roots, err := loadCertPool(cfg.TrustStorePath)
			if err != nil {
				return nil, err
			}
			opts = append(opts, piondtls.WithRootCAs(roots))
		} else {
			// Without a trust store there is nothing to verify against;
			// an emulator talking to a test server accepts any server.
			opts = append(opts, piondtls.WithInsecureSkipVerify(true))
		}
		if net.ParseIP(cfg.ServerIP) == nil {
			opts = append(opts, piondtls.WithServerName(cfg.ServerIP))
		}
		return &security{opts: opts}, nil
	}
	return nil, fmt.Errorf("unknown security mode %q", cfg.SecurityMode)
}

// loadKeyPair reads a PEM file holding the client certificate chain and
// its (unencrypted) private key.
func loadKeyPair(path string) (tls.Certificate, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("reading key store: %w", err)
	}
	cert, err := tls.X509KeyPair(b, b)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("key store %s: %w", path, err)
	}
	return cert, nil
}

func loadCertPool(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading trust store: %w", err)
	}
	pool := x509.NewCertPool()
	n := 0
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("trust store %s: %w", path, err)
		}
		pool.AddCert(c)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("trust store %s holds no certificate", path)
	}
	return pool, nil
}

// bind opens the device's socket on ClientIP:ClientPort, connected to the
// server, so that the kernel drops datagrams from anybody else.
func (d *device) bind() (*net.UDPConn, error) {
	raddr, err := net.ResolveUDPAddr("udp", net.JoinHostPort(d.cfg.ServerIP, strconv.Itoa(d.cfg.ServerPort)))
	if err != nil {
		return nil, fmt.Errorf("resolving server address: %w", err)
	}
	laddr := &net.UDPAddr{Port: d.cfg.ClientPort}
	if d.cfg.ClientIP != "" {
		if laddr.IP = net.ParseIP(d.cfg.ClientIP); laddr.IP == nil {
			return nil, fmt.Errorf("client address %q is not an IP address", d.cfg.ClientIP)
		}
	}
	uc, err := net.DialUDP("udp", laddr, raddr)
	if err != nil {
		return nil, fmt.Errorf("binding %s: %w", laddr, err)
	}
	return uc, nil
}

// connect wraps a bound socket in a go-coap client connection, running the
// DTLS handshake first when sec is not nil. It takes ownership of uc: on
// failure uc is closed.
func (d *device) connect(ctx context.Context, uc *net.UDPConn, sec *security) (*udpclient.Conn, error) {
	copts := []udp.Option{
		options.WithHandlerFunc(d.handle),
		options.WithErrors(d.coapError),
		options.WithPeriodicRunner(runner.add),
		options.WithCloseSocket(),
	}
	if sec == nil {
		cc := udp.Client(uc, copts...)
		cc.AddOnClose(func() { d.connLost(cc) })
		return cc, nil
	}
	dc, err := piondtls.ClientWithOptions(dtlsnet.PacketConnFromConn(uc), uc.RemoteAddr(), sec.opts...)
	if err != nil {
		_ = uc.Close()
		return nil, fmt.Errorf("dtls: %w", err)
	}
	hctx, cancel := context.WithTimeout(ctx, d.o.requestTimeout)
	defer cancel()
	if err := dc.HandshakeContext(hctx); err != nil {
		_ = dc.Close()
		return nil, fmt.Errorf("dtls handshake: %w", err)
	}
	cc := coapdtls.Client(dc, copts...)
	cc.AddOnClose(func() { d.connLost(cc) })
	return cc, nil
}

func (d *device) coapError(err error) {
	if d.cfg.Logger != nil {
		d.cfg.Logger.Debug("lwm2m coap", "client", d.cfg.ClientID, "err", err)
	}
}

// closeConn closes cc and waits (bounded) until its reader has returned,
// so that the port is free when Stop returns.
func closeConn(cc *udpclient.Conn, within time.Duration) {
	_ = cc.Close()
	select {
	case <-cc.Done():
	case <-time.After(within):
	}
}

// entry formats one CoAP message for the host's log.
func entry(dir, event string, m *pool.Message, payload string) proto.Entry {
	var b strings.Builder
	if m.Type() != message.Unset {
		b.WriteString(m.Type().String())
		b.WriteByte(' ')
	}
	b.WriteString(codeText(m.Code()))
	if p, err := m.Options().Path(); err == nil && p != "" {
		b.WriteByte(' ')
		b.WriteString(p)
	}
	if qs, err := m.Options().Queries(); err == nil && len(qs) > 0 {
		b.WriteByte('?')
		b.WriteString(strings.Join(qs, "&"))
	}
	if lp, err := m.Options().LocationPath(); err == nil && lp != "" {
		b.WriteString(" Location-Path=")
		b.WriteString(lp)
	}
	if cf, err := m.ContentFormat(); err == nil {
		b.WriteString(" Content-Format=")
		b.WriteString(strconv.Itoa(int(cf)))
	}
	if a, err := m.Accept(); err == nil {
		b.WriteString(" Accept=")
		b.WriteString(strconv.Itoa(int(a)))
	}
	if o, err := m.Observe(); err == nil {
		b.WriteString(" Observe=")
		b.WriteString(strconv.FormatUint(uint64(o), 10))
	}
	if t := m.Token(); len(t) > 0 {
		b.WriteString(" Token=")
		b.WriteString(hex.EncodeToString(t))
	}
	raw := ""
	if wire, err := m.MarshalWithEncoder(coder.DefaultCoder); err == nil {
		raw = hex.EncodeToString(wire)
	}
	return proto.Entry{Direction: dir, Event: event, MessageOptions: b.String(), Payload: payload, RawMessage: raw}
}

// codeText spells a response code as LwM2M documents do ("2.05
// Content") and a method by its name.
func codeText(c codes.Code) string {
	if c < codes.Created {
		return c.String()
	}
	return fmt.Sprintf("%d.%02d %s", c>>5, c&0x1f, c.String())
}

// query builds a Uri-Query option.
func query(s string) message.Option {
	return message.Option{ID: message.URIQuery, Value: []byte(s)}
}
