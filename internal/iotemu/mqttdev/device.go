package mqttdev

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/paho/session/state"
	mqtt "github.com/eclipse/paho.mqtt.golang"

	"cpesuite/internal/iotemu/proto"
)

// Log entry directions and events.
const (
	dirIn  = "IN"
	dirOut = "OUT"

	evConnect    = "CONNECT"
	evConnack    = "CONNACK"
	evPublish    = "PUBLISH"
	evSubscribe  = "SUBSCRIBE"
	evDisconnect = "DISCONNECT"
)

// Reconnect timing.
const (
	minBackoff = time.Second
	maxBackoff = 30 * time.Second
	// A connection that lived this long resets the back-off; one that
	// keeps dying right after CONNACK (say, a duplicate client id) backs
	// off like a refused one.
	stableAfter = 30 * time.Second
	// stopPublishTimeout bounds the "offline" publish of Stop.
	stopPublishTimeout = 2 * time.Second
	// maxQueuedAcks bounds the acks waiting for a connection; a broker
	// that floods a disconnected device's set topic cannot grow it.
	maxQueuedAcks = 64
)

// run is what the connections of one Start…Stop of a device share.
type run struct {
	startedAt time.Time
	tlsConf   *tls.Config  // nil: plain TCP
	v3Store   mqtt.Store   // cleanSession=false, MQTT 3.1.1
	v5Session *state.State // cleanSession=false, MQTT 5
}

// link is one connection (attempt) of a device. Callbacks of the client
// carry their link, so that those of a replaced link are ignored.
type link struct {
	ctx    context.Context // cancelled when the link is replaced or stopped
	cancel context.CancelFunc
	run    *run
	cl     client
	// lostErr records a loss reported before attempt saw CONNACK.
	lostErr error
}

// Device is one emulated MQTT sensor.
type Device struct {
	host     proto.Host
	set      *settings
	clientID string
	serial   string
	addr     string       // host:port of the broker
	local    *net.TCPAddr // local bind address, nil: any
	tlsFrom  *proto.Config

	telemetryTopic, setTopic, ackTopic, stateTopic, paramPrefix string
	connectOpts                                                 string // CONNECT log options, without secrets

	started  atomic.Bool // between Start and Stop
	online   atomic.Bool // connected; the lock-free copy of connected
	tickBusy atomic.Bool // a periodic telemetry publish is in flight

	mu          sync.Mutex
	run         *run // nil when stopped
	link        *link
	connected   bool
	connectedAt time.Time
	backoff     time.Duration
	retry       *time.Timer
	tele        *time.Timer
	conn        proto.Connection // "" until the first outcome
	status      string
	version     uint64 // of conn and status

	// reportMu orders the pushes of conn and status to the host, which
	// happen outside mu so that the host is never called under it.
	reportMu sync.Mutex
	reported uint64

	// The outbound queue: acks and coalesced parameter changes, drained by
	// a goroutine that exists only while there is something to send.
	qmu     sync.Mutex
	qgen    uint64 // bumped when Stop clears the queue
	acks    [][]byte
	pending map[string]string
	order   []string
	working bool
}

var (
	_ proto.Device   = (*Device)(nil)
	_ proto.Rebooter = (*Device)(nil)
)

func newDevice(cfg proto.Config, s *settings, host proto.Host) *Device {
	port := cfg.ServerPort
	if port == 0 {
		port = 1883
		if cfg.SecurityMode == proto.SecurityX509 {
			port = 8883
		}
	}
	d := &Device{
		host:     host,
		set:      s,
		clientID: cfg.ClientID,
		serial:   cfg.SerialNumber,
		addr:     net.JoinHostPort(cfg.ServerIP, strconv.Itoa(port)),
	}
	if cfg.ClientIP != "" || cfg.ClientPort != 0 {
		d.local = &net.TCPAddr{IP: net.ParseIP(cfg.ClientIP), Port: cfg.ClientPort}
	}
	if cfg.SecurityMode == proto.SecurityX509 {
		c := proto.Config{TrustStorePath: cfg.TrustStorePath, AuthKeyStorePath: cfg.AuthKeyStorePath}
		d.tlsFrom = &c
	}
	base := s.prefix + "/" + cfg.ClientID + "/"
	d.telemetryTopic = base + "telemetry"
	d.setTopic = base + "set"
	d.ackTopic = base + "ack"
	d.stateTopic = base + "state"
	d.paramPrefix = base + "param/"
	d.connectOpts = fmt.Sprintf("clientId=%s username=%s keepAlive=%d cleanSession=%t will=%s version=%s",
		cfg.ClientID, s.username, s.keepAlive, s.clean, d.stateTopic, s.versionName())
	return d
}

// Start implements proto.Device.
func (d *Device) Start(context.Context) error {
	d.mu.Lock()
	if d.run != nil {
		d.mu.Unlock()
		return nil
	}
	r := &run{startedAt: time.Now()}
	if d.tlsFrom != nil {
		c, err := loadTLS(*d.tlsFrom)
		if err != nil {
			d.mu.Unlock()
			return err
		}
		r.tlsConf = c
	}
	if !d.set.clean {
		if d.set.v5 {
			r.v5Session = state.NewInMemory()
		} else {
			r.v3Store = mqtt.NewMemoryStore()
		}
	}
	d.run = r
	d.backoff = 0
	d.started.Store(true)
	l := d.newLinkLocked()
	if d.set.period > 0 {
		// A random first delay spreads the publishes of devices started
		// together over the whole period.
		d.tele = time.AfterFunc(rand.N(d.set.period), func() { d.tick(r) })
	}
	d.setStateLocked("", "connecting to "+d.addr+" ("+d.set.versionName()+")")
	d.mu.Unlock()
	d.report()
	go d.attempt(l)
	return nil
}

// Stop implements proto.Device.
func (d *Device) Stop(ctx context.Context) error {
	d.mu.Lock()
	r := d.run
	if r == nil {
		d.mu.Unlock()
		return nil
	}
	l, wasConnected := d.link, d.connected
	d.run, d.link, d.connected = nil, nil, false
	d.started.Store(false)
	d.online.Store(false)
	if d.retry != nil {
		d.retry.Stop()
		d.retry = nil
	}
	if d.tele != nil {
		d.tele.Stop()
		d.tele = nil
	}
	d.setStateLocked(proto.Disconnected, "stopped")
	d.mu.Unlock()

	d.qmu.Lock()
	d.qgen++
	d.acks, d.pending, d.order = nil, nil, nil
	d.qmu.Unlock()

	if l != nil {
		if wasConnected {
			pctx, cancel := context.WithTimeout(ctx, stopPublishTimeout)
			_ = d.publish(pctx, l, d.stateTopic, true, payloadOffline)
			cancel()
			d.log(dirOut, evDisconnect, "", "")
			l.cl.disconnect()
		}
		// Aborts a connect attempt in progress.
		l.cancel()
	}
	if r.v5Session != nil {
		_ = r.v5Session.Close()
	}
	d.report()
	return nil
}

// Reboot implements proto.Rebooter: a clean stop and a fresh start, as a
// device that restarts its firmware would do (Uptime starts over).
func (d *Device) Reboot(ctx context.Context) error {
	if err := d.Stop(ctx); err != nil {
		return err
	}
	return d.Start(ctx)
}

// Heartbeat implements proto.Device: it publishes telemetry now.
func (d *Device) Heartbeat(ctx context.Context) error {
	l := d.live()
	if l == nil {
		return errNotConnected
	}
	return d.publishTelemetry(ctx, l)
}

// Changed implements proto.Device. It only queues: the drain goroutine
// publishes, and a value not yet sent is replaced by a newer one.
func (d *Device) Changed(name, value string) {
	if !d.started.Load() {
		return
	}
	d.qmu.Lock()
	if d.pending == nil {
		d.pending = make(map[string]string)
	}
	if _, ok := d.pending[name]; !ok {
		d.order = append(d.order, name)
	}
	d.pending[name] = value
	d.qmu.Unlock()
	d.kick()
}

// newLinkLocked replaces the current link by a fresh one of the current
// run; the old one's context is cancelled, which closes its connection.
func (d *Device) newLinkLocked() *link {
	if d.link != nil {
		d.link.cancel()
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &link{ctx: ctx, cancel: cancel, run: d.run}
	if d.set.v5 {
		l.cl = newV5Client(d, l)
	} else {
		l.cl = newV3Client(d, l)
	}
	d.link = l
	return l
}

// retryLocked schedules the next connect attempt with a new link and
// returns the delay.
func (d *Device) retryLocked() time.Duration {
	d.backoff = min(max(2*d.backoff, minBackoff), maxBackoff)
	delay := d.backoff - rand.N(d.backoff/5)
	l := d.newLinkLocked()
	d.retry = time.AfterFunc(delay, func() { d.attempt(l) })
	return delay
}

// attempt makes one connect attempt on l and reports the outcome. It runs
// on its own goroutine (Start) or a retry timer's.
func (d *Device) attempt(l *link) {
	d.mu.Lock()
	current := d.link == l
	d.mu.Unlock()
	if !current {
		return
	}

	d.log(dirOut, evConnect, d.connectOpts, "")
	present, err := l.cl.connect(l.ctx)
	var refused *refusedError
	switch {
	case err == nil:
		d.log(dirIn, evConnack, "returnCode=0 sessionPresent="+strconv.FormatBool(present), "")
	case errors.As(err, &refused):
		d.log(dirIn, evConnack, "returnCode="+itoa(int(refused.code)), refused.reason)
	}

	d.mu.Lock()
	if d.link != l {
		// Stopped or superseded while connecting.
		d.mu.Unlock()
		if err == nil {
			l.cl.disconnect()
		}
		return
	}
	if err == nil && l.lostErr != nil {
		d.connectedAt = time.Now()
		d.connected = true
		d.mu.Unlock()
		d.lost(l, l.lostErr)
		return
	}
	if err != nil {
		delay := d.retryLocked()
		d.setStateLocked(proto.Disconnected,
			fmt.Sprintf("cannot connect to %s: %v, retrying in %s", d.addr, err, roundDelay(delay)))
		d.mu.Unlock()
		d.report()
		return
	}
	d.connected, d.connectedAt = true, time.Now()
	d.online.Store(true)
	connectedStatus := "connected to " + d.addr + " (" + d.set.versionName() + ")"
	d.setStateLocked(proto.Connected, connectedStatus)
	d.mu.Unlock()
	d.report()

	ctx, cancel := context.WithTimeout(l.ctx, packetTimeout)
	defer cancel()
	d.log(dirOut, evSubscribe, "topic="+d.setTopic+" qos="+itoa(int(d.set.qos)), "")
	if err := l.cl.subscribe(ctx, d.setTopic, d.set.qos); err != nil {
		// A dead connection is reported by lost; a refusal leaves the
		// device connected but deaf, which the status line must say.
		d.mu.Lock()
		if d.link == l && d.connected {
			d.setStateLocked(proto.Connected, connectedStatus+", but subscribing to "+d.setTopic+" failed: "+err.Error())
		}
		d.mu.Unlock()
		d.report()
	}
	_ = d.publish(ctx, l, d.stateTopic, true, payloadOnline)
	d.kick()
}

// lost handles the loss of l's connection, reported by its client.
func (d *Device) lost(l *link, err error) {
	if err == nil {
		err = errors.New("closed")
	}
	d.mu.Lock()
	if d.link != l {
		d.mu.Unlock()
		return
	}
	if !d.connected {
		// Before attempt has handled CONNACK; it will call lost again.
		if l.lostErr == nil {
			l.lostErr = err
		}
		d.mu.Unlock()
		return
	}
	d.connected = false
	d.online.Store(false)
	if time.Since(d.connectedAt) >= stableAfter {
		d.backoff = 0
	}
	delay := d.retryLocked()
	d.setStateLocked(proto.Disconnected, fmt.Sprintf("connection lost: %v, retrying in %s", err, roundDelay(delay)))
	d.mu.Unlock()
	d.report()
}

// live returns the connected link, or nil.
func (d *Device) live() *link {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.connected {
		return nil
	}
	return d.link
}

// tick is the periodic telemetry timer of run r.
func (d *Device) tick(r *run) {
	d.mu.Lock()
	if d.run != r {
		d.mu.Unlock()
		return
	}
	d.tele.Reset(d.set.period)
	var l *link
	if d.connected {
		l = d.link
	}
	d.mu.Unlock()
	// A publish still waiting for its PUBACK means the broker is behind;
	// piling more onto it would only grow the backlog.
	if l == nil || !d.tickBusy.CompareAndSwap(false, true) {
		return
	}
	defer d.tickBusy.Store(false)
	ctx, cancel := context.WithTimeout(l.ctx, packetTimeout)
	defer cancel()
	_ = d.publishTelemetry(ctx, l)
}

// publishTelemetry refreshes Uptime and publishes the telemetry document.
func (d *Device) publishTelemetry(ctx context.Context, l *link) error {
	ps := d.host.Params()
	up := int64(time.Since(l.run.startedAt) / time.Second)
	_, _, _ = ps.Put("Uptime", strconv.FormatInt(up, 10))
	payload := appendTelemetry(make([]byte, 0, 512), d.clientID, d.serial, time.Now().UnixMilli(), ps.List())
	return d.publish(ctx, l, d.telemetryTopic, d.set.retain, payload)
}

// publish logs and publishes one message at the device's QoS.
func (d *Device) publish(ctx context.Context, l *link, topic string, retain bool, payload []byte) error {
	d.log(dirOut, evPublish, pubOpts(topic, d.set.qos, retain), string(payload))
	return l.cl.publish(ctx, topic, d.set.qos, retain, payload)
}

// received handles an inbound PUBLISH on l. It runs in the client
// library's delivery goroutine, in arrival order, so writes are applied in
// the order the broker sent them; it must not block on the network.
func (d *Device) received(l *link, topic string, payload []byte, qos byte, retain bool) {
	d.log(dirIn, evPublish, pubOpts(topic, qos, retain), string(payload))
	d.mu.Lock()
	current := d.link == l
	d.mu.Unlock()
	if !current || topic != d.setTopic {
		return
	}
	a := d.execute(payload).marshal()
	d.qmu.Lock()
	if len(d.acks) < maxQueuedAcks {
		d.acks = append(d.acks, a)
	}
	d.qmu.Unlock()
	d.kick()
}

// execute applies a set command and returns its ack.
func (d *Device) execute(payload []byte) ack {
	cmd, err := parseCommand(payload)
	a := ack{ID: cmd.id}
	if err != nil && len(cmd.writes) == 0 {
		a.Error = err.Error()
		return a
	}
	fail := d.host.FailResponse()
	for _, w := range cmd.writes {
		r := ackResult{Name: w.name}
		switch {
		case w.err != "":
			r.Error = w.err
		case fail:
			r.Error = failResponseError
		default:
			if err := d.host.Write(w.name, w.value); err != nil {
				r.Error = err.Error()
			} else {
				r.OK = true
			}
		}
		a.Results = append(a.Results, r)
	}
	return a
}

// kick starts the drain goroutine when there is something to send and a
// connection to send it on.
func (d *Device) kick() {
	if !d.online.Load() {
		return
	}
	d.qmu.Lock()
	if d.working || (len(d.acks) == 0 && len(d.order) == 0) {
		d.qmu.Unlock()
		return
	}
	d.working = true
	d.qmu.Unlock()
	go d.drain()
}

// drain publishes queued acks, then parameter changes, one at a time:
// waiting for each is the back-pressure that lets Changed coalesce.
func (d *Device) drain() {
	var l *link
	for {
		d.qmu.Lock()
		gen := d.qgen
		var (
			topic, name, value string
			payload            []byte
			retain, isAck      bool
		)
		switch {
		case len(d.acks) > 0:
			isAck, topic, payload = true, d.ackTopic, d.acks[0]
		case len(d.order) > 0:
			name = d.order[0]
			value = d.pending[name]
			topic, payload, retain = d.paramPrefix+name, []byte(value), d.set.retain
		default:
			d.working = false
			d.qmu.Unlock()
			return
		}
		d.qmu.Unlock()

		l = d.live()
		err := errNotConnected
		if l != nil {
			ctx, cancel := context.WithTimeout(l.ctx, packetTimeout)
			err = d.publish(ctx, l, topic, retain, payload)
			cancel()
		}
		// A failure on a connection that is still up (the broker refused
		// or timed out) would fail again: drop the message. A failure
		// because the connection went away keeps it for the next one.
		keep := err != nil && (l == nil || d.live() != l)

		d.qmu.Lock()
		if gen == d.qgen && !keep {
			if isAck {
				d.acks[0] = nil
				d.acks = d.acks[1:]
			} else if d.pending[name] == value {
				delete(d.pending, name)
				d.order = d.order[1:]
			}
		}
		if keep {
			d.working = false
			d.qmu.Unlock()
			// The connection may have come back while this publish
			// failed; its kick found this goroutine still working.
			if nl := d.live(); nl != nil && nl != l {
				d.kick()
			}
			return
		}
		d.qmu.Unlock()
	}
}

// setStateLocked records the connection value ("" keeps it) and status
// line for report.
func (d *Device) setStateLocked(c proto.Connection, status string) {
	if c != "" {
		d.conn = c
	}
	d.status = status
	d.version++
}

// report pushes the latest connection value and status to the host. Every
// change is followed by a report, and each report sends the state current
// at that time, so the host ends up with the device's last state however
// the reports interleave.
func (d *Device) report() {
	d.reportMu.Lock()
	defer d.reportMu.Unlock()
	d.mu.Lock()
	c, s, v := d.conn, d.status, d.version
	d.mu.Unlock()
	if v == d.reported {
		return
	}
	d.reported = v
	if c != "" {
		d.host.SetConnection(c)
	}
	d.host.SetStatus(s)
}

func (d *Device) log(dir, event, opts, payload string) {
	d.host.Log(proto.Entry{Direction: dir, Event: event, MessageOptions: opts, Payload: payload})
}

func pubOpts(topic string, qos byte, retain bool) string {
	return "topic=" + topic + " qos=" + itoa(int(qos)) + " retain=" + strconv.FormatBool(retain)
}

func itoa(n int) string { return strconv.Itoa(n) }

func secs(n uint16) time.Duration { return time.Duration(n) * time.Second }

// roundDelay keeps the jitter's nanoseconds out of the status line.
func roundDelay(d time.Duration) time.Duration { return max(d.Round(time.Second), time.Second) }
