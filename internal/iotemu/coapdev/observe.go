package coapdev

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/plgd-dev/go-coap/v3/message"
	udpClient "github.com/plgd-dev/go-coap/v3/udp/client"

	"cpesuite/internal/iotemu/proto"
)

// obsKey identifies an observation: the client endpoint and the token of
// its registration (RFC 7641 §4.1).
type obsKey struct {
	cc    *udpClient.Conn
	token string
}

// observer is one observation. Notifications are coalesced: while one is
// in flight only the latest value waits, which is what RFC 7641 §4.5 asks
// of a server whose client is slower than the changes. Each observer has
// at most one sending goroutine, so its notifications leave in sequence
// order and a slow client does not hold up the others.
type observer struct {
	s   *server
	key obsKey

	mu      sync.Mutex
	name    string
	json    bool
	seq     uint32 // last Observe value sent
	value   string // pending value
	pending bool
	sending bool
	gone    bool
}

// nextSeq returns the next Observe value (24 bits, RFC 7641 §4.4).
func (o *observer) nextSeqLocked() uint32 {
	o.seq = (o.seq + 1) & 0xffffff
	return o.seq
}

// addObserver registers (or re-registers) an observation and returns the
// Observe value for the response; false when the server is closing.
func (s *server) addObserver(cc *udpClient.Conn, token []byte, name string, asJSON bool) (uint32, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, false
	}
	k := obsKey{cc: cc, token: string(token)}
	o := s.observers[k]
	if o == nil {
		o = &observer{s: s, key: k}
		s.observers[k] = o
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	// A re-registration keeps the sequence so that the client does not
	// take the new notifications for stale ones.
	o.name, o.json = name, asJSON
	return o.nextSeqLocked(), true
}

// removeKey ends the observation k, if any.
func (s *server) removeKey(k obsKey) {
	s.mu.Lock()
	o := s.observers[k]
	delete(s.observers, k)
	s.mu.Unlock()
	if o != nil {
		o.markGone()
	}
}

func (s *server) remove(o *observer) {
	s.mu.Lock()
	if s.observers[o.key] == o {
		delete(s.observers, o.key)
	}
	s.mu.Unlock()
	o.markGone()
}

func (o *observer) markGone() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.gone, o.pending = true, false
}

// removeWhere ends every observation for which match holds.
func (s *server) removeWhere(match func(*observer) bool) {
	var gone []*observer
	s.mu.Lock()
	for k, o := range s.observers {
		if match(o) {
			delete(s.observers, k)
			gone = append(gone, o)
		}
	}
	s.mu.Unlock()
	for _, o := range gone {
		o.markGone()
	}
}

func (s *server) dropConn(cc *udpClient.Conn) {
	s.removeWhere(func(o *observer) bool { return o.key.cc == cc })
}

func (s *server) dropAll() {
	s.removeWhere(func(*observer) bool { return true })
}

func (s *server) hasObservers(cc *udpClient.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.observers {
		if k.cc == cc {
			return true
		}
	}
	return false
}

// snapshot returns the current observers.
func (s *server) snapshot(name string) []*observer {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*observer, 0, len(s.observers))
	for _, o := range s.observers {
		if name == "" || o.observedName() == name {
			out = append(out, o)
		}
	}
	return out
}

func (o *observer) observedName() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.name
}

// changed queues value for every observer of name.
func (s *server) changed(name, value string) {
	for _, o := range s.snapshot(name) {
		o.notify(value)
	}
}

// notifyAll queues the current value for every observer.
func (s *server) notifyAll() {
	params := s.d.host.Params()
	for _, o := range s.snapshot("") {
		o.notify(params.Value(o.observedName()))
	}
}

// notify queues value and starts the sender if it is idle. It never
// blocks on the network.
func (o *observer) notify(value string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.gone {
		return
	}
	o.value, o.pending = value, true
	if o.sending {
		return
	}
	o.sending = true
	// gone is set under o.mu before server.close waits for notifiers, so
	// no Add can follow that Wait.
	o.s.notifiers.Add(1)
	go o.run()
}

func (o *observer) run() {
	defer o.s.notifiers.Done()
	for {
		o.mu.Lock()
		if o.gone || !o.pending {
			o.sending = false
			o.mu.Unlock()
			return
		}
		value, name, asJSON := o.value, o.name, o.json
		o.pending = false
		seq := o.nextSeqLocked()
		o.mu.Unlock()
		err := o.s.sendNotification(o, name, value, asJSON, seq)
		if err == nil {
			continue
		}
		// Logged before the removal, so whoever sees the observer gone also
		// finds the reason in the log.
		if o.s.ctx.Err() == nil { // not merely the device stopping
			reason := "notification not acknowledged"
			if errors.Is(err, errReset) {
				reason = "reset by client"
			} else {
				o.s.onError(fmt.Errorf("notify %s: %w", name, err))
			}
			o.s.d.host.Log(proto.Entry{Direction: "OUT", Event: "CANCEL",
				MessageOptions: "path=" + o.s.paramPath(name) + " token=" + hex.EncodeToString([]byte(o.key.token)) +
					" reason=" + reason})
		}
		o.s.remove(o)
	}
}

func (s *server) paramPath(name string) string {
	return "/" + strings.Join(s.d.opts.prefix, "/") + "/" + name
}

// Transmission parameters of RFC 7252 §4.8.
const (
	ackRandomFactor = 1.5
	maxRetransmit   = 4
)

var errReset = errors.New("reset by client")

type exchangeKey struct {
	cc  *udpClient.Conn
	mid int32
}

// sendNotification sends one confirmable notification and waits for its
// acknowledgement, retransmitting as RFC 7252 §4.2 says. Confirmable so
// that a vanished client is noticed and its observation ended (RFC 7641
// §4.5). The stack does this itself instead of through go-coap's
// Conn.WriteMessage because that renumbers the message (block-wise layer)
// and takes a Reset for an acknowledgement, so a Reset could not be told
// apart or matched to its observation.
func (s *server) sendNotification(o *observer, name, value string, asJSON bool, seq uint32) error {
	p, ok := s.d.host.Params().Get(name)
	if !ok {
		return fmt.Errorf("parameter %s is gone", name)
	}
	resp := represent(p, value, asJSON)
	cc := o.key.cc
	mid := cc.GetMessageID()
	msg := cc.AcquireMessage(s.ctx)
	defer cc.ReleaseMessage(msg)
	msg.SetCode(resp.code)
	msg.SetToken(message.Token(o.key.token))
	msg.SetObserve(seq)
	if resp.cf != cfNone {
		msg.SetContentFormat(message.MediaType(resp.cf))
	}
	msg.SetBody(bytes.NewReader(resp.body))
	msg.SetType(message.Confirmable)
	msg.SetMessageID(mid)

	answer := make(chan message.Type, 1)
	k := exchangeKey{cc: cc, mid: mid}
	s.exMu.Lock()
	s.exchanges[k] = answer
	s.exMu.Unlock()
	defer func() {
		s.exMu.Lock()
		delete(s.exchanges, k)
		s.exMu.Unlock()
	}()

	s.d.host.Log(proto.Entry{Direction: "OUT", Event: "NOTIFY",
		MessageOptions: fmt.Sprintf("code=%s path=%s cf=%s token=%s observe=%d type=CON mid=%d",
			codeString(resp.code), s.paramPath(name), cfString(resp.cf), hex.EncodeToString([]byte(o.key.token)), seq, mid),
		Payload: string(resp.body), RawMessage: hex.EncodeToString(resp.body)})

	timeout := time.Duration(float64(s.d.ackTimeout) * (1 + (ackRandomFactor-1)*rand.Float64()))
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for attempt := 0; ; attempt++ {
		if err := cc.Session().WriteMessage(msg); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		select {
		case t := <-answer:
			if t == message.Reset {
				s.d.host.Log(proto.Entry{Direction: "IN", Event: "RESET", MessageOptions: fmt.Sprintf(
					"code=0.00 path=%s token=%s type=RST mid=%d", s.paramPath(name), hex.EncodeToString([]byte(o.key.token)), mid)})
				return errReset
			}
			return nil
		case <-timer.C:
			if attempt == maxRetransmit {
				return fmt.Errorf("no acknowledgement after %d transmissions", attempt+1)
			}
			timeout *= 2
			timer.Reset(timeout)
		case <-cc.Context().Done():
			return fmt.Errorf("connection closed: %w", cc.Context().Err())
		case <-s.ctx.Done():
			return s.ctx.Err()
		}
	}
}

// answered routes an empty ACK or RST to the notification waiting for it;
// it reports whether one was.
func (s *server) answered(cc *udpClient.Conn, mid int32, t message.Type) bool {
	s.exMu.Lock()
	ch, ok := s.exchanges[exchangeKey{cc: cc, mid: mid}]
	s.exMu.Unlock()
	if ok {
		select {
		case ch <- t:
		default: // a duplicate; the first answer counts
		}
	}
	return ok
}

// observerCount is for tests and status.
func (s *server) observerCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.observers)
}
