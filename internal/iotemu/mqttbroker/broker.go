// Package mqttbroker runs the embedded MQTT broker (mochi-mqtt) that
// `cpesuite up` starts so that emulated MQTT devices have a broker on a
// machine without one. It accepts every client and every topic: it is a
// development convenience, not a secured service.
package mqttbroker

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"
)

// Broker is a running embedded broker.
type Broker struct {
	srv  *mqtt.Server
	addr string

	once sync.Once
	err  error
}

// Start listens on addr ("127.0.0.1:0" picks a free port) and serves MQTT
// 3.1.1 and 5 there. Mochi's log goes to log at warn level and above
// (its info lines are one per client connect); a nil log discards it.
func Start(addr string, log *slog.Logger) (*Broker, error) {
	var h slog.Handler = slog.DiscardHandler
	if log != nil {
		h = minLevel{Handler: log.Handler(), min: slog.LevelWarn}
	}
	srv := mqtt.New(&mqtt.Options{
		Logger: slog.New(h),
		// Sized for many small clients: mochi's default 2 KiB buffers
		// per direction per client are fine, but make it explicit.
		ClientNetReadBufferSize:  2048,
		ClientNetWriteBufferSize: 2048,
	})
	if err := srv.AddHook(new(allowAll), nil); err != nil {
		return nil, fmt.Errorf("mqtt broker auth hook: %w", err)
	}
	l := listeners.NewTCP(listeners.Config{ID: "tcp", Address: addr})
	if err := srv.AddListener(l); err != nil {
		return nil, fmt.Errorf("mqtt broker listen on %s: %w", addr, err)
	}
	if err := srv.Serve(); err != nil {
		_ = srv.Close()
		return nil, fmt.Errorf("mqtt broker serve: %w", err)
	}
	return &Broker{srv: srv, addr: l.Address()}, nil
}

// Addr is the host:port the broker is bound to.
func (b *Broker) Addr() string { return b.addr }

// Close stops listening and disconnects every client. It is idempotent;
// when it returns the port is free again.
func (b *Broker) Close() error {
	b.once.Do(func() { b.err = b.srv.Close() })
	return b.err
}

// minLevel drops records below min before they reach Handler.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{Handler: m.Handler.WithAttrs(as), min: m.min}
}

func (m minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: m.Handler.WithGroup(name), min: m.min}
}

// allowAll admits every client to every topic. Mochi's own auth.AllowHook
// is the same, but its package pulls in a YAML library this module does
// not carry.
type allowAll struct{ mqtt.HookBase }

func (*allowAll) ID() string { return "allow-all" }

func (*allowAll) Provides(b byte) bool {
	return bytes.Contains([]byte{mqtt.OnConnectAuthenticate, mqtt.OnACLCheck}, []byte{b})
}

func (*allowAll) OnConnectAuthenticate(*mqtt.Client, packets.Packet) bool { return true }

func (*allowAll) OnACLCheck(*mqtt.Client, string, bool) bool { return true }
