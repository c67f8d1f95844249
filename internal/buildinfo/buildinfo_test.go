package buildinfo

import (
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"
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
	// A test binary is built like `go build` builds: no linker flags, so
	// the build time must still be a timestamp.
	if _, err := time.Parse(time.RFC3339, i.BuildTime); err != nil {
		t.Errorf("build time without linker flags %q is not a timestamp: %v", i.BuildTime, err)
	}
}

// TestBuildTimeSources: the linker value wins, then the VCS time the
// toolchain stamped, then the executable's modification time; only when
// all are missing is it unknown.
func TestBuildTimeSources(t *testing.T) {
	vcs := func(settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) { return &debug.BuildInfo{Settings: settings}, true }
	}
	noInfo := func() (*debug.BuildInfo, bool) { return nil, false }
	mtime := time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("CET", 3600))
	exe := func() (time.Time, bool) { return mtime, true }
	noExe := func() (time.Time, bool) { return time.Time{}, false }
	tests := []struct {
		name   string
		linker string
		read   func() (*debug.BuildInfo, bool)
		exe    func() (time.Time, bool)
		want   string
	}{
		{"make", "2026-11-21T07:00:00Z", vcs(debug.BuildSetting{Key: "vcs.time", Value: "2026-01-01T00:00:00Z"}), exe, "2026-11-21T07:00:00Z"},
		{"go build in a git tree", "", vcs(debug.BuildSetting{Key: "vcs.time", Value: "2026-01-01T00:00:00Z"}), exe, "2026-01-01T00:00:00Z"},
		{"go build -buildvcs=false", "", vcs(), exe, "2026-03-04T04:06:07Z"},
		{"no build info", "", noInfo, exe, "2026-03-04T04:06:07Z"},
		{"nothing at all", "", noInfo, noExe, "unknown"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := resolve("", "", tc.linker, tc.read, tc.exe).BuildTime; got != tc.want {
				t.Errorf("BuildTime = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPlainGoBuild builds a real binary with `go build`, without linker
// flags and without VCS stamping, and checks that it reports a build time.
func TestPlainGoBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(t.TempDir(), "printbuildtime")
	build := exec.Command("go", "build", "-buildvcs=false", "-o", bin, "./testdata/printbuildtime")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatalf("running the binary: %v", err)
	}
	if _, err := time.Parse(time.RFC3339, string(out)); err != nil {
		t.Fatalf("a plain go build reports build time %q: %v", out, err)
	}
}
