package rule

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/testutil"
)

// budget is a safety net: tests that expect a rule to finish must not fail
// on a slow, loaded machine. Timeout tests use tinyBudget with an infinite
// loop, which fails whatever the speed.
const (
	budget     = testutil.MinDeadline
	tinyBudget = 5 * time.Millisecond
)

func mustCompile(t testing.TB, code string, b time.Duration) *Engine {
	t.Helper()
	e, err := Compile(code, b)
	if err != nil {
		t.Fatalf("Compile(%q): %v", code, err)
	}
	return e
}

func TestCompile(t *testing.T) {
	tests := []struct {
		name      string
		code      string
		empty     bool
		wantErr   bool
		line, col int
		msg       string // substring of CompileError.Msg
	}{
		{name: "ok", code: "return param.value;"},
		{name: "ok multi-line", code: "var x = 1;\nif (x) {\n  ctx.log(x);\n}\nreturn x;"},
		{name: "comment on last line", code: "return 1; // done"},
		{name: "use strict directive", code: "'use strict';\nreturn 1;"},
		{name: "empty", code: "", empty: true},
		{name: "whitespace", code: " \n\t\r\n ", empty: true},
		{name: "syntax error line 3", code: "var a = 1;\nvar b = 2;\nvar c = );", wantErr: true, line: 3, col: 9, msg: "Unexpected token )"},
		{name: "syntax error line 1", code: "return ==;", wantErr: true, line: 1, col: 8, msg: "Unexpected token"},
		{name: "unclosed brace reported at end of code", code: "if (x) {\n  y();", wantErr: true, line: 2, col: 7, msg: "Unexpected end of input"},
		{name: "unterminated comment", code: "return 1; /*", wantErr: true, line: 1, msg: ""},
		{name: "breakout", code: "} foo(); function x() {", wantErr: true, line: 1, col: 1, msg: "closes the onParamUpdated function early"},
		{name: "breakout on later line", code: "return 1;\n}\n{", wantErr: true, line: 2, col: 1, msg: "closes the onParamUpdated function early"},
		{name: "breakout redeclaring", code: "}\nfunction onParamUpdated(a, b, c) {", wantErr: true, line: 1, col: 1, msg: "closes the onParamUpdated function early"},
		{name: "compiler error with position", code: "let a = 1;\nlet a = 2;", wantErr: true, line: 2, col: 5, msg: "already been declared"},
		{name: "too long", code: strings.Repeat(" ", MaxCodeSize) + "x", wantErr: true, msg: "limit"},
		{name: "invalid utf-8", code: "return '\xff';", wantErr: true, msg: "UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Compile(tt.code, budget)
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("Compile: %v", err)
				}
				if e.Empty() != tt.empty {
					t.Errorf("Empty() = %v, want %v", e.Empty(), tt.empty)
				}
				if e.Code() != tt.code {
					t.Errorf("Code() = %q, want %q", e.Code(), tt.code)
				}
				return
			}
			var ce *CompileError
			if !errors.As(err, &ce) {
				t.Fatalf("Compile error = %v (%T), want *CompileError", err, err)
			}
			if ce.Line != tt.line || (tt.col != 0 && ce.Column != tt.col) {
				t.Errorf("position = %d:%d, want %d:%d (%v)", ce.Line, ce.Column, tt.line, tt.col, ce)
			}
			if !strings.Contains(ce.Msg, tt.msg) {
				t.Errorf("Msg = %q, want it to contain %q", ce.Msg, tt.msg)
			}
			if ce.Line > 0 && !strings.HasPrefix(ce.Error(), fmt.Sprintf("line %d:%d ", ce.Line, ce.Column)) {
				t.Errorf("Error() = %q, want a line:column prefix", ce.Error())
			}
		})
	}
}

func TestCompileDefaultBudget(t *testing.T) {
	e := mustCompile(t, "return 1;", 0)
	if e.Budget() != DefaultBudget {
		t.Errorf("Budget() = %v, want %v", e.Budget(), DefaultBudget)
	}
}

func TestEmptyRun(t *testing.T) {
	for _, e := range []*Engine{mustCompile(t, "  ", budget), nil} {
		res, err := e.Run(Param{Name: "a"}, Device{})
		if err != nil || !reflect.DeepEqual(res, Result{}) {
			t.Errorf("Run on empty engine = %+v, %v; want zero, nil", res, err)
		}
	}
}

func sp(s string) *string { return &s }

func TestRun(t *testing.T) {
	dev := Device{
		ClientID:     "c1",
		SerialNumber: "SN1",
		Protocol:     "MQTT",
		Params:       map[string]string{"temp": "21.5", "on": "true", "name": "x"},
		Frozen:       map[string]bool{"name": true},
	}
	tests := []struct {
		name string
		code string
		p    Param
		want Result
	}{
		{name: "no return", code: "var x = 1;", want: Result{}},
		{name: "return undefined", code: "return undefined;", want: Result{}},
		{name: "return null", code: "return null;", want: Result{}},
		{name: "return string", code: "return param.value + '!';", p: Param{Value: "hi"}, want: Result{Value: sp("hi!")}},
		{name: "return integral number", code: "return 42;", want: Result{Value: sp("42")}},
		{name: "return large integral without exponent", code: "return 1e21;", want: Result{Value: sp("1000000000000000000000")}},
		{name: "return negative zero", code: "return -0;", want: Result{Value: sp("0")}},
		{name: "return fraction", code: "return 0.5;", want: Result{Value: sp("0.5")}},
		{name: "return boolean", code: "return !param.bool;", p: Param{Type: "BOOLEAN", Value: "true"}, want: Result{Value: sp("false")}},
		{name: "return object uses toString", code: "return {toString: function () { return 'obj'; }};", want: Result{Value: sp("obj")}},
		{name: "param fields", code: "return [param.name, param.value, param.oldValue, param.type].join(',');",
			p: Param{Name: "temp", Value: "2", OldValue: "1", Type: "STRING"}, want: Result{Value: sp("temp,2,1,STRING")}},
		{name: "param.number integer", code: "return param.number * 2 + param.oldNumber;", p: Param{Type: "INTEGER", Value: "21", OldValue: "1"}, want: Result{Value: sp("43")}},
		{name: "param.number float", code: "return typeof param.number + ' ' + (param.number + 0.25);", p: Param{Type: "FLOAT", Value: "1.5"}, want: Result{Value: sp("number 1.75")}},
		{name: "param.number time", code: "return param.number + 60;", p: Param{Type: "TIME", Value: "1700000000"}, want: Result{Value: sp("1700000060")}},
		{name: "param.number absent when unparsable", code: "return String(param.number);", p: Param{Type: "INTEGER", Value: "abc"}, want: Result{Value: sp("undefined")}},
		{name: "param.number absent for strings", code: "return String(param.number);", p: Param{Type: "STRING", Value: "5"}, want: Result{Value: sp("undefined")}},
		{name: "param.bool", code: "return typeof param.bool + ' ' + param.bool + ' ' + param.oldBool;", p: Param{Type: "BOOLEAN", Value: "1", OldValue: "false"}, want: Result{Value: sp("boolean true false")}},
		{name: "device", code: "return [device.clientId, device.serialNumber, device.protocol, device.params.temp, Object.keys(device.params).join('+')].join(',');",
			want: Result{Value: sp("c1,SN1,MQTT,21.5,name+on+temp")}},
		{name: "ctx.set in order with conversions", code: "ctx.set('a', 1); ctx.set('b', 2.5); ctx.set('a', true); ctx.set('c', 'x'); ctx.set('d', 1e21);",
			want: Result{Set: []Change{{"a", "1"}, {"b", "2.5"}, {"a", "true"}, {"c", "x"}, {"d", "1000000000000000000000"}}}},
		{name: "set and return", code: "ctx.set('on', 'false'); return 'v';", want: Result{Value: sp("v"), Set: []Change{{"on", "false"}}}},
		{name: "freeze and unfreeze", code: "ctx.freeze('temp'); ctx.unfreeze('name');", want: Result{Freeze: []string{"temp"}, Unfreeze: []string{"name"}}},
		{name: "isFrozen reflects device and this call",
			code: "var r = [ctx.isFrozen('name'), ctx.isFrozen('temp')];\nctx.freeze('temp'); ctx.unfreeze('name');\nr.push(ctx.isFrozen('name'), ctx.isFrozen('temp'));\nreturn r.join(',');",
			want: Result{Value: sp("true,false,false,true"), Freeze: []string{"temp"}, Unfreeze: []string{"name"}}},
		{name: "log joins args with spaces", code: "ctx.log('a', 1, true, null, undefined); console.log('via console');",
			want: Result{Logs: []string{"a 1 true null undefined", "via console"}}},
		{name: "log caps lines", code: "for (var i = 0; i < 60; i++) ctx.log(i);",
			want: Result{Logs: func() []string {
				var l []string
				for i := range MaxLogLines {
					l = append(l, fmt.Sprint(i))
				}
				return l
			}(), LogsDropped: 10}},
		{name: "log caps line length", code: "ctx.log('é'.repeat(1500));", want: Result{Logs: []string{strings.Repeat("é", MaxLogLineLen)}}},
		{name: "Math.random usable", code: "var r = Math.random(); return r >= 0 && r < 1;", want: Result{Value: sp("true")}},
		{name: "no require", code: "return typeof require;", want: Result{Value: sp("undefined")}},
		{name: "promise jobs run within the call", code: "Promise.resolve(1).then(function (v) { ctx.set('p', v); });", want: Result{Set: []Change{{"p", "1"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustCompile(t, tt.code, budget)
			got, err := e.Run(tt.p, dev)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Run = %s, want %s", dump(got), dump(tt.want))
			}
		})
	}
}

func dump(r Result) string {
	v := "<nil>"
	if r.Value != nil {
		v = fmt.Sprintf("%q", *r.Value)
	}
	return fmt.Sprintf("{Value:%s Set:%v Freeze:%v Unfreeze:%v Logs:%q Dropped:%d}", v, r.Set, r.Freeze, r.Unfreeze, r.Logs, r.LogsDropped)
}

func TestRunErrors(t *testing.T) {
	tests := []struct {
		name      string
		code      string
		line, col int
		msg       string // substring of RunError.Msg
		logs      []string
	}{
		{name: "throw Error", code: "var a = 1;\nthrow new Error('boom');", line: 2, col: 7, msg: "Error: boom"},
		{name: "TypeError", code: "\n\n  undefinedThing.x = 1;", line: 3, msg: "ReferenceError: undefinedThing is not defined"},
		{name: "throw string", code: "throw 'plain';", line: 1, msg: "plain"},
		{name: "ctx.set without value", code: "ctx.log('before');\nctx.set('a');", line: 2, msg: "TypeError: ctx.set(\"a\", value): value is undefined", logs: []string{"before"}},
		{name: "ctx.freeze without name", code: "ctx.freeze();", line: 1, msg: "TypeError: ctx.freeze: parameter name is missing"},
		{name: "too many sets", code: "for (var i = 0; ; i++) ctx.set('a', i);", line: 1, msg: "RangeError: ctx.set called more than"},
		{name: "stack overflow", code: "function f() { return f() + 1; }\nreturn f();", line: 1, msg: "Maximum call stack size exceeded"},
		{name: "throwing toString of return value", code: "return {toString: function () {\n throw new Error('nope'); }};", line: 2, msg: "Error: nope"},
		{name: "exception whose toString throws", code: "throw {toString: function () { throw 1; }};", line: 1, msg: "could not be converted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustCompile(t, tt.code, budget)
			res, err := e.Run(Param{Name: "a"}, Device{})
			var re *RunError
			if !errors.As(err, &re) {
				t.Fatalf("Run error = %v (%T), want *RunError", err, err)
			}
			if re.Line != tt.line || (tt.col != 0 && re.Column != tt.col) {
				t.Errorf("position = %d:%d, want %d:%d (%v)", re.Line, re.Column, tt.line, tt.col, re)
			}
			if !strings.Contains(re.Msg, tt.msg) {
				t.Errorf("Msg = %q, want it to contain %q", re.Msg, tt.msg)
			}
			if errors.Is(err, ErrTimeout) {
				t.Errorf("error %v wraps ErrTimeout", err)
			}
			if !reflect.DeepEqual(res, Result{Logs: tt.logs}) {
				t.Errorf("Result = %s, want only logs %q", dump(res), tt.logs)
			}
			// The engine stays usable after any failure.
			if _, err := e.Run(Param{Name: "a"}, Device{}); err == nil {
				t.Errorf("second Run succeeded, want the same failure")
			}
		})
	}
}

func TestRunTimeout(t *testing.T) {
	tests := []struct {
		name string
		code string
		line int
	}{
		{name: "infinite loop", code: "var n = 0;\nif (param.name === 'loop') {\n  while (true) { n++; }\n}\nreturn 'ok';", line: 3},
		{name: "empty infinite loop", code: "if (param.name === 'loop') while (true) {}\nreturn 'ok';"},
		{name: "loop in toString of return value", code: "if (param.name === 'loop') return {toString: function () {\n  for (var i = 0;; i++) { i--; } }};\nreturn 'ok';", line: 2},
		{name: "loop in toString of exception", code: "if (param.name === 'loop') throw {toString: function () {\n  for (;;) {} }};\nreturn 'ok';"},
		{name: "loop in promise job", code: "if (param.name === 'loop') Promise.resolve().then(function () {\n  for (var i = 0;; i++) { i--; } });\nreturn 'ok';", line: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustCompile(t, tt.code, tinyBudget)
			for i := range 3 {
				_, err := e.Run(Param{Name: "loop"}, Device{})
				if !errors.Is(err, ErrTimeout) {
					t.Fatalf("run %d: error = %v, want ErrTimeout", i, err)
				}
				var re *RunError
				if tt.line != 0 && (!errors.As(err, &re) || re.Line != tt.line) {
					t.Errorf("run %d: error %v, want it at line %d", i, err, tt.line)
				}
				// The next call on the same engine works. It too runs
				// under the tiny budget, so a stall of the machine may
				// time it out: retry those until a safety net runs out,
				// it must succeed eventually.
				res, err := e.Run(Param{Name: "other"}, Device{})
				for giveUp := time.Now().Add(testutil.MinDeadline); errors.Is(err, ErrTimeout) && time.Now().Before(giveUp); {
					res, err = e.Run(Param{Name: "other"}, Device{})
				}
				if err != nil || res.Value == nil || *res.Value != "ok" {
					t.Fatalf("run %d: Run after timeout = %s, %v; want ok", i, dump(res), err)
				}
			}
		})
	}
}

func TestDeviceImmutable(t *testing.T) {
	tests := []struct {
		name string
		code string
	}{
		{name: "sloppy assignment ignored", code: "device.params.temp = '99'; device.params.extra = '1'; device.clientId = 'x'; delete device.params.temp;\nreturn [device.params.temp, device.params.extra, device.clientId].join(',');"},
		{name: "strict assignment throws", code: "'use strict';\ntry { device.params.temp = '99'; return 'mutated'; } catch (e) { return [device.params.temp, String(e instanceof TypeError), device.clientId].join(','); }"},
		{name: "defineProperty throws", code: "try { Object.defineProperty(device.params, 'temp', {value: '99'}); } catch (e) {}\nreturn [device.params.temp, undefined, device.clientId].join(',');"},
		{name: "param object frozen", code: "param.value = 'x'; return [device.params.temp, param.value === 'x' ? 'mutated' : undefined, device.clientId].join(',');"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params := map[string]string{"temp": "21"}
			e := mustCompile(t, tt.code, budget)
			res, err := e.Run(Param{Name: "temp", Value: "21"}, Device{ClientID: "c1", Params: params})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			want := "21,,c1"
			if tt.name == "strict assignment throws" {
				want = "21,true,c1"
			}
			if res.Value == nil || *res.Value != want {
				t.Errorf("Run = %s, want value %q", dump(res), want)
			}
			if len(res.Set) != 0 || !reflect.DeepEqual(params, map[string]string{"temp": "21"}) {
				t.Errorf("Run changed something: %s, params %v", dump(res), params)
			}
		})
	}
}

func TestProtoParamName(t *testing.T) {
	e := mustCompile(t, "return Object.prototype.hasOwnProperty.call(device.params, '__proto__') + ' ' + device.params['__proto__'];", budget)
	res, err := e.Run(Param{}, Device{Params: map[string]string{"__proto__": "v"}})
	if err != nil || res.Value == nil || *res.Value != "true v" {
		t.Errorf("Run = %s, %v; want \"true v\"", dump(res), err)
	}
}

// TestRuntimeStateContained checks that what one call does to its runtime's
// shared objects cannot break the next call.
func TestRuntimeStateContained(t *testing.T) {
	e := mustCompile(t, "if (param.name === 'evil') { try { ctx.set = null; } catch (e) {} try { console = null; } catch (e) {} Object.freeze = function (o) { return o; }; onParamUpdated = null; return; }\ndevice.params.x = 'changed'; ctx.set('x', device.params.x); console.log('ok');", budget)
	for i := range 3 {
		if _, err := e.Run(Param{Name: "evil"}, Device{}); err != nil {
			t.Fatalf("evil run %d: %v", i, err)
		}
		res, err := e.Run(Param{Name: "good"}, Device{Params: map[string]string{"x": "orig"}})
		if err != nil {
			t.Fatalf("good run %d: %v", i, err)
		}
		want := Result{Set: []Change{{"x", "orig"}}, Logs: []string{"ok"}}
		if !reflect.DeepEqual(res, want) {
			t.Errorf("good run %d = %s, want %s", i, dump(res), dump(want))
		}
	}
}

// TestConcurrentRun runs one engine from 8 goroutines. A second engine with
// a tiny budget gets the same calls plus infinite loops, so interrupts race
// with runtimes going back to its pool; its quick calls may time out too
// (the machine may be slow), but must never return a wrong result.
func TestConcurrentRun(t *testing.T) {
	const code = "ctx.set('echo', param.value);\nctx.log(device.serialNumber);\nif (param.name === 'loop') while (true) {}\nreturn param.number + 1;"
	roomy := mustCompile(t, code, budget)
	tight := mustCompile(t, code, tinyBudget)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				v := fmt.Sprint(g*1000 + i)
				want := Result{Value: sp(fmt.Sprint(g*1000 + i + 1)), Set: []Change{{"echo", v}}, Logs: []string{v}}
				p := Param{Name: "p", Value: v, Type: "INTEGER"}
				d := Device{SerialNumber: v}
				if res, err := roomy.Run(p, d); err != nil || !reflect.DeepEqual(res, want) {
					errs <- fmt.Errorf("roomy Run(%s) = %s, %v; want %s", v, dump(res), err, dump(want))
					return
				}
				if i%10 == 0 {
					p.Name = "loop"
				}
				res, err := tight.Run(p, d)
				switch {
				case errors.Is(err, ErrTimeout):
				case p.Name == "loop":
					errs <- fmt.Errorf("tight loop Run(%s) = %s, %v; want ErrTimeout", v, dump(res), err)
					return
				case err != nil || !reflect.DeepEqual(res, want):
					errs <- fmt.Errorf("tight Run(%s) = %s, %v; want %s", v, dump(res), err, dump(want))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestToParamString(t *testing.T) {
	e := mustCompile(t, "return eval(param.value);", budget)
	tests := []struct{ expr, want string }{
		{"1", "1"},
		{"-5", "-5"},
		{"1e21", "1000000000000000000000"},
		{"-1e22", "-10000000000000000000000"},
		{"0.1 + 0.2", "0.30000000000000004"},
		{"1e-7", "1e-7"},
		{"1/0", "Infinity"},
		{"NaN", "NaN"},
		{"10n", "10"},
		{"'s'", "s"},
		{"[1, 2]", "1,2"},
		{"false", "false"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			res, err := e.Run(Param{Value: tt.expr}, Device{})
			if err != nil || res.Value == nil || *res.Value != tt.want {
				t.Errorf("return %s = %s, %v; want %q", tt.expr, dump(res), err, tt.want)
			}
		})
	}
}

func BenchmarkRun(b *testing.B) {
	e := mustCompile(b, `if (param.name === 'temperature' && param.number > 30) {
  ctx.set('fan', 'true');
  ctx.log('hot:', param.value);
}
return param.number;`, time.Second)
	d := Device{
		ClientID: "c1", SerialNumber: "SN1", Protocol: "MQTT",
		Params: map[string]string{"temperature": "31", "fan": "false", "humidity": "40", "name": "dev", "uptime": "100"},
		Frozen: map[string]bool{},
	}
	p := Param{Name: "temperature", Value: "31", OldValue: "30", Type: "FLOAT"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Run(p, d); err != nil {
			b.Fatal(err)
		}
	}
}
