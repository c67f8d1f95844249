// Package campaigntime scales campaign durations for tests and demos.
//
// The campaign specification counts in hours and minutes: a campaign over
// two hours with ten-minute tests cannot run inside a test suite. Both
// sides of a campaign, the campaign service and the ACS campaign
// executor, read one variable, CPESUITE_CAMPAIGN_TIME_SCALE, and turn
// every specification duration into wall-clock time through it. With 60 a
// minute lasts a second and an hour a minute; production runs with 1.
//
// The wire between the two sides always carries specification units
// (minutes, hours, whole seconds of stop-grace), never scaled ones, so a
// stored ACTIVATE means the same thing whatever scale re-sends it; each
// side scales when it arms a timer. Both sides must therefore run with the
// same scale, which `cpesuite up` guarantees by reading the variable once.
package campaigntime

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"cpesuite/internal/platform/config"
)

// EnvVar is the one variable both sides read.
const EnvVar = "CPESUITE_CAMPAIGN_TIME_SCALE"

// Flag is the command-line form of EnvVar.
const Flag = "campaign-time-scale"

// MaxFactor bounds the scale: at 86400 a day lasts a second, and shorter
// wall-clock durations would fall below what timers on a loaded machine
// can tell apart.
const MaxFactor = 86400

// Scale divides specification durations. The zero value is the production
// scale 1, so a Config that never registered the variable behaves as in
// production.
type Scale struct {
	factor float64
}

// Factor returns how many times faster than specified campaign time runs.
func (s Scale) Factor() float64 {
	if s.factor == 0 {
		return 1
	}
	return s.factor
}

// New returns the scale factor f, refusing what Parse refuses.
func New(f float64) (Scale, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
		return Scale{}, config.Errorf(EnvVar, "must be a positive number, got %v", f)
	}
	if f > MaxFactor {
		return Scale{}, config.Errorf(EnvVar, "must be at most %d (a day lasting a second), got %v", MaxFactor, f)
	}
	return Scale{factor: f}, nil
}

// Parse reads a factor such as "1", "60" or "0.5". Errors are
// config.VarError values naming EnvVar.
func Parse(v string) (Scale, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return Scale{}, config.Errorf(EnvVar, "must be a positive number such as 1 or 60, got an empty value")
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return Scale{}, config.Errorf(EnvVar, "must be a positive number such as 1 or 60, got %q", v)
	}
	return New(f)
}

// FromEnv reads EnvVar through lookup (os.LookupEnv in production); unset
// means 1.
func FromEnv(lookup func(string) (string, bool)) (Scale, error) {
	v, ok := lookup(EnvVar)
	if !ok {
		return Scale{}, nil
	}
	return Parse(v)
}

// RegisterFlags declares the variable on a config set. The process
// registers it once and hands the same Scale to every module that runs
// campaign time, which is what keeps both sides in step.
func (s *Scale) RegisterFlags(set *config.Set) {
	set.Func(config.Var{
		Flag:    Flag,
		Env:     EnvVar,
		Default: "1",
		Usage:   "campaign time scale for tests and demos, read by the campaign service and the ACS executor: 60 makes a minute last a second and an hour a minute; production 1",
	}, func(v string) error {
		parsed, err := Parse(v)
		if err != nil {
			// The set names the variable itself; keep only the reason.
			if ve, ok := errors.AsType[*config.VarError](err); ok {
				return errors.New(ve.Msg)
			}
			return err
		}
		*s = parsed
		return nil
	})
}

// Duration turns a specification duration into wall-clock time. It never
// returns 0 for a positive input: a scaled interval that rounded to zero
// would make a timer spin.
func (s Scale) Duration(d time.Duration) time.Duration {
	if d <= 0 {
		return d
	}
	out := time.Duration(math.Round(float64(d) / s.Factor()))
	return max(out, time.Nanosecond)
}

// Minutes turns n specification minutes (singleTestDuration,
// batchInterval) into wall-clock time.
func (s Scale) Minutes(n int64) time.Duration { return s.Duration(time.Duration(n) * time.Minute) }

// Hours turns n specification hours (totalTestDuration) into wall-clock
// time.
func (s Scale) Hours(n int64) time.Duration { return s.Duration(time.Duration(n) * time.Hour) }

// Seconds turns n specification seconds (config.retry.stopDrainGraceSec)
// into wall-clock time.
func (s Scale) Seconds(n int64) time.Duration { return s.Duration(time.Duration(n) * time.Second) }

// String renders the factor as it would be set.
func (s Scale) String() string { return strconv.FormatFloat(s.Factor(), 'g', -1, 64) }
