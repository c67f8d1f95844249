package lwm2m

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/plgd-dev/go-coap/v3/message"
	"github.com/plgd-dev/go-coap/v3/message/codes"
	"github.com/plgd-dev/go-coap/v3/message/pool"
	"github.com/plgd-dev/go-coap/v3/net/responsewriter"
	udpclient "github.com/plgd-dev/go-coap/v3/udp/client"

	"cpesuite/internal/iotemu/lwm2m/codec"
	"cpesuite/internal/iotemu/param"
	"cpesuite/internal/iotemu/proto"
)

// fwStep is how long each simulated firmware step (download, install)
// takes.
var fwStep = 200 * time.Millisecond

// rebootDelay lets the 2.04 to Execute Reboot leave before the reboot
// closes the socket: go-coap writes the answer only after the handler has
// returned, from the goroutine that ran it.
const rebootDelay = 50 * time.Millisecond

type writer = responsewriter.ResponseWriter[*udpclient.Conn]

// answer is a handler's outcome: a code and, for 2.05, a body.
type answer struct {
	code    codes.Code
	format  uint16
	body    []byte
	payload string // human-readable body for the log
	observe *uint32
}

func fail(c codes.Code) answer { return answer{code: c} }

// handle serves the server's requests on the device's connection (Device
// Management and Information Reporting interfaces, Core §5.4 and §5.5).
func (d *device) handle(w *writer, r *pool.Message) {
	if r.Type() == message.Reset {
		// A RST to a notification cancels its observation (RFC 7641 §3.6).
		if d.cancelByMID(r.MessageID()) {
			d.host.Log(entry("IN", "CANCEL_OBSERVE", r, "RST"))
		}
		return
	}
	if r.Code() < codes.GET || r.Code() >= codes.Created {
		return // not a request
	}
	p, perr := r.Options().Path()
	event := eventOf(r)
	body, _ := r.ReadBody()
	d.host.Log(entry("IN", event, r, printable(body)))
	if d.loc() == "" {
		// Core §5.4: the client ignores the server until its Register is
		// acknowledged. go-coap still acknowledges a confirmable request.
		return
	}
	var a answer
	switch path, err := codec.ParsePath(p); {
	case d.host.FailResponse():
		// The emulator's failResponse switch: every server request fails.
		a = fail(codes.InternalServerError)
	case r.Code() > codes.DELETE:
		// FETCH and iPATCH (LwM2M 1.1 composite operations) and other
		// methods the stack does not implement.
		a = fail(codes.MethodNotAllowed)
	case perr != nil || err != nil:
		a = fail(codes.BadRequest)
	default:
		a = d.dispatch(event, path, r, body)
	}
	d.respond(w, r, event, a)
}

// eventOf names a request for the log. POST means three operations by
// the depth of its path (Core §5.4): Create on an object, Write (partial
// update) on an instance and Execute on a resource.
func eventOf(r *pool.Message) string {
	switch r.Code() {
	case codes.GET:
		if a, err := r.Accept(); err == nil && uint16(a) == codec.FormatLinkFormat {
			return "DISCOVER"
		}
		if o, err := r.Observe(); err == nil {
			if o == 0 {
				return "OBSERVE"
			}
			return "CANCEL_OBSERVE"
		}
		return "READ"
	case codes.PUT:
		if !r.HasOption(message.ContentFormat) && r.HasOption(message.URIQuery) {
			return "WRITE_ATTRIBUTES"
		}
		return "WRITE"
	case codes.POST:
		p, err := r.Options().Path()
		if err != nil {
			return "EXECUTE"
		}
		switch path, err := codec.ParsePath(p); {
		case err != nil:
			return "EXECUTE"
		case path.Depth() == 1:
			return "CREATE"
		case path.Depth() == 2:
			return "WRITE"
		}
		return "EXECUTE"
	case codes.DELETE:
		return "DELETE"
	}
	return "REQUEST"
}

// respond sets the answer and logs it as it goes on the wire. go-coap
// fills in type and message id only after the handler returned, so the
// piggybacked answer to a confirmable request gets them here, as go-coap
// will set them (ACK, the request's id), and the log's rawMessage holds
// the real datagram. An answer to a non-confirmable request gets its id
// from go-coap later; its rawMessage stays empty rather than wrong.
func (d *device) respond(w *writer, r *pool.Message, event string, a answer) {
	var body *bytes.Reader
	if a.body != nil {
		body = bytes.NewReader(a.body)
	}
	var err error
	if body != nil {
		err = w.SetResponse(a.code, message.MediaType(a.format), body)
	} else {
		err = w.SetResponse(a.code, message.TextPlain, nil)
	}
	if err != nil {
		d.logf("respond: %v", err)
		return
	}
	if a.observe != nil {
		w.Message().SetObserve(*a.observe)
	}
	if r.Type() == message.Confirmable {
		w.Message().SetType(message.Acknowledgement)
		w.Message().SetMessageID(r.MessageID())
	}
	d.host.Log(entry("OUT", event, w.Message(), a.payload))
}

func (d *device) dispatch(event string, p codec.Path, r *pool.Message, body []byte) answer {
	if p.Object == objSecurity {
		// The Security object belongs to the bootstrap server only
		// (Core §7.1); a DM server is not authorised.
		return fail(codes.Unauthorized)
	}
	switch event {
	case "READ":
		return d.read(p, r)
	case "DISCOVER":
		return d.discover(p)
	case "OBSERVE":
		return d.observe(p, r)
	case "CANCEL_OBSERVE":
		d.cancelByToken(string(r.Token()))
		return d.read(p, r)
	case "WRITE_ATTRIBUTES":
		return d.writeAttributes(p, r)
	case "WRITE":
		return d.write(p, r, body)
	case "CREATE":
		return fail(codes.MethodNotAllowed) // no multi-instance objects
	case "EXECUTE":
		return d.execute(p, body)
	}
	// Delete: no object instance can be deleted (Device shall not be,
	// Core §5.4.7, and the others are single-instance).
	if o := findObject(p.Object); o == nil || p.Depth() > 1 && p.Instance != 0 {
		return fail(codes.NotFound)
	}
	return fail(codes.MethodNotAllowed)
}

// target resolves p to its object and (for depth >= 3) resource, with the
// LwM2M error for a path the client does not have.
func target(p codec.Path) (*objDef, *resDef, codes.Code) {
	o := findObject(p.Object)
	if o == nil || p.Depth() >= 2 && p.Instance != 0 {
		return nil, nil, codes.NotFound
	}
	if p.Depth() < 3 {
		return o, nil, codes.Empty
	}
	r := o.resource(p.Resource)
	if r == nil {
		return nil, nil, codes.NotFound
	}
	if p.Depth() == 4 {
		if !r.multi() {
			return nil, nil, codes.NotFound
		}
		found := false
		for _, i := range r.instances {
			found = found || int32(i) == p.ResourceInstance
		}
		if !found {
			return nil, nil, codes.NotFound
		}
	}
	return o, r, codes.Empty
}

// records returns the readable values at or below p, or the failure code.
func (d *device) records(p codec.Path) ([]codec.Record, codes.Code) {
	o, res, c := target(p)
	if c != codes.Empty {
		return nil, c
	}
	if res != nil && !res.readable() {
		return nil, codes.MethodNotAllowed
	}
	ps := d.host.Params()
	var recs []codec.Record
	add := func(rp codec.Path, r *resDef) {
		name, ok := NameOf(rp)
		if !ok {
			return
		}
		pv, ok := ps.Get(name)
		if !ok {
			return
		}
		if name == nameTime {
			pv.Value = d.now()
		}
		v, err := codec.ParseValue(r.kind, pv.Value)
		if err != nil {
			d.logf("%s holds %q: %v", name, pv.Value, err)
			return
		}
		recs = append(recs, codec.Record{Path: rp, Value: v})
	}
	for i := range o.res {
		r := &o.res[i]
		if res != nil && r != res || !r.readable() {
			continue
		}
		rp := codec.Path{Object: int32(o.id), Instance: 0, Resource: int32(r.id), ResourceInstance: -1}
		if !r.multi() {
			add(rp, r)
			continue
		}
		for _, ri := range r.instances {
			if p.Depth() == 4 && int32(ri) != p.ResourceInstance {
				continue
			}
			rp.ResourceInstance = int32(ri)
			add(rp, r)
		}
	}
	if res != nil && len(recs) == 0 {
		return nil, codes.NotFound
	}
	return recs, codes.Content
}

// single reports whether p addresses one value.
func single(p codec.Path, r *resDef) bool {
	return p.Depth() == 4 || p.Depth() == 3 && r != nil && !r.multi()
}

// format picks the content format of a read of p: the Accept option when
// present, else plain text (opaque for opaque resources) for one value
// and the contentFormat option for several (Core §6.4; Transport §7.3).
// It answers 4.06 for a format the client cannot produce.
func (d *device) format(p codec.Path, r *pool.Message) (uint16, codes.Code) {
	_, res, c := target(p)
	if c != codes.Empty {
		return 0, c
	}
	one := single(p, res)
	acc, err := r.Accept()
	if err != nil {
		if !one {
			return d.o.format, codes.Empty
		}
		if res.kind == codec.KindOpaque {
			return codec.FormatOpaque, codes.Empty
		}
		return codec.FormatText, codes.Empty
	}
	f := uint16(acc)
	switch f {
	case codec.FormatTLV:
		return f, codes.Empty
	case codec.FormatSenMLJSON, codec.FormatSenMLCBOR:
		if d.o.version != "1.0" {
			return f, codes.Empty
		}
	case codec.FormatText:
		if one {
			return f, codes.Empty
		}
	case codec.FormatOpaque:
		if one && res.kind == codec.KindOpaque {
			return f, codes.Empty
		}
	case codec.FormatCBOR:
		if one && d.o.version != "1.0" {
			return f, codes.Empty
		}
	}
	return 0, codes.NotAcceptable
}

func encodeRecords(format uint16, p codec.Path, recs []codec.Record) ([]byte, error) {
	return codec.Encode(format, p, recs)
}

func (d *device) read(p codec.Path, r *pool.Message) answer {
	recs, c := d.records(p)
	if c != codes.Content {
		return fail(c)
	}
	f, c := d.format(p, r)
	if c != codes.Empty {
		return fail(c)
	}
	b, err := encodeRecords(f, p, recs)
	if err != nil {
		if errors.Is(err, codec.ErrUnsupportedFormat) {
			return fail(codes.NotAcceptable)
		}
		d.logf("read %s: %v", p, err)
		return fail(codes.InternalServerError)
	}
	return answer{code: codes.Content, format: f, body: b, payload: describe(recs)}
}

func (d *device) observe(p codec.Path, r *pool.Message) answer {
	a := d.read(p, r)
	if a.code != codes.Content {
		return a
	}
	token := string(r.Token())
	if token == "" {
		return fail(codes.BadRequest)
	}
	recs, _ := d.records(p)
	d.mu.Lock()
	for i, o := range d.obs {
		if o.token == token {
			// Re-registration with the same token replaces the old one.
			o.stop()
			d.obs = append(d.obs[:i], d.obs[i+1:]...)
			break
		}
	}
	o := &observation{token: token, path: p, format: a.format, lastSent: time.Now(), mid: -1}
	if v, ok := numericValue(p, recs); ok {
		o.last, o.hasLast = v, true
	}
	o.seq = 1
	seq := o.seq
	d.obs = append(d.obs, o)
	d.armLocked(o, false)
	d.mu.Unlock()
	a.observe = &seq
	return a
}

// writeValue applies one decoded record through the host, mapping the
// host's errors to LwM2M codes (Core §5.4.3).
func (d *device) writeValue(rec codec.Record) codes.Code {
	if rec.Path.Object == objFirmware && rec.Path.Resource == resFwPackage {
		// The package is accepted and discarded; receiving one completes
		// a push download.
		d.firmwareReceived(len(rec.Value.Bytes) > 0)
		return codes.Changed
	}
	name, ok := NameOf(rec.Path)
	if !ok {
		return codes.NotFound
	}
	err := d.host.Write(name, rec.Value.String())
	switch {
	case err == nil:
	case errors.Is(err, proto.ErrReadOnly):
		return codes.MethodNotAllowed
	case errors.Is(err, proto.ErrFrozen):
		// A rule froze the parameter: for now the resource is not
		// writable, which LwM2M can only say with 4.05 (its Write has no
		// 4.03, and 4.01 would blame the server's access rights).
		return codes.MethodNotAllowed
	case errors.Is(err, param.ErrValue):
		return codes.BadRequest
	case errors.Is(err, param.ErrUnknown):
		return codes.NotFound
	default:
		d.logf("write %s: %v", name, err)
		return codes.InternalServerError
	}
	if name == nameFwURI {
		d.firmwareURI(rec.Value.Str)
	}
	return codes.Changed
}

func (d *device) write(p codec.Path, r *pool.Message, body []byte) answer {
	if p.Depth() < 2 {
		return fail(codes.MethodNotAllowed)
	}
	_, res, c := target(p)
	if c != codes.Empty {
		return fail(c)
	}
	if res != nil && !res.writable() {
		return fail(codes.MethodNotAllowed)
	}
	cf, err := r.ContentFormat()
	if err != nil {
		return fail(codes.BadRequest)
	}
	f := uint16(cf)
	switch f {
	case codec.FormatTLV:
	case codec.FormatSenMLJSON, codec.FormatSenMLCBOR:
		if d.o.version == "1.0" {
			return fail(codes.UnsupportedMediaType)
		}
	case codec.FormatText, codec.FormatOpaque, codec.FormatCBOR:
		if !single(p, res) {
			return fail(codes.BadRequest)
		}
		if f == codec.FormatCBOR && d.o.version == "1.0" {
			return fail(codes.UnsupportedMediaType)
		}
	default:
		return fail(codes.UnsupportedMediaType)
	}
	recs, err := codec.Decode(f, p, body, KindOf)
	if err != nil {
		if errors.Is(err, codec.ErrUnsupportedFormat) {
			return fail(codes.UnsupportedMediaType)
		}
		return fail(codes.BadRequest)
	}
	if len(recs) == 0 {
		return fail(codes.BadRequest)
	}
	// Check every record before applying any, so that a bad record does
	// not leave half a write behind.
	for _, rec := range recs {
		if !p.Contains(rec.Path) || rec.Path.Depth() < 3 {
			return fail(codes.BadRequest)
		}
		_, rr, c := target(rec.Path)
		if c != codes.Empty {
			return fail(c)
		}
		if !rr.writable() {
			return fail(codes.MethodNotAllowed)
		}
		if rr.multi() && rec.Path.Depth() != 4 {
			return fail(codes.BadRequest)
		}
	}
	for _, rec := range recs {
		if c := d.writeValue(rec); c != codes.Changed {
			return fail(c)
		}
	}
	return answer{code: codes.Changed, payload: describe(recs)}
}

// execute runs an executable resource (Core §5.4.5); the action starts
// after the 2.04 is on its way.
func (d *device) execute(p codec.Path, args []byte) answer {
	if p.Depth() != 3 {
		return fail(codes.MethodNotAllowed)
	}
	_, res, c := target(p)
	if c != codes.Empty {
		return fail(c)
	}
	if !res.executable() {
		return fail(codes.MethodNotAllowed)
	}
	switch {
	case p.Object == objDevice && p.Resource == resDevReboot:
		time.AfterFunc(rebootDelay, func() { _ = d.Reboot(context.Background()) })
	case p.Object == objDevice && p.Resource == resDevFactoryReset:
		d.factoryReset()
		time.AfterFunc(rebootDelay, func() { _ = d.Reboot(context.Background()) })
	case p.Object == objServer && p.Resource == resServerUpdateTrigger:
		d.triggerUpdate()
	case p.Object == objFirmware && p.Resource == resFwUpdate:
		if !d.firmwareUpdate() {
			// Update is only executable in state Downloaded (Core E.6).
			return fail(codes.MethodNotAllowed)
		}
	case p.Object == objTemperature && p.Resource == resTempReset:
		v := d.host.Params().Value(nameTempValue)
		d.putLocal(nameTempMin, v)
		d.putLocal(nameTempMax, v)
	}
	return answer{code: codes.Changed, payload: printable(args)}
}

// factoryReset restores every writable parameter to its initial value.
func (d *device) factoryReset() {
	for _, p := range catalogParams(d.cfg) {
		if p.Writable || strings.HasPrefix(p.Name, "FirmwareUpdate.") {
			_, _, _ = d.host.Params().Put(p.Name, p.Value)
		}
	}
}

// discover answers Discover (Core §5.4.2): the links of p and everything
// below it, with dim for multiple-instance resources and the attributes
// attached at each level (inherited ones for a resource target).
func (d *device) discover(p codec.Path) answer {
	o, res, c := target(p)
	if c != codes.Empty {
		return fail(c)
	}
	if p.Depth() == 4 {
		return fail(codes.BadRequest)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var links []codec.Link
	own := func(lp codec.Path) []codec.LinkParam { return attrParams(d.attrs[lp]) }
	objPath := codec.Path{Object: int32(o.id), Instance: -1, Resource: -1, ResourceInstance: -1}
	instPath := codec.Path{Object: int32(o.id), Instance: 0, Resource: -1, ResourceInstance: -1}
	if p.Depth() == 1 {
		links = append(links, codec.Link{Target: objPath.String(), Params: own(objPath)})
	}
	if p.Depth() <= 2 {
		links = append(links, codec.Link{Target: instPath.String(), Params: own(instPath)})
	}
	for i := range o.res {
		r := &o.res[i]
		if res != nil && r != res {
			continue
		}
		rp := codec.Path{Object: int32(o.id), Instance: 0, Resource: int32(r.id), ResourceInstance: -1}
		var ps []codec.LinkParam
		if r.multi() {
			ps = append(ps, codec.LinkParam{Key: "dim", Value: strconv.Itoa(len(r.instances))})
		}
		if res != nil {
			ps = append(ps, attrParams(d.effectiveLocked(rp))...)
		} else {
			ps = append(ps, own(rp)...)
		}
		links = append(links, codec.Link{Target: rp.String(), Params: ps})
	}
	s := codec.EncodeLinks(links)
	return answer{code: codes.Content, format: codec.FormatLinkFormat, body: []byte(s), payload: s}
}

func attrParams(a attrSet) []codec.LinkParam {
	var ps []codec.LinkParam
	for _, f := range []struct {
		key string
		v   *float64
	}{{"pmin", a.pmin}, {"pmax", a.pmax}, {"gt", a.gt}, {"lt", a.lt}, {"st", a.step}} {
		if f.v != nil {
			ps = append(ps, codec.LinkParam{Key: f.key, Value: strconv.FormatFloat(*f.v, 'f', -1, 64)})
		}
	}
	return ps
}

// writeAttributes applies Write-Attributes (Core §5.4.4): PUT with
// <NOTIFICATION> attributes in the query; a key without value unsets it.
// gt, lt and st only apply to numeric resources.
func (d *device) writeAttributes(p codec.Path, r *pool.Message) answer {
	_, res, c := target(p)
	if c != codes.Empty {
		return fail(c)
	}
	if p.Depth() == 4 {
		return fail(codes.BadRequest)
	}
	qs, err := r.Queries()
	if err != nil {
		return fail(codes.BadRequest)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	a := d.attrs[p]
	seen := map[string]bool{}
	for _, q := range qs {
		k, v, hasValue := strings.Cut(q, "=")
		if seen[k] {
			return fail(codes.BadRequest)
		}
		seen[k] = true
		var dst **float64
		switch k {
		case "pmin":
			dst = &a.pmin
		case "pmax":
			dst = &a.pmax
		case "gt":
			dst = &a.gt
		case "lt":
			dst = &a.lt
		case "st":
			dst = &a.step
		default:
			return fail(codes.BadRequest)
		}
		if (k == "gt" || k == "lt" || k == "st") && (res == nil || !isNumeric(res.kind)) {
			return fail(codes.BadRequest)
		}
		if !hasValue {
			*dst = nil
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 && (k == "pmin" || k == "pmax" || k == "st") {
			return fail(codes.BadRequest)
		}
		*dst = &f
	}
	if a.pmin != nil && a.pmax != nil && *a.pmax < *a.pmin {
		return fail(codes.BadRequest)
	}
	if a.gt != nil && a.lt != nil && *a.lt >= *a.gt {
		return fail(codes.BadRequest)
	}
	if d.attrs == nil {
		d.attrs = map[codec.Path]attrSet{}
	}
	d.attrs[p] = a
	// Observations under p follow their new periods at once.
	for _, o := range d.obs {
		if p.Contains(o.path) || o.path.Contains(p) {
			d.armLocked(o, false)
		}
	}
	return answer{code: codes.Changed, payload: strings.Join(qs, "&")}
}

func isNumeric(k codec.Kind) bool {
	return k == codec.KindInteger || k == codec.KindUnsigned || k == codec.KindFloat
}

// firmwareURI simulates a pull download after a Package URI write: a URI
// moves Idle to Downloading and, a step later, to Downloaded; an empty URI
// cancels back to Idle (Core E.6.1).
func (d *device) firmwareURI(uri string) {
	if uri == "" {
		d.firmwareReceived(false)
		return
	}
	if d.host.Params().Value(nameFwState) != strconv.Itoa(fwIdle) {
		return
	}
	d.putLocal(nameFwResult, "0")
	d.putLocal(nameFwState, strconv.Itoa(fwDownloading))
	d.fwLater(func() { d.putLocal(nameFwState, strconv.Itoa(fwDownloaded)) })
}

// firmwareReceived handles a written package: Downloaded with content,
// Idle (reset) when empty.
func (d *device) firmwareReceived(content bool) {
	d.mu.Lock()
	if d.fwTimer != nil {
		d.fwTimer.Stop()
		d.fwTimer = nil
	}
	d.mu.Unlock()
	if !content {
		d.putLocal(nameFwState, strconv.Itoa(fwIdle))
		d.putLocal(nameFwResult, "0")
		return
	}
	d.putLocal(nameFwState, strconv.Itoa(fwDownloaded))
}

// firmwareUpdate runs Update: Updating, then Idle with Update Result 1
// (success) and the package version as the firmware version.
func (d *device) firmwareUpdate() bool {
	if d.host.Params().Value(nameFwState) != strconv.Itoa(fwDownloaded) {
		return false
	}
	d.putLocal(nameFwState, strconv.Itoa(fwUpdating))
	d.fwLater(func() {
		if v := d.host.Params().Value(namePkgVersion); v != "" {
			d.putLocal(nameFwVersion, v)
		}
		d.putLocal(nameFwState, strconv.Itoa(fwIdle))
		d.putLocal(nameFwResult, "1")
	})
	return true
}

func (d *device) fwLater(f func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fwTimer != nil {
		d.fwTimer.Stop()
	}
	gen := d.gen
	d.fwTimer = time.AfterFunc(fwStep, func() {
		if d.isCurrent(gen) {
			f()
		}
	})
}

// describe renders records for the log: "/3/0/0=Acme, /3/0/1=M1".
func describe(recs []codec.Record) string {
	var b strings.Builder
	for i, r := range recs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r.Path.String())
		b.WriteByte('=')
		b.WriteString(r.Value.String())
	}
	return b.String()
}

// printable returns b as text when it is printable, else its length.
func printable(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' || c == 0x7f {
			return strconv.Itoa(len(b)) + " bytes"
		}
	}
	return string(b)
}
