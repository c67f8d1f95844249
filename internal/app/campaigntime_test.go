package app

import (
	"context"
	"strings"
	"testing"

	"cpesuite/internal/platform/campaigntime"
	"cpesuite/internal/platform/config"
)

// TestCampaignTimeScaleReachesBothSides holds CPESUITE_CAMPAIGN_TIME_SCALE
// to its promise: read once, the same scale for the campaign service and
// the ACS, and a bad value refused before anything starts.
func TestCampaignTimeScaleReachesBothSides(t *testing.T) {
	tests := []struct {
		name   string
		env    map[string]string
		args   []string
		factor float64
	}{
		{"default", nil, nil, 1},
		{"environment", map[string]string{campaigntime.EnvVar: "60"}, nil, 60},
		{"flag", nil, []string{"--campaign-time-scale=3600"}, 3600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cfg Config
			lookup := envMap(tt.env)
			set := config.NewSet("test", lookup)
			cfg.RegisterFlags(set, lookup)
			if _, err := set.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			if cfg.FCC.TimeScale.Factor() != tt.factor || cfg.ACS.TimeScale.Factor() != tt.factor {
				t.Fatalf("fcc %v, acs %v; want both %v", cfg.FCC.TimeScale, cfg.ACS.TimeScale, tt.factor)
			}
		})
	}
	for _, bad := range []string{"0", "-60", "fast", "1e9"} {
		t.Run("refuses "+bad, func(t *testing.T) {
			code, _, stderr := runCLI(context.Background(), []string{"up"}, map[string]string{campaigntime.EnvVar: bad, "CPESUITE_DATA_DIR": t.TempDir()})
			if code != 2 || !strings.Contains(stderr, campaigntime.EnvVar+": invalid value") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Fatalf("exit %d, stderr %q; want 2 and one line naming %s", code, stderr, campaigntime.EnvVar)
			}
		})
	}
}
