package grid

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// readyTimeout bounds how long StartEmbedded waits for the server. A healthy
// server is ready in milliseconds; the bound only turns a stuck start into an
// error.
const readyTimeout = 10 * time.Second

// Embedded is a NATS server with JetStream running inside this process.
type Embedded struct {
	srv       *server.Server
	once      sync.Once
	clientURL string
}

// StartEmbedded starts a NATS server with JetStream storing in cfg.StoreDir
// and returns once it accepts connections. Without cfg.Listen the server
// opens no socket at all and is reachable only through Connect in this
// process.
func StartEmbedded(cfg Config) (*Embedded, error) {
	if cfg.StoreDir == "" {
		return nil, fmt.Errorf("starting embedded grid server: %s: must be set", EnvStoreDir)
	}
	opts := &server.Options{
		ServerName: "cpesuite-grid",
		JetStream:  true,
		StoreDir:   cfg.StoreDir,
		DontListen: cfg.Listen == "",
		// The process owns signals and logging; the library server must not.
		NoSigs: true,
		NoLog:  true,
	}
	if cfg.Listen != "" {
		host, port, err := splitListen(cfg.Listen)
		if err != nil {
			return nil, fmt.Errorf("starting embedded grid server: %s: %w", EnvListen, err)
		}
		if port == 0 {
			// For the server, port 0 means 4222; "any free port" is -1.
			port = server.RANDOM_PORT
		}
		opts.Host, opts.Port = host, port
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("creating embedded grid server: %w", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(readyTimeout) {
		srv.Shutdown()
		srv.WaitForShutdown()
		if cfg.Listen != "" {
			// The usual cause is a listen address that is already taken.
			return nil, fmt.Errorf("starting embedded grid server: not ready after %s; is %s %q free?", readyTimeout, EnvListen, cfg.Listen)
		}
		return nil, fmt.Errorf("starting embedded grid server: not ready after %s", readyTimeout)
	}
	if !srv.JetStreamEnabled() {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, errors.New("starting embedded grid server: jetstream did not start")
	}
	e := &Embedded{srv: srv}
	if cfg.Listen != "" {
		if addr, ok := srv.Addr().(*net.TCPAddr); ok {
			host := addr.IP.String()
			if addr.IP.IsUnspecified() {
				// Listening on all interfaces; loopback is one of them and the
				// one address that surely works from this machine.
				host = "127.0.0.1"
			}
			e.clientURL = "nats://" + net.JoinHostPort(host, strconv.Itoa(addr.Port))
		}
	}
	return e, nil
}

// Connect relies on the server offering connections without a socket.
var _ nats.InProcessConnProvider = (*server.Server)(nil)

// Server returns the underlying NATS server, for in-process connections and
// for tests that inspect it.
func (e *Embedded) Server() *server.Server { return e.srv }

// ClientURL returns the nats:// URL other processes use to reach the server,
// or "" when it does not listen on a socket. For a server listening on all
// interfaces it names the loopback address.
func (e *Embedded) ClientURL() string { return e.clientURL }

// Addr returns the host:port the server listens on, or "" when it does not
// listen on a socket.
func (e *Embedded) Addr() string {
	if e.clientURL == "" {
		return ""
	}
	return e.clientURL[len("nats://"):]
}

// Shutdown stops the server and waits until it has stopped. It is safe to
// call more than once and from several goroutines.
func (e *Embedded) Shutdown() {
	e.once.Do(func() {
		e.srv.Shutdown()
		e.srv.WaitForShutdown()
	})
}
