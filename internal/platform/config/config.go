// Package config loads typed configuration from flags and environment
// variables. Each package owns its config struct and registers its
// variables on a Set; defaults live in that one registration call.
//
// Precedence: a flag given on the command line wins over the environment
// variable, which wins over the default. Every error names the variable
// the operator has to fix (the env name, or the flag when the value came
// from a flag), in one line.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// VarError is a configuration error attributed to one variable.
type VarError struct {
	Var string
	Msg string
}

func (e *VarError) Error() string { return e.Var + ": " + e.Msg }

// Errorf builds a VarError for variable name.
func Errorf(name, format string, args ...any) error {
	return &VarError{Var: name, Msg: fmt.Sprintf(format, args...)}
}

// Var describes one registered variable, for usage text and documentation.
type Var struct {
	Flag    string
	Env     string
	Default string
	Usage   string
	// Secret variables never have their value echoed in errors.
	Secret bool
	// Hidden variables are parsed but left out of Usage: they belong to
	// targets that are planned but not built, which `help` must not offer.
	Hidden bool
}

type entry struct {
	Var
	parse func(string) error
}

// flagValue adapts an entry to flag.Value; the flag package calls Set for
// command-line values only.
type flagValue struct {
	e   *entry
	cur string
}

func (f *flagValue) String() string {
	if f == nil || f.e == nil {
		return ""
	}
	return f.cur
}

func (f *flagValue) Set(s string) error {
	if err := f.e.parse(s); err != nil {
		return err
	}
	f.cur = s
	return nil
}

// Set is a group of variables parsed together.
type Set struct {
	fs      *flag.FlagSet
	lookup  func(string) (string, bool)
	entries []*entry
	byFlag  map[string]*entry
}

// NewSet returns an empty Set. lookupEnv is os.LookupEnv in production and
// a map in tests.
func NewSet(name string, lookupEnv func(string) (string, bool)) *Set {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	return &Set{fs: fs, lookup: lookupEnv, byFlag: map[string]*entry{}}
}

// Func registers a variable with a custom parser. The default is parsed
// immediately; a default that does not parse is a programming error.
func (s *Set) Func(v Var, parse func(string) error) {
	if _, dup := s.byFlag[v.Flag]; dup {
		panic("config: duplicate flag " + v.Flag)
	}
	e := &entry{Var: v, parse: parse}
	if err := parse(v.Default); err != nil {
		panic(fmt.Sprintf("config: default %q of %s does not parse: %v", v.Default, v.Flag, err))
	}
	s.entries = append(s.entries, e)
	s.byFlag[v.Flag] = e
	s.fs.Var(&flagValue{e: e, cur: v.Default}, v.Flag, v.Usage)
}

// Parse reads the command-line arguments, then the environment for every
// variable whose flag was not given. It returns the remaining positional
// arguments. flag.ErrHelp is returned as is for -h/--help.
func (s *Set) Parse(args []string) ([]string, error) {
	if err := s.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, s.flagError(err)
	}
	given := map[string]bool{}
	s.fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, e := range s.entries {
		if given[e.Flag] || e.Env == "" {
			continue
		}
		val, ok := s.lookup(e.Env)
		if !ok {
			continue
		}
		if err := e.parse(val); err != nil {
			return nil, e.valueError(e.Env, val, err)
		}
	}
	return s.fs.Args(), nil
}

// flagError rewrites the flag package's message so it also names the
// environment variable behind the flag.
func (s *Set) flagError(err error) error {
	msg := err.Error()
	for _, e := range s.entries {
		if strings.Contains(msg, "flag -"+e.Flag+":") {
			if e.Secret {
				return Errorf("--"+e.Flag, "invalid value")
			}
			return &VarError{Var: "--" + e.Flag, Msg: strings.TrimSpace(msg)}
		}
	}
	return errors.New(msg)
}

func (e *entry) valueError(name, val string, err error) error {
	if e.Secret {
		return Errorf(name, "invalid value: %v", err)
	}
	return Errorf(name, "invalid value %q: %v", val, err)
}

// Vars lists the registered variables sorted by flag name.
func (s *Set) Vars() []Var {
	out := make([]Var, 0, len(s.entries))
	for _, e := range s.entries {
		out = append(out, e.Var)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Flag < out[j].Flag })
	return out
}

// Usage writes one block per visible variable: flag, env name, default,
// meaning.
func (s *Set) Usage(w io.Writer) {
	for _, v := range s.Vars() {
		if v.Hidden {
			continue
		}
		def := v.Default
		if v.Secret && def != "" {
			def = "(set)"
		}
		if v.Env == "" {
			fmt.Fprintf(w, "  --%s (default %q)\n      %s\n", v.Flag, def, v.Usage)
			continue
		}
		fmt.Fprintf(w, "  --%s (env %s, default %q)\n      %s\n", v.Flag, v.Env, def, v.Usage)
	}
}
