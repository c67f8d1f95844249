package config

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// String registers a string variable.
func (s *Set) String(p *string, flagName, env, def, usage string) {
	s.Func(Var{Flag: flagName, Env: env, Default: def, Usage: usage}, func(v string) error {
		*p = v
		return nil
	})
}

// Secret registers a string variable whose value is never echoed.
func (s *Set) Secret(p *string, flagName, env, def, usage string) {
	s.Func(Var{Flag: flagName, Env: env, Default: def, Usage: usage, Secret: true}, func(v string) error {
		*p = v
		return nil
	})
}

// Int registers an integer variable.
func (s *Set) Int(p *int, flagName, env string, def int, usage string) {
	s.Func(Var{Flag: flagName, Env: env, Default: strconv.Itoa(def), Usage: usage}, func(v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return errors.New("not an integer")
		}
		*p = n
		return nil
	})
}

// Int64 registers a 64-bit integer variable.
func (s *Set) Int64(p *int64, flagName, env string, def int64, usage string) {
	s.Func(Var{Flag: flagName, Env: env, Default: strconv.FormatInt(def, 10), Usage: usage}, func(v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return errors.New("not an integer")
		}
		*p = n
		return nil
	})
}

// Bool registers a boolean variable (true/false/1/0, case-insensitive).
func (s *Set) Bool(p *bool, flagName, env string, def bool, usage string) {
	s.Func(Var{Flag: flagName, Env: env, Default: strconv.FormatBool(def), Usage: usage}, func(v string) error {
		b, err := strconv.ParseBool(strings.ToLower(strings.TrimSpace(v)))
		if err != nil {
			return errors.New("want true or false")
		}
		*p = b
		return nil
	})
}

// Duration registers a duration variable ("30s", "5m"). Bare integers are
// refused: an operator writing 30 could mean seconds or milliseconds.
func (s *Set) Duration(p *time.Duration, flagName, env string, def time.Duration, usage string) {
	s.Func(Var{Flag: flagName, Env: env, Default: def.String(), Usage: usage}, func(v string) error {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil {
			return errors.New(`want a duration such as "30s" or "5m"`)
		}
		if d < 0 {
			return errors.New("must not be negative")
		}
		*p = d
		return nil
	})
}

// Addr registers a listen address variable in host:port form (host may be
// empty for all interfaces; port 0 picks a free port).
func (s *Set) Addr(p *string, flagName, env, def, usage string) {
	s.Func(Var{Flag: flagName, Env: env, Default: def, Usage: usage}, func(v string) error {
		if err := ValidateAddr(v); err != nil {
			return err
		}
		*p = strings.TrimSpace(v)
		return nil
	})
}

// List registers a comma-separated list; blank items are dropped.
func (s *Set) List(p *[]string, flagName, env, def, usage string) {
	s.Func(Var{Flag: flagName, Env: env, Default: def, Usage: usage}, func(v string) error {
		*p = SplitList(v)
		return nil
	})
}

// OneOf registers a string variable restricted to choices.
func (s *Set) OneOf(p *string, flagName, env, def, usage string, choices ...string) {
	s.Func(Var{Flag: flagName, Env: env, Default: def, Usage: usage + " (" + strings.Join(choices, "|") + ")"}, func(v string) error {
		v = strings.TrimSpace(v)
		for _, c := range choices {
			if strings.EqualFold(v, c) {
				*p = c
				return nil
			}
		}
		return fmt.Errorf("want one of %s", strings.Join(choices, ", "))
	})
}

// SplitList splits a comma-separated list, trimming blanks.
func SplitList(v string) []string {
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// ValidateAddr checks a host:port listen address.
func ValidateAddr(v string) error {
	v = strings.TrimSpace(v)
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return errors.New("want host:port, e.g. :7547 or 127.0.0.1:7547")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	if strings.ContainsAny(host, " /\\") {
		return fmt.Errorf("host %q is not a host name or IP address", host)
	}
	return nil
}
