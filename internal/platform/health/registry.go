package health

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Predefined groups, which exist (and are UP) even without members.
const (
	GroupLiveness  = "liveness"
	GroupReadiness = "readiness"
)

// DefaultTimeout bounds each check when Registry.Timeout is zero.
const DefaultTimeout = 2 * time.Second

// Composite is the health of several components together.
type Composite struct {
	Status     Status            `json:"status"`
	Components map[string]Result `json:"components,omitempty"`
}

// Registry holds named indicators and groups of them. The zero value is
// ready to use; set Timeout and Log before the first check.
type Registry struct {
	// Timeout bounds each check; a check still running then is DOWN with
	// details.error "timeout". Zero means DefaultTimeout.
	Timeout time.Duration
	// Log receives panics from checks; nil means slog.Default().
	Log *slog.Logger

	mu         sync.RWMutex
	indicators map[string]Indicator
	groups     map[string][]string // group -> member names
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// Register adds ind under name and to the given groups, creating groups
// that do not exist yet. Like http.ServeMux it panics on programming errors:
// an empty name or one containing "/", a name registered twice, or a
// component and a group sharing a name (they share one URL space).
func (r *Registry) Register(name string, ind Indicator, groups ...string) {
	if name == "" || strings.Contains(name, "/") {
		panic(fmt.Sprintf("health: invalid component name %q", name))
	}
	if ind == nil {
		panic(fmt.Sprintf("health: nil indicator for %q", name))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.indicators[name]; dup {
		panic(fmt.Sprintf("health: component %q registered twice", name))
	}
	if r.isGroupLocked(name) {
		panic(fmt.Sprintf("health: component %q has the name of a group", name))
	}
	for _, g := range groups {
		if g == "" || strings.Contains(g, "/") {
			panic(fmt.Sprintf("health: invalid group name %q", g))
		}
		if _, clash := r.indicators[g]; clash || g == name {
			panic(fmt.Sprintf("health: group %q has the name of a component", g))
		}
	}
	if r.indicators == nil {
		r.indicators = make(map[string]Indicator)
		r.groups = make(map[string][]string)
	}
	r.indicators[name] = ind
	for _, g := range groups {
		if !slices.Contains(r.groups[g], name) {
			r.groups[g] = append(r.groups[g], name)
		}
	}
}

func (r *Registry) isGroupLocked(name string) bool {
	if name == GroupLiveness || name == GroupReadiness {
		return true
	}
	_, ok := r.groups[name]
	return ok
}

// Check runs every registered indicator.
func (r *Registry) Check(ctx context.Context) Composite {
	r.mu.RLock()
	names := make([]string, 0, len(r.indicators))
	for name := range r.indicators {
		names = append(names, name)
	}
	r.mu.RUnlock()
	sort.Strings(names)
	return r.checkAll(ctx, names)
}

// CheckGroup runs the indicators of group; ok is false for an unknown group.
func (r *Registry) CheckGroup(ctx context.Context, group string) (c Composite, ok bool) {
	r.mu.RLock()
	ok = r.isGroupLocked(group)
	names := append([]string(nil), r.groups[group]...)
	r.mu.RUnlock()
	if !ok {
		return Composite{}, false
	}
	return r.checkAll(ctx, names), true
}

// CheckComponent runs one indicator; ok is false for an unknown name.
func (r *Registry) CheckComponent(ctx context.Context, name string) (res Result, ok bool) {
	r.mu.RLock()
	ind, ok := r.indicators[name]
	r.mu.RUnlock()
	if !ok {
		return Result{}, false
	}
	return r.checkOne(ctx, name, ind), true
}

// IsGroup reports whether name is a group (predefined or registered).
func (r *Registry) IsGroup(name string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.isGroupLocked(name)
}

func (r *Registry) checkAll(ctx context.Context, names []string) Composite {
	r.mu.RLock()
	inds := make([]Indicator, len(names))
	for i, name := range names {
		inds[i] = r.indicators[name]
	}
	r.mu.RUnlock()

	results := make([]Result, len(names))
	var wg sync.WaitGroup
	for i := range names {
		wg.Go(func() { results[i] = r.checkOne(ctx, names[i], inds[i]) })
	}
	wg.Wait()

	c := Composite{Status: StatusUp}
	if len(names) == 0 {
		return c
	}
	c.Components = make(map[string]Result, len(names))
	statuses := make([]Status, len(names))
	for i, name := range names {
		c.Components[name] = results[i]
		statuses[i] = results[i].Status
	}
	c.Status = Aggregate(statuses...)
	return c
}

// checkOne runs ind in its own goroutine so that a check that ignores its
// context cannot hold the response past the timeout, and so that its panic
// is contained.
func (r *Registry) checkOne(ctx context.Context, name string, ind Indicator) Result {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	done := make(chan Result, 1) // buffered: a late check must not block forever
	go func() {
		defer func() {
			if v := recover(); v != nil {
				r.logger().Error("health check panicked",
					"component", name, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				done <- down("check panicked")
			}
		}()
		done <- ind.Health(ctx)
	}()

	select {
	case res := <-done:
		if _, known := severity[res.Status]; !known {
			res.Status = StatusUnknown
		}
		return res
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return down("timeout")
		}
		return down("canceled")
	}
}

func (r *Registry) logger() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.Default()
}

func down(reason string) Result {
	return Result{Status: StatusDown, Details: map[string]any{"error": reason}}
}
