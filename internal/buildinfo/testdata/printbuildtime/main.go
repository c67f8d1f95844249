// Command printbuildtime prints the build time buildinfo resolves; the
// package's tests build it with a plain `go build`.
package main

import (
	"fmt"

	"cpesuite/internal/buildinfo"
)

func main() { fmt.Print(buildinfo.Get().BuildTime) }
