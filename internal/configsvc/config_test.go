package configsvc

import (
	"bytes"
	"context"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"cpesuite/internal/platform/config"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
)

func parseEnv(env map[string]string) (Config, error) {
	var c Config
	s := config.NewSet("test", func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	c.RegisterFlags(s)
	if _, err := s.Parse(nil); err != nil {
		return c, err
	}
	return c, c.Validate()
}

// TestConfigValidation: every refused value names its variable; the
// defaults are the spec's.
func TestConfigValidation(t *testing.T) {
	def, err := parseEnv(nil)
	if err != nil {
		t.Fatal(err)
	}
	if def.Profile != ProfileLocal || def.JWTExpiration != 24*time.Hour || def.JWTRefreshTTL != 7*24*time.Hour || !def.CookieSecure ||
		def.Pool != (PoolConfig{10, 5, 30000}) || def.Mail.Port != 587 || def.Mail.Mode != "AUTO" || def.GridClusterName != "dev" ||
		def.ExclusionCacheName != "qoeProductClassGroupCache" || !slices.Equal(def.CORSOrigins, []string{"http://localhost:9002"}) ||
		def.TZ != "UTC" || def.AuditRetentionDays != 30 || def.BootstrapUsername != "admin" || def.DBA.Port != 3306 || def.DBA.Schema != "configs" {
		t.Fatalf("defaults = %+v", def)
	}
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"JWT_SECRET": "c2hvcnQ="}, "JWT_SECRET"},
		{map[string]string{"JWT_SECRET": "not base64 at all!!"}, "JWT_SECRET"},
		{map[string]string{"APP_PROFILES_ACTIVE": "oracle"}, "APP_PROFILES_ACTIVE"},
		{map[string]string{"JWT_EXPIRATION": "10"}, "JWT_EXPIRATION"},
		{map[string]string{"JWT_REFRESH_TOKEN_EXPIRATION": "1000"}, "JWT_REFRESH_TOKEN_EXPIRATION"},
		{map[string]string{"DB_MAX_POOL_SIZE": "0"}, "DB_MAX_POOL_SIZE"},
		{map[string]string{"DB_MIN_IDLE": "11"}, "DB_MIN_IDLE"},
		{map[string]string{"TZ": "Mars/Olympus"}, "TZ"},
		{map[string]string{"CORS_ALLOWED_ORIGINS": "portal.example.com"}, "CORS_ALLOWED_ORIGINS"},
		{map[string]string{"SERVER_PORT": "http"}, "SERVER_PORT"},
		{map[string]string{"SERVER_SSL_ENABLED": "true"}, "SERVER_SSL_ENABLED"},
		{map[string]string{"CFG_DELETION_OTP_LENGTH": "3"}, "CFG_DELETION_OTP_LENGTH"},
	} {
		_, err := parseEnv(tc.env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one naming %s", tc.env, err, tc.want)
		}
		for _, v := range tc.env {
			if len(v) > 6 && err != nil && strings.Contains(err.Error(), v) && strings.HasPrefix(tc.want, "JWT_SECRET") {
				t.Errorf("the error echoes the secret")
			}
		}
	}
	// An unknown MAIL_MODE is not a configuration error: AUTO with a warning.
	c, err := parseEnv(map[string]string{"MAIL_MODE": "sometimes"})
	if err != nil || c.Mail.Mode != "sometimes" {
		t.Fatalf("MAIL_MODE=sometimes: %v", err)
	}
}

// TestRetentionClamp: 3..90 with a warning outside, 0 disables.
func TestRetentionClamp(t *testing.T) {
	for _, tc := range []struct{ in, want int }{{0, 0}, {1, 3}, {-5, 3}, {3, 3}, {30, 30}, {90, 90}, {365, 90}} {
		var buf bytes.Buffer
		c := Config{AuditRetentionDays: tc.in}
		if got := c.RetentionDays(slog.New(slog.NewTextHandler(&buf, nil))); got != tc.want {
			t.Errorf("RetentionDays(%d) = %d, want %d", tc.in, got, tc.want)
		}
		if warned := strings.Contains(buf.String(), "clamped"); warned != (tc.in != tc.want) {
			t.Errorf("RetentionDays(%d): warning logged = %v", tc.in, warned)
		}
	}
}

// TestStoreConfig: the profile variables map to DSNs; an explicit JDBC URL
// wins over decomposed values; DB_HOST is the host fallback.
func TestStoreConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want func(t *testing.T, sc sqlstore.Config)
	}{
		{"local", nil, func(t *testing.T, sc sqlstore.Config) {
			if sc.Dialect != sqlstore.SQLite || filepath.Base(sc.DSN) != "configs.db" {
				t.Fatalf("%+v", sc)
			}
		}},
		{"mysql decomposed with DB_HOST", map[string]string{"APP_PROFILES_ACTIVE": "mysql", "DB_HOST": "db.internal", "DBA_USER": "u", "DBA_PASSWORD": "p@ss"}, func(t *testing.T, sc sqlstore.Config) {
			m, err := mysql.ParseDSN(sc.DSN)
			if err != nil || m.Addr != "db.internal:3306" || m.DBName != "configs" || m.User != "u" || m.Passwd != "p@ss" || sc.MaxOpenConns != 10 || sc.MaxIdleConns != 5 || sc.ConnectTimeout != 30*time.Second {
				t.Fatalf("%+v %+v %v", sc, m, err)
			}
		}},
		{"mysql JDBC URL wins", map[string]string{"APP_PROFILES_ACTIVE": "mysql", "DBA_HOST": "ignored", "DBA_JDBC_URL": "jdbc:mariadb://maria:3307/cfg?user=jdbcuser&password=jdbcpass", "DB_MAX_POOL_SIZE": "4", "DB_MIN_IDLE": "2"}, func(t *testing.T, sc sqlstore.Config) {
			m, _ := mysql.ParseDSN(sc.DSN)
			if m.Addr != "maria:3307" || m.DBName != "cfg" || m.User != "jdbcuser" || m.Passwd != "jdbcpass" || sc.MaxOpenConns != 4 || sc.MaxIdleConns != 2 {
				t.Fatalf("%+v", m)
			}
		}},
		{"postgres decomposed", map[string]string{"APP_PROFILES_ACTIVE": "postgres", "DBB_HOST": "pg", "DBB_SERVICE": "cfgdb", "DBB_SCHEMA": "configs"}, func(t *testing.T, sc sqlstore.Config) {
			u, _ := url.Parse(sc.DSN)
			if sc.Dialect != sqlstore.Postgres || u.Host != "pg:5432" || u.Path != "/cfgdb" || u.Query().Get("search_path") != "configs" {
				t.Fatalf("%s", sc.DSN)
			}
		}},
		{"postgres JDBC URL wins", map[string]string{"APP_PROFILES_ACTIVE": "postgres", "DBB_HOST": "ignored", "DBB_JDBC_URL": "jdbc:postgresql://pg2/other?currentSchema=s1&user=a&password=b"}, func(t *testing.T, sc sqlstore.Config) {
			u, _ := url.Parse(sc.DSN)
			pw, _ := u.User.Password()
			if u.Host != "pg2:5432" || u.Path != "/other" || u.Query().Get("search_path") != "s1" || u.User.Username() != "a" || pw != "b" {
				t.Fatalf("%s", sc.DSN)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseEnv(tc.env)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := c.StoreConfig()
			if err != nil {
				t.Fatal(err)
			}
			tc.want(t, sc)
		})
	}
	for _, env := range []map[string]string{
		{"APP_PROFILES_ACTIVE": "postgres", "DBB_JDBC_URL": "jdbc:oracle:thin:@//db:1521/XEPDB1"},
		{"APP_PROFILES_ACTIVE": "mysql", "DBA_JDBC_URL": "mysql://secret@host/db"},
		{"APP_PROFILES_ACTIVE": "mysql", "DBA_SCHEMA": ""},
	} {
		c, err := parseEnv(env)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.StoreConfig()
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("%v: error %v, want a refusal that does not echo the URL", env, err)
		}
	}
}

// TestProfilesReachRealServers opens the mysql and postgres profiles from
// their decomposed variables against the local servers and migrates them.
func TestProfilesReachRealServers(t *testing.T) {
	t.Run("mysql", func(t *testing.T) {
		db := sqltest.Open(t, sqlstore.MySQL)
		m, err := mysql.ParseDSN(db.Config().DSN)
		if err != nil {
			t.Fatal(err)
		}
		host, port, _ := strings.Cut(m.Addr, ":")
		c, err := parseEnv(map[string]string{"APP_PROFILES_ACTIVE": "mysql", "DBA_HOST": host, "DBA_PORT": port, "DBA_SCHEMA": m.DBName, "DBA_USER": m.User, "DBA_PASSWORD": m.Passwd})
		if err != nil {
			t.Fatal(err)
		}
		openProfile(t, c)
	})
	t.Run("postgres", func(t *testing.T) {
		db := sqltest.Open(t, sqlstore.Postgres)
		u, err := url.Parse(db.Config().DSN)
		if err != nil {
			t.Fatal(err)
		}
		schema := u.Query().Get("search_path")
		c, err := parseEnv(map[string]string{"APP_PROFILES_ACTIVE": "postgres", "DBB_JDBC_URL": "jdbc:postgresql://" + u.Host + u.Path + "?currentSchema=" + schema + "&user=" + u.User.Username() + "&sslmode=disable"})
		if err != nil {
			t.Fatal(err)
		}
		openProfile(t, c)
	})
}

func openProfile(t *testing.T, c Config) {
	t.Helper()
	c.DataDir = t.TempDir()
	db, err := openDB(context.Background(), &c)
	if err != nil {
		t.Fatalf("opening the %s profile: %v", c.Profile, err)
	}
	defer db.Close()
	st := &store{db: db}
	u := User{Username: "probe", Role: RoleUser, PasswordHash: "x", CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if err := st.createUser(context.Background(), &u); err != nil || u.ID == 0 {
		t.Fatalf("insert through the %s profile: %v", c.Profile, err)
	}
}

// TestGridMembers: GRID_MEMBERS wins; otherwise the client file under
// CACHE_CONFIG_PATH; otherwise the embedded member.
func TestGridMembers(t *testing.T) {
	dir := t.TempDir()
	c := Config{CacheConfigPath: "classpath:"}
	if m, err := c.GridMembers(nil); err != nil || m != nil {
		t.Fatalf("built-in = %v %v", m, err)
	}
	c.CacheConfigPath = dir
	if m, err := c.GridMembers(nil); err != nil || m != nil {
		t.Fatalf("no file = %v %v", m, err)
	}
	if err := os.WriteFile(filepath.Join(dir, clientFile), []byte(`{"members":["g1","g2:4333"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if m, err := c.GridMembers(nil); err != nil || !slices.Equal(m, []string{"g1:4222", "g2:4333"}) {
		t.Fatalf("file = %v %v", m, err)
	}
	if m, _ := c.GridMembers([]string{"env:4222"}); !slices.Equal(m, []string{"env:4222"}) {
		t.Fatalf("env = %v", m)
	}
	if err := os.WriteFile(filepath.Join(dir, clientFile), []byte(`{"members":"g1"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GridMembers(nil); err == nil || !strings.Contains(err.Error(), "CACHE_CONFIG_PATH") {
		t.Fatalf("bad file: %v", err)
	}
}

// TestSigningKey: JWT_SECRET wins; without it a key is generated once and
// reused across restarts.
func TestSigningKey(t *testing.T) {
	c := Config{DataDir: t.TempDir()}
	k1, src, err := signingKey(c)
	if err != nil || len(k1) < 32 || !strings.Contains(src, "generated") {
		t.Fatalf("generated key: %d bytes from %q: %v", len(k1), src, err)
	}
	k2, _, err := signingKey(c)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Fatal("the generated key changed across restarts")
	}
	st, err := os.Stat(filepath.Join(c.DataDir, JWTKeyFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v: %v", st.Mode(), err)
	}
	c.JWTSecret = "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldC0xMjM0NQ=="
	k3, src, _ := signingKey(c)
	if bytes.Equal(k3, k1) || src != "JWT_SECRET" {
		t.Fatal("JWT_SECRET not used")
	}
}
