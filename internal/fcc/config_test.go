package fcc

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/acs"
	"cpesuite/internal/platform/config"
	"cpesuite/internal/platform/sqlstore"
)

func parseConfig(t *testing.T, env map[string]string) (Config, error) {
	t.Helper()
	var c Config
	s := config.NewSet("fcc", func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	c.RegisterFlags(s)
	if _, err := s.Parse(nil); err != nil {
		return c, err
	}
	return c, c.Validate()
}

func TestConfigEnvironment(t *testing.T) {
	c, err := parseConfig(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxDevicesPerTest != 20000 || c.MaxConfigsPerTest != 10 || c.ResolvePageSize != 100 || c.SerialFileMaxSize != 10<<20 ||
		c.ExportTimeout != 10*time.Minute || !c.IOTWEnabled || !c.ACSSchemaCheck {
		t.Fatalf("defaults %+v", c)
	}
	c, err = parseConfig(t, map[string]string{"FCC_MAX_DEVICES_PER_TEST": "500", "FCC_MAX_CONFIGS_PER_TEST": "3",
		"SVC_FCC_RESOLVE_DEFAULT_PAGE_SIZE": "50", "FCC_SERIAL_FILE_MAX_SIZE": "4096", "FCC_EXPORT_REQUEST_TIMEOUT": "5m",
		"SVC_FCC_IOTW_ENABLED": "false", "SVC_FCC_FTACS_SCHEMA_CHECK_ENABLED": "false"})
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxDevicesPerTest != 500 || c.MaxConfigsPerTest != 3 || c.ResolvePageSize != 50 || c.SerialFileMaxSize != 4096 ||
		c.ExportTimeout != 5*time.Minute || c.IOTWEnabled || c.ACSSchemaCheck {
		t.Fatalf("from environment %+v", c)
	}
	for env, val := range map[string]string{"FCC_MAX_DEVICES_PER_TEST": "0", "SVC_FCC_RESOLVE_DEFAULT_PAGE_SIZE": "30000", "FCC_SERIAL_FILE_MAX_SIZE": "10"} {
		if _, err := parseConfig(t, map[string]string{env: val}); err == nil || !strings.Contains(err.Error(), env) {
			t.Fatalf("%s=%s: %v", env, val, err)
		}
	}
}

// Open refuses to start without readable ACS tables, and starts once the
// ACS has created them.
func TestOpenChecksACSSchema(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := testConfig()
	cfg.DataDir, cfg.DBDialect, cfg.ACSDBDialect = dir, "sqlite", "sqlite"
	_, _, err := Open(ctx, cfg, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "CPESUITE_FCC_ACS_DB_DSN") {
		t.Fatalf("err %v", err)
	}
	db, err := sqlstore.OpenSQLiteFile(ctx, filepath.Join(dir, "acs.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acs.OpenStore(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	db.Close()
	svc, closeDBs, err := Open(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer closeDBs()
	if _, err := svc.List(ctx, Identity{All: true}, ListRequest{}); err != nil {
		t.Fatal(err)
	}
}
