package app

import (
	"context"
	"strings"
	"testing"
)

// TestHelpOffersOnlyBuiltTargets: `help up` and `help run` list the address
// flags of built targets only, and a flag without an environment variable
// (--only) shows no empty "env ," (issue 19).
func TestHelpOffersOnlyBuiltTargets(t *testing.T) {
	built := newModules(nil, nil)
	for _, mode := range []string{"up", "run"} {
		code, out, _ := runCLI(context.Background(), []string{"help", mode}, nil)
		if code != 0 {
			t.Fatalf("help %s: exit %d", mode, code)
		}
		if strings.Contains(out, "env ,") {
			t.Errorf("help %s prints an empty env name:\n%s", mode, out)
		}
		for _, l := range Listeners {
			if got, want := strings.Contains(out, "--"+l.Flag()+" "), built.IsTarget(l.Target); got != want {
				t.Errorf("help %s lists --%s = %v, want %v (built: %v)", mode, l.Flag(), got, want, want)
			}
		}
		if mode == "up" && !strings.Contains(out, `--only (default "")`) {
			t.Errorf("help up lacks the --only line:\n%s", out)
		}
	}
}

// TestPlannedTargetAddressStillChecked: hiding a planned target's flag from
// help does not stop a malformed value from failing start-up.
func TestPlannedTargetAddressStillChecked(t *testing.T) {
	code, _, stderr := runCLI(context.Background(), []string{"up", "--only", "speedtest"}, map[string]string{"CPESUITE_NBI_ADDR": "nonsense", "CPESUITE_DATA_DIR": t.TempDir()})
	if code != exitUsage || !strings.Contains(stderr, "CPESUITE_NBI_ADDR") {
		t.Fatalf("exit %d, want %d naming CPESUITE_NBI_ADDR; stderr:\n%s", code, exitUsage, stderr)
	}
}
