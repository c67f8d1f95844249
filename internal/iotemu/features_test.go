package iotemu

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"cpesuite/internal/iotemu/autoupdate"
	"cpesuite/internal/testutil"
)

func f64(v float64) *float64 { return &v }

// TestAutoupdate: config round trip, 404s, 400s, AUTOUPDATE_FAILED,
// applied at once to a running device, global for every device.
func TestAutoupdate(t *testing.T) {
	e := startEmu(t, testConfig(t))
	e.useCoAP(2)
	e.do("POST", "/api/init", nil).must(t, 204)
	base := "/api/devices/coap-1/parameters/BatteryLevel/autoupdate"
	var c autoupdate.Config
	e.do("GET", base, nil).must(t, 200).json(t, &c)
	if c.Autoupdatable {
		t.Fatalf("default autoupdate %+v", c)
	}
	// Never configured, and configured with the numbers left open: every
	// field in the spec's value set (numbers, a step type), never null or "".
	inValueSet := func(t *testing.T, path string) {
		t.Helper()
		var m map[string]any
		e.do("GET", path, nil).must(t, 200).json(t, &m)
		for _, k := range []string{"min", "max", "step", "period", "deviation"} {
			if _, ok := m[k].(float64); !ok {
				t.Errorf("%s: %s is %v, want a number", path, k, m[k])
			}
		}
		if st := m["stepType"]; st != "INCREASE" && st != "DECREASE" && st != "RANDOM" {
			t.Errorf("%s: stepType %q outside INCREASE, DECREASE, RANDOM", path, st)
		}
		if m["step"] != 1.0 || m["stepType"] != "INCREASE" {
			t.Errorf("%s: defaults %v, want step 1 INCREASE (what the generator uses)", path, m)
		}
	}
	inValueSet(t, base)
	e.do("POST", "/api/devices/coap-1/parameters/Temperature/autoupdate", map[string]any{"autoupdatable": false, "period": 5}).must(t, 204)
	inValueSet(t, "/api/devices/coap-1/parameters/Temperature/autoupdate")
	e.do("GET", "/api/devices/nope/parameters/BatteryLevel/autoupdate", nil).errBody(t, 404, codeParameterNotFound)
	e.do("GET", "/api/devices/coap-1/parameters/Nope/autoupdate", nil).errBody(t, 404, codeParameterNotFound)
	for name, body := range map[string]any{
		"no body":        ``,
		"malformed":      `{"autoupdatable":`,
		"unknown field":  `{"autoupdatable": true, "period": 1, "x": 1}`,
		"bad step type":  map[string]any{"autoupdatable": true, "period": 1, "stepType": "SIDEWAYS"},
		"min above max":  map[string]any{"autoupdatable": true, "period": 1, "min": 10, "max": 1},
		"zero period":    map[string]any{"autoupdatable": true, "period": 0, "min": 0, "max": 10},
		"unknown device": map[string]any{"autoupdatable": true, "period": 1},
	} {
		path := base
		if name == "unknown device" {
			path = "/api/devices/nope/parameters/BatteryLevel/autoupdate"
		}
		e.do("POST", path, body).errBody(t, 400, codeBadRequest)
	}
	e.do("POST", "/api/devices/coap-1/parameters/Nope/autoupdate", map[string]any{"autoupdatable": true, "period": 1}).errBody(t, 400, codeBadRequest)
	// A numeric update on a STRING parameter cannot work.
	e.do("POST", "/api/devices/coap-1/parameters/FirmwareVersion/autoupdate", map[string]any{"autoupdatable": true, "period": 1, "min": 1, "max": 2, "step": 1}).errBody(t, 400, codeAutoupdateFailed)

	cfg := autoupdate.Config{Autoupdatable: true, Period: 1, Min: f64(0), Max: f64(100), Step: f64(1), StepType: "DECREASE"}
	e.do("POST", base, cfg).must(t, 204)
	var got autoupdate.Config
	e.do("GET", base, nil).must(t, 200).json(t, &got)
	if !got.Autoupdatable || got.Period != 1 || got.StepType != "DECREASE" {
		t.Fatalf("stored %+v", got)
	}
	// Kept for the next start, then applied.
	e.do("POST", "/api/start", nil).must(t, 204)
	testutil.Eventually(t, testutil.MinDeadline, "BatteryLevel to decrease", func() bool {
		return e.devices["coap-1"].params.Value("BatteryLevel") != "100"
	})
	// Applied at once to a running device (dataset overrides the numbers).
	e.do("POST", "/api/devices/coap-1/parameters/Switch/autoupdate", map[string]any{"autoupdatable": true, "period": 1, "dataset": "true|false"}).must(t, 204)
	testutil.Eventually(t, testutil.MinDeadline, "Switch to toggle", func() bool {
		return e.devices["coap-1"].params.Value("Switch") == "true"
	})
	// global=true applies to every device.
	e.do("POST", "/api/devices/coap-1/parameters/SignalStrength/autoupdate", map[string]any{"autoupdatable": true, "global": true, "period": 1, "dataset": "-50|-60"}).must(t, 204)
	testutil.Eventually(t, testutil.MinDeadline, "SignalStrength on coap-2", func() bool {
		v := e.devices["coap-2"].params.Value("SignalStrength")
		return v == "-50" || v == "-60"
	})
	e.do("GET", "/api/devices/coap-2/parameters/SignalStrength/autoupdate", nil).must(t, 200).json(t, &got)
	if !got.Global {
		t.Fatalf("global config not reported on coap-2: %+v", got)
	}
}

// TestHistory: last 50 oldest first with FULL/LAZY; not recorded with OFF.
func TestHistory(t *testing.T) {
	e := startEmu(t, testConfig(t))
	e.useCoAP(1)
	e.do("POST", "/api/init", nil).must(t, 204)
	e.do("POST", "/api/start", nil).must(t, 204)
	e.waitRunning("coap")
	for i := range 60 {
		e.do("PUT", "/api/devices/coap/parameters/BatteryLevel", map[string]string{"value": strconv.Itoa(i)}).must(t, 204)
	}
	var h History
	e.do("GET", "/api/devices/coap/parameters/BatteryLevel/history", nil).must(t, 200).json(t, &h)
	if !h.Recorded || h.Name != "BatteryLevel" || len(h.Entries) != 50 || h.Entries[0].Value != "10" || h.Entries[49].Value != "59" {
		t.Fatalf("history recorded=%v n=%d first=%+v", h.Recorded, len(h.Entries), h.Entries[0])
	}
	e.do("POST", "/api/config/runtime", map[string]any{"guiRenderingType": "OFF"}).must(t, 200)
	e.do("PUT", "/api/devices/coap/parameters/BatteryLevel", map[string]string{"value": "99"}).must(t, 204)
	e.do("GET", "/api/devices/coap/parameters/BatteryLevel/history", nil).must(t, 200).json(t, &h)
	if h.Recorded || h.Entries[len(h.Entries)-1].Value == "99" {
		t.Fatalf("recorded with OFF: %+v", h.Entries[len(h.Entries)-1])
	}
	e.do("GET", "/api/devices/nope/parameters/BatteryLevel/history", nil).errBody(t, 404, codeDeviceNotFound)
	e.do("GET", "/api/devices/coap/parameters/Nope/history", nil).errBody(t, 404, codeParameterNotFound)
}

// TestRule: get/post, compile error body, rule changes values, runaway
// rules are interrupted and reported, the rule file persists.
func TestRule(t *testing.T) {
	e := startEmu(t, testConfig(t))
	var rv RuleView
	e.do("GET", "/api/rule", nil).must(t, 200).json(t, &rv)
	if rv.Status != "ok" || rv.Code != "" {
		t.Fatalf("initial rule %+v", rv)
	}
	var ce RuleCompileError
	e.do("POST", "/api/rule", map[string]string{"code": "if (param.name === {"}).must(t, 400).json(t, &ce)
	if ce.Status != "error" || ce.Error == "" {
		t.Fatalf("compile failure %+v", ce)
	}
	e.do("POST", "/api/rule", `{"code": null}`).errBody(t, 400, codeBadRequest)
	code := `if (param.name === "Temperature" && param.number > 40) { return "40"; }
if (param.name === "Humidity") { ctx.set("Pressure", "999"); }`
	e.do("POST", "/api/rule", map[string]string{"code": code}).must(t, 200).json(t, &rv)
	if rv.Status != "ok" || rv.Code != code {
		t.Fatalf("saved rule %+v", rv)
	}
	if b, _ := os.ReadFile(filepath.Join(e.dir, ruleFile)); string(b) != code {
		t.Fatal("rule not persisted")
	}
	e.useCoAP(1)
	e.do("POST", "/api/init", nil).must(t, 204)
	e.do("POST", "/api/start", nil).must(t, 204)
	e.waitRunning("coap")
	e.do("PUT", "/api/devices/coap/parameters/Temperature", map[string]string{"value": "55"}).must(t, 204)
	if v := e.devices["coap"].params.Value("Temperature"); v != "40" {
		t.Fatalf("rule did not clamp: %q", v)
	}
	e.do("PUT", "/api/devices/coap/parameters/Humidity", map[string]string{"value": "10"}).must(t, 204)
	if v := e.devices["coap"].params.Value("Pressure"); v != "999" {
		t.Fatalf("rule did not set Pressure: %q", v)
	}
	var after RuleView
	if e.do("GET", "/api/rule", nil).must(t, 200).json(t, &after); after.LastError != nil {
		t.Fatalf("a rule that finished was reported: %+v", after.LastError)
	}

	// A runaway rule is interrupted; the write itself stands and is
	// reported. Its emulator has a tiny budget, which an infinite loop
	// exceeds whatever the speed of the machine, so the roomy budget above
	// keeps the rules that must finish safe from a stalled goroutine.
	tight := testConfig(t)
	tight.RuleBudget = time.Millisecond
	e = startEmu(t, tight)
	e.do("POST", "/api/rule", map[string]string{"code": `if (param.name === "BatteryLevel") { while (true) {} }`}).must(t, 200)
	e.useCoAP(1)
	e.do("POST", "/api/init", nil).must(t, 204)
	e.do("POST", "/api/start", nil).must(t, 204)
	e.waitRunning("coap")
	e.do("PUT", "/api/devices/coap/parameters/BatteryLevel", map[string]string{"value": "5"}).must(t, 204)
	if v := e.devices["coap"].params.Value("BatteryLevel"); v != "5" {
		t.Fatalf("the write under a runaway rule did not stand: %q", v)
	}
	e.do("GET", "/api/rule", nil).must(t, 200).json(t, &rv)
	if rv.LastError == nil || rv.LastError.Parameter != "BatteryLevel" {
		t.Fatalf("runaway rule not reported: %+v", rv)
	}
	// The device still answers.
	e.do("PUT", "/api/devices/coap/parameters/Temperature", map[string]string{"value": "20"}).must(t, 204)
}
