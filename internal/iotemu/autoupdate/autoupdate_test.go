package autoupdate

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"cpesuite/internal/iotemu/param"
)

func f(v float64) *float64 { return &v }

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		c     Config
		t     param.Type
		field string // "" = valid
		msg   string
	}{
		{name: "zero config is off and valid", c: Config{}, t: param.Integer},
		{name: "off for a string is valid", c: Config{Min: f(1)}, t: param.String},
		{name: "full numeric", c: Config{Autoupdatable: true, Min: f(0), Max: f(10), Step: f(2), StepType: Decrease, Period: 5, Deviation: 0.5, RandomizeStepType: true}, t: param.Integer},
		{name: "min equals max", c: Config{Autoupdatable: true, Min: f(3), Max: f(3), Period: 1}, t: param.Float},
		{name: "float small step", c: Config{Autoupdatable: true, Step: f(0.01), Period: 1}, t: param.Float},
		{name: "random", c: Config{Autoupdatable: true, StepType: Random, Min: f(-1), Max: f(1), Period: 86400}, t: param.Time},
		{name: "string dataset", c: Config{Autoupdatable: true, Dataset: "a|b|", Period: 1}, t: param.String},
		{name: "boolean dataset", c: Config{Autoupdatable: true, Dataset: "true|false|0|1", Period: 1}, t: param.Boolean},
		{name: "opaque dataset", c: Config{Autoupdatable: true, Dataset: "AQID|", Period: 1}, t: param.Opaque},
		{name: "integer dataset", c: Config{Autoupdatable: true, Dataset: "1| 2 |3.0", Period: 1}, t: param.Integer},
		{name: "dataset at the limit", c: Config{Autoupdatable: true, Dataset: strings.Repeat("1|", MaxDatasetValues-1) + "1", Period: 1}, t: param.Integer},
		{name: "dataset overrides integer step check", c: Config{Autoupdatable: true, Dataset: "1|2", Step: f(0.5), Period: 1}, t: param.Integer},

		{name: "unknown type", c: Config{}, t: "DATE", field: "type", msg: `parameter type "DATE" does not support automatic updates`},
		{name: "bad stepType", c: Config{StepType: "UP"}, t: param.Integer, field: "stepType", msg: "stepType must be one of INCREASE, DECREASE, RANDOM"},
		{name: "lowercase stepType", c: Config{StepType: "increase"}, t: param.Integer, field: "stepType", msg: "stepType must be one of INCREASE, DECREASE, RANDOM"},
		{name: "period zero when on", c: Config{Autoupdatable: true}, t: param.Integer, field: "period", msg: "period must be at least 1 when autoupdatable is true"},
		{name: "period negative when off", c: Config{Period: -1}, t: param.Integer, field: "period", msg: "period must not be negative"},
		{name: "period too long", c: Config{Autoupdatable: true, Period: 86401}, t: param.Integer, field: "period", msg: "period must not exceed 86400"},
		{name: "min not finite", c: Config{Min: f(math.NaN())}, t: param.Float, field: "min", msg: "min must be a finite number"},
		{name: "max not finite", c: Config{Max: f(math.Inf(1))}, t: param.Float, field: "max", msg: "max must be a finite number"},
		{name: "min above max", c: Config{Autoupdatable: true, Period: 1, Min: f(2), Max: f(1)}, t: param.Integer, field: "min", msg: "min must not exceed max"},
		{name: "min above max when off", c: Config{Min: f(2), Max: f(1)}, t: param.Integer, field: "min", msg: "min must not exceed max"},
		{name: "step zero", c: Config{Step: f(0)}, t: param.Float, field: "step", msg: "step must be positive"},
		{name: "step negative", c: Config{Autoupdatable: true, Period: 1, Step: f(-1)}, t: param.Float, field: "step", msg: "step must be positive"},
		{name: "integer step below 1", c: Config{Autoupdatable: true, Period: 1, Step: f(0.5)}, t: param.Integer, field: "step", msg: "step must be at least 1 for an INTEGER parameter"},
		{name: "time step below 1", c: Config{Step: f(0.5)}, t: param.Time, field: "step", msg: "step must be at least 1 for a TIME parameter"},
		{name: "deviation negative", c: Config{Deviation: -0.1}, t: param.Float, field: "deviation", msg: "deviation must not be negative"},
		{name: "deviation not finite", c: Config{Deviation: math.NaN()}, t: param.Float, field: "deviation", msg: "deviation must be a finite number"},
		{name: "dataset too long", c: Config{Dataset: strings.Repeat("1|", MaxDatasetValues) + "1"}, t: param.Integer, field: "dataset", msg: "dataset must have at most 1000 values, not 1001"},
		{name: "dataset not a number for integer", c: Config{Dataset: "1|x"}, t: param.Integer, field: "dataset", msg: `dataset value "x" is not a number for an INTEGER parameter`},
		{name: "dataset not an integer", c: Config{Dataset: "1.5"}, t: param.Integer, field: "dataset", msg: `dataset value "1.5" is not an integer for an INTEGER parameter`},
		{name: "dataset empty value for integer", c: Config{Dataset: "1||2"}, t: param.Integer, field: "dataset", msg: `dataset value "" is not a number for an INTEGER parameter`},
		{name: "dataset not a number for float", c: Config{Dataset: "NaN"}, t: param.Float, field: "dataset", msg: `dataset value "NaN" is not a number for a FLOAT parameter`},
		{name: "dataset not a number for time", c: Config{Dataset: "soon"}, t: param.Time, field: "dataset", msg: `dataset value "soon" is not a number for a TIME parameter`},
		{name: "dataset not a boolean", c: Config{Dataset: "true|yes"}, t: param.Boolean, field: "dataset", msg: `dataset value "yes" is not a boolean for a BOOLEAN parameter`},
		{name: "dataset not base64", c: Config{Dataset: "AQID|!!"}, t: param.Opaque, field: "dataset", msg: `dataset value "!!" is not base64 for an OPAQUE parameter`},
		{name: "string without dataset", c: Config{Autoupdatable: true, Period: 1, Min: f(0)}, t: param.String, field: "dataset", msg: "numeric fields need a numeric parameter; use dataset for STRING/BOOLEAN/OPAQUE"},
		{name: "boolean without dataset", c: Config{Autoupdatable: true, Period: 1}, t: param.Boolean, field: "dataset", msg: "numeric fields need a numeric parameter; use dataset for STRING/BOOLEAN/OPAQUE"},
		{name: "opaque without dataset", c: Config{Autoupdatable: true, Period: 1}, t: param.Opaque, field: "dataset", msg: "numeric fields need a numeric parameter; use dataset for STRING/BOOLEAN/OPAQUE"},
		{name: "deviation on a string dataset", c: Config{Autoupdatable: true, Period: 1, Dataset: "a|b", Deviation: 1}, t: param.String, field: "deviation", msg: "deviation needs a numeric parameter, not STRING"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Validate(tt.t)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Validate = %v (%T), want *FieldError", err, err)
			}
			if fe.Field != tt.field || err.Error() != tt.msg {
				t.Errorf("Validate = %q (field %q), want %q (field %q)", err, fe.Field, tt.msg, tt.field)
			}
			if !strings.Contains(fe.Msg, tt.field) {
				t.Errorf("message %q does not name the field %q", fe.Msg, tt.field)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("Validate error %v does not wrap ErrInvalid", err)
			}
		})
	}
}

// TestNextSequence feeds each result back as the next current value.
func TestNextSequence(t *testing.T) {
	tests := []struct {
		name  string
		c     Config
		t     param.Type
		start string
		want  []string
	}{
		{name: "increase wraps to min", c: Config{Min: f(0), Max: f(10), Step: f(3)}, t: param.Integer, start: "4", want: []string{"7", "10", "0", "3"}},
		{name: "increase named", c: Config{StepType: Increase, Min: f(0), Max: f(10), Step: f(4)}, t: param.Integer, start: "5", want: []string{"9", "0", "4"}},
		{name: "decrease wraps to max", c: Config{StepType: Decrease, Min: f(0), Max: f(10), Step: f(3)}, t: param.Integer, start: "4", want: []string{"1", "10", "7"}},
		{name: "increase from above max wraps", c: Config{Min: f(0), Max: f(10)}, t: param.Integer, start: "50", want: []string{"0", "1"}},
		{name: "decrease from above max clamps", c: Config{StepType: Decrease, Min: f(0), Max: f(10)}, t: param.Integer, start: "50", want: []string{"10", "9"}},
		{name: "default step 1 unbounded", c: Config{}, t: param.Integer, start: "-1", want: []string{"0", "1", "2"}},
		{name: "decrease unbounded", c: Config{StepType: Decrease, Step: f(5)}, t: param.Integer, start: "3", want: []string{"-2", "-7"}},
		{name: "only max clamps", c: Config{Max: f(2)}, t: param.Integer, start: "1", want: []string{"2", "2"}},
		{name: "only min clamps decrease", c: Config{StepType: Decrease, Min: f(0), Step: f(2)}, t: param.Float, start: "3", want: []string{"1", "0", "0"}},
		{name: "float without noise", c: Config{Step: f(0.1)}, t: param.Float, start: "0.1", want: []string{"0.2", "0.3", "0.4"}},
		{name: "float wraps", c: Config{Min: f(-1.5), Max: f(1.5), Step: f(1.25)}, t: param.Float, start: "0", want: []string{"1.25", "-1.5", "-0.25"}},
		{name: "integer step rounded", c: Config{Step: f(1.4)}, t: param.Integer, start: "1", want: []string{"2", "3"}},
		{name: "integer rounding stays within fractional bounds", c: Config{Min: f(0.5), Max: f(3.5), Step: f(1)}, t: param.Integer, start: "3", want: []string{"1", "2", "3", "1"}},
		{name: "time", c: Config{Step: f(60)}, t: param.Time, start: "1700000000", want: []string{"1700000060", "1700000120"}},
		{name: "unparsable starts at min", c: Config{Min: f(5), Max: f(9)}, t: param.Integer, start: "abc", want: []string{"5", "6"}},
		{name: "unparsable decrease starts at min", c: Config{StepType: Decrease, Min: f(5), Max: f(9)}, t: param.Integer, start: "", want: []string{"5", "9"}},
		{name: "unparsable without min starts at max", c: Config{Max: f(7)}, t: param.Float, start: "x", want: []string{"7"}},
		{name: "unparsable unbounded starts at 0", c: Config{}, t: param.Float, start: "x", want: []string{"0", "1"}},
		{name: "dataset cycles", c: Config{Dataset: "1|2|3"}, t: param.Integer, start: "", want: []string{"1", "2", "3", "1", "2"}},
		{name: "dataset continues after an outside value", c: Config{Dataset: "1|2|3"}, t: param.Integer, start: "2", want: []string{"3", "1"}},
		{name: "dataset value not in set restarts", c: Config{Dataset: "1|2|3"}, t: param.Integer, start: "7", want: []string{"1", "2"}},
		{name: "dataset normalised", c: Config{Dataset: " 1 |02|3.0"}, t: param.Integer, start: "x", want: []string{"1", "2", "3", "1"}},
		{name: "boolean dataset", c: Config{Dataset: "true|false"}, t: param.Boolean, start: "false", want: []string{"true", "false", "true"}},
		{name: "boolean dataset from 1", c: Config{Dataset: "true|false"}, t: param.Boolean, start: "1", want: []string{"false", "true"}},
		{name: "boolean dataset unparsable", c: Config{Dataset: "true|false"}, t: param.Boolean, start: "maybe", want: []string{"true", "false"}},
		{name: "string dataset with duplicates", c: Config{Dataset: "a|a|b"}, t: param.String, start: "", want: []string{"a", "a", "b", "a", "a", "b"}},
		{name: "string dataset keeps spaces", c: Config{Dataset: " x|y "}, t: param.String, start: "", want: []string{" x", "y ", " x"}},
		{name: "dataset overrides random step type", c: Config{Dataset: "5|6|7", StepType: Random, RandomizeStepType: true, Min: f(100)}, t: param.Integer, start: "", want: []string{"5", "6", "7", "5"}},
		{name: "opaque dataset", c: Config{Dataset: "AQID|BAUG"}, t: param.Opaque, start: "", want: []string{"AQID", "BAUG", "AQID"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewGenerator(tt.c, tt.t, 1)
			cur := tt.start
			for i, want := range tt.want {
				got, err := g.Next(cur)
				if err != nil {
					t.Fatalf("step %d: Next(%q): %v", i, cur, err)
				}
				if got != want {
					t.Fatalf("step %d: Next(%q) = %q, want %q", i, cur, got, want)
				}
				cur = got
			}
		})
	}
}

// draws calls Next n times from current (not feeding results back) and
// returns the results parsed as numbers.
func draws(t *testing.T, g *Generator, current string, n int) []float64 {
	t.Helper()
	out := make([]float64, n)
	for i := range out {
		s, err := g.Next(current)
		if err != nil {
			t.Fatalf("Next(%q): %v", current, err)
		}
		if out[i], err = strconv.ParseFloat(s, 64); err != nil {
			t.Fatalf("Next(%q) = %q, not a number", current, s)
		}
	}
	return out
}

func TestNextDistribution(t *testing.T) {
	const n = 2000
	tests := []struct {
		name      string
		c         Config
		t         param.Type
		current   string
		lo, hi    float64 // every draw within [lo, hi]
		spreadLo  float64 // some draw below this
		spreadHi  float64 // some draw above this
		integers  bool
		onlyThese []float64 // if set, every draw is one of these, and each appears
	}{
		{name: "random float within bounds", c: Config{StepType: Random, Min: f(-2), Max: f(3)}, t: param.Float, current: "0", lo: -2, hi: 3, spreadLo: -1.9, spreadHi: 2.9},
		{name: "random integer covers bounds", c: Config{StepType: Random, Min: f(0), Max: f(4)}, t: param.Integer, current: "0", onlyThese: []float64{0, 1, 2, 3, 4}, integers: true},
		{name: "random without bounds is current +- step", c: Config{StepType: Random, Step: f(2)}, t: param.Float, current: "10", lo: 8, hi: 12, spreadLo: 8.1, spreadHi: 11.9},
		{name: "random with deviation stays within bounds", c: Config{StepType: Random, Min: f(0), Max: f(1), Deviation: 5}, t: param.Float, current: "0.5", lo: 0, hi: 1, spreadLo: 0.1, spreadHi: 0.9},
		{name: "increase deviation bounds", c: Config{Step: f(1), Deviation: 0.25}, t: param.Float, current: "10", lo: 10.75, hi: 11.25, spreadLo: 10.8, spreadHi: 11.2},
		{name: "decrease deviation bounds", c: Config{StepType: Decrease, Step: f(2), Deviation: 0.5}, t: param.Float, current: "0", lo: -2.5, hi: -1.5, spreadLo: -2.4, spreadHi: -1.6},
		{name: "increase deviation kept inside min max", c: Config{Min: f(0), Max: f(10), Step: f(1), Deviation: 3}, t: param.Float, current: "0", lo: 0, hi: 10, spreadLo: 0.1, spreadHi: 3.5},
		{name: "integer deviation rounded", c: Config{Step: f(1), Deviation: 0.4}, t: param.Integer, current: "5", onlyThese: []float64{6}, integers: true},
		{name: "integer deviation spread", c: Config{Step: f(10), Deviation: 2}, t: param.Integer, current: "0", onlyThese: []float64{8, 9, 10, 11, 12}, integers: true},
		{name: "randomize step type is current +- step", c: Config{Step: f(2), RandomizeStepType: true}, t: param.Integer, current: "100", onlyThese: []float64{98, 102}, integers: true},
		{name: "randomize overrides random", c: Config{StepType: Random, Step: f(0.5), RandomizeStepType: true}, t: param.Float, current: "1", onlyThese: []float64{0.5, 1.5}},
		{name: "numeric dataset with deviation", c: Config{Dataset: "10", Deviation: 1}, t: param.Float, current: "10", lo: 9, hi: 11, spreadLo: 9.1, spreadHi: 10.9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := draws(t, NewGenerator(tt.c, tt.t, 42), tt.current, n)
			seen := map[float64]bool{}
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, v := range got {
				seen[v] = true
				lo, hi = math.Min(lo, v), math.Max(hi, v)
				if tt.integers && v != math.Trunc(v) {
					t.Fatalf("draw %v is not an integer", v)
				}
			}
			if tt.onlyThese != nil {
				if len(seen) != len(tt.onlyThese) {
					t.Errorf("draws took values %v, want exactly %v", seen, tt.onlyThese)
				}
				for _, v := range tt.onlyThese {
					if !seen[v] {
						t.Errorf("value %v never drawn (got %v)", v, seen)
					}
				}
				return
			}
			if lo < tt.lo || hi > tt.hi {
				t.Errorf("draws span [%v, %v], want within [%v, %v]", lo, hi, tt.lo, tt.hi)
			}
			if lo >= tt.spreadLo || hi <= tt.spreadHi {
				t.Errorf("draws span [%v, %v], want below %v and above %v (too little spread)", lo, hi, tt.spreadLo, tt.spreadHi)
			}
		})
	}
}

func TestNextDeterministic(t *testing.T) {
	c := Config{StepType: Random, Min: f(0), Max: f(1000)}
	a, b, other := NewGenerator(c, param.Float, 7), NewGenerator(c, param.Float, 7), NewGenerator(c, param.Float, 8)
	same := true
	for range 20 {
		va, _ := a.Next("0")
		vb, _ := b.Next("0")
		vo, _ := other.Next("0")
		if va != vb {
			t.Fatalf("same seed gave %q and %q", va, vb)
		}
		same = same && va == vo
	}
	if same {
		t.Errorf("seeds 7 and 8 gave the same sequence")
	}
}

func TestNextInvalid(t *testing.T) {
	tests := []struct {
		name string
		c    Config
		t    param.Type
	}{
		{name: "string without dataset", c: Config{}, t: param.String},
		{name: "bad dataset", c: Config{Dataset: "1|x"}, t: param.Integer},
		{name: "min above max", c: Config{Min: f(2), Max: f(1)}, t: param.Float},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewGenerator(tt.c, tt.t, 1).Next("1")
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("Next error = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestNextOverflow(t *testing.T) {
	_, err := NewGenerator(Config{Step: f(1e300)}, param.Integer, 1).Next("1")
	if !errors.Is(err, param.ErrValue) {
		t.Errorf("Next error = %v, want param.ErrValue", err)
	}
}

// TestResolvedRunsAsOpen: what GET answers for open fields (Resolved) is
// what the generator uses, so posting it back changes no value produced.
func TestResolvedRunsAsOpen(t *testing.T) {
	tests := []struct {
		name  string
		c     Config
		t     param.Type
		start string
	}{
		{"never configured", Config{}, param.Integer, "5"},
		{"decrease unbounded", Config{StepType: Decrease, Step: f(5)}, param.Integer, "3"},
		{"random without bounds", Config{StepType: Random, Step: f(2)}, param.Float, "10"},
		{"random with only min", Config{StepType: Random, Min: f(0)}, param.Float, "10"},
		{"randomized with deviation", Config{RandomizeStepType: true, Deviation: 0.5, Max: f(50)}, param.Float, "1"},
		{"unparsable unbounded", Config{}, param.Float, "x"},
		{"time", Config{Step: f(60)}, param.Time, "1700000000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.c.Resolved()
			if r.Min == nil || r.Max == nil || r.Step == nil || r.StepType == "" {
				t.Fatalf("Resolved left a field open: %+v", r)
			}
			if err := r.Validate(tc.t); err != nil {
				t.Fatalf("Resolved config invalid: %v", err)
			}
			open, resolved := NewGenerator(tc.c, tc.t, 7), NewGenerator(r, tc.t, 7)
			a, b := tc.start, tc.start
			for i := range 50 {
				var err error
				if a, err = open.Next(a); err != nil {
					t.Fatal(err)
				}
				if b, err = resolved.Next(b); err != nil {
					t.Fatal(err)
				}
				if a != b {
					t.Fatalf("step %d: open config gives %q, resolved %q", i, a, b)
				}
			}
		})
	}
	if r := (Config{Min: f(-3), Max: f(4), Step: f(2), StepType: Random}).Resolved(); *r.Min != -3 || *r.Max != 4 || *r.Step != 2 || r.StepType != Random {
		t.Errorf("Resolved changed set fields: %+v", r)
	}
}
