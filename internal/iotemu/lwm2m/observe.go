package lwm2m

import (
	"bytes"
	"context"
	"math"
	"strconv"
	"time"

	"github.com/plgd-dev/go-coap/v3/message"
	"github.com/plgd-dev/go-coap/v3/message/codes"

	"cpesuite/internal/iotemu/lwm2m/codec"
)

// attrSet holds the <NOTIFICATION> attributes written to one path (Core
// §5.1.2); nil fields are unset.
type attrSet struct {
	pmin, pmax   *float64
	gt, lt, step *float64
}

// effective merges the attributes of p's object, instance and resource
// levels, the deeper level winning (Core §5.1.1). Called with mu held.
func (d *device) effectiveLocked(p codec.Path) attrSet {
	var out attrSet
	levels := []codec.Path{
		{Object: p.Object, Instance: -1, Resource: -1, ResourceInstance: -1},
		{Object: p.Object, Instance: p.Instance, Resource: -1, ResourceInstance: -1},
		{Object: p.Object, Instance: p.Instance, Resource: p.Resource, ResourceInstance: -1},
	}
	for i, l := range levels {
		if i >= p.Depth() {
			break
		}
		a, ok := d.attrs[l]
		if !ok {
			continue
		}
		for _, f := range []struct{ dst, src **float64 }{
			{&out.pmin, &a.pmin}, {&out.pmax, &a.pmax}, {&out.gt, &a.gt}, {&out.lt, &a.lt}, {&out.step, &a.step},
		} {
			if *f.src != nil {
				*f.dst = *f.src
			}
		}
	}
	return out
}

// observation is one Observe relationship of the server (Core §5.5.1).
//
// Notifications are non-confirmable: they cost the device one datagram
// and no state, which matters with thousands of devices; a server that
// no longer wants them answers with RST, which cancels the observation
// (RFC 7641 §3.6), as does a GET with Observe=1.
type observation struct {
	token  string
	path   codec.Path
	format uint16

	// Guarded by device.mu.
	seq      uint32
	lastSent time.Time
	last     float64 // last notified value of a numeric resource
	hasLast  bool
	mid      int32 // message id of the last notification, to match RST
	timer    *time.Timer
	stopped  bool
}

func (o *observation) stop() {
	o.stopped = true
	if o.timer != nil {
		o.timer.Stop()
		o.timer = nil
	}
}

func seconds2d(f *float64) time.Duration {
	if f == nil || *f <= 0 {
		return 0
	}
	return time.Duration(*f * float64(time.Second))
}

// armLocked (re)arms the observation's timer: at lastSent+pmin when a
// change waits for the minimum period, else at lastSent+pmax for the
// periodic notification. Called with mu held.
func (d *device) armLocked(o *observation, pending bool) {
	if o.stopped {
		return
	}
	a := d.effectiveLocked(o.path)
	var at time.Time
	switch {
	case pending:
		at = o.lastSent.Add(seconds2d(a.pmin))
	case seconds2d(a.pmax) > 0:
		at = o.lastSent.Add(seconds2d(a.pmax))
	default:
		if o.timer != nil {
			o.timer.Stop()
			o.timer = nil
		}
		return
	}
	if o.timer != nil {
		o.timer.Stop()
	}
	gen := d.gen
	o.timer = time.AfterFunc(time.Until(at), func() { d.fire(gen, o, pending) })
}

func (d *device) fire(gen uint64, o *observation, changed bool) {
	d.mu.Lock()
	ok := d.running && d.gen == gen && !o.stopped
	d.mu.Unlock()
	if ok {
		d.notify(o, changed)
	}
}

// notifyChanged notifies every observation covering the named parameter.
func (d *device) notifyChanged(name string) {
	p, ok := PathOf(name)
	if !ok {
		return
	}
	d.mu.Lock()
	if d.location == "" || len(d.obs) == 0 {
		d.mu.Unlock()
		return
	}
	var now []*observation
	t := time.Now()
	for _, o := range d.obs {
		if !o.path.Contains(p) {
			continue
		}
		a := d.effectiveLocked(o.path)
		if pmin := seconds2d(a.pmin); pmin > 0 && t.Sub(o.lastSent) < pmin {
			d.armLocked(o, true)
			continue
		}
		now = append(now, o)
	}
	d.mu.Unlock()
	if len(now) == 0 {
		return
	}
	// Changed must not block and the host may be inside a write: the
	// notifications go out from a goroutine of their own.
	go func() {
		for _, o := range now {
			d.notify(o, true)
		}
	}()
}

// notify sends one notification of o's current value. changed is false
// for the periodic (pmax) notification, which the gt/lt/st conditions do
// not filter.
func (d *device) notify(o *observation, changed bool) {
	recs, code := d.records(o.path)
	if code != codes.Content {
		return
	}
	d.mu.Lock()
	cc := d.cc
	if cc == nil || o.stopped || d.location == "" {
		d.mu.Unlock()
		return
	}
	a := d.effectiveLocked(o.path)
	if v, isNum := numericValue(o.path, recs); isNum {
		if changed && o.hasLast && !crosses(a, o.last, v) {
			d.mu.Unlock()
			return
		}
		o.last, o.hasLast = v, true
	}
	o.seq = (o.seq + 1) & 0xffffff
	seq := o.seq
	o.lastSent = time.Now()
	mid := cc.GetMessageID()
	o.mid = mid
	d.armLocked(o, false)
	d.mu.Unlock()

	body, err := encodeRecords(o.format, o.path, recs)
	if err != nil {
		d.logf("notify %s: %v", o.path, err)
		return
	}
	msg := cc.AcquireMessage(context.Background())
	defer cc.ReleaseMessage(msg)
	msg.SetCode(codes.Content)
	msg.SetToken(message.Token(o.token))
	msg.SetObserve(seq)
	msg.SetContentFormat(message.MediaType(o.format))
	msg.SetBody(bytes.NewReader(body))
	msg.SetType(message.NonConfirmable)
	msg.SetMessageID(mid)
	d.host.Log(entry("OUT", "NOTIFY", msg, describe(recs)))
	// Written through the session: go-coap's WriteMessage would give the
	// message a new id (its block-wise layer copies it), and the id is
	// what a RST refers to. A notification fits one datagram.
	if err := cc.Session().WriteMessage(msg); err != nil {
		d.logf("notify %s: %v", o.path, err)
	}
}

// numericValue returns the value of a single numeric resource, the only
// case the gt, lt and st attributes apply to.
func numericValue(p codec.Path, recs []codec.Record) (float64, bool) {
	if p.Depth() < 3 || len(recs) != 1 {
		return 0, false
	}
	v := recs[0].Value
	switch v.Kind {
	case codec.KindInteger:
		return float64(v.Int), true
	case codec.KindUnsigned:
		return float64(v.Uint), true
	case codec.KindFloat:
		return v.Float, true
	}
	return 0, false
}

// crosses applies the gt, lt and st conditions (Core §5.1.2): without any
// of them every change is notified.
func crosses(a attrSet, last, v float64) bool {
	if a.gt == nil && a.lt == nil && a.step == nil {
		return true
	}
	if a.gt != nil && (last > *a.gt) != (v > *a.gt) {
		return true
	}
	if a.lt != nil && (last < *a.lt) != (v < *a.lt) {
		return true
	}
	return a.step != nil && math.Abs(v-last) >= *a.step
}

// cancelByToken ends the observation with the given token.
func (d *device) cancelByToken(token string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, o := range d.obs {
		if o.token == token {
			o.stop()
			d.obs = append(d.obs[:i], d.obs[i+1:]...)
			return true
		}
	}
	return false
}

// cancelByMID ends the observation whose last notification a RST answers.
func (d *device) cancelByMID(mid int32) bool {
	d.mu.Lock()
	defer d.mu.Unlock()

	for i, o := range d.obs {
		if o.mid == mid && !o.lastSent.IsZero() {
			o.stop()
			d.obs = append(d.obs[:i], d.obs[i+1:]...)
			return true
		}
	}
	return false
}

// Observations lists the observed paths, for tests and the API.
func (d *device) observations() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, len(d.obs))
	for i, o := range d.obs {
		out[i] = o.path.String() + " token=" + strconv.Quote(o.token)
	}
	return out
}
