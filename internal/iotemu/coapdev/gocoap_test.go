package coapdev

import (
	"bytes"
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	piondtls "github.com/pion/dtls/v3"
	"github.com/plgd-dev/go-coap/v3/message"
	"github.com/plgd-dev/go-coap/v3/message/codes"
	"github.com/plgd-dev/go-coap/v3/message/pool"
	"github.com/plgd-dev/go-coap/v3/udp"
	udpClient "github.com/plgd-dev/go-coap/v3/udp/client"
	"github.com/plgd-dev/go-coap/v3/udp/coder"

	"cpesuite/internal/iotemu/proto"
	"cpesuite/internal/testutil"
)

// reqTimeout bounds one request to the device: a safety net against a hang.
const reqTimeout = testutil.MinDeadline

func dialUDP(t *testing.T, d *Device) *udpClient.Conn {
	t.Helper()
	c, err := udp.Dial(d.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func dialPSK(t *testing.T, d *Device, id string, key []byte) *udpClient.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), reqTimeout)
	defer cancel()
	c, err := dialDTLS(ctx, d, []piondtls.ClientOption{
		piondtls.WithPSK(func([]byte) ([]byte, error) { return key, nil }),
		piondtls.WithPSKIdentityHint([]byte(id)),
		piondtls.WithCipherSuites(piondtls.TLS_PSK_WITH_AES_128_CCM_8),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func uintOpt(id message.OptionID, v uint32) message.Option {
	buf := make([]byte, 4)
	n, _ := message.EncodeUint32(buf, v)
	return message.Option{ID: id, Value: buf[:n]}
}

func result(t *testing.T, resp *pool.Message, err error) (string, string) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	body, err := resp.ReadBody()
	if err != nil {
		t.Fatal(err)
	}
	return codeString(resp.Code()), string(body)
}

// get sends GET with Accept (accept < 0: none) and returns the code as
// "2.05" and the body.
func get(t *testing.T, c *udpClient.Conn, path string, accept int) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), reqTimeout)
	defer cancel()
	var opts []message.Option
	if accept >= 0 {
		opts = append(opts, uintOpt(message.Accept, uint32(accept)))
	}
	resp, err := c.Get(ctx, path, opts...)
	return result(t, resp, err)
}

func contentFormat(t *testing.T, c *udpClient.Conn, path string, accept int) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), reqTimeout)
	defer cancel()
	var opts []message.Option
	if accept >= 0 {
		opts = append(opts, uintOpt(message.Accept, uint32(accept)))
	}
	resp, err := c.Get(ctx, path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := resp.ContentFormat()
	if err != nil {
		return cfNone
	}
	return int(cf)
}

// notes collects the notifications of a go-coap observation.
type notes struct {
	mu   sync.Mutex
	seqs []uint32
	body []string
	cfs  []int
}

func (n *notes) add(m *pool.Message) {
	seq, _ := m.Observe()
	b, _ := m.ReadBody()
	cf := cfNone
	if v, err := m.ContentFormat(); err == nil {
		cf = int(v)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.seqs = append(n.seqs, seq)
	n.body = append(n.body, string(b))
	n.cfs = append(n.cfs, cf)
}

func (n *notes) last() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.body) == 0 {
		return ""
	}
	return n.body[len(n.body)-1]
}

func (n *notes) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.body)
}

func (n *notes) snapshot() ([]uint32, []string, []int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.seqs), slices.Clone(n.body), slices.Clone(n.cfs)
}

func observers(d *Device) int {
	if s := d.current(); s != nil {
		return s.observerCount()
	}
	return 0
}

func TestObserveSequenceNumbers(t *testing.T) {
	h := newFakeHost()
	d := startDevice(t, &Protocol{}, proto.Config{}, h)
	c := dialUDP(t, d)
	var n notes
	ctx, cancel := context.WithTimeout(context.Background(), reqTimeout)
	defer cancel()
	obs, err := c.Observe(ctx, "/params/Temperature", n.add)
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, testutil.MinDeadline, "the registration response", func() bool { return n.last() == "21.5" })
	testutil.Eventually(t, testutil.MinDeadline, "the observer to be registered", func() bool { return observers(d) == 1 })

	// Each value is awaited before the next: notifications coalesce while
	// one is in flight, so back-to-back changes may skip values.
	for _, v := range []string{"22", "22.5", "-3"} {
		d.Changed("Temperature", v)
		testutil.Eventually(t, testutil.MinDeadline, "notification "+v, func() bool { return n.last() == v })
	}
	// A change of another parameter is not sent to this observer.
	d.Changed("Humidity", "99")
	// Heartbeat sends the current value of the set (not the last Changed).
	if _, _, err := h.Params().Put("Temperature", "7"); err != nil {
		t.Fatal(err)
	}
	if err := d.Heartbeat(context.Background()); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, testutil.MinDeadline, "heartbeat notification", func() bool { return n.last() == "7" })

	seqs, bodies, cfs := n.snapshot()
	if want := []string{"21.5", "22", "22.5", "-3", "7"}; !slices.Equal(bodies, want) {
		t.Errorf("bodies = %q, want %q", bodies, want)
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			t.Errorf("observe sequence not increasing: %v", seqs)
		}
	}
	for _, cf := range cfs {
		if cf != cfText {
			t.Errorf("notification content formats = %v, want text/plain", cfs)
			break
		}
	}
	if !h.logged("OUT", "NOTIFY", "path=/params/Temperature", "cf=0", "observe=") ||
		!h.logged("IN", "OBSERVE", "observe=0") || !h.logged("OUT", "OBSERVE", "code=2.05", "observe=") {
		t.Errorf("log lacks OBSERVE/NOTIFY entries: %+v", h.Entries())
	}

	if err := obs.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, testutil.MinDeadline, "deregistration", func() bool { return observers(d) == 0 })
	if !h.logged("IN", "CANCEL", "observe=1") {
		t.Error("no CANCEL logged")
	}
}

func TestObservePeriodAndJSON(t *testing.T) {
	p := &Protocol{}
	h := newFakeHost()
	d := startDevice(t, p, proto.Config{Options: defaults(p, OptObservePeriodSec, "1", OptContentFormat, "json")}, h)
	c := dialUDP(t, d)
	var n notes
	ctx, cancel := context.WithTimeout(context.Background(), reqTimeout)
	defer cancel()
	obs, err := c.Observe(ctx, "/params/BatteryLevel", n.add)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = obs.Cancel(ctx) }()
	// Nothing changes, yet the period produces notifications.
	testutil.Eventually(t, testutil.MinDeadline, "two periodic notifications", func() bool { return n.count() >= 3 })
	seqs, bodies, cfs := n.snapshot()
	for i := range bodies {
		if cfs[i] != cfJSON || bodies[i] != `{"name":"BatteryLevel","value":"100","type":"INTEGER"}` {
			t.Errorf("notification %d = cf %d %s", i, cfs[i], bodies[i])
		}
		if i > 0 && seqs[i] <= seqs[i-1] {
			t.Errorf("observe sequence not increasing: %v", seqs)
		}
	}
}

func TestContentNegotiation(t *testing.T) {
	p := &Protocol{}
	jsonTemp := `{"name":"Temperature","value":"21.5","type":"FLOAT"}`
	tests := []struct {
		name     string
		format   string // contentFormat option
		path     string
		accept   int
		wantCode string
		wantCF   int
		wantBody string
	}{
		{"text by default", "text", "/params/Temperature", -1, "2.05", cfText, "21.5"},
		{"json by default", "json", "/params/Temperature", -1, "2.05", cfJSON, jsonTemp},
		{"accept json", "text", "/params/Temperature", cfJSON, "2.05", cfJSON, jsonTemp},
		{"accept text", "json", "/params/Temperature", cfText, "2.05", cfText, "21.5"},
		{"accept cbor", "text", "/params/Temperature", 60, "4.06", cfNone, ""},
		{"unknown parameter", "text", "/params/Nope", -1, "4.04", cfNone, ""},
		{"unknown resource", "text", "/nothing/here", -1, "4.04", cfNone, ""},
		{"collection itself", "text", "/params", -1, "4.04", cfNone, ""},
		{"device json", "text", "/device", -1, "2.05", cfJSON, `"name":"SerialNumber","value":"SN-1"`},
		{"device accept text", "text", "/device", cfText, "4.06", cfNone, ""},
		{"well-known", "json", "/.well-known/core", -1, "2.05", cfLink, `</params/Temperature>;rt="FLOAT";if="sensor";obs`},
		{"well-known accept json", "text", "/.well-known/core", cfJSON, "4.06", cfNone, ""},
	}
	devs := map[string]*Device{}
	for _, f := range []string{"text", "json"} {
		devs[f] = startDevice(t, p, proto.Config{Options: defaults(p, OptContentFormat, f)}, newFakeHost())
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dialUDP(t, devs[tt.format])
			code, body := get(t, c, tt.path, tt.accept)
			if code != tt.wantCode {
				t.Fatalf("code = %s (%s), want %s", code, body, tt.wantCode)
			}
			if tt.wantCode != "2.05" {
				return
			}
			if !strings.Contains(body, tt.wantBody) {
				t.Errorf("body = %s, want it to contain %s", body, tt.wantBody)
			}
			if cf := contentFormat(t, c, tt.path, tt.accept); cf != tt.wantCF {
				t.Errorf("content format = %d, want %d", cf, tt.wantCF)
			}
		})
	}
}

func TestResourcePrefixAndLinkFilter(t *testing.T) {
	p := &Protocol{}
	d := startDevice(t, p, proto.Config{Options: defaults(p, OptResourcePrefix, "sensors/v1")}, newFakeHost())
	c := dialUDP(t, d)
	tests := []struct {
		path, query, want, notWant string
	}{
		{"/sensors/v1/Humidity", "", "45", ""},
		{"/.well-known/core", "", "</sensors/v1/Humidity>;rt=\"FLOAT\"", "</params/"},
		{"/.well-known/core", "rt=BOOLEAN", `</sensors/v1/Switch>;rt="BOOLEAN";if="sensor";obs`, "Humidity"},
		{"/.well-known/core", "href=/sensors/v1/S*", "</sensors/v1/SignalStrength>", "Temperature"},
		{"/.well-known/core", "ct=50", "</device>;ct=50", "sensors"},
		{"/.well-known/core", "if=actuator", "", "<"},
	}
	for _, tt := range tests {
		t.Run(tt.path+"?"+tt.query, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), reqTimeout)
			defer cancel()
			var opts []message.Option
			if tt.query != "" {
				opts = append(opts, message.Option{ID: message.URIQuery, Value: []byte(tt.query)})
			}
			resp, err := c.Get(ctx, tt.path, opts...)
			code, body := result(t, resp, err)
			if code != "2.05" || !strings.Contains(body, tt.want) || (tt.notWant != "" && strings.Contains(body, tt.notWant)) {
				t.Errorf("GET %s?%s = %s %s", tt.path, tt.query, code, body)
			}
		})
	}
	if code, _ := get(t, c, "/params/Humidity", -1); code != "4.04" {
		t.Errorf("old prefix still served: %s", code)
	}
}

func TestWrites(t *testing.T) {
	h := newFakeHost()
	h.Freeze("Humidity")
	d := startDevice(t, &Protocol{}, proto.Config{}, h)
	c := dialUDP(t, d)
	tests := []struct {
		name     string
		method   codes.Code
		path     string
		cf       message.MediaType
		body     string
		wantCode string
		param    string // parameter to check afterwards
		want     string // its value then
	}{
		{"text", codes.PUT, "/params/Temperature", message.TextPlain, "23.5", "2.04", "Temperature", "23.5"},
		{"json number", codes.PUT, "/params/BatteryLevel", message.AppJSON, `{"value":42}`, "2.04", "BatteryLevel", "42"},
		{"json string", codes.PUT, "/params/Pressure", message.AppJSON, `{"value":"999.5"}`, "2.04", "Pressure", "999.5"},
		{"json bool", codes.PUT, "/params/Switch", message.AppJSON, `{"value":true}`, "2.04", "Switch", "true"},
		{"json null", codes.PUT, "/params/Switch", message.AppJSON, `{"value":null}`, "4.00", "Switch", "true"},
		{"json not an object", codes.PUT, "/params/Switch", message.AppJSON, `false`, "4.00", "Switch", "true"},
		{"json nested", codes.PUT, "/params/Switch", message.AppJSON, `{"value":{"on":1}}`, "4.00", "Switch", "true"},
		{"bad value", codes.PUT, "/params/Temperature", message.TextPlain, "warm", "4.00", "Temperature", "23.5"},
		{"read-only", codes.PUT, "/params/SerialNumber", message.TextPlain, "X", "4.05", "SerialNumber", "SN-1"},
		{"frozen", codes.PUT, "/params/Humidity", message.TextPlain, "50", "4.05", "Humidity", "45"},
		{"unknown", codes.PUT, "/params/Nope", message.TextPlain, "1", "4.04", "", ""},
		{"unsupported format", codes.PUT, "/params/Temperature", message.AppXML, "<v>1</v>", "4.15", "Temperature", "23.5"},
		{"post", codes.POST, "/params/Temperature", message.TextPlain, "1", "4.05", "Temperature", "23.5"},
		{"delete", codes.DELETE, "/params/Temperature", message.TextPlain, "", "4.05", "Temperature", "23.5"},
		{"put device", codes.PUT, "/device", message.AppJSON, "{}", "4.05", "", ""},
		{"post well-known", codes.POST, "/.well-known/core", message.TextPlain, "x", "4.05", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), reqTimeout)
			defer cancel()
			var resp *pool.Message
			var err error
			switch tt.method {
			case codes.PUT:
				resp, err = c.Put(ctx, tt.path, tt.cf, bytes.NewReader([]byte(tt.body)))
			case codes.POST:
				resp, err = c.Post(ctx, tt.path, tt.cf, bytes.NewReader([]byte(tt.body)))
			case codes.DELETE:
				resp, err = c.Delete(ctx, tt.path)
			}
			code, diag := result(t, resp, err)
			if code != tt.wantCode {
				t.Errorf("code = %s (%s), want %s", code, diag, tt.wantCode)
			}
			if tt.param != "" {
				if v := h.Params().Value(tt.param); v != tt.want {
					t.Errorf("%s = %q, want %q", tt.param, v, tt.want)
				}
			}
		})
	}
	if !h.logged("IN", "PUT", "path=/params/Temperature", "23.5") || !h.logged("OUT", "PUT", "code=2.04") ||
		!h.logged("OUT", "PUT", "code=4.05", "path=/params/Humidity") {
		t.Errorf("log lacks the PUT exchanges: %+v", h.Entries())
	}
}

func TestFailResponse(t *testing.T) {
	h := newFakeHost()
	d := startDevice(t, &Protocol{}, proto.Config{}, h)
	c := dialUDP(t, d)
	h.SetFail(true)
	tests := []struct {
		name string
		do   func(ctx context.Context) (*pool.Message, error)
	}{
		{"get", func(ctx context.Context) (*pool.Message, error) { return c.Get(ctx, "/params/Temperature") }},
		{"get unknown", func(ctx context.Context) (*pool.Message, error) { return c.Get(ctx, "/params/Nope") }},
		{"well-known", func(ctx context.Context) (*pool.Message, error) { return c.Get(ctx, "/.well-known/core") }},
		{"device", func(ctx context.Context) (*pool.Message, error) { return c.Get(ctx, "/device") }},
		{"put", func(ctx context.Context) (*pool.Message, error) {
			return c.Put(ctx, "/params/Temperature", message.TextPlain, strings.NewReader("30"))
		}},
		{"post", func(ctx context.Context) (*pool.Message, error) {
			return c.Post(ctx, "/params/Temperature", message.TextPlain, strings.NewReader("30"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), reqTimeout)
			defer cancel()
			resp, err := tt.do(ctx)
			if code, _ := result(t, resp, err); code != "5.00" {
				t.Errorf("code = %s, want 5.00", code)
			}
		})
	}
	if v := h.Params().Value("Temperature"); v != "21.5" {
		t.Errorf("PUT under failResponse wrote %s", v)
	}

	t.Run("observe is refused", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), reqTimeout)
		defer cancel()
		if _, err := c.Observe(ctx, "/params/Temperature", func(*pool.Message) {}); err == nil {
			t.Error("Observe succeeded under failResponse")
		}
		if n := observers(d); n != 0 {
			t.Errorf("%d observers registered under failResponse", n)
		}
	})

	h.SetFail(false)
	if code, body := get(t, c, "/params/Temperature", -1); code != "2.05" || body != "21.5" {
		t.Errorf("after failResponse off: %s %s", code, body)
	}
}

// rawClient speaks CoAP over a bare UDP socket, for what go-coap's client
// does not let a test do: answer a notification with RST, or not at all.
type rawClient struct {
	conn *net.UDPConn
	msgs chan message.Message
}

func newRawClient(t *testing.T, d *Device) *rawClient {
	t.Helper()
	conn, err := net.DialUDP("udp", nil, d.Addr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	r := &rawClient{conn: conn, msgs: make(chan message.Message, 64)}
	done := make(chan struct{})
	t.Cleanup(func() {
		_ = conn.Close()
		<-done
	})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue // e.g. ICMP refused after the device stopped
			}
			// Decode keeps references into its input, and options need
			// room to be decoded into.
			m := message.Message{Options: make(message.Options, 0, 16)}
			if _, err := coder.DefaultCoder.Decode(slices.Clone(buf[:n]), &m); err == nil {
				select {
				case r.msgs <- m:
				default:
				}
			}
		}
	}()
	return r
}

func (r *rawClient) send(t *testing.T, m message.Message) {
	t.Helper()
	buf := make([]byte, 1024)
	n, err := coder.DefaultCoder.Encode(m, buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.conn.Write(buf[:n]); err != nil {
		t.Fatal(err)
	}
}

func (r *rawClient) next(t *testing.T, within time.Duration) message.Message {
	t.Helper()
	select {
	case m := <-r.msgs:
		return m
	case <-time.After(within):
		t.Fatalf("no message from the device within %s", within)
	}
	return message.Message{}
}

// observe registers with token tok and consumes the piggybacked response.
func (r *rawClient) observe(t *testing.T, path string, tok byte) {
	t.Helper()
	opts := message.Options{}
	buf := make([]byte, 256)
	opts, n, err := opts.SetPath(buf, path)
	if err != nil {
		t.Fatal(err)
	}
	opts, _, err = opts.SetObserve(buf[n:], 0)
	if err != nil {
		t.Fatal(err)
	}
	r.send(t, message.Message{Token: []byte{tok}, Code: codes.GET, Type: message.Confirmable, MessageID: 0x1234, Options: opts})
	m := r.next(t, testutil.MinDeadline)
	if m.Type != message.Acknowledgement || m.Code != codes.Content || m.MessageID != 0x1234 {
		t.Fatalf("registration answer = %v", m)
	}
	if _, err := m.Options.Observe(); err != nil {
		t.Fatalf("registration answer has no Observe: %v", m)
	}
}

func TestResetEndsObservation(t *testing.T) {
	h := newFakeHost()
	d := startDevice(t, &Protocol{}, proto.Config{}, h)
	raw := newRawClient(t, d)
	raw.observe(t, "/params/Temperature", 0x42)
	testutil.Eventually(t, testutil.MinDeadline, "registration", func() bool { return observers(d) == 1 })

	d.Changed("Temperature", "30")
	m := raw.next(t, testutil.MinDeadline)
	if m.Type != message.Confirmable || string(m.Payload) != "30" || !bytes.Equal(m.Token, []byte{0x42}) {
		t.Fatalf("notification = %v", m)
	}
	raw.send(t, message.Message{Type: message.Reset, Code: codes.Empty, MessageID: m.MessageID})
	testutil.Eventually(t, testutil.MinDeadline, "the observer to be removed", func() bool { return observers(d) == 0 })
	if !h.logged("IN", "RESET", "path=/params/Temperature", "token=42") || !h.logged("OUT", "CANCEL", "reset by client") {
		t.Errorf("log lacks the reset: %+v", h.Entries())
	}
}

func TestUnacknowledgedNotificationEndsObservation(t *testing.T) {
	h := newFakeHost()
	p := &Protocol{}
	d, err := p.newDevice(proto.Config{ClientIP: "127.0.0.1", Options: defaults(p)}, h)
	if err != nil {
		t.Fatal(err)
	}
	d.ackTimeout = 20 * time.Millisecond
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Stop(context.Background()) })
	raw := newRawClient(t, d)
	raw.observe(t, "/params/Humidity", 0x07)

	d.Changed("Humidity", "50")
	first := raw.next(t, testutil.MinDeadline)
	// Without an ACK the same message is retransmitted MAX_RETRANSMIT
	// times, then the observer is dropped.
	for i := range maxRetransmit {
		m := raw.next(t, testutil.MinDeadline)
		if m.MessageID != first.MessageID || string(m.Payload) != "50" {
			t.Fatalf("retransmission %d = %v, want a copy of %v", i+1, m, first)
		}
	}
	testutil.Eventually(t, testutil.MinDeadline, "the observer to be removed", func() bool { return observers(d) == 0 })
	if !h.logged("OUT", "CANCEL", "not acknowledged") {
		t.Errorf("log lacks the cancellation: %+v", h.Entries())
	}
	// Changed must not block even though nobody listens.
	for range 1000 {
		d.Changed("Humidity", "51")
	}
}

func TestChangedCoalescesWhileInFlight(t *testing.T) {
	h := newFakeHost()
	d := startDevice(t, &Protocol{}, proto.Config{}, h)
	raw := newRawClient(t, d)
	raw.observe(t, "/params/Pressure", 0x01)
	d.Changed("Pressure", "1")
	first := raw.next(t, testutil.MinDeadline)
	// The first notification waits for its ACK; these only replace the
	// pending value and return at once.
	for _, v := range []string{"2", "3", "4"} {
		d.Changed("Pressure", v)
	}
	raw.send(t, message.Message{Type: message.Acknowledgement, Code: codes.Empty, MessageID: first.MessageID})
	// A machine stalled past ACK_TIMEOUT before the ACK went out makes the
	// device retransmit the first notification; those copies are not the
	// answer to the ACK.
	m := raw.next(t, testutil.MinDeadline)
	for m.MessageID == first.MessageID {
		m = raw.next(t, testutil.MinDeadline)
	}
	if string(m.Payload) != "4" {
		t.Errorf("after the ACK the device sent %q, want the latest value 4", m.Payload)
	}
	s1, _ := first.Options.Observe()
	s2, _ := m.Options.Observe()
	if s2 <= s1 {
		t.Errorf("observe %d after %d", s2, s1)
	}
	raw.send(t, message.Message{Type: message.Acknowledgement, Code: codes.Empty, MessageID: m.MessageID})
}
