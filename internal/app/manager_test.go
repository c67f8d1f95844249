package app

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/platform/logx"
	"cpesuite/internal/platform/service"
	"cpesuite/internal/testutil"
)

// recorder notes lifecycle calls across modules in order.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.events = append(r.events, s)
	r.mu.Unlock()
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.events, " ")
}

type fakeOpts struct {
	startErr error
	runErr   chan error // when set, Run returns what arrives here
	stuck    bool       // Run ignores its context
}

func fake(rec *recorder, name string, o fakeOpts) func(context.Context) (service.Service, error) {
	return func(context.Context) (service.Service, error) {
		rec.add("init:" + name)
		return service.Funcs{
			StartFn: func(context.Context) error { rec.add("start:" + name); return o.startErr },
			RunFn: func(ctx context.Context) error {
				switch {
				case o.stuck:
					select {}
				case o.runErr != nil:
					select {
					case err := <-o.runErr:
						return err
					case <-ctx.Done():
						return nil
					}
				}
				<-ctx.Done()
				return nil
			},
			StopFn: func(context.Context) error { rec.add("stop:" + name); return nil },
		}, nil
	}
}

func newTestManager(rec *recorder, opts map[string]fakeOpts) *Manager {
	m := NewManager(logx.Discard())
	// A safety net: a module that returns at once must not miss the stop
	// deadline on a loaded machine. The stuck-module test sets a short one.
	m.StopTimeout = testutil.MinDeadline
	m.Register(Module{Name: "grid", Init: fake(rec, "grid", opts["grid"])})
	m.Register(Module{Name: "db", Init: fake(rec, "db", opts["db"])})
	m.Register(Module{Name: "acs", Target: true, Deps: []string{"grid", "db"}, Init: fake(rec, "acs", opts["acs"])})
	m.Register(Module{Name: "emu", Target: true, Deps: []string{"acs"}, Init: fake(rec, "emu", opts["emu"])})
	m.Register(Module{Name: "speedtest", Target: true, Init: fake(rec, "speedtest", opts["speedtest"])})
	return m
}

func TestResolve(t *testing.T) {
	tests := []struct {
		targets []string
		want    string
		wantErr string
	}{
		{[]string{"emu"}, "grid db acs emu", ""},
		{[]string{"speedtest", "acs"}, "speedtest grid db acs", ""},
		{[]string{"acs", "emu", "acs"}, "grid db acs emu", ""},
		{[]string{"nope"}, "", `unknown target "nope" (implemented: [acs emu speedtest])`},
	}
	for _, tt := range tests {
		m := newTestManager(&recorder{}, nil)
		got, err := m.Resolve(tt.targets)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("%v: err=%v, want %q", tt.targets, err, tt.wantErr)
			}
			continue
		}
		if err != nil || strings.Join(got, " ") != tt.want {
			t.Errorf("%v: got %v (%v), want %s", tt.targets, got, err, tt.want)
		}
	}
}

func TestResolveCycleAndMissingDep(t *testing.T) {
	m := NewManager(logx.Discard())
	m.Register(Module{Name: "a", Target: true, Deps: []string{"b"}})
	m.Register(Module{Name: "b", Deps: []string{"a"}})
	m.Register(Module{Name: "c", Target: true, Deps: []string{"ghost"}})
	if _, err := m.Resolve([]string{"a"}); err == nil || !strings.Contains(err.Error(), "a -> b -> a") {
		t.Errorf("cycle: %v", err)
	}
	if _, err := m.Resolve([]string{"c"}); err == nil || !strings.Contains(err.Error(), `"c" depends on unknown module "ghost"`) {
		t.Errorf("missing dep: %v", err)
	}
}

func TestCleanStopReverseOrder(t *testing.T) {
	rec := &recorder{}
	m := newTestManager(rec, nil)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- m.Run(ctx, []string{"emu"}) }()
	<-m.Ready()
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("clean stop returned %v", err)
	}
	want := "init:grid start:grid init:db start:db init:acs start:acs init:emu start:emu stop:emu stop:acs stop:db stop:grid"
	if rec.String() != want {
		t.Fatalf("lifecycle:\n got %s\nwant %s", rec, want)
	}
}

func TestStartFailureStopsStarted(t *testing.T) {
	rec := &recorder{}
	m := newTestManager(rec, map[string]fakeOpts{"acs": {startErr: errors.New("port in use")}})
	err := m.Run(context.Background(), []string{"emu"})
	if err == nil || !strings.Contains(err.Error(), "module acs: start: port in use") {
		t.Fatalf("err=%v", err)
	}
	// The failed module is stopped too (Stop releases what a partial Start took).
	want := "init:grid start:grid init:db start:db init:acs start:acs stop:acs stop:db stop:grid"
	if rec.String() != want {
		t.Fatalf("lifecycle:\n got %s\nwant %s", rec, want)
	}
}

func TestRunFailureStopsAll(t *testing.T) {
	tests := []struct {
		name    string
		send    error
		wantErr string
	}{
		{"error", errors.New("disk full"), "module db failed: disk full"},
		{"unexpected nil", nil, "module db failed: stopped unexpectedly"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			fail := make(chan error, 1)
			m := newTestManager(rec, map[string]fakeOpts{"db": {runErr: fail}})
			errc := make(chan error, 1)
			go func() { errc <- m.Run(context.Background(), []string{"acs"}) }()
			<-m.Ready()
			fail <- tt.send
			err := <-errc
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err=%v, want %q", err, tt.wantErr)
			}
			if !strings.HasSuffix(rec.String(), "stop:acs stop:db stop:grid") {
				t.Fatalf("not all stopped in reverse: %s", rec)
			}
		})
	}
}

func TestStuckModuleBoundedByStopTimeout(t *testing.T) {
	rec := &recorder{}
	m := newTestManager(rec, map[string]fakeOpts{"speedtest": {stuck: true}})
	// The stuck module never returns, so it misses any deadline however
	// fast the machine: a short one keeps the test short.
	m.StopTimeout = 200 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- m.Run(ctx, []string{"speedtest"}) }()
	<-m.Ready()
	cancel()
	err := <-errc
	if err == nil || !strings.Contains(err.Error(), "did not return before the stop deadline") {
		t.Fatalf("err=%v", err)
	}
}

func TestStopDuringStartup(t *testing.T) {
	rec := &recorder{}
	m := newTestManager(rec, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Run(ctx, []string{"emu"}); err != nil {
		t.Fatalf("stop before start must be clean, got %v", err)
	}
	select {
	case <-m.Ready():
		t.Fatal("ready must not be signalled when start-up was interrupted")
	default:
	}
}
