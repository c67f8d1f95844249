package mqttdev

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"
)

// v3Base holds the options common to every client; each client copies it.
// The copy is shallow: the header map, websocket options and dialer it
// points to are shared, so per-client setters must not touch them (the
// device dials itself, so they are never used).
var v3Base = func() *mqtt.ClientOptions {
	o := mqtt.NewClientOptions()
	o.SetProtocolVersion(4)
	o.SetPingTimeout(packetTimeout)
	o.SetAutoReconnect(false)
	o.SetConnectRetry(false)
	o.SetConnectTimeout(connectTimeout)
	o.SetWriteTimeout(packetTimeout)
	// Ordered delivery in the library's router goroutine: the handler only
	// applies writes and queues the ack, it never blocks on the network.
	o.SetOrderMatters(true)
	return o
}()

// v3Refusals are the CONNACK return codes of MQTT 3.1.1 (section 3.2.2.3).
var v3Refusals = map[byte]string{
	packets.ErrRefusedBadProtocolVersion:    "unacceptable protocol version",
	packets.ErrRefusedIDRejected:            "identifier rejected",
	packets.ErrRefusedServerUnavailable:     "server unavailable",
	packets.ErrRefusedBadUsernameOrPassword: "bad user name or password",
	packets.ErrRefusedNotAuthorised:         "not authorized",
}

// v3Client is an MQTT 3.1.1 connection through paho.mqtt.golang. The
// library's own reconnect logic is off: the device reconnects with a fresh
// client, which keeps retry timing and status reporting the same for both
// protocol versions.
type v3Client struct {
	c       mqtt.Client
	dialErr error // set by the open function, read after the connect token completes
}

func newV3Client(d *Device, l *link) *v3Client {
	vc := &v3Client{}
	o := *v3Base
	o.Servers = []*url.URL{{Scheme: "tcp", Host: d.addr}} // only named in library logs
	o.SetClientID(d.clientID)
	o.SetUsername(d.set.username)
	o.SetPassword(d.set.password)
	o.SetKeepAlive(secs(d.set.keepAlive))
	o.SetCleanSession(d.set.clean)
	o.SetBinaryWill(d.stateTopic, payloadOffline, d.set.qos, true)
	if !d.set.clean {
		// Shared by every client of this run so that unacknowledged QoS
		// 1/2 messages are resent after a reconnect.
		o.SetStore(l.run.v3Store)
	}
	o.SetDefaultPublishHandler(func(_ mqtt.Client, m mqtt.Message) {
		d.received(l, m.Topic(), m.Payload(), m.Qos(), m.Retained())
	})
	o.SetConnectionLostHandler(func(_ mqtt.Client, err error) { d.lost(l, err) })
	o.SetCustomOpenConnectionFn(func(*url.URL, mqtt.ClientOptions) (net.Conn, error) {
		c, err := d.dial(l)
		vc.dialErr = err
		return c, err
	})
	vc.c = mqtt.NewClient(&o)
	return vc
}

func (vc *v3Client) connect(context.Context) (bool, error) {
	// The token completes within connectTimeout (the library sets a
	// deadline on the handshake) or as soon as the link's context closes
	// the connection, so there is nothing to select on.
	t := vc.c.Connect().(*mqtt.ConnectToken)
	<-t.Done()
	if err := t.Error(); err != nil {
		if reason, ok := v3Refusals[t.ReturnCode()]; ok {
			return false, &refusedError{code: t.ReturnCode(), reason: reason}
		}
		if vc.dialErr != nil {
			return false, vc.dialErr
		}
		if errors.Is(err, packets.ErrorNetworkError) {
			// The handshake failed after dialing: strip the library's
			// generic "network Error : " prefix.
			if u := errors.Unwrap(err); u != nil {
				return false, u
			}
		}
		return false, err
	}
	return t.SessionPresent(), nil
}

func (vc *v3Client) subscribe(ctx context.Context, topic string, qos byte) error {
	t := vc.c.Subscribe(topic, qos, nil).(*mqtt.SubscribeToken)
	if err := wait(ctx, t); err != nil {
		return err
	}
	if granted, ok := t.Result()[topic]; ok && granted >= 0x80 {
		return fmt.Errorf("subscription to %s refused by broker", topic)
	}
	return nil
}

func (vc *v3Client) publish(ctx context.Context, topic string, qos byte, retain bool, payload []byte) error {
	return wait(ctx, vc.c.Publish(topic, qos, retain, payload))
}

func (vc *v3Client) disconnect() { vc.c.Disconnect(uint(quiesce.Milliseconds())) }

func wait(ctx context.Context, t mqtt.Token) error {
	ctx, cancel := context.WithTimeout(ctx, packetTimeout)
	defer cancel()
	select {
	case <-t.Done():
		return t.Error()
	case <-ctx.Done():
		return fmt.Errorf("mqtt: no answer from broker: %w", ctx.Err())
	}
}
