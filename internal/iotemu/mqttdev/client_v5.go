package mqttdev

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"
	"github.com/eclipse/paho.golang/paho/log"
)

// receiveMaximum is announced in CONNECT. paho sizes its inbound channel by
// it, 65,535 slots (512 KiB) per client when it is absent; a sensor is sent
// a command now and then, so a few slots are plenty.
var receiveMaximum uint16 = 8

// sessionNeverExpires is the MQTT 5 session expiry that matches an MQTT
// 3.1.1 persistent session (cleanSession=false).
var sessionNeverExpires uint32 = 0xFFFFFFFF

// v5Client is an MQTT 5 connection through paho.golang's paho package (not
// autopaho: the device runs its own reconnect loop, the same for both
// protocol versions, and a paho.Client lives for one connection only).
type v5Client struct {
	d      *Device
	l      *link
	pinger *timerPinger

	mu sync.Mutex
	c  *paho.Client // nil until connect has dialed
}

func newV5Client(d *Device, l *link) *v5Client {
	return &v5Client{d: d, l: l, pinger: &timerPinger{}}
}

func (vc *v5Client) connect(ctx context.Context) (bool, error) {
	d := vc.d
	conn, err := d.dial(vc.l)
	if err != nil {
		return false, err
	}
	if _, ok := conn.(*net.TCPConn); !ok {
		// paho writes from several goroutines; a TCPConn serialises
		// whole writes itself, a tls.Conn does not.
		conn = packets.NewThreadSafeConn(conn)
	}
	l := vc.l
	cfg := paho.ClientConfig{
		ClientID:    d.clientID,
		Conn:        conn,
		PingHandler: vc.pinger,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){
			func(pr paho.PublishReceived) (bool, error) {
				p := pr.Packet
				d.received(l, p.Topic, p.Payload, p.QoS, p.Retain)
				return true, nil
			},
		},
		OnClientError: func(err error) {
			if vc.pinger.timedOut() {
				err = errors.New("no PINGRESP from broker")
			}
			d.lost(l, err)
		},
		OnServerDisconnect: func(dis *paho.Disconnect) {
			d.log(dirIn, evDisconnect, "reasonCode="+itoa(int(dis.ReasonCode)), "")
			d.lost(l, fmt.Errorf("broker sent DISCONNECT: %s", v5Reason((&packets.Disconnect{ReasonCode: dis.ReasonCode}).Reason())))
		},
		PacketTimeout: packetTimeout,
	}
	if !d.set.clean {
		// Kept across the connections of one run so that unacknowledged
		// QoS 1/2 messages are resent after a reconnect.
		cfg.Session = vc.l.run.v5Session
	}
	c := paho.NewClient(cfg)
	vc.mu.Lock()
	vc.c = c
	vc.mu.Unlock()

	cp := &paho.Connect{
		ClientID:   d.clientID,
		KeepAlive:  d.set.keepAlive,
		CleanStart: d.set.clean,
		Properties: &paho.ConnectProperties{ReceiveMaximum: &receiveMaximum},
		WillMessage: &paho.WillMessage{
			Topic: d.stateTopic, Payload: payloadOffline, QoS: d.set.qos, Retain: true,
		},
	}
	if !d.set.clean {
		cp.Properties.SessionExpiryInterval = &sessionNeverExpires
	}
	if d.set.username != "" {
		cp.Username, cp.UsernameFlag = d.set.username, true
	}
	if d.set.password != "" {
		cp.Password, cp.PasswordFlag = []byte(d.set.password), true
	}
	ca, err := c.Connect(ctx, cp)
	if err != nil {
		if ca != nil && ca.ReasonCode >= 0x80 {
			reason := v5Reason((&packets.Connack{ReasonCode: ca.ReasonCode}).Reason())
			if reason == "" {
				reason = "reason code " + itoa(int(ca.ReasonCode))
			}
			return false, &refusedError{code: ca.ReasonCode, reason: reason}
		}
		return false, err
	}
	return ca.SessionPresent, nil
}

// v5Reason shortens paho's "Not authorized - The Client is not ..." to
// "not authorized".
func v5Reason(s string) string {
	if i := strings.Index(s, " - "); i >= 0 {
		s = s[:i]
	}
	return strings.ToLower(s)
}

func (vc *v5Client) client() *paho.Client {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	return vc.c
}

func (vc *v5Client) subscribe(ctx context.Context, topic string, qos byte) error {
	c := vc.client()
	if c == nil {
		return errNotConnected
	}
	_, err := c.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: topic, QoS: qos}}})
	return err
}

func (vc *v5Client) publish(ctx context.Context, topic string, qos byte, retain bool, payload []byte) error {
	c := vc.client()
	if c == nil {
		return errNotConnected
	}
	_, err := c.Publish(ctx, &paho.Publish{Topic: topic, QoS: qos, Retain: retain, Payload: payload})
	return err
}

func (vc *v5Client) disconnect() {
	if c := vc.client(); c != nil {
		_ = c.Disconnect(&paho.Disconnect{ReasonCode: 0})
	}
}

// timerPinger is paho's keep-alive on a time.AfterFunc timer instead of a
// goroutine of its own (paho's DefaultPinger blocks one goroutine per
// connection for its whole life). Run arms the timer and returns; the
// timer sends PINGREQ when nothing was sent or received for a keep-alive
// interval and closes the connection when PINGRESP does not come in time,
// which makes paho report the loss through OnClientError.
type timerPinger struct {
	mu       sync.Mutex
	conn     net.Conn
	interval time.Duration
	timer    *time.Timer
	lastSent time.Time
	lastRecv time.Time
	pingSent time.Time // zero when no PINGRESP is outstanding
	stopped  bool
	expired  bool
}

var _ paho.Pinger = (*timerPinger)(nil)

// Run implements paho.Pinger.
func (p *timerPinger) Run(ctx context.Context, conn net.Conn, keepAlive uint16) error {
	if keepAlive == 0 {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.timer != nil || p.stopped {
		return errors.New("pinger already ran")
	}
	now := time.Now()
	p.conn, p.interval = conn, time.Duration(keepAlive)*time.Second
	p.lastSent, p.lastRecv = now, now
	p.timer = time.AfterFunc(p.interval, p.check)
	context.AfterFunc(ctx, p.stop)
	return nil
}

func (p *timerPinger) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	if p.timer != nil {
		p.timer.Stop()
	}
}

func (p *timerPinger) timedOut() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.expired
}

// pingTimeout is how long PINGRESP may take: the library default of the
// 3.1.1 client, but never more than the keep-alive itself.
func (p *timerPinger) pingTimeout() time.Duration { return min(p.interval, packetTimeout) }

func (p *timerPinger) check() {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return
	}
	now := time.Now()
	if !p.pingSent.IsZero() {
		if now.Sub(p.pingSent) >= p.pingTimeout() {
			p.stopped, p.expired = true, true
			conn := p.conn
			p.mu.Unlock()
			_ = conn.Close()
			return
		}
		p.timer.Reset(p.pingSent.Add(p.pingTimeout()).Sub(now))
		p.mu.Unlock()
		return
	}
	last := p.lastSent
	if p.lastRecv.Before(last) {
		last = p.lastRecv
	}
	due := last.Add(p.interval)
	if now.Before(due) {
		p.timer.Reset(due.Sub(now))
		p.mu.Unlock()
		return
	}
	p.pingSent, p.lastSent = now, now
	p.timer.Reset(p.pingTimeout())
	conn := p.conn
	p.mu.Unlock()
	// A failed write surfaces as a read error in paho's reader soon
	// enough; closing here makes that certain.
	if _, err := packets.NewControlPacket(packets.PINGREQ).WriteTo(conn); err != nil {
		_ = conn.Close()
	}
}

// PacketSent implements paho.Pinger.
func (p *timerPinger) PacketSent() {
	p.mu.Lock()
	p.lastSent = time.Now()
	p.mu.Unlock()
}

// PacketReceived implements paho.Pinger.
func (p *timerPinger) PacketReceived() {
	p.mu.Lock()
	p.lastRecv = time.Now()
	p.mu.Unlock()
}

// PingResp implements paho.Pinger.
func (p *timerPinger) PingResp() {
	p.mu.Lock()
	p.pingSent = time.Time{}
	p.mu.Unlock()
}

// SetDebug implements paho.Pinger.
func (p *timerPinger) SetDebug(log.Logger) {}
