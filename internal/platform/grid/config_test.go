package grid

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseMembers(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{in: "", want: nil},
		{in: " , ", want: nil},
		{in: "nats1", want: []string{"nats1:4222"}},
		{in: "nats1:4333", want: []string{"nats1:4333"}},
		{in: "a, b:5000 ,c", want: []string{"a:4222", "b:5000", "c:4222"}},
		{in: "10.0.0.1", want: []string{"10.0.0.1:4222"}},
		{in: "[::1]", want: []string{"[::1]:4222"}},
		{in: "[::1]:4333", want: []string{"[::1]:4333"}},
		{in: "host:notaport", wantErr: `GRID_MEMBERS: "host:notaport" is not host[:port]`},
		{in: "host:0", wantErr: `"host:0" is not host[:port]`},
		{in: "host:65536", wantErr: `"host:65536" is not host[:port]`},
		{in: ":4222", wantErr: `":4222" is not host[:port]`},
		{in: "::1", wantErr: `"::1" is not host[:port]`},
		{in: "nats://host:4222", wantErr: `"nats://host:4222" is not host[:port]`},
		// The spec allows comma or space separated lists.
		{in: "a,b c", want: []string{"a:4222", "b:4222", "c:4222"}},
		{in: "a  b:5000\tc", want: []string{"a:4222", "b:5000", "c:4222"}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseMembers(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseMembers(%q) error = %v, want it to contain %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseMembers(%q): %v", tc.in, err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("ParseMembers(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	valid := DefaultConfig()
	tests := []struct {
		name    string
		modify  func(*Config)
		wantErr []string
	}{
		{name: "default", modify: func(*Config) {}},
		{name: "external members", modify: func(c *Config) { c.Members = []string{"a", "b:4333"}; c.StoreDir = "" }},
		{name: "listen on a port", modify: func(c *Config) { c.Listen = "127.0.0.1:4223" }},
		{name: "listen on any port", modify: func(c *Config) { c.Listen = ":0" }},
		{name: "bad member", modify: func(c *Config) { c.Members = []string{"host:notaport"} },
			wantErr: []string{`GRID_MEMBERS: "host:notaport" is not host[:port]`}},
		{name: "embedded without store", modify: func(c *Config) { c.StoreDir = " " },
			wantErr: []string{"GRID_STORE_DIR: must be set"}},
		{name: "bad listen", modify: func(c *Config) { c.Listen = "localhost" },
			wantErr: []string{`GRID_LISTEN: "localhost" is not host:port`}},
		{name: "listen with members", modify: func(c *Config) { c.Members = []string{"a"}; c.Listen = ":4222" },
			wantErr: []string{"GRID_LISTEN: only applies to the embedded server"}},
		{name: "zero timeout", modify: func(c *Config) { c.ConnectTimeout = 0 },
			wantErr: []string{"GRID_CONNECT_TIMEOUT: must be positive"}},
		{name: "all errors at once", modify: func(c *Config) {
			c.StoreDir, c.ConnectTimeout, c.Listen = "", -time.Second, "x"
		}, wantErr: []string{"GRID_STORE_DIR", "GRID_CONNECT_TIMEOUT", "GRID_LISTEN"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := valid
			tc.modify(&c)
			err := c.Validate()
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want errors %q", tc.wantErr)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Validate() = %v, want it to contain %q", err, want)
				}
			}
		})
	}
}

func TestReconnectDelay(t *testing.T) {
	prev := time.Duration(0)
	for attempts := 1; attempts <= 20; attempts++ {
		d := reconnectDelay(attempts)
		if d < reconnectBase || d > reconnectMax+reconnectMax/5 {
			t.Fatalf("reconnectDelay(%d) = %s, outside [%s, %s]", attempts, d, reconnectBase, reconnectMax+reconnectMax/5)
		}
		// Jitter is at most 20%, so each step at least roughly doubles
		// until the cap.
		if attempts > 1 && d < prev*5/6 && prev < reconnectMax {
			t.Fatalf("reconnectDelay(%d) = %s after %s: backoff shrank", attempts, d, prev)
		}
		prev = d
	}
}
