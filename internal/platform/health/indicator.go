package health

import "context"

// Result is the health of one component. Details are served to anyone who
// can reach the health endpoint, so they must never carry secrets.
type Result struct {
	Status  Status         `json:"status"`
	Details map[string]any `json:"details,omitempty"`
}

// Indicator reports the health of one component. Health should honour ctx:
// the registry stops waiting at the check timeout, but a check that ignores
// ctx keeps its goroutine until it returns.
type Indicator interface {
	Health(ctx context.Context) Result
}

// IndicatorFunc adapts a function to Indicator.
type IndicatorFunc func(ctx context.Context) Result

// Health calls f.
func (f IndicatorFunc) Health(ctx context.Context) Result { return f(ctx) }

// Ping returns an Indicator that is UP when check returns nil and DOWN with
// details.error set to the error text otherwise. The text is served as is,
// so check must not return errors that contain secrets (DSNs with
// passwords, tokens); wrap such errors in a plain description first.
func Ping(check func(ctx context.Context) error) Indicator {
	return IndicatorFunc(func(ctx context.Context) Result {
		if err := check(ctx); err != nil {
			return Result{Status: StatusDown, Details: map[string]any{"error": err.Error()}}
		}
		return Result{Status: StatusUp}
	})
}
