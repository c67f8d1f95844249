package cpe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"

	"cpesuite/internal/cwmp"
	"cpesuite/internal/platform/httpauth"
	"cpesuite/internal/tr069emu/tree"
)

// Version is the cwmp namespace devices inform in. 1.2 is what most
// deployed CPEs speak; the ACS's RPCs are answered in their own version.
const Version = cwmp.CWMP12

// maxResponseBytes bounds what the device reads from the ACS.
const maxResponseBytes = 8 << 20

// maxRPCsPerSession stops a runaway ACS from holding a device forever.
const maxRPCsPerSession = 1000

// requestTimeout bounds one HTTP exchange; task delays happen between
// exchanges, not inside them.
const requestTimeout = 60 * time.Second

// retryAfterError is an ACS answer of 503 with Retry-After.
type retryAfterError struct{ wait time.Duration }

func (e *retryAfterError) Error() string {
	return fmt.Sprintf("ACS busy; retry after %s", e.wait)
}

// exchange is one CWMP session over HTTP: it keeps the session cookies
// and the message ids.
type exchange struct {
	d       *Device
	url     string
	client  *httpauth.Client
	cookies []*http.Cookie
	nextID  int
}

func (x *exchange) id() string {
	x.nextID++
	return "emu-" + strconv.Itoa(x.nextID)
}

// post sends one message (nil: the empty POST) and returns the reply's
// status and body.
func (x *exchange) post(ctx context.Context, env *cwmp.Envelope) (int, []byte, http.Header, error) {
	var body []byte
	if env != nil {
		var err error
		if body, err = cwmp.Encode(env); err != nil {
			return 0, nil, nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("ACS URL: %w", err)
	}
	if env != nil {
		req.Header.Set("Content-Type", `text/xml; charset="utf-8"`)
		req.Header.Set("SOAPAction", "")
	}
	for _, c := range x.cookies {
		req.AddCookie(c)
	}
	resp, err := x.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("reading the ACS reply: %w", err)
	}
	if len(rb) > maxResponseBytes {
		return 0, nil, nil, fmt.Errorf("ACS reply larger than %d bytes", maxResponseBytes)
	}
	for _, c := range resp.Cookies() {
		x.cookies = slices.DeleteFunc(x.cookies, func(have *http.Cookie) bool { return have.Name == c.Name })
		if c.MaxAge >= 0 {
			x.cookies = append(x.cookies, &http.Cookie{Name: c.Name, Value: c.Value})
		}
	}
	return resp.StatusCode, rb, resp.Header, nil
}

// sessionClient returns the HTTP client of one session and the function
// that closes its connection when the session ends. The client has a
// transport of its own holding at most one connection, so every message of
// the session travels on the connection that carried the Inform, a new one
// is dialled only when the ACS closed it (the exchange carries the cookies
// over), and no other device's session is ever handed that connection,
// busy or idle. Closing at the end is what a CPE does, and it keeps an
// idle fleet from holding one socket per device. HTTP/1.1 only: TR-069
// sessions are HTTP/1.1 exchanges (3.4), and an HTTP/2 connection would
// multiplex what the ACS expects in sequence.
func (e *Env) sessionClient() (*http.Client, func()) {
	base := e.Transport
	if base == nil {
		base = http.DefaultTransport.(*http.Transport)
	}
	tr := base.Clone()
	tr.MaxConnsPerHost, tr.MaxIdleConnsPerHost, tr.MaxIdleConns = 1, 1, 1
	tr.ForceAttemptHTTP2 = false
	tr.Protocols = new(http.Protocols)
	tr.Protocols.SetHTTP1(true)
	return &http.Client{Transport: tr, CheckRedirect: noRedirect}, tr.CloseIdleConnections
}

// noRedirect keeps a CPE on the URL it was given: a redirect is answered
// as the ACS's reply, not followed.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// session runs one CWMP session: Inform, the CPE's own requests, then the
// ACS's RPCs until it answers the empty POST with nothing.
func (d *Device) session(ctx context.Context) error {
	d.mu.Lock()
	events := slices.Clone(d.events)
	changed := slices.Clone(d.changed)
	requests := slices.Clone(d.requests)
	retries := d.retries
	url := d.acsURL
	t := d.tree
	d.inSession = true
	d.mu.Unlock()
	d.env.InSession.Add(1)
	defer func() {
		d.env.InSession.Add(-1)
		d.mu.Lock()
		d.inSession = false
		d.mu.Unlock()
	}()
	// informed is what the Inform reports; events are the queued ones it
	// delivers.
	informed := slices.Clone(events)
	if len(informed) == 0 {
		// Requests alone still need an Inform; TR-069 has no event for
		// that, so the device reports the one that caused them (7 or 11).
		informed = requestEvents(requests)
	}
	if len(changed) > 0 && !slices.ContainsFunc(informed, func(e cwmp.EventStruct) bool { return e.EventCode == cwmp.EventValueChange }) {
		// Passive changes ride on this Inform, and TR-069 A.3.2.4 wants
		// 4 VALUE CHANGE with them as with active ones.
		informed = append(informed, cwmp.EventStruct{EventCode: cwmp.EventValueChange})
	}
	user, pass := "", ""
	if d.env.Credentials != nil {
		user, pass = d.env.Credentials()
	}
	hc, closeConn := d.env.sessionClient()
	defer closeConn()
	x := &exchange{d: d, url: url, client: &httpauth.Client{HTTP: hc, Username: user, Password: pass}}

	inf := d.buildInform(t, informed, changed, retries)
	status, body, hdr, err := x.post(ctx, cwmp.NewEnvelope(Version, x.id(), inf))
	if err != nil {
		return fmt.Errorf("sending the Inform: %w", err)
	}
	if status == http.StatusServiceUnavailable {
		wait := time.Duration(0)
		if s, err := strconv.Atoi(hdr.Get("Retry-After")); err == nil && s > 0 {
			wait = time.Duration(s) * time.Second
		}
		return &retryAfterError{wait: wait}
	}
	if status != http.StatusOK {
		return fmt.Errorf("the ACS answered the Inform with HTTP %d", status)
	}
	env, err := cwmp.Decode(body)
	if err != nil {
		return fmt.Errorf("InformResponse: %w", err)
	}
	switch m := env.Body.(type) {
	case *cwmp.InformResponse:
	case *cwmp.Fault:
		return fmt.Errorf("the ACS refused the Inform: %w", m)
	default:
		return fmt.Errorf("the ACS answered the Inform with %s", env.Body.Method())
	}
	d.env.Sessions.Add(1)
	d.delivered(events, changed)
	d.log.Info("Inform delivered", "events", eventCodes(informed), "retry", retries)

	for _, req := range requests {
		status, body, _, err := x.post(ctx, cwmp.NewEnvelope(Version, x.id(), req))
		if err != nil {
			return fmt.Errorf("%s: %w", req.Method(), err)
		}
		if status != http.StatusOK {
			return fmt.Errorf("%s: ACS answered HTTP %d", req.Method(), status)
		}
		env, err := cwmp.Decode(body)
		if err != nil {
			return fmt.Errorf("%s response: %w", req.Method(), err)
		}
		if f, ok := env.Body.(*cwmp.Fault); ok {
			return fmt.Errorf("%s refused: %w", req.Method(), f)
		}
		d.mu.Lock()
		d.requests = slices.DeleteFunc(d.requests, func(m cwmp.Message) bool { return m == req })
		d.mu.Unlock()
		d.log.Info("request delivered", "method", req.Method())
	}

	var reply *cwmp.Envelope // nil: the empty POST
	for range maxRPCsPerSession {
		status, body, _, err := x.post(ctx, reply)
		if err != nil {
			return err
		}
		if status == http.StatusNoContent || (status == http.StatusOK && len(bytes.TrimSpace(body)) == 0) {
			d.log.Debug("session ended by the ACS")
			return nil
		}
		if status != http.StatusOK {
			return fmt.Errorf("ACS answered HTTP %d", status)
		}
		env, err := cwmp.Decode(body)
		if err != nil {
			var unknown *cwmp.UnknownMethodError
			if env != nil && errors.As(err, &unknown) {
				d.log.Warn("unknown RPC", "err", err)
				reply = env.Reply(cwmp.NewFault(cwmp.FaultCPEMethodNotSupported, ""))
				continue
			}
			var bad *cwmp.ValueError
			if env != nil && errors.As(err, &bad) {
				reply = env.Reply(cwmp.NewFault(cwmp.FaultCPEInvalidArguments, bad.Error()))
				continue
			}
			return fmt.Errorf("ACS message: %w", err)
		}
		if f, ok := env.Body.(*cwmp.Fault); ok {
			// A fault from the ACS outside a request of ours ends nothing;
			// answer with the empty POST again.
			d.log.Warn("ACS sent a fault", "fault", f.Error())
			reply = nil
			continue
		}
		reply = env.Reply(d.answer(ctx, t, env.Body))
	}
	return fmt.Errorf("session exceeded %d RPCs", maxRPCsPerSession)
}

// requestEvents returns the events of the requests a session delivers
// without queued events: 7 TRANSFER COMPLETE for TransferComplete, 11 DU
// STATE CHANGE COMPLETE for DUStateChangeComplete.
func requestEvents(requests []cwmp.Message) []cwmp.EventStruct {
	var out []cwmp.EventStruct
	for _, r := range requests {
		code := cwmp.EventTransferComplete
		if _, ok := r.(*cwmp.DUStateChangeComplete); ok {
			code = cwmp.EventDUStateChangeComplete
		}
		if !slices.ContainsFunc(out, func(e cwmp.EventStruct) bool { return e.EventCode == code }) {
			out = append(out, cwmp.EventStruct{EventCode: code})
		}
	}
	return out
}

// delivered drops the events and changes the ACS has acknowledged.
func (d *Device) delivered(events []cwmp.EventStruct, changed []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.events = slices.DeleteFunc(d.events, func(e cwmp.EventStruct) bool { return slices.Contains(events, e) })
	d.changed = slices.DeleteFunc(d.changed, func(n string) bool { return slices.Contains(changed, n) })
}

func eventCodes(evs []cwmp.EventStruct) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.EventCode
	}
	return out
}

// buildInform assembles the Inform: identity from the tree, the forced
// parameters and those whose notification changes are pending.
func (d *Device) buildInform(t *tree.Tree, events []cwmp.EventStruct, changed []string, retries int) *cwmp.Inform {
	root := t.Template().Root()
	get := func(n string) string { p, _ := t.Get(root + n); return p.Value }
	inf := &cwmp.Inform{
		DeviceID: cwmp.DeviceID{Manufacturer: get("DeviceInfo.Manufacturer"), OUI: get("DeviceInfo.ManufacturerOUI"),
			ProductClass: get("DeviceInfo.ProductClass"), SerialNumber: d.serial},
		Event: events, MaxEnvelopes: 1, CurrentTime: time.Now().UTC().Truncate(time.Second), RetryCount: uint32(retries),
	}
	seen := map[string]bool{}
	for _, p := range t.InformParams() {
		seen[p.Name] = true
		inf.ParameterList = append(inf.ParameterList, cwmp.ParameterValueStruct{Name: p.Name, Value: value(p)})
	}
	for _, n := range changed {
		if seen[n] {
			continue
		}
		if p, ok := t.Get(n); ok && !p.Object {
			seen[n] = true
			inf.ParameterList = append(inf.ParameterList, cwmp.ParameterValueStruct{Name: p.Name, Value: value(p)})
		}
	}
	return inf
}

func value(p tree.Param) cwmp.Value { return cwmp.Value{Type: p.Type.XSD(), Text: p.Value} }

// RetryWait is the TR-069 session retry wait (3.2.1.1, table 3) for the
// n-th consecutive failure with minimum wait m and multiplier 2: the window
// [m*2^(n-1), m*2^n], n capped at 10. Without random the lower bound is used.
func RetryWait(n int, random bool, rnd func(int64) int64) time.Duration {
	return retryWait(n, 5*time.Second, random, rnd)
}

func retryWait(n int, m time.Duration, random bool, rnd func(int64) int64) time.Duration {
	n = min(max(n, 1), 10)
	lo := m << (n - 1)
	if !random || rnd == nil {
		return lo
	}
	return lo + time.Duration(rnd(int64(lo)+1))
}
