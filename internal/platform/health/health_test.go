package health_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"cpesuite/internal/platform/health"
)

func fixed(s health.Status, details map[string]any) health.Indicator {
	return health.IndicatorFunc(func(context.Context) health.Result {
		return health.Result{Status: s, Details: details}
	})
}

func quietRegistry() *health.Registry {
	r := health.NewRegistry()
	r.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	return r
}

func TestAggregate(t *testing.T) {
	const (
		up  = health.StatusUp
		dn  = health.StatusDown
		oos = health.StatusOutOfService
		deg = health.StatusDegraded
		unk = health.StatusUnknown
	)
	tests := []struct {
		in   []health.Status
		want health.Status
	}{
		{nil, up},
		{[]health.Status{up}, up},
		{[]health.Status{up, up}, up},
		{[]health.Status{up, dn}, dn},
		{[]health.Status{oos, dn, up}, dn},
		{[]health.Status{up, oos, deg}, oos},
		{[]health.Status{deg, up}, deg},
		{[]health.Status{unk, up}, up},
		{[]health.Status{unk, deg}, deg},
		{[]health.Status{unk, unk}, unk},
		{[]health.Status{"WEIRD"}, unk},
		{[]health.Status{"WEIRD", up}, up},
	}
	for _, tt := range tests {
		if got := health.Aggregate(tt.in...); got != tt.want {
			t.Errorf("Aggregate(%v) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestHTTPStatus(t *testing.T) {
	tests := map[health.Status]int{
		health.StatusUp: 200, health.StatusDegraded: 200, health.StatusUnknown: 200,
		health.StatusDown: 503, health.StatusOutOfService: 503,
	}
	for s, want := range tests {
		if got := s.HTTPStatus(); got != want {
			t.Errorf("%s: %d, want %d", s, got, want)
		}
	}
}

func TestPing(t *testing.T) {
	ok := health.Ping(func(context.Context) error { return nil }).Health(context.Background())
	if ok.Status != health.StatusUp || ok.Details != nil {
		t.Fatalf("nil error: %+v", ok)
	}
	bad := health.Ping(func(context.Context) error { return errors.New("connection refused") }).Health(context.Background())
	if bad.Status != health.StatusDown || bad.Details["error"] != "connection refused" {
		t.Fatalf("error: %+v", bad)
	}
}

// serve mounts reg under /actuator/health and returns status and decoded body.
func serve(t *testing.T, reg *health.Registry, path string) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	health.Handler("/actuator/health", reg).ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	if rec.Code == http.StatusNotFound {
		return rec.Code, nil
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s: Content-Type %q", path, ct)
	}
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("%s: body %q: %v", path, rec.Body.String(), err)
	}
	return rec.Code, body
}

func TestEndpoints(t *testing.T) {
	reg := quietRegistry()
	reg.Register("db", fixed(health.StatusUp, map[string]any{"database": "sqlite"}), health.GroupReadiness)
	reg.Register("grid", fixed(health.StatusDown, map[string]any{"error": "no servers"}), health.GroupReadiness)
	reg.Register("disk", fixed(health.StatusDegraded, nil), "storage")
	reg.Register("self", fixed(health.StatusUp, nil), health.GroupLiveness)

	tests := []struct {
		path       string
		wantCode   int
		wantStatus string
		wantComps  []string // nil: no components key
	}{
		{"/actuator/health", 503, "DOWN", []string{"db", "disk", "grid", "self"}},
		{"/actuator/health/liveness", 200, "UP", []string{"self"}},
		{"/actuator/health/readiness", 503, "DOWN", []string{"db", "grid"}},
		{"/actuator/health/storage", 200, "DEGRADED", []string{"disk"}},
		{"/actuator/health/db", 200, "UP", nil},
		{"/actuator/health/grid", 503, "DOWN", nil},
		{"/actuator/health/nope", 404, "", nil},
		{"/actuator/health/", 404, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			code, body := serve(t, reg, tt.path)
			if code != tt.wantCode {
				t.Fatalf("code = %d, want %d", code, tt.wantCode)
			}
			if code == 404 {
				return
			}
			if body["status"] != tt.wantStatus {
				t.Fatalf("status = %v, want %s", body["status"], tt.wantStatus)
			}
			comps, has := body["components"].(map[string]any)
			if tt.wantComps == nil {
				if has {
					t.Fatalf("unexpected components: %v", body)
				}
				return
			}
			if len(comps) != len(tt.wantComps) {
				t.Fatalf("components = %v, want %v", comps, tt.wantComps)
			}
			for _, name := range tt.wantComps {
				if _, ok := comps[name]; !ok {
					t.Fatalf("component %s missing from %v", name, comps)
				}
			}
		})
	}

	// Shape: details present when set, omitted when empty.
	_, body := serve(t, reg, "/actuator/health")
	comps := body["components"].(map[string]any)
	db := comps["db"].(map[string]any)
	if db["details"].(map[string]any)["database"] != "sqlite" {
		t.Fatalf("db details lost: %v", db)
	}
	if _, has := comps["self"].(map[string]any)["details"]; has {
		t.Fatalf("empty details must be omitted: %v", comps["self"])
	}
	_, body = serve(t, reg, "/actuator/health/db")
	if body["details"].(map[string]any)["database"] != "sqlite" {
		t.Fatalf("component details lost: %v", body)
	}
}

func TestEmptyRegistryAndGroups(t *testing.T) {
	var reg health.Registry // the zero value works
	for _, path := range []string{"/actuator/health", "/actuator/health/liveness", "/actuator/health/readiness"} {
		code, body := serve(t, &reg, path)
		if code != 200 || body["status"] != "UP" {
			t.Fatalf("%s: %d %v", path, code, body)
		}
		if _, has := body["components"]; has {
			t.Fatalf("%s: empty components must be omitted: %v", path, body)
		}
	}
}

func TestMountTrailingSlashBaseAndMethod(t *testing.T) {
	mux := http.NewServeMux()
	health.Mount(mux, "/health/", quietRegistry())
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/health", nil))
	if rec.Code != 200 {
		t.Fatalf("GET /health: %d", rec.Code)
	}
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("POST", "/health", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST /health: %d, want 405", rec.Code)
	}
}

func TestTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		reg := quietRegistry()
		// A check that ignores its context entirely: the registry must not
		// wait for it past the timeout.
		reg.Register("stuck", health.IndicatorFunc(func(context.Context) health.Result {
			<-release
			return health.Result{Status: health.StatusUp}
		}))
		reg.Register("fast", fixed(health.StatusUp, nil))

		c := reg.Check(context.Background())
		if c.Status != health.StatusDown {
			t.Fatalf("status = %s, want DOWN", c.Status)
		}
		stuck := c.Components["stuck"]
		if stuck.Status != health.StatusDown || stuck.Details["error"] != "timeout" {
			t.Fatalf("stuck = %+v, want DOWN with error timeout", stuck)
		}
		if c.Components["fast"].Status != health.StatusUp {
			t.Fatalf("fast = %+v", c.Components["fast"])
		}
		close(release)
		synctest.Wait()
	})
}

func TestTimeoutIsConfigurableAndContextAware(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := quietRegistry()
		reg.Timeout = health.DefaultTimeout * 10
		reg.Register("db", health.Ping(func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err()
		}))
		start := time.Now()
		res, ok := reg.CheckComponent(context.Background(), "db")
		if !ok || res.Status != health.StatusDown {
			t.Fatalf("res = %+v", res)
		}
		// Under synctest the clock is fake, so this is exact, not a threshold.
		if got := time.Since(start); got != reg.Timeout {
			t.Fatalf("waited %v, want the configured %v", got, reg.Timeout)
		}
	})
}

func TestCanceledRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		reg := quietRegistry()
		reg.Register("stuck", health.IndicatorFunc(func(context.Context) health.Result {
			<-release
			return health.Result{Status: health.StatusUp}
		}))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		res, _ := reg.CheckComponent(ctx, "stuck")
		if res.Status != health.StatusDown || res.Details["error"] != "canceled" {
			t.Fatalf("res = %+v", res)
		}
		close(release)
		synctest.Wait()
	})
}

func TestChecksRunConcurrently(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Each check waits for the other: run one after the other, both
		// would time out.
		a, b := make(chan struct{}), make(chan struct{})
		reg := quietRegistry()
		reg.Register("a", health.IndicatorFunc(func(ctx context.Context) health.Result {
			close(a)
			<-b
			return health.Result{Status: health.StatusUp}
		}))
		reg.Register("b", health.IndicatorFunc(func(ctx context.Context) health.Result {
			close(b)
			<-a
			return health.Result{Status: health.StatusUp}
		}))
		if c := reg.Check(context.Background()); c.Status != health.StatusUp {
			t.Fatalf("checks did not run concurrently: %+v", c)
		}
	})
}

func TestPanickingCheckIsDown(t *testing.T) {
	var logs strings.Builder
	reg := health.NewRegistry()
	reg.Log = slog.New(slog.NewTextHandler(&logs, nil))
	reg.Register("bad", health.IndicatorFunc(func(context.Context) health.Result { panic("nil pointer in check") }))
	reg.Register("good", fixed(health.StatusUp, nil))

	code, body := serve(t, reg, "/actuator/health")
	if code != 503 || body["status"] != "DOWN" {
		t.Fatalf("%d %v", code, body)
	}
	bad := body["components"].(map[string]any)["bad"].(map[string]any)
	if bad["details"].(map[string]any)["error"] != "check panicked" {
		t.Fatalf("bad = %v", bad)
	}
	if strings.Contains(fmtJSON(body), "nil pointer") {
		t.Fatal("panic value leaked into the response")
	}
	if !strings.Contains(logs.String(), "nil pointer in check") {
		t.Fatalf("panic not logged: %s", logs.String())
	}
}

func TestUnrecognisedStatusIsUnknown(t *testing.T) {
	reg := quietRegistry()
	reg.Register("zero", health.IndicatorFunc(func(context.Context) health.Result { return health.Result{} }))
	res, _ := reg.CheckComponent(context.Background(), "zero")
	if res.Status != health.StatusUnknown {
		t.Fatalf("status = %q, want UNKNOWN", res.Status)
	}
}

func TestUnencodableDetailsKeepStatus(t *testing.T) {
	reg := quietRegistry()
	reg.Register("odd", fixed(health.StatusDown, map[string]any{"ch": make(chan int)}))
	code, body := serve(t, reg, "/actuator/health/odd")
	if code != 503 || body["status"] != "DOWN" {
		t.Fatalf("%d %v", code, body)
	}
}

func TestRegisterPanicsOnMistakes(t *testing.T) {
	tests := []struct {
		name string
		do   func(r *health.Registry)
	}{
		{"empty name", func(r *health.Registry) { r.Register("", fixed(health.StatusUp, nil)) }},
		{"slash in name", func(r *health.Registry) { r.Register("a/b", fixed(health.StatusUp, nil)) }},
		{"nil indicator", func(r *health.Registry) { r.Register("a", nil) }},
		{"duplicate", func(r *health.Registry) {
			r.Register("a", fixed(health.StatusUp, nil))
			r.Register("a", fixed(health.StatusUp, nil))
		}},
		{"component named like a predefined group", func(r *health.Registry) {
			r.Register(health.GroupReadiness, fixed(health.StatusUp, nil))
		}},
		{"component named like a custom group", func(r *health.Registry) {
			r.Register("a", fixed(health.StatusUp, nil), "storage")
			r.Register("storage", fixed(health.StatusUp, nil))
		}},
		{"group named like itself", func(r *health.Registry) {
			r.Register("a", fixed(health.StatusUp, nil), "a")
		}},
		{"group named like a component", func(r *health.Registry) {
			r.Register("a", fixed(health.StatusUp, nil))
			r.Register("b", fixed(health.StatusUp, nil), "a")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			tt.do(health.NewRegistry())
		})
	}
}

func TestIsGroup(t *testing.T) {
	reg := health.NewRegistry()
	reg.Register("a", fixed(health.StatusUp, nil), "custom")
	for name, want := range map[string]bool{"liveness": true, "readiness": true, "custom": true, "a": false, "x": false} {
		if got := reg.IsGroup(name); got != want {
			t.Errorf("IsGroup(%q) = %v, want %v", name, got, want)
		}
	}
}

func fmtJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
