package tr143

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"
)

// dialTimeout bounds one TCP connect; the run's context bounds it too.
const dialTimeout = 30 * time.Second

// connStats is what one test connection saw at the socket, kept up to
// date by the counting connection and the dialer.
type connStats struct {
	// pace, when set, throttles what the connection counts (SpeedDelay).
	pace *pacer
	// onBytes, when set, hears of every byte read and written (the
	// device's WAN counters).
	onBytes func(rx, tx int64)
	// upload says the connection carries an upload: its reads are the
	// server's answer, never throttled.
	upload bool

	mu sync.Mutex
	f  connFigures
}

// connFigures are measured, never estimated.
type connFigures struct {
	// tcpOpenRequest and tcpOpenResponse frame the connect(2) of the first
	// TCP connection (SYN sent, handshake done).
	tcpOpenRequest, tcpOpenResponse time.Time
	dialErr                         error
	connected                       bool
	firstWrite                      time.Time
	firstRead, lastRead             time.Time
	// bodyStarted is set by an upload body once it has produced bytes;
	// the next write to the socket is then the first carrying payload.
	bodyStarted  bool
	firstPayload time.Time
	// responseAt is when the first byte of an upload's response arrived.
	responseAt time.Time
	read       int64
	written    int64
	// until, when set, ends the measurement window of a time-based
	// download: reads that complete later are not counted.
	until time.Time
}

func (s *connStats) onRead(n int, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.f.until.IsZero() && at.After(s.f.until) {
		return
	}
	if s.f.firstRead.IsZero() {
		s.f.firstRead = at
	}
	s.f.lastRead = at
	s.f.read += int64(n)
}

func (s *connStats) onWrite(n int, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f.firstWrite.IsZero() {
		s.f.firstWrite = at
	}
	if s.f.bodyStarted && s.f.firstPayload.IsZero() {
		s.f.firstPayload = at
	}
	s.f.written += int64(n)
}

func (s *connStats) markBodyStarted() {
	s.mu.Lock()
	s.f.bodyStarted = true
	s.mu.Unlock()
}

// payloadStarted reports whether the next write carries upload payload.
func (s *connStats) payloadStarted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.bodyStarted
}

func (s *connStats) markResponse(at time.Time) {
	s.mu.Lock()
	if s.f.responseAt.IsZero() {
		s.f.responseAt = at
	}
	s.mu.Unlock()
}

// snapshot copies the figures, for a connection that is done with.
func (s *connStats) snapshot() connFigures {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f
}

// dialer returns the DialContext of a test connection's transport. It
// resolves the host before taking TCPOpenRequestTime, so that the DNS round
// trip is not counted as TCP handshake, and it records the first
// connection's handshake times and any failure for the state mapping.
func (s *connStats) dialer(network string, dscp int) func(ctx context.Context, _, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: dialTimeout, Control: dscpControl(dscp)}
	return func(ctx context.Context, _, addr string) (net.Conn, error) {
		c, reqAt, respAt, err := dialResolved(ctx, d, network, addr)
		s.mu.Lock()
		defer s.mu.Unlock()
		if err != nil {
			if s.f.dialErr == nil {
				s.f.dialErr = err
			}
			return nil, err
		}
		if !s.f.connected {
			s.f.connected = true
			s.f.tcpOpenRequest, s.f.tcpOpenResponse = reqAt, respAt
		}
		return &countingConn{Conn: c, s: s}, nil
	}
}

// dialResolved resolves addr's host and connects to its addresses in turn,
// returning the handshake times of the attempt that succeeded.
func dialResolved(ctx context.Context, d *net.Dialer, network, addr string) (net.Conn, time.Time, time.Time, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, time.Time{}, time.Time{}, err
	}
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, time.Time{}, time.Time{}, err
	}
	ips = filterFamily(ips, network)
	if len(ips) == 0 {
		return nil, time.Time{}, time.Time{}, &net.DNSError{Err: "no address of the requested IP version", Name: host, IsNotFound: true}
	}
	var firstErr error
	for _, ip := range ips {
		reqAt := time.Now()
		c, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return c, reqAt, time.Now(), nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, time.Time{}, time.Time{}, firstErr
}

// filterFamily keeps the addresses network may use, IPv4 first as a
// dual-stack CPE without IPv6 preference would try them.
func filterFamily(ips []net.IPAddr, network string) []net.IPAddr {
	var v4, v6 []net.IPAddr
	for _, ip := range ips {
		if ip.IP.To4() != nil {
			v4 = append(v4, ip)
		} else {
			v6 = append(v6, ip)
		}
	}
	switch network[len(network)-1] {
	case '4':
		return v4
	case '6':
		return v6
	}
	return append(v4, v6...)
}

// countingConn counts the bytes and times of the reads and writes that the
// HTTP transport does on the socket. It deliberately does not expose the
// TCPConn's ReadFrom, so that every byte goes through Write.
//
// Writes are stamped with the time the bytes were handed to the socket,
// reads with the time they came out of it: the transport reads and writes
// from different goroutines, and this way a request's stamp precedes its
// answer's however they are scheduled.
type countingConn struct {
	net.Conn
	s *connStats
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && c.s.onBytes != nil {
		c.s.onBytes(int64(n), 0)
	}
	if n <= 0 {
		return n, err
	}
	pc := c.s.pace
	if pc == nil || c.s.upload {
		c.s.onRead(n, time.Now())
		return n, err
	}
	// A throttled download counts the bytes as the slow link would have
	// delivered them: a stall holds back what already arrived.
	for off := 0; off < n; {
		k := pc.take(n - off)
		c.s.onRead(k, time.Now())
		pc.counted(k)
		off += k
	}
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	pc := c.s.pace
	if pc == nil || !c.s.upload || !c.s.payloadStarted() {
		at := time.Now()
		n, err := c.Conn.Write(p)
		c.wrote(n, at)
		return n, err
	}
	// A throttled upload holds the payload back at each stall, so the
	// server's answer (EOM) comes that much later.
	total := 0
	for total < len(p) {
		k := pc.take(len(p) - total)
		at := time.Now()
		n, err := c.Conn.Write(p[total : total+k])
		c.wrote(n, at)
		pc.counted(n)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func (c *countingConn) wrote(n int, at time.Time) {
	if n <= 0 {
		return
	}
	c.s.onWrite(n, at)
	if c.s.onBytes != nil {
		c.s.onBytes(0, int64(n))
	}
}

// isDNSError reports whether err is a failure to resolve a name.
func isDNSError(err error) bool {
	var dns *net.DNSError
	return errors.As(err, &dns)
}
