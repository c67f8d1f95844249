package config

import (
	"errors"
	"flag"
	"strings"
	"testing"
	"time"
)

type testCfg struct {
	Addr    string
	Name    string
	N       int
	Big     int64
	On      bool
	Wait    time.Duration
	Members []string
	Mode    string
	Token   string
}

func newTestSet(env map[string]string) (*Set, *testCfg) {
	c := &testCfg{}
	s := NewSet("test", func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	s.Addr(&c.Addr, "acs.addr", "CPESUITE_ACS_ADDR", ":7547", "listen address")
	s.String(&c.Name, "name", "CPESUITE_NAME", "dev", "name")
	s.Int(&c.N, "n", "CPESUITE_N", 3, "count")
	s.Int64(&c.Big, "big", "CPESUITE_BIG", 1<<40, "big count")
	s.Bool(&c.On, "on", "CPESUITE_ON", false, "switch")
	s.Duration(&c.Wait, "wait", "CPESUITE_WAIT", 10*time.Second, "wait")
	s.List(&c.Members, "grid.members", "GRID_MEMBERS", "", "members")
	s.OneOf(&c.Mode, "mode", "CPESUITE_MODE", "json", "log format", "json", "text")
	s.Secret(&c.Token, "token", "CPESUITE_TOKEN", "", "token")
	return s, c
}

func TestDefaults(t *testing.T) {
	s, c := newTestSet(nil)
	if _, err := s.Parse(nil); err != nil {
		t.Fatalf("parse: %v", err)
	}
	want := testCfg{Addr: ":7547", Name: "dev", N: 3, Big: 1 << 40, Wait: 10 * time.Second, Mode: "json"}
	if c.Addr != want.Addr || c.Name != want.Name || c.N != want.N || c.Big != want.Big || c.On || c.Wait != want.Wait || c.Members != nil || c.Mode != "json" {
		t.Fatalf("defaults: got %+v, want %+v", *c, want)
	}
}

func TestPrecedence(t *testing.T) {
	env := map[string]string{"CPESUITE_ACS_ADDR": "127.0.0.1:17547", "CPESUITE_N": "5", "GRID_MEMBERS": "a:4222, b ,", "CPESUITE_MODE": "TEXT"}
	s, c := newTestSet(env)
	rest, err := s.Parse([]string{"--n=7", "pos"})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if c.Addr != "127.0.0.1:17547" {
		t.Errorf("env not applied: addr=%q", c.Addr)
	}
	if c.N != 7 {
		t.Errorf("flag must win over env: n=%d", c.N)
	}
	if strings.Join(c.Members, "|") != "a:4222|b" {
		t.Errorf("members=%q", c.Members)
	}
	if c.Mode != "text" {
		t.Errorf("mode=%q, want canonical choice spelling", c.Mode)
	}
	if len(rest) != 1 || rest[0] != "pos" {
		t.Errorf("rest=%q", rest)
	}
}

func TestErrorsNameTheVariable(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		wantVar string
		wantMsg string
		notIn   string
	}{
		{"addr nonsense", map[string]string{"CPESUITE_ACS_ADDR": "nonsense"}, nil, "CPESUITE_ACS_ADDR", "host:port", ""},
		{"addr port not numeric", map[string]string{"CPESUITE_ACS_ADDR": ":http"}, nil, "CPESUITE_ACS_ADDR", "not a number", ""},
		{"addr port too big", map[string]string{"CPESUITE_ACS_ADDR": ":70000"}, nil, "CPESUITE_ACS_ADDR", "0 to 65535", ""},
		{"int", map[string]string{"CPESUITE_N": "ten"}, nil, "CPESUITE_N", "not an integer", ""},
		{"bool", map[string]string{"CPESUITE_ON": "yes please"}, nil, "CPESUITE_ON", "true or false", ""},
		{"duration bare number", map[string]string{"CPESUITE_WAIT": "30"}, nil, "CPESUITE_WAIT", "duration", ""},
		{"duration negative", map[string]string{"CPESUITE_WAIT": "-1s"}, nil, "CPESUITE_WAIT", "negative", ""},
		{"choice", map[string]string{"CPESUITE_MODE": "xml"}, nil, "CPESUITE_MODE", "json, text", ""},
		{"flag", nil, []string{"--acs.addr=nonsense"}, "--acs.addr", "host:port", ""},
		{"secret value not echoed", map[string]string{"CPESUITE_TOKEN": "x"}, []string{"--n=x"}, "--n", "", ""},
		{"unknown flag", nil, []string{"--nope"}, "", "nope", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newTestSet(tt.env)
			_, err := s.Parse(tt.args)
			if err == nil {
				t.Fatal("want an error")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error must be one line: %q", msg)
			}
			var ve *VarError
			if tt.wantVar != "" {
				if !errors.As(err, &ve) || ve.Var != tt.wantVar {
					t.Fatalf("error %q does not name %s", msg, tt.wantVar)
				}
			}
			if !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("error %q does not say %q", msg, tt.wantMsg)
			}
		})
	}
}

func TestSecretNotEchoed(t *testing.T) {
	s := NewSet("t", func(string) (string, bool) { return "hunter2", true })
	s.Func(Var{Flag: "pw", Env: "PW", Secret: true}, func(x string) error {
		if x != "" {
			return errors.New("too short")
		}
		return nil
	})
	_, err := s.Parse(nil)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("secret echoed or no error: %v", err)
	}
}

func TestHelp(t *testing.T) {
	s, _ := newTestSet(nil)
	if _, err := s.Parse([]string{"-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("want flag.ErrHelp, got %v", err)
	}
	var b strings.Builder
	s.Usage(&b)
	for _, want := range []string{"--acs.addr (env CPESUITE_ACS_ADDR, default \":7547\")", "GRID_MEMBERS"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, b.String())
		}
	}
}

// TestUsageFormsAndHidden holds `cpesuite help up` to what it promises: a
// flag without an environment name shows none (not "env ,"), and a hidden
// flag is still parsed but never listed.
func TestUsageFormsAndHidden(t *testing.T) {
	var only, planned string
	s := NewSet("test", func(k string) (string, bool) { return "", false })
	s.String(&only, "only", "", "", "targets to start")
	s.Func(Var{Flag: "nbi.addr", Env: "CPESUITE_NBI_ADDR", Default: ":8082", Usage: "planned target", Hidden: true},
		func(v string) error { planned = v; return nil })
	if _, err := s.Parse([]string{"--nbi.addr", ":9"}); err != nil {
		t.Fatalf("a hidden flag must still parse: %v", err)
	}
	if planned != ":9" {
		t.Fatalf("hidden flag value = %q, want :9", planned)
	}
	var b strings.Builder
	s.Usage(&b)
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"--only (default \"\")", true},
		{"env ,", false},
		{"nbi.addr", false},
		{"CPESUITE_NBI_ADDR", false},
	} {
		if got := strings.Contains(b.String(), tc.text); got != tc.want {
			t.Errorf("usage contains %q = %v, want %v:\n%s", tc.text, got, tc.want, b.String())
		}
	}
}

func TestDuplicateFlagPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("duplicate registration must panic")
		}
	}()
	s, _ := newTestSet(nil)
	var x string
	s.String(&x, "name", "", "", "")
}

func TestValidateAddr(t *testing.T) {
	for _, ok := range []string{":7547", "127.0.0.1:0", "[::1]:8080", "localhost:65535", " :80 "} {
		if err := ValidateAddr(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "7547", "nonsense", ":", "host:-1", "a b:80", "::1:80"} {
		if err := ValidateAddr(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
