package lwm2m

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plgd-dev/go-coap/v3/message"
	"github.com/plgd-dev/go-coap/v3/message/codes"
	"github.com/plgd-dev/go-coap/v3/message/pool"
	udpclient "github.com/plgd-dev/go-coap/v3/udp/client"

	"cpesuite/internal/iotemu/lwm2m/codec"
	"cpesuite/internal/iotemu/proto"
)

// maxRetryDelay caps the wait before a failed registration is tried
// again, so that a device whose server was down comes back within a
// minute even with a long lifetime.
const maxRetryDelay = 30 * time.Second

// errNotStarted is returned by operations that need a running device.
var errNotStarted = errors.New("lwm2m: device not started")

// device is one LwM2M client.
//
// Locking: life serialises Start, Stop, Reboot and Deregister; op
// serialises the registration exchanges (and the connection they create)
// and is held across network I/O; mu guards the state below and is never
// held across I/O or a Host call. The order is life, op, mu.
type device struct {
	cfg  proto.Config
	host proto.Host
	o    opts
	ep   string

	life sync.Mutex
	op   sync.Mutex

	mu sync.Mutex
	// running is true between Start and Stop; gen changes at both, so
	// that timers and callbacks of an earlier run do nothing.
	running bool
	gen     uint64
	runCtx  context.Context
	stopRun context.CancelFunc
	sec     *security       // DTLS material of this run, nil for plain CoAP
	sock    *net.UDPConn    // bound socket not yet wrapped in cc
	cc      *udpclient.Conn // nil while not connected
	// location is the registration's Location-Path ("/rd/5"); "" while
	// not registered.
	location string
	sentLt   string // lifetime and binding the server last received
	sentB    string
	timer    *time.Timer
	obs      []*observation
	attrs    map[codec.Path]attrSet
	fwTimer  *time.Timer

	// clockOffset is the device clock (Current Time, /3/0/13) minus the
	// host's, in seconds: 0 until a server or the API sets the time.
	clockOffset atomic.Int64
}

var (
	_ proto.Device       = (*device)(nil)
	_ proto.Rebooter     = (*device)(nil)
	_ proto.Bootstrapper = (*device)(nil)
	_ proto.Deregisterer = (*device)(nil)
	_ proto.Updater      = (*device)(nil)
)

func newDevice(cfg proto.Config, host proto.Host, o opts) *device {
	if o.version == "1.0" && o.format != codec.FormatTLV {
		// SenML only exists from LwM2M 1.1; a 1.0 client speaks TLV.
		o.format = codec.FormatTLV
	}
	return &device{cfg: cfg, host: host, o: o, ep: o.prefix + cfg.ClientID}
}

// Start implements proto.Device.
func (d *device) Start(ctx context.Context) error {
	d.life.Lock()
	defer d.life.Unlock()
	return d.start(ctx)
}

func (d *device) start(ctx context.Context) error {
	d.mu.Lock()
	running := d.running
	d.mu.Unlock()
	if running {
		return nil
	}
	sec, err := securityConfig(d.cfg)
	if err != nil {
		return fmt.Errorf("lwm2m: %s: %w", d.cfg.ClientID, err)
	}
	uc, err := d.bind()
	if err != nil {
		return fmt.Errorf("lwm2m: %s: %w", d.cfg.ClientID, err)
	}
	if la, ok := uc.LocalAddr().(*net.UDPAddr); ok && !la.IP.IsUnspecified() {
		_, _, _ = d.host.Params().Put(nameIPAddress, la.IP.String())
	}
	d.mu.Lock()
	d.sec = sec
	d.running = true
	d.gen++
	gen := d.gen
	d.runCtx, d.stopRun = context.WithCancel(context.Background())
	d.sock = uc
	d.location = ""
	d.mu.Unlock()

	if d.o.late {
		d.host.SetConnection(proto.Disconnected)
		d.host.SetStatus(fmt.Sprintf("late registration in %s", d.o.lateDelay))
		d.schedule(gen, d.o.lateDelay)
		return nil
	}
	d.op.Lock()
	defer d.op.Unlock()
	// A failed Register is reported through the host and retried; Start
	// itself succeeded.
	_ = d.register(ctx, gen)
	return nil
}

// Stop implements proto.Device.
func (d *device) Stop(ctx context.Context) error {
	d.life.Lock()
	defer d.life.Unlock()
	d.stop(ctx, "stopped")
	return nil
}

// Deregister implements proto.Deregisterer: the registration ends and the
// socket is closed, as Stop does; Start brings the device back.
func (d *device) Deregister(ctx context.Context) (bool, error) {
	d.life.Lock()
	defer d.life.Unlock()
	return d.stop(ctx, "deregistered")
}

// stop ends the run: De-register if registered, close the socket, cancel
// every timer. It reports whether a registration was active.
func (d *device) stop(ctx context.Context, status string) (bool, error) {
	d.mu.Lock()
	if !d.running {
		d.mu.Unlock()
		return false, nil
	}
	d.running = false
	d.gen++
	d.stopRun()
	d.stopTimersLocked()
	d.mu.Unlock()

	// In-flight exchanges were cancelled above, so op is free promptly.
	d.op.Lock()
	defer d.op.Unlock()
	d.mu.Lock()
	cc, sock, loc := d.cc, d.sock, d.location
	d.cc, d.sock, d.location = nil, nil, ""
	d.mu.Unlock()

	var err error
	if cc != nil && loc != "" && cc.Context().Err() == nil {
		err = d.deregister(ctx, cc, loc)
	}
	if cc != nil {
		closeConn(cc, d.o.requestTimeout)
	}
	if sock != nil {
		_ = sock.Close()
	}
	d.host.SetConnection(proto.Disconnected)
	d.host.SetStatus(status)
	return loc != "", err
}

func (d *device) stopTimersLocked() {
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	if d.fwTimer != nil {
		d.fwTimer.Stop()
		d.fwTimer = nil
	}
	for _, o := range d.obs {
		o.stop()
	}
	d.obs = nil
	d.attrs = nil
}

// Reboot implements proto.Rebooter: De-register, drop the connection and
// every observation, then start and register again, as a rebooting device
// does.
func (d *device) Reboot(ctx context.Context) error {
	d.life.Lock()
	defer d.life.Unlock()
	d.mu.Lock()
	running := d.running
	d.mu.Unlock()
	if !running {
		return errNotStarted
	}
	if _, err := d.stop(ctx, "rebooting"); err != nil {
		d.logf("reboot: %v", err)
	}
	return d.start(ctx)
}

// Heartbeat implements proto.Device: an Update, or a Register when the
// device is not registered.
func (d *device) Heartbeat(ctx context.Context) error {
	d.op.Lock()
	defer d.op.Unlock()
	gen, ok := d.current()
	if !ok {
		return errNotStarted
	}
	if d.loc() == "" {
		return d.register(ctx, gen)
	}
	return d.update(ctx, gen)
}

// Update implements proto.Updater.
func (d *device) Update(ctx context.Context) (bool, error) {
	d.op.Lock()
	defer d.op.Unlock()
	gen, ok := d.current()
	if !ok || d.loc() == "" {
		return false, nil
	}
	return true, d.update(ctx, gen)
}

// Bootstrap implements proto.Bootstrapper: a Bootstrap-Request (POST
// /bs?ep=) to the configured server. There is no bootstrap server in the
// emulator's scope, so the device only reports the answer: 2.04 is
// success. A stopped device uses a socket of its own for the exchange.
func (d *device) Bootstrap(ctx context.Context) error {
	d.op.Lock()
	defer d.op.Unlock()
	var cc *udpclient.Conn
	if gen, ok := d.current(); ok {
		c, err := d.ensureConn(ctx, gen)
		if err != nil {
			return fmt.Errorf("lwm2m: bootstrap: %w", err)
		}
		cc = c
	} else {
		sec, err := securityConfig(d.cfg)
		if err != nil {
			return fmt.Errorf("lwm2m: bootstrap: %w", err)
		}
		uc, err := d.bind()
		if err != nil {
			return fmt.Errorf("lwm2m: bootstrap: %w", err)
		}
		c, err := d.connect(ctx, uc, sec)
		if err != nil {
			return fmt.Errorf("lwm2m: bootstrap: %w", err)
		}
		defer closeConn(c, d.o.requestTimeout)
		cc = c
	}
	req, err := cc.NewPostRequest(ctx, "/bs", message.TextPlain, nil, query("ep="+d.ep))
	if err != nil {
		return fmt.Errorf("lwm2m: bootstrap: %w", err)
	}
	defer cc.ReleaseMessage(req)
	resp, err := d.exchange(ctx, cc, req, "BOOTSTRAP", "", false)
	if err != nil {
		return fmt.Errorf("lwm2m: bootstrap: %w", err)
	}
	defer cc.ReleaseMessage(resp)
	if resp.Code() != codes.Changed {
		return fmt.Errorf("lwm2m: bootstrap: server answered %s", codeText(resp.Code()))
	}
	return nil
}

// current reports the run generation if the device is running.
func (d *device) current() (uint64, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.gen, d.running
}

func (d *device) isCurrent(gen uint64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.running && d.gen == gen
}

func (d *device) loc() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.location
}

func (d *device) logf(format string, args ...any) {
	if d.cfg.Logger != nil {
		d.cfg.Logger.Debug("lwm2m: "+fmt.Sprintf(format, args...), "client", d.cfg.ClientID)
	}
}

// lifetime and binding are read from the Server object, so a write by the
// server or the API takes effect at the next Update.
func (d *device) lifetime() string {
	if v := d.host.Params().Value(nameLifetime); v != "" {
		return v
	}
	return strconv.Itoa(d.o.lifetime)
}

func (d *device) binding() string {
	if v := d.host.Params().Value(nameBinding); v != "" {
		return v
	}
	return d.o.binding
}

// period is the time between Updates.
func (d *device) period() time.Duration {
	if d.o.updatePeriod > 0 {
		return d.o.updatePeriod
	}
	lt, err := strconv.Atoi(d.lifetime())
	if err != nil || lt <= 0 {
		lt = d.o.lifetime
	}
	return time.Duration(lt) * time.Second * 9 / 10
}

func (d *device) retryDelay() time.Duration {
	return min(d.period(), maxRetryDelay)
}

// schedule arms the device's one registration timer: when it fires the
// device registers (or updates, if registered). Stale generations are
// ignored so that a timer of a stopped run never acts.
func (d *device) schedule(gen uint64, after time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.running || d.gen != gen {
		return
	}
	if d.timer != nil {
		d.timer.Stop()
	}
	d.timer = time.AfterFunc(after, func() { d.tick(gen) })
}

func (d *device) tick(gen uint64) {
	d.op.Lock()
	defer d.op.Unlock()
	if !d.isCurrent(gen) {
		return
	}
	if d.loc() == "" {
		_ = d.register(context.Background(), gen)
		return
	}
	_ = d.update(context.Background(), gen)
}

// ensureConn returns the live connection, reconnecting (and re-running the
// DTLS handshake) when there is none. A lost connection also loses the
// registration: the device registers again. Called with op held.
func (d *device) ensureConn(ctx context.Context, gen uint64) (*udpclient.Conn, error) {
	d.mu.Lock()
	cc, sock, sec := d.cc, d.sock, d.sec
	if cc != nil && cc.Context().Err() != nil {
		// The reader stopped (ICMP port unreachable, DTLS close_notify):
		// the registration cannot be used any more.
		cc = nil
		d.cc = nil
		d.location = ""
	}
	d.sock = nil
	d.mu.Unlock()
	if cc != nil {
		return cc, nil
	}
	if sock == nil {
		var err error
		if sock, err = d.bind(); err != nil {
			return nil, err
		}
	}
	ctx, cancel := d.opContext(ctx)
	defer cancel()
	cc, err := d.connect(ctx, sock, sec)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	if !d.running || d.gen != gen {
		d.mu.Unlock()
		closeConn(cc, d.o.requestTimeout)
		return nil, errNotStarted
	}
	d.cc = cc
	d.mu.Unlock()
	return cc, nil
}

// connLost handles the connection's reader stopping on its own (ICMP port
// unreachable, a DTLS close_notify): a registered device reports it and
// registers again after the retry delay, on a new socket.
func (d *device) connLost(cc *udpclient.Conn) {
	d.mu.Lock()
	if !d.running || d.cc != cc {
		// Closed by the device itself, or a connection it no longer uses.
		d.mu.Unlock()
		return
	}
	d.cc = nil
	registered := d.location != ""
	d.location = ""
	gen := d.gen
	d.mu.Unlock()
	if !registered {
		// A Register in flight reports its own failure.
		return
	}
	d.host.SetConnection(proto.Disconnected)
	d.host.SetStatus("connection to the server lost")
	d.schedule(gen, d.retryDelay())
}

// opContext bounds an exchange by the request time-out and by the run:
// Stop cancels whatever is in flight.
func (d *device) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, d.o.requestTimeout)
	d.mu.Lock()
	run := d.runCtx
	d.mu.Unlock()
	if run == nil {
		return ctx, cancel
	}
	stop := context.AfterFunc(run, cancel)
	return ctx, func() { stop(); cancel() }
}

// exchange sends req and waits for the answer, logging both. bounded
// selects whether the run's cancellation applies (not for De-register,
// which Stop itself sends).
func (d *device) exchange(ctx context.Context, cc *udpclient.Conn, req *pool.Message, event, payload string, bounded bool) (*pool.Message, error) {
	var cancel context.CancelFunc
	if bounded {
		ctx, cancel = d.opContext(ctx)
	} else {
		ctx, cancel = context.WithTimeout(ctx, d.o.requestTimeout)
	}
	defer cancel()
	req.SetContext(ctx)
	// Type and message id are set here rather than by go-coap so that the
	// log shows the datagram as sent.
	req.SetType(message.Confirmable)
	req.SetMessageID(cc.GetMessageID())
	d.host.Log(entry("OUT", event, req, payload))
	resp, err := cc.Do(req)
	if err != nil {
		return nil, err
	}
	d.host.Log(entry("IN", event, resp, ""))
	return resp, nil
}

// failed reports an unsuccessful registration exchange and schedules the
// next attempt.
func (d *device) failed(gen uint64, what string, err error) error {
	d.mu.Lock()
	if !d.running || d.gen != gen {
		// Stop cancelled the exchange; it reports the outcome itself.
		d.mu.Unlock()
		return errNotStarted
	}
	d.location = ""
	d.mu.Unlock()
	d.host.SetConnection(proto.Disconnected)
	d.host.SetStatus(what + ": " + reason(err, d.o.requestTimeout))
	d.schedule(gen, d.retryDelay())
	return fmt.Errorf("lwm2m: %s: %w", what, err)
}

func reason(err error, timeout time.Duration) string {
	s := err.Error()
	if errors.Is(err, context.DeadlineExceeded) {
		return strings.Replace(s, context.DeadlineExceeded.Error(), fmt.Sprintf("no answer within %s", timeout), 1)
	}
	return s
}

// codeError is a CoAP answer other than the expected one.
type codeError struct{ code codes.Code }

func (e codeError) Error() string { return "server answered " + codeText(e.code) }

// register sends Register (Core §5.3.1; Transport §6.4.1: POST
// /rd?ep=&lt=&lwm2m=&b= with the object links). Called with op held.
func (d *device) register(ctx context.Context, gen uint64) error {
	cc, err := d.ensureConn(ctx, gen)
	if err != nil {
		if errors.Is(err, errNotStarted) {
			return err
		}
		return d.failed(gen, "register failed", err)
	}
	lt, b := d.lifetime(), d.binding()
	body := registrationLinks(d.o.version, d.o.format)
	qs := []message.Option{query("ep=" + d.ep), query("lt=" + lt), query("lwm2m=" + d.o.version)}
	qs = append(qs, d.bindingQueries(b)...)
	req, err := cc.NewPostRequest(ctx, "/rd", message.AppLinkFormat, bytes.NewReader([]byte(body)), qs...)
	if err != nil {
		return d.failed(gen, "register failed", err)
	}
	defer cc.ReleaseMessage(req)
	d.host.SetStatus("registering")
	resp, err := d.exchange(ctx, cc, req, "REGISTER", body, true)
	if err != nil {
		if !d.isCurrent(gen) {
			return errNotStarted
		}
		return d.failed(gen, "register failed", err)
	}
	defer cc.ReleaseMessage(resp)
	if resp.Code() != codes.Created {
		return d.failed(gen, "register failed", codeError{resp.Code()})
	}
	loc, err := resp.Options().LocationPath()
	if err != nil || loc == "" || loc == "/" {
		return d.failed(gen, "register failed", errors.New("2.01 without Location-Path"))
	}
	d.mu.Lock()
	if !d.running || d.gen != gen {
		d.mu.Unlock()
		return errNotStarted
	}
	d.location = loc
	d.sentLt, d.sentB = lt, b
	// A new registration starts without observations (the server forgets
	// them on Register, Core §5.3.1).
	for _, o := range d.obs {
		o.stop()
	}
	d.obs = nil
	d.mu.Unlock()
	d.host.SetConnection(proto.Connected)
	d.host.SetStatus("registered as " + loc)
	d.schedule(gen, d.period())
	return nil
}

// bindingQueries spells the binding: 1.0 carries queue mode inside b
// ("UQ"), 1.1 and later as a separate Q parameter (Transport 1.1 §6.4.1).
func (d *device) bindingQueries(b string) []message.Option {
	if d.o.version == "1.0" || !strings.Contains(b, "Q") {
		return []message.Option{query("b=" + b)}
	}
	return []message.Option{query("b=" + strings.ReplaceAll(b, "Q", "")), query("Q")}
}

// update sends Update (Core §5.3.2: POST /rd/{id} carrying only what
// changed). A time-out is retried once; 4.04 means the server forgot the
// registration and the device registers again. Called with op held.
func (d *device) update(ctx context.Context, gen uint64) error {
	cc, err := d.ensureConn(ctx, gen)
	if err != nil {
		if errors.Is(err, errNotStarted) {
			return err
		}
		return d.failed(gen, "update failed", err)
	}
	loc := d.loc()
	if loc == "" {
		// The connection was lost and with it the registration.
		return d.register(ctx, gen)
	}
	lt, b := d.lifetime(), d.binding()
	d.mu.Lock()
	var qs []message.Option
	if lt != d.sentLt {
		qs = append(qs, query("lt="+lt))
	}
	if b != d.sentB {
		qs = append(qs, d.bindingQueries(b)...)
	}
	d.mu.Unlock()

	var resp *pool.Message
	for attempt := 0; ; attempt++ {
		req, err := cc.NewPostRequest(ctx, loc, message.TextPlain, nil, qs...)
		if err != nil {
			return d.failed(gen, "update failed", err)
		}
		event := "UPDATE"
		if attempt > 0 {
			event = "UPDATE_RETRY"
		}
		resp, err = d.exchange(ctx, cc, req, event, "", true)
		cc.ReleaseMessage(req)
		if err == nil {
			break
		}
		if !d.isCurrent(gen) {
			return errNotStarted
		}
		if attempt == 0 && errors.Is(err, context.DeadlineExceeded) {
			continue
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return d.failed(gen, "update failed", fmt.Errorf("retried once: %w", err))
		}
		return d.failed(gen, "update failed", err)
	}
	code := resp.Code()
	cc.ReleaseMessage(resp)
	switch code {
	case codes.Changed:
	case codes.NotFound:
		d.mu.Lock()
		d.location = ""
		d.mu.Unlock()
		d.host.SetStatus("update answered 4.04: registering again")
		return d.register(ctx, gen)
	default:
		return d.failed(gen, "update failed", codeError{code})
	}
	d.mu.Lock()
	d.sentLt, d.sentB = lt, b
	d.mu.Unlock()
	d.host.SetConnection(proto.Connected)
	d.host.SetStatus("registered as " + loc)
	d.schedule(gen, d.period())
	return nil
}

// deregister sends De-register (DELETE /rd/{id}, expecting 2.02),
// bounded by the request time-out. Called with op held.
func (d *device) deregister(ctx context.Context, cc *udpclient.Conn, loc string) error {
	req, err := cc.NewDeleteRequest(ctx, loc)
	if err != nil {
		return fmt.Errorf("lwm2m: deregister: %w", err)
	}
	defer cc.ReleaseMessage(req)
	resp, err := d.exchange(ctx, cc, req, "DEREGISTER", "", false)
	if err != nil {
		return fmt.Errorf("lwm2m: deregister: %w", err)
	}
	defer cc.ReleaseMessage(resp)
	if resp.Code() != codes.Deleted {
		return fmt.Errorf("lwm2m: deregister: %w", codeError{resp.Code()})
	}
	return nil
}

// triggerUpdate sends an Update soon, outside the caller's goroutine (the
// server's Execute on /1/0/8, a changed lifetime or binding).
func (d *device) triggerUpdate() {
	gen, ok := d.current()
	if !ok {
		return
	}
	time.AfterFunc(0, func() {
		d.op.Lock()
		defer d.op.Unlock()
		if !d.isCurrent(gen) || d.loc() == "" {
			return
		}
		_ = d.update(context.Background(), gen)
	})
}

// Changed implements proto.Device. It never blocks: notifications go out
// from timers or a goroutine of their own.
func (d *device) Changed(name, value string) {
	switch name {
	case nameLifetime, nameBinding:
		d.mu.Lock()
		changed := d.location != "" && ((name == nameLifetime && value != d.sentLt) || (name == nameBinding && value != d.sentB))
		d.mu.Unlock()
		if changed {
			d.triggerUpdate()
		}
	case nameTempValue:
		d.trackMinMax(value)
	case nameTime:
		if v, err := strconv.ParseInt(value, 10, 64); err == nil {
			d.clockOffset.Store(v - time.Now().Unix())
		}
	}
	d.notifyChanged(name)
}

// now reads the device clock (Current Time) and keeps the parameter in
// step, so that the API shows the time last reported. It never notifies:
// the clock ticking is no change an observer is told about by itself
// (pmax still brings the current time).
func (d *device) now() string {
	v := strconv.FormatInt(time.Now().Unix()+d.clockOffset.Load(), 10)
	_, _, _ = d.host.Params().Put(nameTime, v)
	return v
}

// trackMinMax keeps Temperature's Min/Max Measured Value in step with the
// Sensor Value, as a sensor does.
func (d *device) trackMinMax(value string) {
	v, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return
	}
	ps := d.host.Params()
	if mn, err := strconv.ParseFloat(ps.Value(nameTempMin), 64); err == nil && v < mn {
		d.putLocal(nameTempMin, value)
	}
	if mx, err := strconv.ParseFloat(ps.Value(nameTempMax), 64); err == nil && v > mx {
		d.putLocal(nameTempMax, value)
	}
}

// putLocal stores a device-owned value and notifies its observers.
func (d *device) putLocal(name, value string) {
	if _, _, err := d.host.Params().Put(name, value); err != nil {
		d.logf("put %s: %v", name, err)
		return
	}
	d.notifyChanged(name)
}
