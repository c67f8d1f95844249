package coapdev

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	piondtls "github.com/pion/dtls/v3"
	"github.com/plgd-dev/go-coap/v3/dtls"
	dtlsServer "github.com/plgd-dev/go-coap/v3/dtls/server"
	"github.com/plgd-dev/go-coap/v3/message"
	"github.com/plgd-dev/go-coap/v3/message/codes"
	"github.com/plgd-dev/go-coap/v3/message/pool"
	coapNet "github.com/plgd-dev/go-coap/v3/net"
	"github.com/plgd-dev/go-coap/v3/options"
	"github.com/plgd-dev/go-coap/v3/pkg/runner/periodic"
	"github.com/plgd-dev/go-coap/v3/udp"
	udpClient "github.com/plgd-dev/go-coap/v3/udp/client"
	udpServer "github.com/plgd-dev/go-coap/v3/udp/server"

	"cpesuite/internal/iotemu/proto"
)

const (
	// defaultAckTimeout is ACK_TIMEOUT of RFC 7252 §4.8 for confirmable
	// notifications.
	defaultAckTimeout = 2 * time.Second
	// defaultIdleTimeout forgets the per-peer state of clients that went
	// quiet; peers with observations are kept (see server.onInactive).
	defaultIdleTimeout = 2 * time.Minute
	// maxMessageSize is the receive buffer of each device's socket. A
	// constrained device has no use for go-coap's 64 KiB default, which
	// would cost 64 KiB per emulated device; larger bodies use block-wise
	// transfer.
	maxMessageSize = 1500
)

var discardLogger = slog.New(slog.DiscardHandler)

// sharedRunner drives retransmissions and idle checks of every device
// from one goroutine: go-coap's default starts a sleeping goroutine per
// server, and its 4 s tick makes retransmission timing coarse.
var sharedRunner = sync.OnceValue(func() periodic.Func {
	return periodic.New(make(chan struct{}), time.Second)
})

// Device is one emulated CoAP device (a CoAP server).
type Device struct {
	proto  *Protocol
	cfg    proto.Config
	host   proto.Host
	opts   devOptions
	log    *slog.Logger
	pskKey []byte

	// Test hooks, fixed before Start.
	ackTimeout  time.Duration
	idleTimeout time.Duration

	mu sync.Mutex // serialises Start and Stop
	// srv is the running server, nil while stopped. It is read without mu
	// so that Changed, Heartbeat and Addr never wait for a Start or Stop
	// in progress.
	srv atomic.Pointer[server]
}

// Addr is the address the device serves on, nil while it is stopped.
func (d *Device) Addr() net.Addr {
	if s := d.current(); s != nil {
		return s.addr
	}
	return nil
}

func (d *Device) current() *server { return d.srv.Load() }

// Start binds the device's socket and serves CoAP until Stop. Starting a
// running device is a no-op.
func (d *Device) Start(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.srv.Load() != nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s, err := d.serve()
	if err != nil {
		d.host.SetStatus("start failed: " + err.Error())
		return err
	}
	d.srv.Store(s)
	d.proto.register(d.cfg.ClientID, d)
	d.host.SetConnection(proto.Unknown)
	d.host.SetStatus(fmt.Sprintf("serving %s://%s", s.scheme, s.addr))
	return nil
}

// Stop closes the server, drops every observation and frees the port. It
// returns once the socket is closed, so the port can be bound again.
func (d *Device) Stop(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.host.SetConnection(proto.Unknown)
	s := d.srv.Swap(nil)
	if s == nil {
		return nil
	}
	d.proto.unregister(d.cfg.ClientID, d)
	err := s.close(ctx)
	d.host.SetStatus("stopped")
	return err
}

// Heartbeat notifies every observer of its resource's current value.
func (d *Device) Heartbeat(context.Context) error {
	if s := d.current(); s != nil {
		s.notifyAll()
	}
	return nil
}

// Changed notifies the observers of name. It only queues the
// notification; sending happens on the observer's own goroutine.
func (d *Device) Changed(name, value string) {
	if s := d.current(); s != nil {
		s.changed(name, value)
	}
}

// serve binds the socket and starts the CoAP server on it.
func (d *Device) serve() (*server, error) {
	s := newServer(d)
	bind := net.JoinHostPort(d.cfg.ClientIP, strconv.Itoa(d.cfg.ClientPort))
	common := []serverOption{
		options.WithHandlerFunc(s.handle),
		options.WithContext(s.ctx),
		options.WithMaxMessageSize(maxMessageSize),
		options.WithPeriodicRunner(sharedRunner()),
		options.WithRequestMonitor(s.monitor),
		options.WithOnNewConn(s.onNewConn),
		options.WithInactivityMonitor(d.idleTimeout, s.onInactive),
		options.WithErrors(s.onError),
	}
	switch securityMode(d.cfg) {
	case proto.SecurityNone:
		l, err := coapNet.NewListenUDP("udp", bind)
		if err != nil {
			s.cancel()
			return nil, fmt.Errorf("coapdev: bind udp %s: %w", bind, err)
		}
		opts := make([]udpServer.Option, 0, len(common))
		for _, o := range common {
			opts = append(opts, o)
		}
		srv := udp.NewServer(opts...)
		s.scheme, s.addr = "coap", l.LocalAddr()
		s.stop = srv.Stop
		go func() {
			defer close(s.done)
			if err := srv.Serve(l); err != nil {
				s.onError(err)
			}
			// Serve does not close the socket it was given.
			_ = l.Close()
		}()
	default:
		dopts, err := d.dtlsOptions()
		if err != nil {
			s.cancel()
			return nil, err
		}
		l, err := coapNet.NewDTLSListener("udp", bind, coapNet.NewDTLSServerOptions(dopts...))
		if err != nil {
			s.cancel()
			return nil, fmt.Errorf("coapdev: bind dtls %s: %w", bind, err)
		}
		opts := make([]dtlsServer.Option, 0, len(common))
		for _, o := range common {
			opts = append(opts, o)
		}
		srv := dtls.NewServer(opts...)
		s.scheme, s.addr = "coaps", l.Addr()
		s.stop = srv.Stop
		go func() {
			defer close(s.done)
			// Serve closes every session and the listener before it
			// returns, which frees the port.
			if err := srv.Serve(l); err != nil {
				s.onError(err)
			}
		}()
	}
	s.startTicker(d.opts.period)
	return s, nil
}

// dtlsOptions builds the DTLS 1.2 server configuration: PSK with the
// CoAP/LwM2M mandatory suite TLS_PSK_WITH_AES_128_CCM_8, or X.509 with the
// certificate chain and key of the key store.
func (d *Device) dtlsOptions() ([]piondtls.ServerOption, error) {
	switch securityMode(d.cfg) {
	case proto.SecurityPSK:
		key := d.pskKey
		return []piondtls.ServerOption{
			piondtls.WithPSK(func([]byte) ([]byte, error) { return key, nil }),
			piondtls.WithPSKIdentityHint([]byte(d.cfg.PSKID)),
			piondtls.WithCipherSuites(piondtls.TLS_PSK_WITH_AES_128_CCM_8),
		}, nil
	case proto.SecurityX509:
		pem, err := os.ReadFile(d.cfg.AuthKeyStorePath)
		if err != nil {
			return nil, fmt.Errorf("coapdev: read key store: %w", err)
		}
		// The key store holds the chain and the key in one PEM file.
		cert, err := tls.X509KeyPair(pem, pem)
		if err != nil {
			return nil, fmt.Errorf("coapdev: key store %s: %w", d.cfg.AuthKeyStorePath, err)
		}
		opts := []piondtls.ServerOption{piondtls.WithCertificates(cert)}
		if d.cfg.TrustStorePath != "" {
			ca, err := os.ReadFile(d.cfg.TrustStorePath)
			if err != nil {
				return nil, fmt.Errorf("coapdev: read trust store: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(ca) {
				return nil, fmt.Errorf("coapdev: trust store %s has no PEM certificate", d.cfg.TrustStorePath)
			}
			// A device cannot know in advance which server will talk to
			// it, so a client certificate is optional, but one that is
			// presented must chain to the trust store.
			opts = append(opts, piondtls.WithClientCAs(pool), piondtls.WithClientAuth(piondtls.VerifyClientCertIfGiven))
		}
		return opts, nil
	}
	return nil, errors.New("coapdev: no DTLS for security mode NONE")
}

// serverOption is an option both go-coap servers (UDP and DTLS) accept.
type serverOption interface {
	udpServer.Option
	dtlsServer.Option
}

// server is one running CoAP server of a device.
type server struct {
	d      *Device
	ctx    context.Context // cancelled by close
	cancel context.CancelFunc
	scheme string
	addr   net.Addr
	stop   func()        // stops the go-coap server
	done   chan struct{} // closed when Serve returned

	tickStop chan struct{}
	tickDone chan struct{}

	mu        sync.Mutex
	closed    bool
	observers map[obsKey]*observer
	notifiers sync.WaitGroup // notification goroutines

	exMu      sync.Mutex
	exchanges map[exchangeKey]chan message.Type // notifications awaiting an ACK
}

func newServer(d *Device) *server {
	ctx, cancel := context.WithCancel(context.Background())
	return &server{
		d:         d,
		ctx:       ctx,
		cancel:    cancel,
		done:      make(chan struct{}),
		observers: make(map[obsKey]*observer),
		exchanges: make(map[exchangeKey]chan message.Type),
	}
}

func (s *server) startTicker(period time.Duration) {
	if period <= 0 {
		return
	}
	s.tickStop, s.tickDone = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.tickDone)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				s.notifyAll()
			case <-s.tickStop:
				return
			}
		}
	}()
}

// close stops serving: no new observations, the socket and sessions
// closed, pending notifications abandoned. It waits for the server's
// goroutines unless ctx ends first.
func (s *server) close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	if s.tickStop != nil {
		close(s.tickStop)
		<-s.tickDone
	}
	s.cancel()
	s.stop()
	select {
	case <-s.done:
	case <-ctx.Done():
		return fmt.Errorf("coapdev: stop: %w", ctx.Err())
	}
	s.dropAll()
	waited := make(chan struct{})
	go func() {
		s.notifiers.Wait()
		close(waited)
	}()
	select {
	case <-waited:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("coapdev: stop: %w", ctx.Err())
	}
}

func (s *server) onError(err error) {
	s.d.log.Debug("coap server", "client", s.d.cfg.ClientID, "err", err)
}

func (s *server) onNewConn(cc *udpClient.Conn) {
	cc.AddOnClose(func() { s.dropConn(cc) })
}

// onInactive forgets an idle peer unless it observes something: an
// observer legitimately stays silent between notifications.
func (s *server) onInactive(cc *udpClient.Conn) {
	if s.hasObservers(cc) {
		return
	}
	_ = cc.Close()
}

// monitor sees every message before go-coap processes it. It takes the
// empty ACKs and Resets that answer notifications (see sendNotification);
// go-coap would drop them as unknown exchanges.
func (s *server) monitor(cc *udpClient.Conn, m *pool.Message) (bool, error) {
	if t := m.Type(); (t == message.Acknowledgement || t == message.Reset) && m.Code() == codes.Empty {
		return s.answered(cc, m.MessageID(), t), nil
	}
	return false, nil
}
