package grid

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Environment variable names of the grid settings. The config loader reads
// them; Validate names them in its errors so an operator knows what to fix.
const (
	EnvMembers        = "GRID_MEMBERS"
	EnvStoreDir       = "GRID_STORE_DIR"
	EnvListen         = "GRID_LISTEN"
	EnvConnectTimeout = "GRID_CONNECT_TIMEOUT"
	EnvName           = "GRID_NAME"
)

// DefaultPort is the NATS client port used for members given without one.
const DefaultPort = 4222

// Config says where the grid lives and how to reach it.
type Config struct {
	// Members are the host[:port] addresses of an external NATS cluster.
	// Empty means the process runs its own embedded server.
	Members []string
	// StoreDir is where the embedded server keeps JetStream data.
	StoreDir string
	// Listen is an optional host:port on which the embedded server also
	// accepts other processes. Empty keeps the server in-process only, which
	// is the default because developer machines often run a system
	// nats-server on 4222 already. Port 0 picks a free port.
	Listen string
	// ConnectTimeout bounds the initial connection to each member.
	ConnectTimeout time.Duration
	// Name is the client connection name shown by the server's monitoring.
	Name string
	// ReconnectBase and ReconnectMax bound the exponential back-off between
	// reconnection rounds; zero keeps the package defaults (100 ms, 5 s).
	// A service whose spec fixes its own back-off sets them.
	ReconnectBase time.Duration
	ReconnectMax  time.Duration
}

// DefaultConfig returns the settings of `cpesuite up`: an embedded,
// in-process server storing its data under ./data/grid.
func DefaultConfig() Config {
	return Config{
		StoreDir:       "data/grid",
		ConnectTimeout: 5 * time.Second,
		Name:           "cpesuite",
	}
}

// Embedded reports whether the configuration asks for an embedded server.
func (c Config) Embedded() bool { return len(c.Members) == 0 }

// Validate reports the first setting that cannot work, naming its
// environment variable.
func (c Config) Validate() error {
	var errs []error
	for _, m := range c.Members {
		if _, err := normalizeMember(m); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", EnvMembers, err))
		}
	}
	if c.Embedded() && strings.TrimSpace(c.StoreDir) == "" {
		errs = append(errs, fmt.Errorf("%s: must be set when %s is empty (embedded server)", EnvStoreDir, EnvMembers))
	}
	if c.Listen != "" {
		if !c.Embedded() {
			errs = append(errs, fmt.Errorf("%s: only applies to the embedded server, but %s is set", EnvListen, EnvMembers))
		}
		if _, _, err := splitListen(c.Listen); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", EnvListen, err))
		}
	}
	if c.ConnectTimeout <= 0 {
		errs = append(errs, fmt.Errorf("%s: must be positive, got %s", EnvConnectTimeout, c.ConnectTimeout))
	}
	if c.ReconnectBase < 0 || c.ReconnectMax < 0 || (c.ReconnectMax > 0 && c.ReconnectBase > c.ReconnectMax) {
		errs = append(errs, fmt.Errorf("grid reconnect back-off: base %s and max %s must be non-negative with base <= max", c.ReconnectBase, c.ReconnectMax))
	}
	return errors.Join(errs...)
}

// ParseMembers parses a comma- or space-separated list of host[:port]
// addresses as GRID_MEMBERS gives it, adding the default port where it is
// missing. Blank items are ignored, so an empty string yields no members.
func ParseMembers(s string) ([]string, error) {
	var members []string
	for _, item := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		m, err := normalizeMember(item)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvMembers, err)
		}
		members = append(members, m)
	}
	return members, nil
}

// normalizeMember checks one host[:port] address and returns it as
// host:port. IPv6 literals must be bracketed, as in URLs.
func normalizeMember(s string) (string, error) {
	bad := fmt.Errorf("%q is not host[:port]", s)
	if s == "" || strings.ContainsAny(s, "/@ \t") {
		return "", bad
	}
	host, port := s, strconv.Itoa(DefaultPort)
	if h, p, err := net.SplitHostPort(s); err == nil {
		host, port = h, p
	} else if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		host = s[1 : len(s)-1]
	} else if strings.Contains(s, ":") {
		// Either a bad port or an unbracketed IPv6 address.
		return "", bad
	}
	if host == "" {
		return "", bad
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", bad
	}
	return net.JoinHostPort(host, port), nil
}

// splitListen parses the embedded server's listen address. Unlike members,
// it needs an explicit port, and port 0 means "pick one".
func splitListen(s string) (string, int, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, fmt.Errorf("%q is not host:port", s)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return "", 0, fmt.Errorf("%q is not host:port", s)
	}
	return host, n, nil
}
