package iotemu

import (
	"testing"
)

// TestStateMachine walks every row of the States table.
func TestStateMachine(t *testing.T) {
	e := startEmu(t, testConfig(t))
	e.useCoAP(2)
	status := func() Status {
		var s Status
		e.do("GET", "/api/status", nil).must(t, 200).json(t, &s)
		return s
	}
	if s := status(); s.Initialized || s.Started || s.DeviceCount != 0 || s.Protocol != "COAP" {
		t.Fatalf("initial status %+v", s)
	}
	steps := []struct {
		method, path string
		status       int
		code         string
		init, start  bool
	}{
		{"POST", "/api/stop", 409, codeNotInitialized, false, false},
		{"POST", "/api/reset", 409, codeNotInitialized, false, false},
		{"POST", "/api/start", 409, codeNotInitialized, false, false},
		{"POST", "/api/init", 204, "", true, false},
		{"POST", "/api/init", 409, codeAlreadyInitialized, true, false},
		{"POST", "/api/start", 204, "", true, true},
		{"POST", "/api/start", 409, codeAlreadyStarted, true, true},
		{"POST", "/api/init", 409, codeAlreadyInitialized, true, true},
		{"POST", "/api/stop", 204, "", false, false},
		{"POST", "/api/stop", 409, codeNotInitialized, false, false},
		{"POST", "/api/init", 204, "", true, false},
		{"POST", "/api/stop", 204, "", false, false}, // initialized -> stopped
		{"POST", "/api/init", 204, "", true, false},
		{"POST", "/api/start", 204, "", true, true},
		{"POST", "/api/reset", 204, "", false, false}, // started -> initial
		{"POST", "/api/init", 204, "", true, false},
		{"POST", "/api/reset", 204, "", false, false}, // initialized -> initial
	}
	for i, st := range steps {
		r := e.do(st.method, st.path, nil)
		if st.code != "" {
			r.errBody(t, st.status, st.code)
		} else {
			r.must(t, st.status)
			if len(r.body) != 0 {
				t.Fatalf("step %d: 204 with body %s", i, r.body)
			}
		}
		if s := status(); s.Initialized != st.init || s.Started != st.start {
			t.Fatalf("step %d %s: status %+v, want initialized=%v started=%v", i, st.path, s, st.init, st.start)
		}
	}
	if s := status(); s.DeviceCount != 0 {
		t.Fatalf("after reset: %d devices", s.DeviceCount)
	}
}
