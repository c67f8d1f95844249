package coapdev

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/plgd-dev/go-coap/v3/message"
	"github.com/plgd-dev/go-coap/v3/message/codes"
	"github.com/plgd-dev/go-coap/v3/message/pool"
	"github.com/plgd-dev/go-coap/v3/net/responsewriter"
	udpClient "github.com/plgd-dev/go-coap/v3/udp/client"

	"cpesuite/internal/iotemu/param"
	"cpesuite/internal/iotemu/proto"
)

// Content formats (RFC 7252 §12.3, RFC 6690).
const (
	cfText = 0  // text/plain; charset=utf-8
	cfLink = 40 // application/link-format
	cfJSON = 50 // application/json
	cfNone = -1
)

// Request methods beyond RFC 7252's four (RFC 8132); the device answers
// them with 4.05 like any other unsupported method.
const (
	codeFETCH  codes.Code = 5
	codeIPATCH codes.Code = 7
)

// request is the part of a CoAP request the device looks at.
type request struct {
	method  codes.Code
	event   string
	segs    []string // Uri-Path segments
	queries []string
	token   []byte
	cf      int // Content-Format, cfNone when absent
	accept  int // Accept, cfNone when absent
	observe int // Observe, -1 when absent
	body    []byte
	typ     message.Type
	mid     int32
}

func (r *request) path() string { return "/" + strings.Join(r.segs, "/") }

// response is what the device answers; body without a content format is
// a diagnostic payload (RFC 7252 §5.5.2).
type response struct {
	code    codes.Code
	cf      int
	body    []byte
	observe int64 // Observe option, -1 for none
}

func content(cf int, body []byte) response {
	return response{code: codes.Content, cf: cf, body: body, observe: -1}
}

func failure(code codes.Code, diag string) response {
	return response{code: code, cf: cfNone, body: []byte(diag), observe: -1}
}

func parseRequest(m *pool.Message) request {
	r := request{method: m.Code(), cf: cfNone, accept: cfNone, observe: -1, typ: m.Type(), mid: m.MessageID()}
	r.token = append([]byte(nil), m.Token()...)
	for _, o := range m.Options() {
		switch o.ID {
		case message.URIPath:
			r.segs = append(r.segs, string(o.Value))
		case message.URIQuery:
			r.queries = append(r.queries, string(o.Value))
		}
	}
	if v, err := m.ContentFormat(); err == nil {
		r.cf = int(v)
	}
	if v, err := m.Accept(); err == nil {
		r.accept = int(v)
	}
	if v, err := m.Observe(); err == nil {
		r.observe = int(v)
	}
	if b, err := m.ReadBody(); err == nil {
		r.body = b
	}
	r.event = methodName(r.method)
	if r.method == codes.GET {
		switch r.observe {
		case 0:
			r.event = "OBSERVE"
		case 1:
			r.event = "CANCEL"
		}
	}
	return r
}

func methodName(c codes.Code) string {
	switch c {
	case codes.GET:
		return "GET"
	case codes.POST:
		return "POST"
	case codes.PUT:
		return "PUT"
	case codes.DELETE:
		return "DELETE"
	case codeFETCH:
		return "FETCH"
	case codeFETCH + 1:
		return "PATCH"
	case codeIPATCH:
		return "IPATCH"
	}
	return "0." + fmt.Sprintf("%02d", int(c))
}

// codeString spells a response code the CoAP way, e.g. 2.05.
func codeString(c codes.Code) string {
	return fmt.Sprintf("%d.%02d", int(c)>>5, int(c)&0x1f)
}

func cfString(cf int) string {
	if cf == cfNone {
		return "-"
	}
	return strconv.Itoa(cf)
}

func typeString(t message.Type) string {
	switch t {
	case message.Confirmable:
		return "CON"
	case message.NonConfirmable:
		return "NON"
	case message.Acknowledgement:
		return "ACK"
	case message.Reset:
		return "RST"
	}
	return strconv.Itoa(int(t))
}

// handle serves one incoming message. go-coap also hands over the empty
// ACKs and Resets answering notifications; those are not requests.
func (s *server) handle(w *responsewriter.ResponseWriter[*udpClient.Conn], m *pool.Message) {
	if m.Code() < codes.GET || m.Code() > codeIPATCH {
		return
	}
	req := parseRequest(m)
	opts := fmt.Sprintf("code=%s path=%s cf=%s token=%s type=%s mid=%d", methodName(req.method), req.path(),
		cfString(req.cf), hex.EncodeToString(req.token), typeString(req.typ), req.mid)
	if req.accept != cfNone {
		opts += " accept=" + strconv.Itoa(req.accept)
	}
	if req.observe >= 0 {
		opts += " observe=" + strconv.Itoa(req.observe)
	}
	s.d.host.Log(proto.Entry{Direction: "IN", Event: req.event, MessageOptions: opts,
		Payload: string(req.body), RawMessage: hex.EncodeToString(req.body)})

	resp := s.serve(w.Conn(), &req)

	var body *bytes.Reader
	if resp.body != nil {
		body = bytes.NewReader(resp.body)
	}
	if err := w.SetResponse(resp.code, 0, nil); err != nil {
		// The client asked for no response of this class (RFC 7967).
		return
	}
	if resp.cf != cfNone {
		w.Message().SetContentFormat(message.MediaType(resp.cf))
	}
	if body != nil {
		w.Message().SetBody(body)
	}
	if resp.observe >= 0 {
		w.Message().SetObserve(uint32(resp.observe))
	}
	opts = fmt.Sprintf("code=%s path=%s cf=%s token=%s", codeString(resp.code), req.path(),
		cfString(resp.cf), hex.EncodeToString(req.token))
	if resp.observe >= 0 {
		opts += " observe=" + strconv.FormatInt(resp.observe, 10)
	}
	s.d.host.Log(proto.Entry{Direction: "OUT", Event: req.event, MessageOptions: opts,
		Payload: string(resp.body), RawMessage: hex.EncodeToString(resp.body)})
}

// serve routes a request to its resource.
func (s *server) serve(cc *udpClient.Conn, req *request) response {
	isObserve := req.method == codes.GET && req.observe == 0
	if req.method == codes.GET && req.observe == 1 {
		// Deregistration is honoured even when the device answers with a
		// failure: the client has said it is no longer interested.
		s.removeKey(obsKey{cc: cc, token: string(req.token)})
	}
	if s.d.host.FailResponse() {
		if isObserve {
			// A failed registration also ends an earlier one with the same
			// token (RFC 7641 §4.1).
			s.removeKey(obsKey{cc: cc, token: string(req.token)})
		}
		return failure(codes.InternalServerError, "failure response requested")
	}
	switch {
	case equalSegs(req.segs, ".well-known", "core"):
		return s.serveWellKnown(req)
	case equalSegs(req.segs, "device"):
		return s.serveDevice(req)
	case len(req.segs) == len(s.d.opts.prefix)+1 && equalSegs(req.segs[:len(s.d.opts.prefix)], s.d.opts.prefix...):
		resp := s.serveParam(cc, req, req.segs[len(req.segs)-1])
		if isObserve && resp.code != codes.Content {
			s.removeKey(obsKey{cc: cc, token: string(req.token)})
		}
		return resp
	}
	return failure(codes.NotFound, "no such resource")
}

func equalSegs(segs []string, want ...string) bool {
	if len(segs) != len(want) {
		return false
	}
	for i := range segs {
		if segs[i] != want[i] {
			return false
		}
	}
	return true
}

func (s *server) serveWellKnown(req *request) response {
	if req.method != codes.GET {
		return failure(codes.MethodNotAllowed, "only GET")
	}
	if req.accept != cfNone && req.accept != cfLink {
		return failure(codes.NotAcceptable, "application/link-format only")
	}
	return content(cfLink, []byte(s.linkFormat(req.queries)))
}

func (s *server) serveDevice(req *request) response {
	if req.method != codes.GET {
		return failure(codes.MethodNotAllowed, "only GET")
	}
	if req.accept != cfNone && req.accept != cfJSON {
		return failure(codes.NotAcceptable, "application/json only")
	}
	b, err := json.Marshal(s.d.host.Params().List())
	if err != nil {
		return failure(codes.InternalServerError, "cannot encode parameters")
	}
	return content(cfJSON, b)
}

func (s *server) serveParam(cc *udpClient.Conn, req *request, name string) response {
	p, ok := s.d.host.Params().Get(name)
	if !ok {
		return failure(codes.NotFound, "unknown parameter")
	}
	switch req.method {
	case codes.GET:
		asJSON := s.d.opts.json
		switch req.accept {
		case cfNone:
		case cfText:
			asJSON = false
		case cfJSON:
			asJSON = true
		default:
			return failure(codes.NotAcceptable, "text/plain or application/json only")
		}
		resp := represent(p, p.Value, asJSON)
		if req.observe == 0 {
			if seq, ok := s.addObserver(cc, req.token, p.Name, asJSON); ok {
				resp.observe = int64(seq)
			}
		}
		return resp
	case codes.PUT:
		return s.putParam(req, p)
	}
	return failure(codes.MethodNotAllowed, "GET or PUT only")
}

// represent renders a parameter value as text/plain or JSON.
func represent(p param.Param, value string, asJSON bool) response {
	if !asJSON {
		return content(cfText, []byte(value))
	}
	b, err := json.Marshal(struct {
		Name  string     `json:"name"`
		Value string     `json:"value"`
		Type  param.Type `json:"type"`
	}{p.Name, value, p.Type})
	if err != nil {
		return failure(codes.InternalServerError, "cannot encode parameter")
	}
	return content(cfJSON, b)
}

func (s *server) putParam(req *request, p param.Param) response {
	var value string
	switch req.cf {
	case cfNone, cfText:
		value = string(req.body)
	case cfJSON:
		v, err := jsonValue(req.body)
		if err != nil {
			return failure(codes.BadRequest, err.Error())
		}
		value = v
	default:
		return failure(codes.UnsupportedMediaType, "text/plain or application/json only")
	}
	err := s.d.host.Write(p.Name, value)
	switch {
	case err == nil:
		return response{code: codes.Changed, cf: cfNone, observe: -1}
	case errors.Is(err, param.ErrUnknown):
		return failure(codes.NotFound, "unknown parameter")
	case errors.Is(err, proto.ErrReadOnly), errors.Is(err, proto.ErrFrozen):
		// The resource exists but does not accept PUT (now): that is 4.05
		// Method Not Allowed, as LwM2M answers a write to a read-only
		// resource. 4.03 would wrongly suggest missing authorisation.
		return failure(codes.MethodNotAllowed, err.Error())
	case errors.Is(err, param.ErrValue):
		return failure(codes.BadRequest, err.Error())
	}
	s.onError(fmt.Errorf("write %s: %w", p.Name, err))
	return failure(codes.InternalServerError, "write failed")
}

// jsonValue extracts "value" of {"value": ...}: a string as is, a number
// or boolean in its JSON spelling (the parameter's type normalises it).
func jsonValue(body []byte) (string, error) {
	var doc struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return "", errors.New(`body must be a JSON object {"value": ...}`)
	}
	raw := bytes.TrimSpace(doc.Value)
	if len(raw) == 0 || string(raw) == "null" {
		return "", errors.New(`body has no "value"`)
	}
	switch raw[0] {
	case '"':
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", errors.New(`"value" is not a valid JSON string`)
		}
		return v, nil
	case '{', '[':
		return "", errors.New(`"value" must be a string, number or boolean`)
	}
	return string(raw), nil
}

// link is one entry of /.well-known/core.
type link struct {
	href  string
	attrs [][2]string // name, value; "" value = flag attribute
}

func (l link) String() string {
	var b strings.Builder
	b.WriteString("<" + l.href + ">")
	for _, a := range l.attrs {
		b.WriteString(";" + a[0])
		switch {
		case a[1] == "":
		case a[0] == "ct":
			// ct is a number, written unquoted (RFC 7252 §7.2.1).
			b.WriteString("=" + a[1])
		default:
			b.WriteString(`="` + a[1] + `"`)
		}
	}
	return b.String()
}

// matches applies an RFC 6690 §4.1 query filter: name=value, where a
// trailing '*' matches a prefix.
func (l link) matches(q string) bool {
	name, want, ok := strings.Cut(q, "=")
	if !ok {
		return false
	}
	eq := func(v string) bool {
		if p, ok := strings.CutSuffix(want, "*"); ok {
			return strings.HasPrefix(v, p)
		}
		return v == want
	}
	if name == "href" {
		return eq(l.href)
	}
	for _, a := range l.attrs {
		if a[0] != name {
			continue
		}
		// Attribute values may be space-separated lists.
		for v := range strings.FieldsSeq(a[1]) {
			if eq(v) {
				return true
			}
		}
		if a[1] == "" && want == "" {
			return true
		}
	}
	return false
}

func (s *server) links() []link {
	prefix := "/" + strings.Join(s.d.opts.prefix, "/") + "/"
	ps := s.d.host.Params().List()
	ls := make([]link, 0, len(ps)+1)
	for _, p := range ps {
		ls = append(ls, link{href: prefix + p.Name, attrs: [][2]string{
			{"rt", string(p.Type)}, {"if", "sensor"}, {"obs", ""},
		}})
	}
	return append(ls, link{href: "/device", attrs: [][2]string{{"ct", strconv.Itoa(cfJSON)}}})
}

func (s *server) linkFormat(queries []string) string {
	var out []string
next:
	for _, l := range s.links() {
		for _, q := range queries {
			if !l.matches(q) {
				continue next
			}
		}
		out = append(out, l.String())
	}
	return strings.Join(out, ",")
}
