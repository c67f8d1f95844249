package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"cpesuite/internal/buildinfo"
	"cpesuite/internal/platform/config"
	"cpesuite/internal/platform/logx"
)

const usage = `cpesuite: CPE fleet management platform

Usage:
  cpesuite up [--only a,b] [flags]   start every implemented target (or a subset) in one process
  cpesuite run TARGET [flags]        start one target as a standalone service
  cpesuite targets                   list implemented targets and their default addresses
  cpesuite version                   print version, commit and build time
  cpesuite help [up|run]             show this text, or the flags of up/run

`

// Exit codes of the CLI.
const (
	exitOK     = 0
	exitFailed = 1 // a module failed to start or while running
	exitUsage  = 2 // bad command line or configuration
)

// CLI runs the command line and returns the process exit code. ctx is
// cancelled by SIGINT/SIGTERM in main.
func CLI(ctx context.Context, args []string, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "up":
		return serve(ctx, "up", rest, stdout, stderr, lookupEnv)
	case "run":
		return serve(ctx, "run", rest, stdout, stderr, lookupEnv)
	case "targets":
		printTargets(stdout)
		return exitOK
	case "version", "--version":
		fmt.Fprintln(stdout, buildinfo.Get())
		return exitOK
	case "help", "-h", "--help":
		if len(rest) > 0 && (rest[0] == "up" || rest[0] == "run") {
			return serve(ctx, rest[0], []string{"-h"}, stdout, stderr, lookupEnv)
		}
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "cpesuite: unknown command %q\n\n%s", cmd, usage)
		return exitUsage
	}
}

func printTargets(w io.Writer) {
	m := newModules(nil, nil)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tDEFAULT ADDRESS\tSERVES")
	var planned []string
	for _, l := range Listeners {
		if !m.IsTarget(l.Target) {
			if !slices.Contains(planned, l.Target) {
				planned = append(planned, l.Target)
			}
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", l.Target, l.Default, l.Paths)
	}
	tw.Flush()
	if len(planned) > 0 {
		fmt.Fprintf(w, "\nnot implemented yet: %s\n", strings.Join(planned, ", "))
	}
}

// serve parses the flags of up/run, then runs the modules until ctx ends.
func serve(ctx context.Context, mode string, args []string, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	var cfg Config
	set := config.NewSet("cpesuite "+mode, lookupEnv)
	cfg.RegisterFlags(set, lookupEnv)
	var only []string
	if mode == "up" {
		set.List(&only, "only", "", "", "comma-separated targets to start; default: all implemented targets")
	}
	var target string
	if mode == "run" && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		target, args = args[0], args[1:]
	}
	rest, err := set.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stdout, "Usage: cpesuite %s%s [flags]\n\nFlags (each also read from its environment variable):\n", mode, map[string]string{"up": " [--only a,b]", "run": " TARGET"}[mode])
		set.Usage(stdout)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "cpesuite: configuration: %v\n", err)
		return exitUsage
	}
	if mode == "run" && target == "" && len(rest) > 0 {
		target, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "cpesuite %s: unexpected arguments %q\n", mode, rest)
		return exitUsage
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "cpesuite: configuration: %v\n", err)
		return exitUsage
	}
	log, err := logx.New(stderr, cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		fmt.Fprintf(stderr, "cpesuite: configuration: %v\n", err)
		return exitUsage
	}

	a := newModules(&cfg, log)
	a.runAlone = mode == "run"
	targets := only
	if mode == "run" {
		if target == "" {
			fmt.Fprintf(stderr, "cpesuite run: name a target (implemented: %s)\n", strings.Join(a.Targets(), ", "))
			return exitUsage
		}
		targets = []string{target}
	}
	for _, t := range targets {
		if !a.IsTarget(t) {
			fmt.Fprintf(stderr, "cpesuite: unknown target %q (implemented: %s)\n", t, strings.Join(a.Targets(), ", "))
			return exitUsage
		}
	}
	if len(targets) == 0 {
		targets = a.all()
	}
	if err := cfg.Prepare(); err != nil {
		fmt.Fprintf(stderr, "cpesuite: configuration: %v\n", err)
		return exitUsage
	}
	for _, l := range Listeners {
		if cfg.AddrsSet[l.Flag()] && !a.IsTarget(l.Target) {
			log.Warn("address set for a target that is not implemented yet; ignored", "var", l.Env(), "target", l.Target)
		}
	}
	log.Info("starting cpesuite", "version", buildinfo.Get().Version, "mode", mode, "targets", targets, "data_dir", cfg.DataDir)
	a.Manager.StopTimeout = cfg.StopTimeout
	if err := a.Run(ctx, targets); err != nil {
		log.Error("cpesuite stopped with an error", "err", err)
		return exitFailed
	}
	log.Info("cpesuite stopped")
	return exitOK
}
