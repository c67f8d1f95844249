package cpe

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/cwmp"
	"cpesuite/internal/testutil"
	"cpesuite/internal/tr069emu/tree"
)

// waitFor bounds every poll: generous, as it only matters when a test fails.
const waitFor = testutil.MinDeadline

// eventually polls cond until it holds or waitFor passes.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// newEnv returns an environment with the test ACS credentials and a short
// retry minimum.
func newEnv(t testing.TB, s Settings) *Env {
	t.Helper()
	env := &Env{Credentials: func() (string, string) { return "cpe", "s3cret" },
		MinRetry: 20 * time.Millisecond, DiagTimeout: 10 * time.Second}
	env.SetSettings(s)
	return env
}

// models are the two data models of the shipped base trees.
var models = []struct{ name, root string }{{tree.TR181, "Device."}, {tree.TR098, "InternetGatewayDevice."}}

func baseTemplate(t testing.TB, model string) *tree.Template {
	t.Helper()
	tmpl, err := tree.Base(model)
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// newDevice creates (but does not start) a device on a fresh tree of the
// base template of model; Stop runs when the test ends.
func newDevice(t testing.TB, env *Env, model, acsURL string, o Options) *Device {
	t.Helper()
	if o.Serial == "" {
		o.Serial = serialFor(t)
	}
	o.ACSURL = acsURL
	if o.Tree == nil {
		o.Tree = tree.New(baseTemplate(t, model))
	}
	d := New(env, o)
	t.Cleanup(d.Stop)
	return d
}

// serialFor derives a serial number from the test's name.
func serialFor(t testing.TB) string {
	return "EMU" + strings.NewReplacer("/", "", " ", "", "-", "", "_", "").Replace(t.Name())
}

// startDevice creates and starts a device.
func startDevice(t testing.TB, env *Env, model, acsURL string, o Options) *Device {
	t.Helper()
	d := newDevice(t, env, model, acsURL, o)
	d.Start(context.Background())
	return d
}

// value reads one parameter of the device's current tree.
func paramValue(t testing.TB, d *Device, name string) string {
	t.Helper()
	p, ok := d.Tree().Get(name)
	if !ok {
		t.Fatalf("no parameter %s", name)
	}
	return p.Value
}

func codes(evs []cwmp.EventStruct) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.EventCode
		if e.CommandKey != "" {
			out[i] += "[" + e.CommandKey + "]"
		}
	}
	return out
}

func hasEvent(inf *cwmp.Inform, code, key string) bool {
	return slices.ContainsFunc(inf.Event, func(e cwmp.EventStruct) bool { return e.EventCode == code && e.CommandKey == key })
}

func informParam(inf *cwmp.Inform, name string) (string, bool) {
	for _, p := range inf.ParameterList {
		if p.Name == name {
			return p.Value.Text, true
		}
	}
	return "", false
}

// ---------------------------------------------------------------------------
// A scripted ACS double: every device posts to its own path (/serial), the
// double records every message, answers Informs (or fails them as told),
// hands out queued RPCs on the empty POST and on responses, and ends the
// session with 204 when none is left.

// post is one HTTP request the double received.
type post struct {
	Serial string
	At     time.Time
	Cookie string
	Env    *cwmp.Envelope // nil for the empty POST
	Raw    []byte
	Reply  string // what the double answered: a method, "204", or a failure
}

// method is the posted message's method, "" for the empty POST.
func (p post) method() string {
	if p.Env == nil {
		return ""
	}
	return p.Env.Body.Method()
}

// failure is what the double does instead of answering an Inform.
type failure struct {
	status     int // HTTP status; 0 with drop
	retryAfter string
	drop       bool // close the connection without an answer
}

// queued is an RPC to hand out: a message or a raw envelope.
type queued struct {
	id  string
	msg cwmp.Message
	raw []byte
}

type doubleDevice struct {
	failures []failure
	rpcs     []queued
	// onInform, when set, runs before the InformResponse is written (it
	// may block to hold the session open).
	onInform func(*cwmp.Inform)
	// cookie, when set, is set on every InformResponse with a counter.
	cookie   string
	sessions int
	// failRequests answers that many CPE requests (TransferComplete,
	// DUStateChangeComplete) with HTTP 500.
	failRequests int
}

type acsDouble struct {
	t   testing.TB
	srv *httptest.Server

	mu    sync.Mutex
	posts []post
	devs  map[string]*doubleDevice
	ids   int
}

func newDouble(t testing.TB) *acsDouble {
	t.Helper()
	a := &acsDouble{t: t, devs: map[string]*doubleDevice{}}
	a.srv = httptest.NewServer(a)
	t.Cleanup(a.srv.Close)
	return a
}

// url is the ACS URL of serial.
func (a *acsDouble) url(serial string) string { return a.srv.URL + "/" + serial }

func (a *acsDouble) dev(serial string) *doubleDevice {
	dd := a.devs[serial]
	if dd == nil {
		dd = &doubleDevice{}
		a.devs[serial] = dd
	}
	return dd
}

// configure edits the double's state of serial under its lock.
func (a *acsDouble) configure(serial string, fn func(*doubleDevice)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fn(a.dev(serial))
}

// fail makes the next Informs of serial fail, one failure each.
func (a *acsDouble) fail(serial string, fs ...failure) {
	a.configure(serial, func(dd *doubleDevice) { dd.failures = append(dd.failures, fs...) })
}

// queue adds an RPC for serial and returns its cwmp:ID.
func (a *acsDouble) queue(serial string, m cwmp.Message) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ids++
	id := "acs-" + strconv.Itoa(a.ids)
	a.dev(serial).rpcs = append(a.dev(serial).rpcs, queued{id: id, msg: m})
	return id
}

// queueRaw adds a raw envelope whose body is bodyXML (inside the cwmp
// 1.2 namespace prefix "cwmp") and returns its cwmp:ID.
func (a *acsDouble) queueRaw(serial, bodyXML string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ids++
	id := "acs-" + strconv.Itoa(a.ids)
	raw := `<?xml version="1.0" encoding="UTF-8"?>
<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:cwmp="urn:dslforum-org:cwmp-1-2">
<soap:Header><cwmp:ID soap:mustUnderstand="1">` + id + `</cwmp:ID></soap:Header>
<soap:Body>` + bodyXML + `</soap:Body></soap:Envelope>`
	a.dev(serial).rpcs = append(a.dev(serial).rpcs, queued{id: id, raw: []byte(raw)})
	return id
}

func (a *acsDouble) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	serial := strings.Trim(r.URL.Path, "/")
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p := post{Serial: serial, At: time.Now(), Cookie: r.Header.Get("Cookie"), Raw: body}
	if len(bytes.TrimSpace(body)) > 0 {
		env, err := cwmp.Decode(body)
		if err != nil {
			a.t.Errorf("double: %s sent an undecodable message: %v\n%s", serial, err, body)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p.Env = env
	}
	a.mu.Lock()
	dd := a.dev(serial)
	var reply *cwmp.Envelope
	var raw []byte
	switch m := p.method(); m {
	case "Inform":
		if len(dd.failures) > 0 {
			f := dd.failures[0]
			dd.failures = dd.failures[1:]
			p.Reply = fmt.Sprintf("fail %+v", f)
			a.posts = append(a.posts, p)
			a.mu.Unlock()
			switch {
			case f.drop:
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					_ = conn.Close()
				}
			default:
				if f.retryAfter != "" {
					w.Header().Set("Retry-After", f.retryAfter)
				}
				w.Header().Set("Connection", "close")
				w.WriteHeader(f.status)
			}
			return
		}
		onInform := dd.onInform
		dd.sessions++
		if dd.cookie != "" {
			http.SetCookie(w, &http.Cookie{Name: dd.cookie, Value: "s" + strconv.Itoa(dd.sessions), Path: "/"})
		}
		if onInform != nil {
			a.mu.Unlock()
			onInform(p.Env.Body.(*cwmp.Inform))
			a.mu.Lock()
		}
		reply = p.Env.Reply(&cwmp.InformResponse{MaxEnvelopes: 1})
	case "TransferComplete", "DUStateChangeComplete":
		if dd.failRequests > 0 {
			dd.failRequests--
			p.Reply = "500"
			a.posts = append(a.posts, p)
			a.mu.Unlock()
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		if m == "TransferComplete" {
			reply = p.Env.Reply(&cwmp.TransferCompleteResponse{})
		} else {
			reply = p.Env.Reply(&cwmp.DUStateChangeCompleteResponse{})
		}
	default: // the empty POST, a response or a fault
		if len(dd.rpcs) > 0 {
			q := dd.rpcs[0]
			dd.rpcs = dd.rpcs[1:]
			if q.raw != nil {
				raw = q.raw
				p.Reply = "raw " + q.id
			} else {
				reply = cwmp.NewEnvelope(cwmp.CWMP12, q.id, q.msg)
			}
		}
	}
	if reply != nil {
		p.Reply = reply.Body.Method()
		b, err := cwmp.Encode(reply)
		if err != nil {
			a.t.Errorf("double: encode: %v", err)
		}
		raw = b
	}
	if raw == nil {
		p.Reply = "204"
	}
	a.posts = append(a.posts, p)
	a.mu.Unlock()
	if raw == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", `text/xml; charset="utf-8"`)
	_, _ = w.Write(raw)
}

// all returns the posts of serial.
func (a *acsDouble) all(serial string) []post {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []post
	for _, p := range a.posts {
		if p.Serial == serial {
			out = append(out, p)
		}
	}
	return out
}

// informs returns the Informs serial sent (answered or not).
func (a *acsDouble) informs(serial string) []*cwmp.Inform {
	var out []*cwmp.Inform
	for _, p := range a.all(serial) {
		if inf, ok := informOf(p); ok {
			out = append(out, inf)
		}
	}
	return out
}

// waitPost waits for the first post of serial at index >= from that
// matches and returns it with its index.
func (a *acsDouble) waitPost(t testing.TB, serial string, from int, what string, match func(post) bool) (post, int) {
	t.Helper()
	var found post
	idx := -1
	eventually(t, serial+": "+what, func() bool {
		ps := a.all(serial)
		for i := from; i < len(ps); i++ {
			if match(ps[i]) {
				found, idx = ps[i], i
				return true
			}
		}
		return false
	})
	return found, idx
}

// waitInform waits for an Inform of serial (from post index from on) that
// carries event code (any CommandKey when key is "*").
func (a *acsDouble) waitInform(t testing.TB, serial string, from int, code, key string) (*cwmp.Inform, int) {
	t.Helper()
	p, i := a.waitPost(t, serial, from, "Inform with "+code, func(p post) bool {
		inf, ok := informOf(p)
		return ok && slices.ContainsFunc(inf.Event, func(e cwmp.EventStruct) bool {
			return e.EventCode == code && (key == "*" || e.CommandKey == key)
		})
	})
	inf, _ := informOf(p)
	return inf, i
}

func informOf(p post) (*cwmp.Inform, bool) {
	if p.Env == nil {
		return nil, false
	}
	inf, ok := p.Env.Body.(*cwmp.Inform)
	return inf, ok
}

// waitSessionEnd waits for a 204 answer to serial at index >= from.
func (a *acsDouble) waitSessionEnd(t testing.TB, serial string, from int) (post, int) {
	t.Helper()
	return a.waitPost(t, serial, from, "end of session", func(p post) bool { return p.Reply == "204" })
}

// reply waits for the device's answer to the RPC with cwmp:ID id.
func (a *acsDouble) reply(t testing.TB, serial, id string) post {
	t.Helper()
	p, _ := a.waitPost(t, serial, 0, "answer to "+id, func(p post) bool { return p.Env != nil && p.Env.ID == id })
	return p
}

// call queues m for d, makes d open a session (a connection request,
// repeated while the RPC has not been handed out) and returns the answer.
func (a *acsDouble) call(t testing.TB, d *Device, m cwmp.Message) cwmp.Message {
	t.Helper()
	id := a.queue(d.Serial(), m)
	return a.await(t, d, id).Env.Body
}

// await makes d collect the queued RPC id and returns its answer.
func (a *acsDouble) await(t testing.TB, d *Device, id string) post {
	t.Helper()
	eventually(t, d.Serial()+" collects "+id, func() bool {
		if !a.handedOut(d.Serial(), id) {
			d.ConnectionRequest()
			return false
		}
		return true
	})
	return a.reply(t, d.Serial(), id)
}

func (a *acsDouble) handedOut(serial, id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return !slices.ContainsFunc(a.dev(serial).rpcs, func(q queued) bool { return q.id == id })
}

// idle waits until d has no session runner (its last session and what
// followed it are over).
func idle(t testing.TB, d *Device) {
	t.Helper()
	eventually(t, d.Serial()+" to be idle", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return !d.running && !d.inSession
	})
}

// connReq makes a connection request once the device is out of session
// (it refuses one during a session).
func connReq(t testing.TB, d *Device) {
	t.Helper()
	eventually(t, d.Serial()+" to accept a connection request", d.ConnectionRequest)
}

// fault asserts that m is a CWMP fault with code and returns it.
func fault(t testing.TB, m cwmp.Message, code cwmp.FaultCode) *cwmp.Fault {
	t.Helper()
	f, ok := m.(*cwmp.Fault)
	if !ok {
		t.Fatalf("want fault %d, got %s %+v", code, m.Method(), m)
	}
	if f.FaultCode != code {
		t.Fatalf("want fault %d, got %d (%s)", code, f.FaultCode, f.FaultString)
	}
	return f
}

// as asserts the type of an answer.
func as[T cwmp.Message](t testing.TB, m cwmp.Message) T {
	t.Helper()
	v, ok := m.(T)
	if !ok {
		if f, isFault := m.(*cwmp.Fault); isFault {
			t.Fatalf("want %T, got fault %d %s %+v", v, f.FaultCode, f.FaultString, f.SetParameterValuesFaults)
		}
		t.Fatalf("want %T, got %s %+v", v, m.Method(), m)
	}
	return v
}
