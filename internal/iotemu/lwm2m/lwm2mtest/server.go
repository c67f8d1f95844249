// Package lwm2mtest is a strict LwM2M server test double: it serves the
// Client Registration interface (/rd) over plain CoAP or DTLS, checks every
// Register and Update against the OMA LwM2M Core and Transport TS 1.0-1.2
// and records what it finds wrong, and sends Device Management and
// Information Reporting requests to registered clients.
//
// It keeps registrations in maps under one mutex and starts no goroutine
// per client of its own; with plain CoAP go-coap holds a connection (and
// its message goroutine) only while a peer is active (WithIdleTimeout).
// Notifications are matched by token in the server's own map, so they
// reach their observer whichever go-coap connection carries them.
package lwm2mtest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	piondtls "github.com/pion/dtls/v3"
	coapdtls "github.com/plgd-dev/go-coap/v3/dtls"
	dtlsserver "github.com/plgd-dev/go-coap/v3/dtls/server"
	"github.com/plgd-dev/go-coap/v3/message"
	"github.com/plgd-dev/go-coap/v3/message/codes"
	"github.com/plgd-dev/go-coap/v3/message/pool"
	coapnet "github.com/plgd-dev/go-coap/v3/net"
	"github.com/plgd-dev/go-coap/v3/net/responsewriter"
	"github.com/plgd-dev/go-coap/v3/options"
	"github.com/plgd-dev/go-coap/v3/udp"
	udpclient "github.com/plgd-dev/go-coap/v3/udp/client"
	udpserver "github.com/plgd-dev/go-coap/v3/udp/server"

	"cpesuite/internal/iotemu/lwm2m/codec"
	"cpesuite/internal/testutil"
)

// NoAccept asks Read and Observe to send no Accept option (0 is
// text/plain, a valid Accept).
const NoAccept uint16 = 0xffff

// defaultLifetime applies when Register carries no lt (Core 1.0 Table 7).
const defaultLifetime = 86400

type config struct {
	addr      string
	psk       map[string][]byte
	cert      *tls.Certificate
	clientCAs *x509.CertPool
	kindOf    codec.KindOf
	timeout   time.Duration
	idle      time.Duration
}

// Option configures a Server.
type Option func(*config)

// WithPSK serves DTLS with pre-shared keys (identity -> key) instead of
// plain CoAP.
func WithPSK(keys map[string][]byte) Option {
	return func(c *config) { c.psk = keys }
}

// WithCertificate serves DTLS with a server certificate and requires
// client certificates signed by clientCAs.
func WithCertificate(cert tls.Certificate, clientCAs *x509.CertPool) Option {
	return func(c *config) { c.cert, c.clientCAs = &cert, clientCAs }
}

// WithListenAddr listens on addr instead of 127.0.0.1:0, to bring a
// server back on the address of one that was closed.
func WithListenAddr(addr string) Option {
	return func(c *config) { c.addr = addr }
}

// WithKindOf gives ReadRecords the resource types TLV and text need.
func WithKindOf(k codec.KindOf) Option {
	return func(c *config) { c.kindOf = k }
}

// WithIdleTimeout sets how long go-coap keeps the state (and message
// goroutine) of a plain-CoAP peer that sends nothing (default 2 s). Short,
// so that thousands of clients updating every few seconds do not each hold
// a goroutine and 247 s of cached answers; the registrations live in the
// server's maps regardless, and requests to a client open a new state.
func WithIdleTimeout(d time.Duration) Option {
	return func(c *config) { c.idle = d }
}

// WithTimeout bounds the server's own requests (default
// testutil.MinDeadline: a safety net, since a device that answers must not
// be taken for one that does not on a loaded machine).
func WithTimeout(d time.Duration) Option {
	return func(c *config) { c.timeout = d }
}

// Registration is what the server knows of one registered client.
type Registration struct {
	Endpoint string
	ID       string // registration id, the last Location-Path segment
	Location string // "/rd/<id>"
	Lifetime int
	Version  string
	Binding  string
	Queue    bool
	SMS      string
	Links    []codec.Link
	Body     string // the link-format payload as received
	Addr     *net.UDPAddr
	Updates  int
	// RegisteredAt and UpdatedAt are the times of Register and of the
	// latest accepted Update.
	RegisteredAt, UpdatedAt time.Time

	conn *udpclient.Conn // the DTLS session, nil for plain CoAP
}

// Notification is one answer of an observation: the first 2.05 and every
// notification after it.
type Notification struct {
	Code    codes.Code
	Seq     uint32
	Format  uint16
	Payload []byte
}

// StatusError is a request answered with an unexpected CoAP code.
type StatusError struct{ Code codes.Code }

func (e *StatusError) Error() string { return "lwm2m server: client answered " + e.Code.String() }

// CodeOf returns the code of a StatusError, or 0.
func CodeOf(err error) codes.Code {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

type observer struct {
	ch     chan Notification
	closed bool
}

// Server is the LwM2M server double.
type Server struct {
	cfg  config
	addr *net.UDPAddr
	udp  *udpserver.Server
	dtls *dtlsserver.Server

	mu          sync.Mutex
	regs        map[string]*Registration // by endpoint
	byID        map[string]*Registration
	nextID      int
	violations  []string
	registers   map[string]int
	deregisters map[string]int
	bootstraps  map[string]int
	dropUpdates int
	dropped     map[string]bool // "addr/mid" of dropped update datagrams
	regCode     codes.Code
	noLocation  bool
	bsCode      codes.Code
	obs         map[string]*observer // by token
}

// New starts a server on 127.0.0.1 with an ephemeral port; it stops when
// the test ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{
		cfg:         config{timeout: testutil.MinDeadline, idle: 2 * time.Second, addr: "127.0.0.1:0"},
		regs:        map[string]*Registration{},
		byID:        map[string]*Registration{},
		registers:   map[string]int{},
		deregisters: map[string]int{},
		bootstraps:  map[string]int{},
		dropped:     map[string]bool{},
		bsCode:      codes.Changed,
		obs:         map[string]*observer{},
	}
	for _, o := range opts {
		o(&s.cfg)
	}
	errs := options.WithErrors(func(error) {})
	if s.cfg.psk == nil && s.cfg.cert == nil {
		la, err := net.ResolveUDPAddr("udp", s.cfg.addr)
		if err != nil {
			t.Fatalf("lwm2mtest: %v", err)
		}
		uc, err := net.ListenUDP("udp", la)
		if err != nil {
			t.Fatalf("lwm2mtest: listen: %v", err)
		}
		// Thousands of clients updating at once overflow the default
		// receive buffer and then wait a retransmission; the kernel caps
		// the size at net.core.rmem_max, so this is best effort.
		_ = uc.SetReadBuffer(4 << 20)
		l := coapnet.NewUDPConn("udp", uc)
		s.addr = uc.LocalAddr().(*net.UDPAddr)
		s.udp = udp.NewServer(options.WithHandlerFunc(s.handle), options.WithRequestMonitor(s.monitor), errs,
			options.WithInactivityMonitor(s.cfg.idle, func(cc *udpclient.Conn) { _ = cc.Close() }),
			options.WithPeriodicRunner(everySecond))
		go func() { _ = s.udp.Serve(l) }()
		t.Cleanup(func() { s.udp.Stop() })
		return s
	}
	var dopts []piondtls.ServerOption
	if s.cfg.psk != nil {
		keys := s.cfg.psk
		dopts = append(dopts,
			piondtls.WithPSK(func(id []byte) ([]byte, error) {
				k, ok := keys[string(id)]
				if !ok {
					return nil, fmt.Errorf("unknown psk identity %q", id)
				}
				return k, nil
			}),
			piondtls.WithPSKIdentityHint([]byte("lwm2mtest")),
			piondtls.WithCipherSuites(piondtls.TLS_PSK_WITH_AES_128_CCM_8, piondtls.TLS_PSK_WITH_AES_128_CBC_SHA256))
	} else {
		dopts = append(dopts,
			piondtls.WithCertificates(*s.cfg.cert),
			piondtls.WithClientAuth(piondtls.RequireAndVerifyClientCert),
			piondtls.WithClientCAs(s.cfg.clientCAs),
			piondtls.WithCipherSuites(piondtls.TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8, piondtls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256))
	}
	l, err := coapnet.NewDTLSListener("udp", s.cfg.addr, coapnet.NewDTLSServerOptions(dopts...))
	if err != nil {
		t.Fatalf("lwm2mtest: listen: %v", err)
	}
	s.addr = l.Addr().(*net.UDPAddr)
	// A DTLS session is the only way back to the client: keep it while
	// the test runs instead of go-coap's 16 s idle close.
	s.dtls = coapdtls.NewServer(options.WithHandlerFunc(s.handle), options.WithRequestMonitor(s.monitor), errs,
		options.WithInactivityMonitor(time.Hour, func(cc *udpclient.Conn) { _ = cc.Close() }))
	go func() { _ = s.dtls.Serve(l) }()
	t.Cleanup(func() { s.dtls.Stop() })
	return s
}

// Close stops the server and frees its port, as a server going down does.
func (s *Server) Close() {
	if s.udp != nil {
		s.udp.Stop()
	} else {
		s.dtls.Stop()
	}
}

// everySecond runs go-coap's housekeeping (retransmissions, idle
// connections) every second instead of its default four: an idle peer is
// released within the idle time-out plus two rounds.
func everySecond(f func(time.Time) bool) {
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for now := range t.C {
			if !f(now) {
				return
			}
		}
	}()
}

// Addr is the server's UDP address.
func (s *Server) Addr() *net.UDPAddr { return s.addr }

// Host is the server's IP address as text.
func (s *Server) Host() string { return s.addr.IP.String() }

// Port is the server's port.
func (s *Server) Port() int { return s.addr.Port }

// Violations lists every protocol violation seen so far.
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.violations...)
}

// Registration returns the current registration of ep.
func (s *Server) Registration(ep string) (Registration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.regs[ep]
	if !ok {
		return Registration{}, false
	}
	c := *r
	c.Links = append([]codec.Link(nil), r.Links...)
	return c, true
}

// Registrations counts the current registrations.
func (s *Server) Registrations() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.regs)
}

// WaitRegistered waits until ep is registered and returns the registration.
func (s *Server) WaitRegistered(t testing.TB, ep string) Registration {
	t.Helper()
	var r Registration
	testutil.Eventually(t, testutil.MinDeadline, "registration of "+ep, func() bool {
		var ok bool
		r, ok = s.Registration(ep)
		return ok
	})
	return r
}

// WaitDeregistered waits until ep has no registration.
func (s *Server) WaitDeregistered(t testing.TB, ep string) {
	t.Helper()
	testutil.Eventually(t, testutil.MinDeadline, "de-registration of "+ep, func() bool {
		_, ok := s.Registration(ep)
		return !ok
	})
}

// RegisterCount counts the accepted Registers of ep.
func (s *Server) RegisterCount(ep string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.registers[ep]
}

// UpdateCount counts the accepted Updates of ep's current registration.
func (s *Server) UpdateCount(ep string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.regs[ep]; ok {
		return r.Updates
	}
	return 0
}

// DeregisterCount counts the De-registers of ep.
func (s *Server) DeregisterCount(ep string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deregisters[ep]
}

// BootstrapCount counts the Bootstrap-Requests of ep.
func (s *Server) BootstrapCount(ep string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bootstraps[ep]
}

// DropUpdates makes the server ignore (not even acknowledge) the next n
// Update requests; retransmissions of a dropped one are dropped too.
func (s *Server) DropUpdates(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropUpdates = n
}

// FailRegister answers every Register with code (0 restores normal
// operation); the registration is not created.
func (s *Server) FailRegister(code codes.Code) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.regCode = code
}

// OmitLocation answers Register with 2.01 but without Location-Path.
func (s *Server) OmitLocation(omit bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noLocation = omit
}

// AnswerBootstrap sets the answer to Bootstrap-Request (default 2.04).
func (s *Server) AnswerBootstrap(code codes.Code) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bsCode = code
}

// Forget drops ep's registration without telling the client, as a server
// restart or an expired lifetime does; the next Update gets 4.04.
func (s *Server) Forget(ep string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.regs[ep]; ok {
		delete(s.byID, r.ID)
		delete(s.regs, ep)
	}
}

// ForgetObservations makes the server forget every observation, so that
// the next notification of each is answered with RST.
func (s *Server) ForgetObservations() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for tok, o := range s.obs {
		if !o.closed {
			o.closed = true
			close(o.ch)
		}
		delete(s.obs, tok)
	}
}

func (s *Server) violation(format string, args ...any) {
	s.violations = append(s.violations, fmt.Sprintf(format, args...))
}

// monitor drops Update datagrams while DropUpdates asks for it.
func (s *Server) monitor(cc *udpclient.Conn, m *pool.Message) (bool, error) {
	if m.Code() != codes.POST || m.Type() != message.Confirmable && m.Type() != message.NonConfirmable {
		return false, nil
	}
	p, err := m.Options().Path()
	if err != nil || !strings.HasPrefix(p, "/rd/") {
		return false, nil
	}
	key := cc.RemoteAddr().String() + "/" + strconv.Itoa(int(m.MessageID()))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dropped[key] {
		return true, nil
	}
	if s.dropUpdates > 0 {
		s.dropUpdates--
		s.dropped[key] = true
		return true, nil
	}
	return false, nil
}

type writer = responsewriter.ResponseWriter[*udpclient.Conn]

func (s *Server) handle(w *writer, r *pool.Message) {
	if r.Code() >= codes.Created {
		s.notification(w, r)
		return
	}
	p, _ := r.Options().Path()
	body, _ := r.ReadBody()
	switch {
	case r.Code() == codes.POST && p == "/rd":
		s.register(w, r, body)
	case r.Code() == codes.POST && strings.HasPrefix(p, "/rd/"):
		s.update(w, r, strings.TrimPrefix(p, "/rd/"), body)
	case r.Code() == codes.DELETE && strings.HasPrefix(p, "/rd/"):
		s.deregister(w, strings.TrimPrefix(p, "/rd/"))
	case r.Code() == codes.POST && p == "/bs":
		s.bootstrap(w, r)
	default:
		if qs, _ := r.Queries(); r.Code() == codes.POST && hasKey(qs, "ep") {
			s.mu.Lock()
			s.violation("register sent to %q instead of /rd", p)
			s.mu.Unlock()
		}
		_ = w.SetResponse(codes.NotFound, message.TextPlain, nil)
	}
}

func hasKey(qs []string, key string) bool {
	for _, q := range qs {
		if k, _, _ := strings.Cut(q, "="); k == key {
			return true
		}
	}
	return false
}

// queryParams splits Uri-Query options, recording duplicates and keys
// outside allowed as violations.
func queryParams(qs []string, allowed []string, report func(string, ...any)) (map[string]string, map[string]bool) {
	vals := map[string]string{}
	hasValue := map[string]bool{}
	for _, q := range qs {
		k, v, has := strings.Cut(q, "=")
		if _, dup := vals[k]; dup {
			report("duplicated query parameter %q", k)
		}
		known := false
		for _, a := range allowed {
			known = known || a == k
		}
		if !known {
			report("unknown query parameter %q", k)
		}
		vals[k] = v
		hasValue[k] = has
	}
	return vals, hasValue
}

var bindings10 = map[string]bool{"U": true, "UQ": true, "S": true, "SQ": true, "US": true, "UQS": true}

// validBinding checks b against the version: 1.0 lists the combinations
// of U, S and Q (Core 1.0 §5.3.1.1); 1.1 takes each of U, T, S, N at most
// once, with queue mode as the separate Q parameter, and 1.2 adds M (MQTT)
// and H (HTTP).
func validBinding(version, b string) bool {
	if version == "1.0" {
		return bindings10[b]
	}
	if b == "" {
		return false
	}
	letters := "UTSN"
	if version == "1.2" {
		letters += "MH"
	}
	seen := map[rune]bool{}
	for _, c := range b {
		if !strings.ContainsRune(letters, c) || seen[c] {
			return false
		}
		seen[c] = true
	}
	return true
}

var versionRe = regexp.MustCompile(`^\d+\.\d+$`)

// checkLinks validates the Objects and Object Instances list (Core
// §6.1.7.1 / 1.0 §5.3.1): RFC 6690 to the letter, object or instance links
// only, the root link only with rt="oma.lwm2m" and as wakaama's server
// takes it, never the Security object, Server and Device present, no
// duplicates.
func checkLinks(body string, report func(string, ...any)) []codec.Link {
	if strings.TrimSpace(body) == "" {
		report("empty object list")
		return nil
	}
	if err := CheckLinkFormat(body); err != nil {
		report("invalid link format (RFC 6690): %v", err)
		return nil
	}
	for _, f := range RegisterLinkRules(body) {
		report("%s", f)
	}
	links, err := codec.ParseLinks(body)
	if err != nil {
		report("invalid link format: %v", err)
		return nil
	}
	seen := map[string]bool{}
	objects := map[int32]bool{}
	for _, l := range links {
		if seen[l.Target] {
			report("duplicated link %s", l.Target)
		}
		seen[l.Target] = true
		if l.Target == "/" {
			rt := false
			for _, p := range l.Params {
				rt = rt || p.Key == "rt" && p.Value == "oma.lwm2m"
			}
			if !rt {
				report(`root link without rt="oma.lwm2m"`)
			}
			continue
		}
		p, err := codec.ParsePath(l.Target)
		if err != nil || p.Depth() > 2 {
			report("link %s is not an object or object instance", l.Target)
			continue
		}
		if p.Object == 0 {
			report("link %s lists the Security object", l.Target)
		}
		objects[p.Object] = true
		for _, lp := range l.Params {
			if lp.Key == "ver" && !versionRe.MatchString(lp.Value) {
				report("link %s: ver=%q is not a version", l.Target, lp.Value)
			}
		}
	}
	for _, o := range []int32{1, 3} {
		if !objects[o] {
			report("object /%d missing from the object list", o)
		}
	}
	return links
}

func (s *Server) register(w *writer, r *pool.Message, body []byte) {
	var found []string
	report := func(f string, args ...any) { found = append(found, fmt.Sprintf(f, args...)) }
	qs, _ := r.Queries()
	// pid (profile id, 1.2) is accepted whatever the version: the
	// version is itself one of the parameters.
	vals, hasValue := queryParams(qs, []string{"ep", "lt", "lwm2m", "b", "sms", "Q", "pid"}, report)
	ep := vals["ep"]
	if ep == "" {
		report("missing ep")
	}
	lt := defaultLifetime
	if v, ok := vals["lt"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			report("lt=%q is not a positive integer", v)
		}
		lt = n
	}
	version := "1.0"
	if v, ok := vals["lwm2m"]; ok {
		version = v
		if v != "1.0" && v != "1.1" && v != "1.2" {
			report("lwm2m=%q is not 1.0, 1.1 or 1.2", v)
		}
	}
	binding := "U"
	if v, ok := vals["b"]; ok {
		binding = v
		if !validBinding(version, v) {
			report("b=%q is not a valid binding for LwM2M %s", v, version)
		}
	}
	_, queue := vals["Q"]
	if queue && (version == "1.0" || hasValue["Q"]) {
		report("Q parameter not allowed here (LwM2M %s, value %t)", version, hasValue["Q"])
	}
	if cf, err := r.ContentFormat(); err != nil {
		report("Content-Format missing")
	} else if cf != message.AppLinkFormat {
		report("Content-Format %d is not 40 (link format)", cf)
	}
	links := checkLinks(string(body), report)

	s.mu.Lock()
	defer s.mu.Unlock()
	if len(found) > 0 {
		for _, f := range found {
			s.violation("register %s: %s", ep, f)
		}
		_ = w.SetResponse(codes.BadRequest, message.TextPlain, nil)
		return
	}
	if s.regCode != 0 {
		_ = w.SetResponse(s.regCode, message.TextPlain, nil)
		return
	}
	if old, ok := s.regs[ep]; ok {
		// Core §5.3.1: a new Register replaces the old registration.
		delete(s.byID, old.ID)
	}
	s.nextID++
	id := strconv.Itoa(s.nextID)
	now := time.Now()
	reg := &Registration{
		Endpoint: ep, ID: id, Location: "/rd/" + id, Lifetime: lt, Version: version,
		Binding: binding, Queue: queue || strings.Contains(binding, "Q"), SMS: vals["sms"],
		Links: links, Body: string(body), RegisteredAt: now, UpdatedAt: now,
	}
	if a, ok := w.Conn().RemoteAddr().(*net.UDPAddr); ok {
		reg.Addr = a
	}
	if s.dtls != nil {
		reg.conn = w.Conn()
	}
	s.regs[ep] = reg
	s.byID[id] = reg
	s.registers[ep]++
	var opts []message.Option
	if !s.noLocation {
		opts = []message.Option{
			{ID: message.LocationPath, Value: []byte("rd")},
			{ID: message.LocationPath, Value: []byte(id)},
		}
	}
	_ = w.SetResponse(codes.Created, message.TextPlain, nil, opts...)
}

// lookupLocked finds a live registration by id; one whose lifetime
// passed without an Update is removed, as Core §5.3 requires.
func (s *Server) lookupLocked(id string) *Registration {
	reg, ok := s.byID[id]
	if !ok {
		return nil
	}
	if time.Since(reg.UpdatedAt) > time.Duration(reg.Lifetime)*time.Second {
		delete(s.byID, id)
		if s.regs[reg.Endpoint] == reg {
			delete(s.regs, reg.Endpoint)
		}
		return nil
	}
	return reg
}

func (s *Server) update(w *writer, r *pool.Message, id string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	reg := s.lookupLocked(id)
	if reg == nil {
		_ = w.SetResponse(codes.NotFound, message.TextPlain, nil)
		return
	}
	var found []string
	report := func(f string, args ...any) { found = append(found, fmt.Sprintf(f, args...)) }
	qs, _ := r.Queries()
	vals, hasValue := queryParams(qs, []string{"lt", "b", "sms", "Q", "pid"}, report)
	lt := reg.Lifetime
	if v, ok := vals["lt"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			report("lt=%q is not a positive integer", v)
		}
		lt = n
	}
	binding := reg.Binding
	if v, ok := vals["b"]; ok {
		binding = v
		if !validBinding(reg.Version, v) {
			report("b=%q is not a valid binding for LwM2M %s", v, reg.Version)
		}
	}
	if _, q := vals["Q"]; q && (reg.Version == "1.0" || hasValue["Q"]) {
		report("Q parameter not allowed here")
	}
	links := reg.Links
	if len(body) > 0 {
		if cf, err := r.ContentFormat(); err != nil || cf != message.AppLinkFormat {
			report("Update body without Content-Format 40")
		}
		links = checkLinks(string(body), report)
	}
	if len(found) > 0 {
		for _, f := range found {
			s.violation("update %s: %s", reg.Endpoint, f)
		}
		_ = w.SetResponse(codes.BadRequest, message.TextPlain, nil)
		return
	}
	reg.Lifetime, reg.Binding, reg.Links = lt, binding, links
	if _, q := vals["Q"]; q {
		reg.Queue = true
	}
	if a, ok := w.Conn().RemoteAddr().(*net.UDPAddr); ok {
		reg.Addr = a
	}
	if s.dtls != nil {
		reg.conn = w.Conn()
	}
	reg.Updates++
	reg.UpdatedAt = time.Now()
	_ = w.SetResponse(codes.Changed, message.TextPlain, nil)
}

func (s *Server) deregister(w *writer, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	reg := s.lookupLocked(id)
	if reg == nil {
		_ = w.SetResponse(codes.NotFound, message.TextPlain, nil)
		return
	}
	delete(s.byID, id)
	delete(s.regs, reg.Endpoint)
	s.deregisters[reg.Endpoint]++
	_ = w.SetResponse(codes.Deleted, message.TextPlain, nil)
}

func (s *Server) bootstrap(w *writer, r *pool.Message) {
	qs, _ := r.Queries()
	s.mu.Lock()
	defer s.mu.Unlock()
	vals, _ := queryParams(qs, []string{"ep", "pct"}, s.violation)
	if vals["ep"] == "" {
		s.violation("bootstrap: missing ep")
		_ = w.SetResponse(codes.BadRequest, message.TextPlain, nil)
		return
	}
	s.bootstraps[vals["ep"]]++
	_ = w.SetResponse(s.bsCode, message.TextPlain, nil)
}

// notification delivers a notification to its observer; one nobody
// observes any more is answered with RST (RFC 7641 §3.6).
func (s *Server) notification(w *writer, r *pool.Message) {
	n := Notification{Code: r.Code()}
	if o, err := r.Observe(); err == nil {
		n.Seq = o
	}
	if cf, err := r.ContentFormat(); err == nil {
		n.Format = uint16(cf)
	}
	n.Payload, _ = r.ReadBody()
	s.mu.Lock()
	ob, ok := s.obs[string(r.Token())]
	if ok && !ob.closed {
		select {
		case ob.ch <- n:
		default:
			// A test that stopped reading must not stall the server.
		}
	}
	s.mu.Unlock()
	if ok {
		return
	}
	// go-coap's response writer cannot express a RST with the
	// notification's message id, so the RST is written directly.
	cc := w.Conn()
	rst := cc.AcquireMessage(context.Background())
	defer cc.ReleaseMessage(rst)
	rst.SetType(message.Reset)
	rst.SetCode(codes.Empty)
	rst.SetMessageID(r.MessageID())
	_ = cc.Session().WriteMessage(rst)
}

// conn returns a connection to ep's client.
func (s *Server) conn(ep string) (*udpclient.Conn, error) {
	s.mu.Lock()
	reg, ok := s.regs[ep]
	var addr *net.UDPAddr
	var dc *udpclient.Conn
	if ok {
		addr, dc = reg.Addr, reg.conn
	}
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("lwm2m server: %s is not registered", ep)
	}
	if s.dtls != nil {
		if dc == nil || dc.Context().Err() != nil {
			return nil, fmt.Errorf("lwm2m server: no DTLS session with %s", ep)
		}
		return dc, nil
	}
	return s.udp.NewConn(addr)
}

func (s *Server) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.timeout)
}

// answerOf is a client's answer to one request.
type answerOf struct {
	code    codes.Code
	format  uint16
	body    []byte
	observe uint32
}

// roundTrip sends the request built by setup and returns the answer.
func (s *Server) roundTrip(ctx context.Context, ep string, code codes.Code, path string, setup func(*pool.Message)) (answerOf, error) {
	cc, err := s.conn(ep)
	if err != nil {
		return answerOf{}, err
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	req := cc.AcquireMessage(ctx)
	defer cc.ReleaseMessage(req)
	token, err := message.GetToken()
	if err != nil {
		return answerOf{}, err
	}
	req.SetCode(code)
	req.SetToken(token)
	if err := req.SetPath(path); err != nil {
		return answerOf{}, err
	}
	if setup != nil {
		setup(req)
	}
	resp, err := cc.Do(req)
	if err != nil {
		return answerOf{}, fmt.Errorf("lwm2m server: %s %s: %w", code, path, err)
	}
	defer cc.ReleaseMessage(resp)
	a := answerOf{code: resp.Code()}
	if cf, err := resp.ContentFormat(); err == nil {
		a.format = uint16(cf)
	}
	if o, err := resp.Observe(); err == nil {
		a.observe = o
	}
	a.body, _ = resp.ReadBody()
	return a, nil
}

// Read sends Read (GET) and returns the content format and payload; any
// answer but 2.05 is a *StatusError.
func (s *Server) Read(ctx context.Context, ep, path string, accept uint16) (uint16, []byte, error) {
	a, err := s.roundTrip(ctx, ep, codes.GET, path, func(m *pool.Message) {
		if accept != NoAccept {
			m.SetAccept(message.MediaType(accept))
		}
	})
	if err != nil {
		return 0, nil, err
	}
	if a.code != codes.Content {
		return 0, nil, &StatusError{Code: a.code}
	}
	return a.format, a.body, nil
}

// ReadRecords reads path and decodes the answer with the codec.
func (s *Server) ReadRecords(ctx context.Context, ep, path string, accept uint16) ([]codec.Record, error) {
	f, body, err := s.Read(ctx, ep, path, accept)
	if err != nil {
		return nil, err
	}
	p, err := codec.ParsePath(path)
	if err != nil {
		return nil, err
	}
	return codec.Decode(f, p, body, s.cfg.kindOf)
}

// Write sends Write: PUT (replace) or POST (partial update) with the
// payload in format; it returns the client's code.
func (s *Server) Write(ctx context.Context, ep, path string, format uint16, payload []byte, replace bool) (codes.Code, error) {
	code := codes.POST
	if replace {
		code = codes.PUT
	}
	a, err := s.roundTrip(ctx, ep, code, path, func(m *pool.Message) {
		m.SetContentFormat(message.MediaType(format))
		m.SetBody(bytes.NewReader(payload))
	})
	return a.code, err
}

// Execute sends Execute (POST) with optional plain-text arguments.
func (s *Server) Execute(ctx context.Context, ep, path, args string) (codes.Code, error) {
	a, err := s.roundTrip(ctx, ep, codes.POST, path, func(m *pool.Message) {
		if args != "" {
			m.SetContentFormat(message.TextPlain)
			m.SetBody(bytes.NewReader([]byte(args)))
		}
	})
	return a.code, err
}

// Discover sends Discover (GET with Accept: application/link-format) and
// returns the code and the link-format payload.
func (s *Server) Discover(ctx context.Context, ep, path string) (codes.Code, string, error) {
	a, err := s.roundTrip(ctx, ep, codes.GET, path, func(m *pool.Message) {
		m.SetAccept(message.AppLinkFormat)
	})
	return a.code, string(a.body), err
}

// WriteAttributes sends Write-Attributes: PUT with the attributes as
// query ("pmin=10", "pmax=60", "gt" to unset gt) and no payload.
func (s *Server) WriteAttributes(ctx context.Context, ep, path string, attrs ...string) (codes.Code, error) {
	a, err := s.roundTrip(ctx, ep, codes.PUT, path, func(m *pool.Message) {
		for _, q := range attrs {
			m.AddQuery(q)
		}
	})
	return a.code, err
}

// Delete sends Delete on path.
func (s *Server) Delete(ctx context.Context, ep, path string) (codes.Code, error) {
	a, err := s.roundTrip(ctx, ep, codes.DELETE, path, nil)
	return a.code, err
}

// Observe sends Observe (GET with Observe=0). The channel receives the
// first answer and every notification; cancel sends a GET with Observe=1
// (Cancel Observation) and closes the channel.
func (s *Server) Observe(ctx context.Context, ep, path string, accept uint16) (<-chan Notification, func(), error) {
	token, err := message.GetToken()
	if err != nil {
		return nil, nil, err
	}
	ob := &observer{ch: make(chan Notification, 64)}
	s.mu.Lock()
	s.obs[string(token)] = ob
	s.mu.Unlock()
	drop := func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.obs[string(token)] == ob {
			delete(s.obs, string(token))
		}
		if !ob.closed {
			ob.closed = true
			close(ob.ch)
		}
	}
	get := func(ctx context.Context, obs uint32) (answerOf, error) {
		return s.roundTrip(ctx, ep, codes.GET, path, func(m *pool.Message) {
			m.SetToken(token)
			m.SetObserve(obs)
			if accept != NoAccept {
				m.SetAccept(message.MediaType(accept))
			}
		})
	}
	a, err := get(ctx, 0)
	if err != nil {
		drop()
		return nil, nil, err
	}
	if a.code != codes.Content {
		drop()
		return nil, nil, &StatusError{Code: a.code}
	}
	ob.ch <- Notification{Code: a.code, Seq: a.observe, Format: a.format, Payload: a.body}
	cancel := func() {
		drop()
		_, _ = get(context.Background(), 1)
	}
	return ob.ch, cancel, nil
}
