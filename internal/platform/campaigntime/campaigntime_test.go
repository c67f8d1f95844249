package campaigntime_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/platform/campaigntime"
	"cpesuite/internal/platform/config"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in     string
		factor float64
		bad    string // part of the error, empty when the value is good
	}{
		{in: "1", factor: 1},
		{in: " 60 ", factor: 60},
		{in: "0.5", factor: 0.5},
		{in: "1e3", factor: 1000},
		{in: "86400", factor: 86400},
		{in: "", bad: "empty value"},
		{in: "   ", bad: "empty value"},
		{in: "fast", bad: `got "fast"`},
		{in: "60s", bad: `got "60s"`},
		{in: "0", bad: "positive"},
		{in: "-60", bad: "positive"},
		{in: "NaN", bad: "positive"},
		{in: "+Inf", bad: "positive"},
		{in: "86401", bad: "at most 86400"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, err := campaigntime.Parse(tt.in)
			if tt.bad != "" {
				var ve *config.VarError
				if !errors.As(err, &ve) || ve.Var != campaigntime.EnvVar || !strings.Contains(err.Error(), tt.bad) {
					t.Fatalf("Parse(%q) = %v, want a config error naming %s with %q", tt.in, err, campaigntime.EnvVar, tt.bad)
				}
				return
			}
			if err != nil || s.Factor() != tt.factor {
				t.Fatalf("Parse(%q) = %v, %v; want factor %v", tt.in, s.Factor(), err, tt.factor)
			}
		})
	}
}

func TestZeroValueIsProduction(t *testing.T) {
	var s campaigntime.Scale
	if s.Factor() != 1 || s.Minutes(15) != 15*time.Minute || s.String() != "1" {
		t.Fatalf("zero Scale: factor %v, 15 min -> %v, %q; want 1, 15m, \"1\"", s.Factor(), s.Minutes(15), s.String())
	}
}

func TestDurations(t *testing.T) {
	sixty, err := campaigntime.New(60)
	if err != nil {
		t.Fatal(err)
	}
	half, err := campaigntime.New(0.5)
	if err != nil {
		t.Fatal(err)
	}
	max, err := campaigntime.New(campaigntime.MaxFactor)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		got  time.Duration
		want time.Duration
	}{
		{"60: a minute lasts a second", sixty.Minutes(1), time.Second},
		{"60: an hour lasts a minute", sixty.Hours(1), time.Minute},
		{"60: stop-grace 900 s lasts 15 s", sixty.Seconds(900), 15 * time.Second},
		{"60: 10-minute test", sixty.Minutes(10), 10 * time.Second},
		{"0.5 slows down", half.Minutes(1), 2 * time.Minute},
		{"max: a day lasts a second", max.Hours(24), time.Second},
		{"zero stays zero", sixty.Minutes(0), 0},
		{"negative passes through", sixty.Duration(-time.Second), -time.Second},
		{"positive never rounds to zero", max.Duration(time.Nanosecond), time.Nanosecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Fatalf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name   string
		env    map[string]string
		factor float64
		bad    bool
	}{
		{"unset is 1", map[string]string{}, 1, false},
		{"set", map[string]string{campaigntime.EnvVar: "60"}, 60, false},
		{"bad", map[string]string{campaigntime.EnvVar: "-1"}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := campaigntime.FromEnv(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if tt.bad {
				if err == nil || !strings.Contains(err.Error(), campaigntime.EnvVar) {
					t.Fatalf("FromEnv = %v, want an error naming %s", err, campaigntime.EnvVar)
				}
				return
			}
			if err != nil || s.Factor() != tt.factor {
				t.Fatalf("FromEnv = %v, %v; want %v", s.Factor(), err, tt.factor)
			}
		})
	}
}

// TestRegisterFlags holds the variable to the config set's rules: the
// environment and the flag both reach it, and a bad value fails the parse
// with one line naming the variable the operator has to fix.
func TestRegisterFlags(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		factor  float64
		errWant string
	}{
		{"default", nil, nil, 1, ""},
		{"environment", map[string]string{campaigntime.EnvVar: "60"}, nil, 60, ""},
		{"flag wins", map[string]string{campaigntime.EnvVar: "60"}, []string{"--" + campaigntime.Flag, "120"}, 120, ""},
		{"bad environment", map[string]string{campaigntime.EnvVar: "0"}, nil, 0, campaigntime.EnvVar + `: invalid value "0": must be a positive number`},
		{"bad flag", nil, []string{"--" + campaigntime.Flag, "x"}, 0, "--" + campaigntime.Flag},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s campaigntime.Scale
			set := config.NewSet("test", func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			s.RegisterFlags(set)
			_, err := set.Parse(tt.args)
			if tt.errWant != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errWant) {
					t.Fatalf("Parse = %v, want an error containing %q", err, tt.errWant)
				}
				return
			}
			if err != nil || s.Factor() != tt.factor {
				t.Fatalf("Parse = %v (factor %v), want factor %v", err, s.Factor(), tt.factor)
			}
		})
	}
}
