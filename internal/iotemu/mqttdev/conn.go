package mqttdev

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"cpesuite/internal/iotemu/proto"
)

// Timeouts of one connection. They bound how long a dead broker can hold a
// goroutine of the device.
const (
	connectTimeout = 10 * time.Second // TCP + TLS + CONNACK
	packetTimeout  = 10 * time.Second // SUBACK, PUBACK/PUBCOMP, PINGRESP
	quiesce        = 250 * time.Millisecond
)

// client is one MQTT connection of a device; a device makes a new one for
// each connect attempt, so a client never has to be reset.
type client interface {
	// connect dials and waits for CONNACK. A refusal by the broker is a
	// *refusedError.
	connect(ctx context.Context) (sessionPresent bool, err error)
	subscribe(ctx context.Context, topic string, qos byte) error
	// publish returns once the message is done with at its QoS: written
	// (0), PUBACK (1) or PUBCOMP (2).
	publish(ctx context.Context, topic string, qos byte, retain bool, payload []byte) error
	// disconnect sends DISCONNECT (so the broker drops the Last Will) and
	// closes the connection.
	disconnect()
}

// refusedError is a CONNACK with a failure code.
type refusedError struct {
	code   byte
	reason string
}

func (e *refusedError) Error() string { return "refused by broker: " + e.reason }

// dial opens the transport of l: TCP, or TLS when the run has a TLS
// configuration. Cancelling l's context closes the connection, which
// aborts a handshake in progress; by then a live connection has been shut
// down already (see Device.Stop and Device.lost).
func (d *Device) dial(l *link) (net.Conn, error) {
	ctx := l.ctx
	nd := net.Dialer{
		Timeout: connectTimeout,
		// MQTT keep-alive already detects dead peers; TCP keep-alive
		// probes on 10,000 idle sockets would only add packets.
		KeepAlive: -1,
	}
	if d.local != nil {
		nd.LocalAddr = d.local
		if d.local.Port != 0 {
			nd.Control = reuseAddr
		}
	}
	var (
		c   net.Conn
		err error
	)
	if l.run.tlsConf != nil {
		td := tls.Dialer{NetDialer: &nd, Config: l.run.tlsConf}
		c, err = td.DialContext(ctx, "tcp", d.addr)
	} else {
		c, err = nd.DialContext(ctx, "tcp", d.addr)
	}
	if err != nil {
		return nil, err
	}
	context.AfterFunc(ctx, func() { _ = c.Close() })
	return c, nil
}

// tlsKey identifies the files a TLS configuration was built from, down to
// their modification, so that an edited file is read again.
type tlsKey struct {
	trust, keys       string
	trustMod, keysMod time.Time
	trustLen, keysLen int64
}

// tlsConfigs shares one parsed configuration between every device using
// the same files: 10,000 devices need not parse 10,000 copies of a CA pool.
var tlsConfigs = struct {
	sync.Mutex
	m map[tlsKey]*tls.Config
}{m: map[tlsKey]*tls.Config{}}

// loadTLS returns the shared TLS configuration for cfg's trust store (PEM
// CA certificates; empty: the system roots) and key store (PEM certificate
// chain and unencrypted private key; empty: no client certificate). The
// returned value must not be modified.
func loadTLS(cfg proto.Config) (*tls.Config, error) {
	key := tlsKey{trust: cfg.TrustStorePath, keys: cfg.AuthKeyStorePath}
	for _, f := range []struct {
		path string
		mod  *time.Time
		n    *int64
	}{{key.trust, &key.trustMod, &key.trustLen}, {key.keys, &key.keysMod, &key.keysLen}} {
		if f.path == "" {
			continue
		}
		st, err := os.Stat(f.path)
		if err != nil {
			return nil, fmt.Errorf("mqtt tls: %w", err)
		}
		*f.mod, *f.n = st.ModTime(), st.Size()
	}

	tlsConfigs.Lock()
	defer tlsConfigs.Unlock()
	if c, ok := tlsConfigs.m[key]; ok {
		return c, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if key.trust != "" {
		pem, err := os.ReadFile(key.trust)
		if err != nil {
			return nil, fmt.Errorf("mqtt tls trust store: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("mqtt tls trust store %s: no PEM certificates", key.trust)
		}
		c.RootCAs = pool
	}
	if key.keys != "" {
		pem, err := os.ReadFile(key.keys)
		if err != nil {
			return nil, fmt.Errorf("mqtt tls key store: %w", err)
		}
		cert, err := tls.X509KeyPair(pem, pem)
		if err != nil {
			return nil, fmt.Errorf("mqtt tls key store %s (want PEM certificate chain and unencrypted key): %w", key.keys, err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	// Files replaced over and over would otherwise pile up entries.
	if len(tlsConfigs.m) >= 64 {
		clear(tlsConfigs.m)
	}
	tlsConfigs.m[key] = c
	return c, nil
}

// errNotConnected is returned by Heartbeat while the device has no live
// connection.
var errNotConnected = errors.New("mqtt: not connected")
