package buildinfo

import (
	"strings"
	"testing"
)

func TestGet(t *testing.T) {
	old := [3]string{Version, Commit, BuildTime}
	t.Cleanup(func() { Version, Commit, BuildTime = old[0], old[1], old[2] })

	Version, Commit, BuildTime = "v1.2.3", "abc123", "2026-11-21T07:00:00Z"
	got := Get().String()
	for _, want := range []string{"v1.2.3", "abc123", "2026-11-21T07:00:00Z", "go1."} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}

	Version, Commit, BuildTime = "", "", ""
	i := Get()
	if i.Version == "" || i.Commit == "" || i.BuildTime == "" {
		t.Errorf("fallbacks must never be empty: %+v", i)
	}
}
