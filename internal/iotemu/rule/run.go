package rule

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"cpesuite/internal/iotemu/param"

	"github.com/dop251/goja"
)

// Param is the parameter whose update triggered the rule.
type Param struct{ Name, Value, OldValue, Type string }

// Device is the device the rule runs for. The maps are only read.
type Device struct {
	ClientID, SerialNumber, Protocol string
	Params                           map[string]string // current values of every parameter (read-only for the rule)
	Frozen                           map[string]bool   // currently frozen parameters
}

// Result is what the rule asked for; the caller applies it.
type Result struct {
	Value    *string  // non-nil when the rule returned a value (not undefined/null): the new value of param
	Set      []Change // ctx.set(name, value) calls in order (other or same parameters)
	Freeze   []string // ctx.freeze(name)
	Unfreeze []string // ctx.unfreeze(name)
	Logs     []string // ctx.log(...) lines (args joined by spaces), capped at MaxLogLines lines of MaxLogLineLen chars
	// LogsDropped counts log lines beyond MaxLogLines, so the caller can
	// say that output was cut.
	LogsDropped int
}

// Change is one ctx.set call.
type Change struct{ Name, Value string }

// RunError is a call that failed: a JavaScript exception (Msg is its
// message, e.g. "TypeError: ..."), an interrupt (Err is ErrTimeout) or an
// internal error. Line and Column refer to the user's code; Line is 0 when
// the failure has no position in it.
type RunError struct {
	Line, Column int
	Msg          string
	Err          error
}

func (e *RunError) Error() string {
	if e.Line <= 0 {
		return e.Msg
	}
	return fmt.Sprintf("line %d:%d %s", e.Line, e.Column, e.Msg)
}

func (e *RunError) Unwrap() error { return e.Err }

// harness calls the user's function and converts its return value inside
// JavaScript, so that a toString the rule defined runs under the budget
// like the rest of the rule.
var harness = goja.MustCompile("harness.js", `(function (fn, conv) {
	return function (p, d, c) {
		var v = fn(p, d, c);
		return v === undefined || v === null ? undefined : conv(v);
	};
})`, true)

// Run calls onParamUpdated. JavaScript exceptions come back as *RunError
// with the JS message and line (relative to the user's body); a call that
// exceeds the budget is interrupted and its error wraps ErrTimeout.
//
// On error the Result holds only the log lines written before the failure
// (useful to show the user); nothing in it is to be applied.
func (e *Engine) Run(p Param, d Device) (Result, error) {
	if e == nil || e.prg == nil {
		return Result{}, nil
	}
	w, err := e.get()
	if err != nil {
		return Result{}, err
	}
	fired := make(chan struct{})
	timer := time.AfterFunc(e.budget, func() {
		w.rt.Interrupt(ErrTimeout)
		close(fired)
	})
	res, healthy, err := w.run(p, d, e.budget)
	if !timer.Stop() {
		// The interrupt was (or is being) delivered; wait for it so it
		// cannot land on the runtime's next user. Whether or not it cut
		// the call short, the runtime is not reused: it may have been
		// stopped anywhere, including in our own conversions.
		<-fired
		healthy = false
	}
	if healthy {
		e.put(w)
	}
	return res, err
}

func (e *Engine) get() (*worker, error) {
	select {
	case w := <-e.idle:
		return w, nil
	default:
		return e.newWorker()
	}
}

func (e *Engine) put(w *worker) {
	select {
	case e.idle <- w:
	default:
		// Enough idle runtimes already; let this one be collected.
	}
}

// worker is one goja runtime with the rule loaded. It serves one call at a
// time.
type worker struct {
	rt     *goja.Runtime
	call   goja.Callable // harness around this runtime's onParamUpdated
	freeze goja.Callable // Object.freeze, taken before any rule code ran so a rule cannot replace it
	seal   goja.Callable // Object.preventExtensions, likewise
	rangeE goja.Constructor
	ctx    *goja.Object
	st     callState
}

// callState is what the ctx functions record during one call.
type callState struct {
	frozen   map[string]bool // Device.Frozen
	override map[string]bool // freezes (true) and unfreezes (false) made in this call
	res      Result
}

func (e *Engine) newWorker() (w *worker, err error) {
	defer func() {
		if r := recover(); r != nil {
			w, err = nil, fmt.Errorf("rule: setting up a runtime: %v", r)
		}
	}()
	rt := goja.New()
	rt.SetMaxCallStackSize(maxCallStack)
	w = &worker{rt: rt, st: callState{override: map[string]bool{}}}

	var ok bool
	object := rt.Get("Object").ToObject(rt)
	if w.freeze, ok = goja.AssertFunction(object.Get("freeze")); !ok {
		return nil, errors.New("rule: Object.freeze is not a function")
	}
	if w.seal, ok = goja.AssertFunction(object.Get("preventExtensions")); !ok {
		return nil, errors.New("rule: Object.preventExtensions is not a function")
	}
	if w.rangeE, ok = goja.AssertConstructor(rt.Get("RangeError")); !ok {
		return nil, errors.New("rule: RangeError is not a constructor")
	}

	logFn := rt.ToValue(w.log)
	w.ctx = rt.NewObject()
	for name, fn := range map[string]any{
		"set":      w.set,
		"freeze":   w.freezeParam,
		"unfreeze": w.unfreezeParam,
		"isFrozen": w.isFrozen,
	} {
		if err := w.ctx.Set(name, fn); err != nil {
			return nil, fmt.Errorf("rule: building ctx: %w", err)
		}
	}
	if err := w.ctx.Set("log", logFn); err != nil {
		return nil, fmt.Errorf("rule: building ctx: %w", err)
	}
	console := rt.NewObject()
	if err := console.Set("log", logFn); err != nil {
		return nil, fmt.Errorf("rule: building console: %w", err)
	}
	// ctx and console live as long as the runtime; frozen, and console
	// read-only, so one call cannot break them for the next.
	if err := w.freezeAll(w.ctx, console); err != nil {
		return nil, err
	}
	if err := rt.GlobalObject().DefineDataProperty("console", console, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		return nil, fmt.Errorf("rule: defining console: %w", err)
	}

	if _, err := rt.RunProgram(e.prg); err != nil {
		return nil, fmt.Errorf("rule: loading the rule: %w", err)
	}
	fn := rt.Get(funcName)
	hv, err := rt.RunProgram(harness)
	if err != nil {
		return nil, fmt.Errorf("rule: loading the harness: %w", err)
	}
	factory, ok := goja.AssertFunction(hv)
	if !ok {
		return nil, errors.New("rule: harness is not a function")
	}
	conv := rt.ToValue(func(c goja.FunctionCall) goja.Value {
		return rt.ToValue(toParamString(c.Argument(0)))
	})
	bound, err := factory(goja.Undefined(), fn, conv)
	if err != nil {
		return nil, fmt.Errorf("rule: binding the harness: %w", err)
	}
	if w.call, ok = goja.AssertFunction(bound); !ok {
		return nil, errors.New("rule: onParamUpdated is not a function")
	}
	return w, nil
}

func (w *worker) freezeAll(objs ...*goja.Object) error {
	for _, o := range objs {
		if _, err := w.freeze(goja.Undefined(), o); err != nil {
			return fmt.Errorf("rule: freezing an object: %w", err)
		}
	}
	return nil
}

// run makes one call. healthy is false when the runtime must not be
// reused.
func (w *worker) run(p Param, d Device, budget time.Duration) (res Result, healthy bool, err error) {
	defer func() {
		// Panics inside goja (or in our conversions) become errors; the
		// runtime's state is unknown afterwards, so it is dropped.
		if r := recover(); r != nil {
			rerr := &RunError{Msg: fmt.Sprintf("internal error: %v", r)}
			if _, ok := r.(*goja.InterruptedError); ok {
				rerr = &RunError{Msg: fmt.Sprintf("%v (%v)", ErrTimeout, budget), Err: ErrTimeout}
			}
			res, healthy, err = Result{Logs: w.st.res.Logs, LogsDropped: w.st.res.LogsDropped}, false, rerr
		}
		// Drop what the caller now owns or must not keep alive.
		w.st.frozen, w.st.res = nil, Result{}
	}()
	w.st.frozen = d.Frozen
	clear(w.st.override)
	w.st.res = Result{}

	pv, err := w.paramObject(p)
	if err != nil {
		return Result{}, false, err
	}
	dv, err := w.deviceObject(d)
	if err != nil {
		return Result{}, false, err
	}
	v, cerr := w.call(goja.Undefined(), pv, dv, w.ctx)
	if cerr != nil {
		rerr, healthy := w.describe(cerr, budget)
		return Result{Logs: w.st.res.Logs, LogsDropped: w.st.res.LogsDropped}, healthy, rerr
	}
	res = w.st.res
	if v != nil && !goja.IsUndefined(v) {
		s := v.String()
		res.Value = &s
	}
	return res, true, nil
}

type prop struct {
	name string
	v    any
}

// frozenObject returns a new object holding props as read-only,
// non-configurable properties and not extensible: what Object.freeze
// makes, built directly because freezing afterwards costs a property
// walk on every call. DefineDataProperty rather than Set also makes a
// parameter named "__proto__" an ordinary property instead of hitting
// Object.prototype's setter.
func (w *worker) frozenObject(props []prop) (*goja.Object, error) {
	o := w.rt.NewObject()
	for _, p := range props {
		if err := o.DefineDataProperty(p.name, w.rt.ToValue(p.v), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
			return nil, fmt.Errorf("rule: defining %q: %w", p.name, err)
		}
	}
	if _, err := w.seal(goja.Undefined(), o); err != nil {
		return nil, fmt.Errorf("rule: sealing an object: %w", err)
	}
	return o, nil
}

func (w *worker) paramObject(p Param) (*goja.Object, error) {
	props := make([]prop, 0, 6)
	props = append(props, prop{"name", p.Name}, prop{"value", p.Value}, prop{"oldValue", p.OldValue}, prop{"type", p.Type})
	// Typed views only when the text parses, so that a rule can test
	// param.number !== undefined.
	switch param.Type(p.Type) {
	case param.Integer, param.Float, param.Time:
		if f, ok := parseNumber(p.Value); ok {
			props = append(props, prop{"number", f})
		}
		if f, ok := parseNumber(p.OldValue); ok {
			props = append(props, prop{"oldNumber", f})
		}
	case param.Boolean:
		if b, ok := parseBool(p.Value); ok {
			props = append(props, prop{"bool", b})
		}
		if b, ok := parseBool(p.OldValue); ok {
			props = append(props, prop{"oldBool", b})
		}
	}
	return w.frozenObject(props)
}

func (w *worker) deviceObject(d Device) (*goja.Object, error) {
	names := make([]string, 0, len(d.Params))
	for n := range d.Params {
		names = append(names, n)
	}
	// Sorted so that Object.keys(device.params) is stable from call to
	// call.
	slices.Sort(names)
	props := make([]prop, len(names))
	for i, n := range names {
		props[i] = prop{n, d.Params[n]}
	}
	params, err := w.frozenObject(props)
	if err != nil {
		return nil, err
	}
	return w.frozenObject([]prop{{"clientId", d.ClientID}, {"serialNumber", d.SerialNumber}, {"protocol", d.Protocol}, {"params", params}})
}

// describe turns a failed call into a *RunError and says whether the
// runtime may be reused.
func (w *worker) describe(err error, budget time.Duration) (*RunError, bool) {
	switch e := err.(type) {
	case *goja.InterruptedError:
		re := &RunError{Msg: fmt.Sprintf("%v (%v)", ErrTimeout, budget), Err: ErrTimeout}
		re.Line, re.Column = userPosition(e.Stack())
		return re, false
	case *goja.StackOverflowError:
		re := &RunError{Msg: "RangeError: Maximum call stack size exceeded"}
		re.Line, re.Column = userPosition(e.Stack())
		return re, false
	case *goja.Exception:
		re := &RunError{Msg: "exception"}
		re.Line, re.Column = userPosition(e.Stack())
		// The thrown value's toString may be the rule's own code; run it
		// guarded (the budget timer is still armed).
		ok, interrupted := w.guarded(func() { re.Msg = e.Value().String() })
		switch {
		case interrupted:
			re.Msg, re.Err = fmt.Sprintf("%v (%v) converting an exception to a string", ErrTimeout, budget), ErrTimeout
			return re, false
		case !ok:
			re.Msg = "exception (its value could not be converted to a string)"
		}
		re.Msg = truncate(re.Msg, maxMessageLen)
		return re, ok
	}
	return &RunError{Msg: truncate(err.Error(), maxMessageLen)}, false
}

// guarded runs f, which may call into JavaScript, and reports whether it
// completed and, if not, whether the budget interrupt stopped it. goja's
// Try returns JavaScript exceptions but re-panics an interrupt.
func (w *worker) guarded(f func()) (ok, interrupted bool) {
	defer func() {
		if r := recover(); r != nil {
			_, interrupted = r.(*goja.InterruptedError)
			ok = false
		}
	}()
	return w.rt.Try(f) == nil, false
}

// userPosition returns the innermost position in the user's code.
func userPosition(stack []goja.StackFrame) (line, col int) {
	for i := range stack {
		if stack[i].SrcName() != fileName {
			continue
		}
		p := stack[i].Position()
		if p.Line-1 < 1 {
			return 1, 1
		}
		return p.Line - 1, p.Column
	}
	return 0, 0
}

func (w *worker) throwRange(format string, args ...any) {
	o, err := w.rangeE(nil, w.rt.ToValue(fmt.Sprintf(format, args...)))
	if err != nil {
		panic(w.rt.NewTypeError(fmt.Sprintf(format, args...)))
	}
	panic(o)
}

func nullish(v goja.Value) bool { return v == nil || goja.IsUndefined(v) || goja.IsNull(v) }

// nameArg returns the parameter name argument of a ctx function.
func (w *worker) nameArg(fn string, c goja.FunctionCall) string {
	if nullish(c.Argument(0)) {
		panic(w.rt.NewTypeError(fmt.Sprintf("ctx.%s: parameter name is missing", fn)))
	}
	return c.Argument(0).String()
}

func (w *worker) set(c goja.FunctionCall) goja.Value {
	name := w.nameArg("set", c)
	// undefined/null is refused rather than stored as the text
	// "undefined": it is always a mistake in the rule.
	if nullish(c.Argument(1)) {
		panic(w.rt.NewTypeError(fmt.Sprintf("ctx.set(%q, value): value is %s", name, c.Argument(1).String())))
	}
	if len(w.st.res.Set) >= MaxActions {
		w.throwRange("ctx.set called more than %d times", MaxActions)
	}
	w.st.res.Set = append(w.st.res.Set, Change{Name: name, Value: toParamString(c.Argument(1))})
	return goja.Undefined()
}

func (w *worker) freezeParam(c goja.FunctionCall) goja.Value {
	name := w.nameArg("freeze", c)
	if len(w.st.res.Freeze) >= MaxActions {
		w.throwRange("ctx.freeze called more than %d times", MaxActions)
	}
	w.st.res.Freeze = append(w.st.res.Freeze, name)
	w.st.override[name] = true
	return goja.Undefined()
}

func (w *worker) unfreezeParam(c goja.FunctionCall) goja.Value {
	name := w.nameArg("unfreeze", c)
	if len(w.st.res.Unfreeze) >= MaxActions {
		w.throwRange("ctx.unfreeze called more than %d times", MaxActions)
	}
	w.st.res.Unfreeze = append(w.st.res.Unfreeze, name)
	w.st.override[name] = false
	return goja.Undefined()
}

func (w *worker) isFrozen(c goja.FunctionCall) goja.Value {
	name := w.nameArg("isFrozen", c)
	f, ok := w.st.override[name]
	if !ok {
		f = w.st.frozen[name]
	}
	return w.rt.ToValue(f)
}

func (w *worker) log(c goja.FunctionCall) goja.Value {
	if len(w.st.res.Logs) >= MaxLogLines {
		w.st.res.LogsDropped++
		return goja.Undefined()
	}
	var b strings.Builder
	for i, a := range c.Arguments {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a.String())
		if b.Len() > 4*MaxLogLineLen {
			break // enough to fill the line whatever the encoding
		}
	}
	w.st.res.Logs = append(w.st.res.Logs, truncate(b.String(), MaxLogLineLen))
	return goja.Undefined()
}

// toParamString converts a JavaScript value to a parameter value like
// String(v), except that integral numbers never use exponent notation
// (String(1e21) is "1e+21", which an INTEGER parameter would refuse).
func toParamString(v goja.Value) string {
	if goja.IsNumber(v) {
		f := v.ToFloat()
		if f == math.Trunc(f) && !math.IsInf(f, 0) {
			if f == 0 {
				return "0" // also for -0, as String(-0) does
			}
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
	}
	return v.String()
}

func parseNumber(s string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return f, err == nil
}

func parseBool(s string) (bool, bool) {
	v, err := param.Normalize(param.Boolean, s)
	return v == "true", err == nil
}

// truncate cuts s to at most n runes.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
