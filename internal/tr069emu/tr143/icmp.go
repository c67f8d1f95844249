package tr143

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// ICMP echo message types (RFC 792, RFC 4443).
const (
	icmpv4EchoRequest = 8
	icmpv4EchoReply   = 0
	icmpv6EchoRequest = 128
	icmpv6EchoReply   = 129
	icmpHeaderLen     = 8
)

// A raw ICMP socket receives every ICMP message of the host, so thousands
// of emulated CPEs pinging at once share one socket per family, opened while
// any ping runs, and its reader hands each reply to the ping waiting for it.
var (
	icmp4 = &icmpHolder{network: "ip4:icmp", laddr: "0.0.0.0"}
	icmp6 = &icmpHolder{network: "ip6:ipv6-icmp", laddr: "::", v6: true}
)

// echoIDs numbers the pings in progress; each uses its own ICMP identifier
// and counts its sequence numbers from 0.
var echoIDs atomic.Uint32

func init() { echoIDs.Store(rand.Uint32()) }

type icmpHolder struct {
	network, laddr string
	v6             bool

	mu     sync.Mutex
	sock   *icmpSock
	refs   int
	denied bool // the process may not open raw sockets; do not ask again
}

// acquire returns the family's socket, opening it for the first user.
func (h *icmpHolder) acquire() (*icmpSock, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.denied {
		return nil, os.ErrPermission
	}
	if h.sock == nil {
		c, err := net.ListenPacket(h.network, h.laddr)
		if err != nil {
			if errors.Is(err, os.ErrPermission) {
				h.denied = true
			}
			return nil, err
		}
		h.sock = &icmpSock{conn: c, v6: h.v6, waiting: map[echoKey]*echoWaiter{}, done: make(chan struct{})}
		go h.sock.readLoop()
	}
	h.refs++
	return h.sock, nil
}

// release closes the socket when its last user is done.
func (h *icmpHolder) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.refs--
	if h.refs == 0 {
		_ = h.sock.conn.Close()
		<-h.sock.done
		h.sock = nil
	}
}

type echoKey struct{ id, seq uint16 }

type echoWaiter struct {
	peer    net.IP
	payload []byte
	at      chan time.Time
}

type icmpSock struct {
	conn net.PacketConn
	v6   bool
	done chan struct{}

	mu      sync.Mutex
	waiting map[echoKey]*echoWaiter
}

func (s *icmpSock) readLoop() {
	defer close(s.done)
	buf := make([]byte, 1<<16)
	for {
		n, from, err := s.conn.ReadFrom(buf)
		at := time.Now()
		if err != nil {
			// Closed by release, or broken: the pings waiting time out.
			return
		}
		s.dispatch(buf[:n], from, at)
	}
}

// dispatch hands an echo reply to its ping. Go strips the IPv4 header of
// raw reads, and IPv6 raw sockets never deliver it, so b is the ICMP
// message. Replies from another host, or echoing other data, belong to
// someone else (another process's ping with the same identifier).
func (s *icmpSock) dispatch(b []byte, from net.Addr, at time.Time) {
	want := byte(icmpv4EchoReply)
	if s.v6 {
		want = icmpv6EchoReply
	}
	if len(b) < icmpHeaderLen || b[0] != want || b[1] != 0 {
		return
	}
	k := echoKey{binary.BigEndian.Uint16(b[4:6]), binary.BigEndian.Uint16(b[6:8])}
	ipa, ok := from.(*net.IPAddr)
	if !ok {
		return
	}
	s.mu.Lock()
	w := s.waiting[k]
	if w == nil || !w.peer.Equal(ipa.IP) || !bytes.Equal(b[icmpHeaderLen:], w.payload) {
		s.mu.Unlock()
		return
	}
	delete(s.waiting, k)
	s.mu.Unlock()
	w.at <- at // buffered, and the waiter was removed: never blocks
}

func (s *icmpSock) expect(k echoKey, w *echoWaiter) {
	s.mu.Lock()
	s.waiting[k] = w
	s.mu.Unlock()
}

func (s *icmpSock) forget(k echoKey) {
	s.mu.Lock()
	delete(s.waiting, k)
	s.mu.Unlock()
}

// echoRequest builds an echo request. The kernel fills in the ICMPv6
// checksum (it covers a pseudo-header only it knows); ICMPv4's is ours.
func (s *icmpSock) echoRequest(k echoKey, payload []byte) []byte {
	b := make([]byte, icmpHeaderLen+len(payload))
	b[0] = icmpv4EchoRequest
	if s.v6 {
		b[0] = icmpv6EchoRequest
	}
	binary.BigEndian.PutUint16(b[4:6], k.id)
	binary.BigEndian.PutUint16(b[6:8], k.seq)
	copy(b[icmpHeaderLen:], payload)
	if !s.v6 {
		binary.BigEndian.PutUint16(b[2:4], checksum(b))
	}
	return b
}

// checksum is the Internet checksum (RFC 1071).
func checksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

type icmpProber struct {
	s       *icmpSock
	dst     *net.IPAddr
	id      uint16
	payload []byte
}

// newICMPProber prepares DataBlockSize bytes of payload starting with a
// random token, so that a reply is recognised by its content as well as by
// identifier and sequence number.
func newICMPProber(s *icmpSock, dst *net.IPAddr, size int) *icmpProber {
	payload := make([]byte, size)
	var token [8]byte
	binary.BigEndian.PutUint64(token[:], rand.Uint64())
	for i := range payload {
		payload[i] = token[i%len(token)] ^ byte(i/len(token))
	}
	return &icmpProber{s: s, dst: dst, id: uint16(echoIDs.Add(1)), payload: payload}
}

func (p *icmpProber) probe(ctx context.Context, seq int, timeout time.Duration) (time.Duration, bool) {
	k := echoKey{p.id, uint16(seq)}
	w := &echoWaiter{peer: p.dst.IP, payload: p.payload, at: make(chan time.Time, 1)}
	p.s.expect(k, w)
	defer p.s.forget(k)
	pkt := p.s.echoRequest(k, p.payload)
	sent := time.Now()
	if _, err := p.s.conn.WriteTo(pkt, p.dst); err != nil {
		// Unreachable network, message too long: this echo failed.
		return 0, false
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case at := <-w.at:
		return at.Sub(sent), true
	case <-t.C:
	case <-ctx.Done():
	}
	return 0, false
}
