// Package buildinfo reports what binary is running. The Makefile sets the
// variables with -ldflags -X; a plain `go build`, `go install` or `go run`
// falls back to what the Go toolchain embedded and, for the build time,
// to the executable file itself.
package buildinfo

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"time"
)

// Set by the linker: -X cpesuite/internal/buildinfo.Version=... etc.
var (
	Version   = ""
	Commit    = ""
	BuildTime = ""
)

// Info is the resolved build information.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	BuildTime string `json:"buildTime"`
	GoVersion string `json:"goVersion"`
}

// Get resolves the build information, preferring linker-set values.
func Get() Info {
	return resolve(Version, Commit, BuildTime, debug.ReadBuildInfo, executableTime)
}

// resolve is Get with its sources passed in, so that each fallback can be
// tested without rebuilding the binary.
func resolve(version, commit, buildTime string, read func() (*debug.BuildInfo, bool), exeTime func() (time.Time, bool)) Info {
	info := Info{Version: version, Commit: commit, BuildTime: buildTime, GoVersion: runtime.Version()}
	if bi, ok := read(); ok {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if info.Commit == "" {
					info.Commit = s.Value
				}
			case "vcs.time":
				if info.BuildTime == "" {
					info.BuildTime = s.Value
				}
			}
		}
	}
	if info.BuildTime == "" {
		// Without the Makefile and without VCS stamping (-buildvcs=false,
		// a module download, a tree without .git) the executable's
		// modification time is when the toolchain linked it: go build and
		// go install write the file last.
		if t, ok := exeTime(); ok {
			info.BuildTime = t.UTC().Format(time.RFC3339)
		}
	}
	for _, p := range []*string{&info.Version, &info.Commit, &info.BuildTime} {
		if *p == "" {
			*p = "unknown"
		}
	}
	if info.Version == "unknown" {
		info.Version = "dev"
	}
	return info
}

// executableTime is the modification time of the running executable.
func executableTime() (time.Time, bool) {
	exe, err := os.Executable()
	if err != nil {
		return time.Time{}, false
	}
	st, err := os.Stat(exe)
	if err != nil || st.ModTime().IsZero() {
		return time.Time{}, false
	}
	return st.ModTime(), true
}

// String renders the one-line form printed by `cpesuite version`.
func (i Info) String() string {
	return fmt.Sprintf("cpesuite %s (commit %s, built %s, %s)", i.Version, i.Commit, i.BuildTime, i.GoVersion)
}
