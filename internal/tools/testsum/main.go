// Command testsum reads the output of `go test -json` on its standard input,
// shows the progress plain `go test` would show (one ok/FAIL line per
// package, the output of every failed test, build errors, panics) and ends
// with a summary that both people and CI tools can read:
//
//	812 passed, 1 failed, 2 skipped
//	FAIL cpesuite/internal/x TestBroken
//	SKIP cpesuite/internal/y TestChromium: ui_test.go:31: SKIPPED, NOT TESTED: Chromium ...
//
// Tests and subtests count once each. A package that fails without a failing
// test (a build failure, a panic in TestMain, a timeout, a binary that exits
// non-zero) counts as one failure and is listed as such, so that the run never
// looks green when the go command did not.
//
// The exit status is 1 when anything failed, when the input held no test
// events at all, or when CPESUITE_REQUIRE_SERVICES=1 and any test was skipped:
// CI demands that every test really ran.
//
// Usage (the Makefile's test target):
//
//	set -o pipefail; go test -json -race -count=1 ./... 2>&1 | testsum
package main

import (
	"fmt"
	"os"
)

func main() {
	s := newSummarizer(os.Stdout, os.Getenv("CPESUITE_REQUIRE_SERVICES") == "1")
	code, err := s.run(os.Stdin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testsum: %v\n", err)
		os.Exit(2)
	}
	os.Exit(code)
}
