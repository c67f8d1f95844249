// Package buildinfo reports what binary is running. The Makefile sets the
// variables with -ldflags -X; a plain `go build` or `go run` falls back to
// what the Go toolchain embedded.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
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
	info := Info{Version: Version, Commit: Commit, BuildTime: BuildTime, GoVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
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

// String renders the one-line form printed by `cpesuite version`.
func (i Info) String() string {
	return fmt.Sprintf("cpesuite %s (commit %s, built %s, %s)", i.Version, i.Commit, i.BuildTime, i.GoVersion)
}
