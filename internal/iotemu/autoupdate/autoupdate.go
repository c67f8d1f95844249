// Package autoupdate computes automatic parameter value updates: every
// period a parameter's value moves by a step (up, down or at random within
// bounds) or walks through a dataset. The package only produces values;
// scheduling and storing them is the caller's job.
package autoupdate

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"cpesuite/internal/iotemu/param"
)

// Step types.
const (
	Increase = "INCREASE"
	Decrease = "DECREASE"
	Random   = "RANDOM"
)

// Limits of a Config.
const (
	MaxPeriod        = 86400 // seconds: one update a day is the slowest that makes sense
	MaxDatasetValues = 1000
)

// ErrInvalid is wrapped by every error Validate returns, so that callers
// can answer 400 without inspecting messages.
var ErrInvalid = errors.New("invalid autoupdate configuration")

// FieldError is a Config field with a bad value. Msg names the field (its
// JSON name) and is meant for API clients as is.
type FieldError struct {
	Field string // JSON field name, e.g. "period"
	Msg   string
}

func (e *FieldError) Error() string { return e.Msg }

// Unwrap lets errors.Is(err, ErrInvalid) hold.
func (e *FieldError) Unwrap() error { return ErrInvalid }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Config is the API body of .../parameters/{name}/autoupdate (JSON field
// names are the contract).
type Config struct {
	Autoupdatable     bool     `json:"autoupdatable"`
	Global            bool     `json:"global"`
	Min               *float64 `json:"min"`
	Max               *float64 `json:"max"`
	Step              *float64 `json:"step"`
	StepType          string   `json:"stepType"`  // INCREASE, DECREASE, RANDOM ("" = INCREASE)
	Period            int      `json:"period"`    // seconds between updates
	Deviation         float64  `json:"deviation"` // random +/- added to each step (INCREASE/DECREASE) or value
	RandomizeStepType bool     `json:"randomizeStepType"`
	Dataset           string   `json:"dataset"` // values separated by '|'; when non-empty overrides min, max, step, stepType
}

// Defaults of the fields a Config may leave open: the generator steps by
// DefaultStep in the DefaultStepType direction, and an absent bound is
// reported as the extreme of the number range (NoMin, NoMax). A bound at
// that extreme counts as absent, so posting back what GET answered
// changes nothing.
const (
	DefaultStep     = 1.0
	DefaultStepType = Increase
	NoMin           = -math.MaxFloat64
	NoMax           = math.MaxFloat64
)

// Resolved returns c with every open field filled with what the generator
// uses for it, so that an API answer holds numbers and a step type from
// the spec's value sets instead of nulls and "".
func (c Config) Resolved() Config {
	num := func(p *float64, d float64) *float64 {
		if p != nil {
			return p
		}
		return &d
	}
	c.Min, c.Max, c.Step = num(c.Min, NoMin), num(c.Max, NoMax), num(c.Step, DefaultStep)
	if c.StepType == "" {
		c.StepType = DefaultStepType
	}
	return c
}

// open turns bounds at the extremes of the number range back into absent
// ones (see Resolved).
func (c Config) open() Config {
	if c.Min != nil && *c.Min <= NoMin {
		c.Min = nil
	}
	if c.Max != nil && *c.Max >= NoMax {
		c.Max = nil
	}
	return c
}

func numeric(t param.Type) bool {
	return t == param.Integer || t == param.Float || t == param.Time
}

func known(t param.Type) bool {
	switch t {
	case param.String, param.Integer, param.Float, param.Boolean, param.Time, param.Opaque:
		return true
	}
	return false
}

// DatasetValues splits a dataset into its values. An empty dataset has
// none; otherwise every '|' separates two values (which may be empty).
func DatasetValues(dataset string) []string {
	if dataset == "" {
		return nil
	}
	return strings.Split(dataset, "|")
}

// Validate checks c for a parameter of type t and returns a *FieldError
// (wrapping ErrInvalid) naming the field. A config with autoupdatable
// false is always valid (it turns updates off) apart from the checks of
// single field values: stepType, period range, step, min/max, deviation and
// the dataset's values.
func (c Config) Validate(t param.Type) error {
	if !known(t) {
		return fieldErr("type", "parameter type %q does not support automatic updates", t)
	}
	switch c.StepType {
	case "", Increase, Decrease, Random:
	default:
		return fieldErr("stepType", "stepType must be one of INCREASE, DECREASE, RANDOM")
	}
	switch {
	case c.Period < 0:
		return fieldErr("period", "period must not be negative")
	case c.Period > MaxPeriod:
		return fieldErr("period", "period must not exceed %d", MaxPeriod)
	case c.Autoupdatable && c.Period < 1:
		return fieldErr("period", "period must be at least 1 when autoupdatable is true")
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"min", c.Min}, {"max", c.Max}, {"step", c.Step}} {
		if f.v != nil && (math.IsNaN(*f.v) || math.IsInf(*f.v, 0)) {
			return fieldErr(f.name, "%s must be a finite number", f.name)
		}
	}
	if c.Min != nil && c.Max != nil && *c.Min > *c.Max {
		return fieldErr("min", "min must not exceed max")
	}
	if c.Step != nil {
		if *c.Step <= 0 {
			return fieldErr("step", "step must be positive")
		}
		// Results are rounded, so a smaller step could round back to
		// the current value and the parameter would never move.
		if (t == param.Integer || t == param.Time) && *c.Step < 1 && c.Dataset == "" {
			return fieldErr("step", "step must be at least 1 for %s %s parameter", article(t), t)
		}
	}
	if math.IsNaN(c.Deviation) || math.IsInf(c.Deviation, 0) {
		return fieldErr("deviation", "deviation must be a finite number")
	}
	if c.Deviation < 0 {
		return fieldErr("deviation", "deviation must not be negative")
	}
	values := DatasetValues(c.Dataset)
	if len(values) > MaxDatasetValues {
		return fieldErr("dataset", "dataset must have at most %d values, not %d", MaxDatasetValues, len(values))
	}
	for _, v := range values {
		if err := checkValue(t, v); err != nil {
			return err
		}
	}
	if !c.Autoupdatable {
		return nil
	}
	if !numeric(t) {
		if len(values) == 0 {
			return fieldErr("dataset", "numeric fields need a numeric parameter; use dataset for STRING/BOOLEAN/OPAQUE")
		}
		if c.Deviation != 0 {
			return fieldErr("deviation", "deviation needs a numeric parameter, not %s", t)
		}
	}
	return nil
}

func article(t param.Type) string {
	if t == param.Integer || t == param.Opaque {
		return "an"
	}
	return "a"
}

// checkValue checks one dataset value for type t.
func checkValue(t param.Type, v string) error {
	a := article(t)
	switch t {
	case param.Integer, param.Time, param.Float:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fieldErr("dataset", "dataset value %q is not a number for %s %s parameter", v, a, t)
		}
		if _, err := param.Normalize(t, v); err != nil {
			return fieldErr("dataset", "dataset value %q is not an integer for %s %s parameter", v, a, t)
		}
	case param.Boolean:
		if _, err := param.Normalize(t, v); err != nil {
			return fieldErr("dataset", "dataset value %q is not a boolean for %s %s parameter", v, a, t)
		}
	case param.Opaque:
		if _, err := base64.StdEncoding.DecodeString(v); err != nil {
			return fieldErr("dataset", "dataset value %q is not base64 for %s %s parameter", v, a, t)
		}
	}
	return nil
}

// Generator produces successive values; not safe for concurrent use (the
// caller serialises per parameter).
//
// With a dataset, values are taken in order, cycling, whatever stepType
// and randomizeStepType say (the dataset overrides the step type); a
// numeric dataset value still gets the deviation added.
//
// Without a dataset (numeric types only):
//   - INCREASE adds step (default 1) plus a deviation drawn uniformly from
//     [-deviation, +deviation]; passing max wraps to min. A result below min
//     (the deviation can cause one) is raised to min.
//   - DECREASE is symmetric: passing below min wraps to max; above max is
//     lowered to max.
//   - With only one of min and max set there is nothing to wrap to, so
//     results are clamped to that bound; with neither the value is
//     unbounded.
//   - RANDOM draws uniformly from [min, max]; a missing bound is the
//     current value -/+ step. The deviation is then added and the result
//     clamped to the configured bounds.
//   - randomizeStepType picks INCREASE or DECREASE at random on each call.
//
// INTEGER and TIME results are rounded to the nearest integer; FLOAT
// results are rounded to 15 significant digits, which drops binary noise
// such as 0.1+0.2 = 0.30000000000000004. Every result goes through
// param.Normalize.
type Generator struct {
	c    Config
	t    param.Type
	rng  *rand.Rand
	err  error // set when c cannot produce values for t
	data []string
	pos  int    // index in data of the last value produced
	last string // last value produced, to keep our place among duplicates
	has  bool   // last is valid
}

// NewGenerator returns a generator for c and a parameter of type t. Its
// random draws are determined by seed. A config that fails Validate makes
// Next return that error.
func NewGenerator(c Config, t param.Type, seed uint64) *Generator {
	c = c.open()
	g := &Generator{c: c, t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	c.Autoupdatable = true // Next is asked for values, so check as if updates were on
	if c.Period == 0 {
		c.Period = 1 // the period is the caller's business, not the generator's
	}
	if err := c.Validate(t); err != nil {
		g.err = fmt.Errorf("autoupdate: %w", err)
		return g
	}
	for _, v := range DatasetValues(c.Dataset) {
		n, err := param.Normalize(t, v)
		if err != nil { // unreachable after Validate, kept for safety
			g.err = fmt.Errorf("autoupdate: dataset: %w", err)
			return g
		}
		g.data = append(g.data, n)
	}
	return g
}

// Next returns the value after current. current may be unparsable: then
// the result is min (or max when only max is set, or 0), or the first
// dataset value.
func (g *Generator) Next(current string) (string, error) {
	if g.err != nil {
		return "", g.err
	}
	if len(g.data) > 0 {
		return g.nextData(current)
	}
	var v float64
	if cur, ok := g.parse(current); !ok {
		switch {
		case g.c.Min != nil:
			v = *g.c.Min
		case g.c.Max != nil:
			v = *g.c.Max
		}
	} else {
		v = g.step(cur)
	}
	return g.format(v)
}

func (g *Generator) parse(s string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// deviation draws from [-deviation, +deviation].
func (g *Generator) deviation() float64 {
	if g.c.Deviation == 0 {
		return 0
	}
	return (g.rng.Float64()*2 - 1) * g.c.Deviation
}

func (g *Generator) step(cur float64) float64 {
	step := 1.0
	if g.c.Step != nil {
		step = *g.c.Step
	}
	lo, hi := g.c.Min, g.c.Max
	kind := g.c.StepType
	if g.c.RandomizeStepType {
		kind = Increase
		if g.rng.IntN(2) == 0 {
			kind = Decrease
		}
	}
	switch kind {
	case Random:
		from, to := orDefault(lo, cur-step), orDefault(hi, cur+step)
		if from > to { // one bound given and the current value beyond it
			from, to = to, from
		}
		return clamp(from+g.rng.Float64()*(to-from)+g.deviation(), lo, hi)
	case Decrease:
		v := cur - step + g.deviation()
		if lo != nil && hi != nil && v < *lo {
			return *hi
		}
		return clamp(v, lo, hi)
	default: // INCREASE or ""
		v := cur + step + g.deviation()
		if lo != nil && hi != nil && v > *hi {
			return *lo
		}
		return clamp(v, lo, hi)
	}
}

func clamp(v float64, lo, hi *float64) float64 {
	if lo != nil && v < *lo {
		v = *lo
	}
	if hi != nil && v > *hi {
		v = *hi
	}
	return v
}

func (g *Generator) format(v float64) (string, error) {
	var s string
	if g.t == param.Integer || g.t == param.Time {
		r := math.Round(v)
		// Rounding may leave non-integral bounds; stay inside them when
		// an integer fits.
		if g.c.Min != nil && r < *g.c.Min && math.Ceil(*g.c.Min) <= orDefault(g.c.Max, math.Inf(1)) {
			r = math.Ceil(*g.c.Min)
		}
		if g.c.Max != nil && r > *g.c.Max && math.Floor(*g.c.Max) >= orDefault(g.c.Min, math.Inf(-1)) {
			r = math.Floor(*g.c.Max)
		}
		s = strconv.FormatFloat(r, 'f', -1, 64)
	} else {
		s = strconv.FormatFloat(v, 'g', 15, 64)
	}
	n, err := param.Normalize(g.t, s)
	if err != nil {
		return "", fmt.Errorf("autoupdate: next value: %w", err)
	}
	return n, nil
}

func orDefault(p *float64, d float64) float64 {
	if p == nil {
		return d
	}
	return *p
}

func (g *Generator) nextData(current string) (string, error) {
	cur, err := param.Normalize(g.t, current)
	switch {
	case g.has && current == g.last:
		// Our own last value: continue from where we were, which also
		// works when the dataset holds duplicates.
		g.pos = (g.pos + 1) % len(g.data)
	case err == nil && slices.Contains(g.data, cur):
		// Someone else set a dataset value: continue after it.
		g.pos = (slices.Index(g.data, cur) + 1) % len(g.data)
	default:
		g.pos = 0
	}
	v := g.data[g.pos]
	if numeric(g.t) && g.c.Deviation != 0 {
		f, _ := g.parse(v)
		s, err := g.formatData(f + g.deviation())
		if err != nil {
			return "", err
		}
		v = s
	}
	g.last, g.has = v, true
	return v, nil
}

// formatData formats a dataset value with deviation; min and max do not
// apply to datasets.
func (g *Generator) formatData(v float64) (string, error) {
	s := strconv.FormatFloat(v, 'g', 15, 64)
	if g.t == param.Integer || g.t == param.Time {
		s = strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	}
	n, err := param.Normalize(g.t, s)
	if err != nil {
		return "", fmt.Errorf("autoupdate: next value: %w", err)
	}
	return n, nil
}
