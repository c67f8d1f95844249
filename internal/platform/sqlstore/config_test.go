package sqlstore

import (
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	ok := Config{Dialect: SQLite, DSN: "x.db"}
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantErr string // empty: valid
	}{
		{"minimal", func(*Config) {}, ""},
		{"full", func(c *Config) {
			c.MaxOpenConns, c.MaxIdleConns, c.ConnMaxLifetime, c.ConnectTimeout = 10, 10, time.Hour, time.Second
		}, ""},
		{"no dialect", func(c *Config) { c.Dialect = "" }, "Dialect"},
		{"unknown dialect", func(c *Config) { c.Dialect = "oracle" }, "Dialect"},
		{"empty DSN", func(c *Config) { c.DSN = "" }, "DSN"},
		{"negative MaxOpenConns", func(c *Config) { c.MaxOpenConns = -1 }, "MaxOpenConns"},
		{"negative MaxIdleConns", func(c *Config) { c.MaxIdleConns = -1 }, "MaxIdleConns"},
		{"idle above open", func(c *Config) { c.MaxOpenConns, c.MaxIdleConns = 2, 3 }, "MaxIdleConns (3) exceeds MaxOpenConns (2)"},
		{"negative ConnMaxLifetime", func(c *Config) { c.ConnMaxLifetime = -time.Second }, "ConnMaxLifetime"},
		{"negative ConnectTimeout", func(c *Config) { c.ConnectTimeout = -time.Second }, "ConnectTimeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.mutate(&c)
			err := c.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Validate() = %v, want an error naming %q", err, tt.wantErr)
			}
		})
	}

	t.Run("reports every field", func(t *testing.T) {
		err := Config{MaxOpenConns: -1}.Validate()
		for _, field := range []string{"Dialect", "DSN", "MaxOpenConns"} {
			if err == nil || !strings.Contains(err.Error(), field) {
				t.Errorf("Validate() = %v, want it to name %s", err, field)
			}
		}
	})
}

func TestSQLiteDSN(t *testing.T) {
	tests := []struct {
		name       string
		dsn        string
		wantFile   string
		wantMemory bool
		want       []string // substrings of the resulting DSN
		notWant    []string
		wantErr    string
	}{
		{
			name: "plain path", dsn: "data/acs.db", wantFile: "data/acs.db",
			want: []string{"data/acs.db?", "busy_timeout%2810000%29", "foreign_keys%281%29",
				"journal_mode%28WAL%29", "synchronous%28NORMAL%29", "_txlock=immediate", "_time_format=sqlite"},
		},
		{
			name: "file URI", dsn: "file:data/acs.db?cache=private", wantFile: "data/acs.db",
			want: []string{"file:data/acs.db?", "cache=private", "journal_mode%28WAL%29"},
		},
		{name: "absolute file URI", dsn: "file:///var/lib/x%20y.db", wantFile: "/var/lib/x y.db"},
		{name: "file URI with host", dsn: "file://localhost/var/x.db", wantFile: "/var/x.db"},
		{
			name: "memory", dsn: ":memory:", wantMemory: true,
			want: []string{"busy_timeout", "foreign_keys", "_txlock=immediate"}, notWant: []string{"journal_mode", "synchronous"},
		},
		{name: "memory URI", dsn: "file:x?mode=memory&cache=shared", wantMemory: true, notWant: []string{"journal_mode"}},
		{
			name: "caller's pragma wins", dsn: "x.db?_pragma=journal_mode(DELETE)&_pragma=busy_timeout(1)", wantFile: "x.db",
			want: []string{"journal_mode%28DELETE%29", "busy_timeout%281%29"}, notWant: []string{"WAL", "10000"},
		},
		{name: "caller's shorthand wins", dsn: "x.db?_fk=0", wantFile: "x.db", want: []string{"_fk=0"}, notWant: []string{"foreign_keys"}},
		{name: "immediate accepted", dsn: "x.db?_txlock=IMMEDIATE", wantFile: "x.db"},
		{name: "deferred refused", dsn: "x.db?_txlock=deferred", wantErr: "_txlock=deferred"},
		{name: "no path", dsn: "?_fk=1", wantErr: "no file path"},
		{name: "bad query", dsn: "x.db?a=%zz", wantErr: "DSN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, file, memory, err := sqliteDSN(tt.dsn)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("sqliteDSN(%q) error = %v, want one containing %q", tt.dsn, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("sqliteDSN(%q): %v", tt.dsn, err)
			}
			if file != tt.wantFile || memory != tt.wantMemory {
				t.Errorf("sqliteDSN(%q) file, memory = %q, %v; want %q, %v", tt.dsn, file, memory, tt.wantFile, tt.wantMemory)
			}
			for _, s := range tt.want {
				if !strings.Contains(got, s) {
					t.Errorf("sqliteDSN(%q) = %q, want it to contain %q", tt.dsn, got, s)
				}
			}
			for _, s := range tt.notWant {
				if strings.Contains(got, s) {
					t.Errorf("sqliteDSN(%q) = %q, want it without %q", tt.dsn, got, s)
				}
			}
		})
	}
}
