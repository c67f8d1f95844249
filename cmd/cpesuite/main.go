// Command cpesuite runs the cpesuite platform: every target in one process
// (`cpesuite up`) or one target as its own service (`cpesuite run TARGET`).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"cpesuite/internal/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.CLI(ctx, os.Args[1:], os.Stdout, os.Stderr, os.LookupEnv)
	stop()
	os.Exit(code)
}
