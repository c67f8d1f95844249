package results_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/fcc/results"
	"cpesuite/internal/platform/config"
)

func parse(t *testing.T, env map[string]string) (results.Config, error) {
	t.Helper()
	var c results.Config
	s := config.NewSet("fcc", func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	c.RegisterFlags(s)
	if _, err := s.Parse(nil); err != nil {
		return c, err
	}
	return c, c.Validate()
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		check   func(c results.Config) bool
		wantErr string
	}{
		{"defaults", nil, func(c results.Config) bool {
			return c.Enabled && c.Engine == "duckdb" && c.DSN == "" && c.CacheTTL == 10*time.Second && c.QueryTimeout() == 3*time.Second &&
				c.SchemaCheckInterval == 5*time.Minute && c.MigrationRetryInterval == time.Minute && c.DownInterval == time.Minute
		}, ""},
		{"relaxed names", map[string]string{
			"SVC_FCC_RESULTSTORE_ENABLED": "false", "SVC_FCC_RESULTSTORE_HEALTH_CACHE_TTL": "2s",
			"SVC_FCC_RESULTSTORE_HEALTH_QUERY_TIMEOUT_SEC": "7", "SVC_FCC_RESULTSTORE_HEALTH_SCHEMA_CHECK_INTERVAL": "1m",
			"SVC_FCC_RESULTSTORE_MIGRATION_RETRY_INTERVAL": "30s",
		}, func(c results.Config) bool {
			return !c.Enabled && c.CacheTTL == 2*time.Second && c.QueryTimeoutSec == 7 && c.SchemaCheckInterval == time.Minute && c.MigrationRetryInterval == 30*time.Second
		}, ""},
		{"clickhouse", map[string]string{"CPESUITE_FCC_RESULTSTORE_ENGINE": "ClickHouse", "CPESUITE_FCC_RESULTSTORE_DSN": "clickhouse://127.0.0.1:9000/default"},
			func(c results.Config) bool { return c.Engine == "clickhouse" }, ""},
		{"clickhouse without DSN", map[string]string{"CPESUITE_FCC_RESULTSTORE_ENGINE": "clickhouse"}, nil, "CPESUITE_FCC_RESULTSTORE_DSN"},
		{"unknown engine", map[string]string{"CPESUITE_FCC_RESULTSTORE_ENGINE": "sqlite"}, nil, "CPESUITE_FCC_RESULTSTORE_ENGINE"},
		{"zero query timeout", map[string]string{"SVC_FCC_RESULTSTORE_HEALTH_QUERY_TIMEOUT_SEC": "0"}, nil, "SVC_FCC_RESULTSTORE_HEALTH_QUERY_TIMEOUT_SEC"},
		{"zero cache ttl", map[string]string{"SVC_FCC_RESULTSTORE_HEALTH_CACHE_TTL": "0s"}, nil, "SVC_FCC_RESULTSTORE_HEALTH_CACHE_TTL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parse(t, tc.env)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(c) {
				t.Errorf("config = %+v", c)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	c, _ := parse(t, nil)
	s, err := results.Open(context.Background(), c, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.(*results.DuckDB); !ok {
		t.Errorf("default engine is %T, want *results.DuckDB", s)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, results.DuckDBFile)); len(m) != 1 {
		t.Errorf("no %s in the data directory", results.DuckDBFile)
	}
	c.Enabled = false
	if _, err := results.Open(context.Background(), c, dir); err == nil {
		t.Error("Open of a disabled store: want an error")
	}
}
