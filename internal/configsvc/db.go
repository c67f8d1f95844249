package configsvc

import (
	"context"
	"embed"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"cpesuite/internal/platform/config"
	"cpesuite/internal/platform/sqlstore"
)

//go:embed migrations
var migrations embed.FS

// serviceName keys the service's rows in schema_migrations.
const serviceName = "configs"

// StoreConfig turns the profile and its DB*_ variables into the store to
// open. The local profile keeps SQLite's own pool sizing (one writer; the
// DB_* pool variables are for the server profiles).
func (c *Config) StoreConfig() (sqlstore.Config, error) {
	timeout := time.Duration(c.Pool.TimeoutMS) * time.Millisecond
	switch c.Profile {
	case ProfileMySQL:
		dsn, err := mysqlDSN(c.DBA, c.DBHost, timeout)
		if err != nil {
			return sqlstore.Config{}, err
		}
		return c.pooled(sqlstore.MySQL, dsn, timeout), nil
	case ProfilePostgres:
		dsn, err := postgresDSN(c.DBB, c.DBHost, timeout)
		if err != nil {
			return sqlstore.Config{}, err
		}
		return c.pooled(sqlstore.Postgres, dsn, timeout), nil
	default:
		return sqlstore.Config{Dialect: sqlstore.SQLite, DSN: filepath.Join(c.DataDir, "configs.db"), ConnectTimeout: timeout}, nil
	}
}

// pooled maps the Hikari-style pool settings onto database/sql: the
// maximum is MaxOpenConns; database/sql cannot hold a minimum of idle
// connections, so DB_MIN_IDLE becomes the idle cap, which keeps that many
// warm connections once they have been used.
func (c *Config) pooled(d sqlstore.Dialect, dsn string, timeout time.Duration) sqlstore.Config {
	return sqlstore.Config{
		Dialect:        d,
		DSN:            dsn,
		MaxOpenConns:   c.Pool.MaxPoolSize,
		MaxIdleConns:   c.Pool.MinIdle,
		ConnectTimeout: timeout,
	}
}

func hostOr(host, dbHost string) string {
	switch {
	case strings.TrimSpace(host) != "":
		return strings.TrimSpace(host)
	case strings.TrimSpace(dbHost) != "":
		return strings.TrimSpace(dbHost)
	}
	return "localhost"
}

// mysqlDSN builds the go-sql-driver DSN of vendor A. An explicit
// DBA_JDBC_URL (jdbc:mysql:// or jdbc:mariadb://) wins over the
// decomposed variables; user and password come from the URL's user info or
// its user/password parameters, else from DBA_USER/DBA_PASSWORD.
func mysqlDSN(v VendorDB, dbHost string, timeout time.Duration) (string, error) {
	cfg := mysql.NewConfig()
	cfg.Net = "tcp"
	cfg.User, cfg.Passwd = v.User, v.Password
	cfg.Timeout = timeout
	if v.JDBCURL != "" {
		u, err := parseJDBC(v.JDBCURL, "DBA_JDBC_URL", "mysql", "mariadb")
		if err != nil {
			return "", err
		}
		cfg.Addr = hostPort(u, 3306)
		cfg.DBName = strings.TrimPrefix(u.Path, "/")
		q := u.Query()
		if u.User != nil {
			cfg.User = u.User.Username()
			if p, ok := u.User.Password(); ok {
				cfg.Passwd = p
			}
		}
		if q.Get("user") != "" {
			cfg.User = q.Get("user")
		}
		if q.Has("password") {
			cfg.Passwd = q.Get("password")
		}
	} else {
		cfg.Addr = net.JoinHostPort(hostOr(v.Host, dbHost), strconv.Itoa(v.Port))
		cfg.DBName = v.Schema
	}
	if cfg.DBName == "" {
		return "", config.Errorf("DBA_SCHEMA", "names no database")
	}
	return cfg.FormatDSN(), nil
}

// postgresDSN builds the pgx URL of vendor B. DBB_SERVICE (Oracle's service
// name in the spec) is the database, DBB_SCHEMA the search path. An explicit
// DBB_JDBC_URL (jdbc:postgresql://) wins; its currentSchema parameter maps
// to search_path as in the PostgreSQL JDBC driver.
func postgresDSN(v VendorDB, dbHost string, timeout time.Duration) (string, error) {
	out := url.URL{Scheme: "postgres"}
	q := url.Values{}
	user, pass := v.User, v.Password
	schema := v.Schema
	if v.JDBCURL != "" {
		u, err := parseJDBC(v.JDBCURL, "DBB_JDBC_URL", "postgresql")
		if err != nil {
			return "", err
		}
		out.Host = hostPort(u, 5432)
		out.Path = u.Path
		in := u.Query()
		if u.User != nil {
			user = u.User.Username()
			if p, ok := u.User.Password(); ok {
				pass = p
			}
		}
		if in.Get("user") != "" {
			user = in.Get("user")
		}
		if in.Has("password") {
			pass = in.Get("password")
		}
		if s := in.Get("currentSchema"); s != "" {
			schema = s
		}
		if s := in.Get("sslmode"); s != "" {
			q.Set("sslmode", s)
		}
	} else {
		out.Host = net.JoinHostPort(hostOr(v.Host, dbHost), strconv.Itoa(v.Port))
		out.Path = "/" + v.Service
	}
	if strings.Trim(out.Path, "/") == "" {
		return "", config.Errorf("DBB_SERVICE", "names no database")
	}
	out.User = url.UserPassword(user, pass)
	if schema != "" {
		q.Set("search_path", schema)
	}
	if !q.Has("sslmode") {
		q.Set("sslmode", "prefer")
	}
	q.Set("connect_timeout", strconv.Itoa(max(1, int(timeout/time.Second))))
	out.RawQuery = q.Encode()
	return out.String(), nil
}

// parseJDBC parses jdbc:<sub>://host[:port]/db?params. The error never
// repeats the URL: it may carry a password.
func parseJDBC(raw, env string, subs ...string) (*url.URL, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(raw), "jdbc:")
	if !ok {
		return nil, config.Errorf(env, "must start with jdbc:")
	}
	u, err := url.Parse(rest)
	if err != nil || u.Host == "" {
		return nil, config.Errorf(env, "is not jdbc:%s://host[:port]/database", subs[0])
	}
	for _, s := range subs {
		if u.Scheme == s {
			return u, nil
		}
	}
	return nil, config.Errorf(env, "sub-protocol %q is not supported here; want jdbc:%s://", u.Scheme, strings.Join(subs, ":// or jdbc:"))
}

func hostPort(u *url.URL, def int) string {
	if u.Port() != "" {
		return u.Host
	}
	return net.JoinHostPort(u.Hostname(), strconv.Itoa(def))
}

// openDB opens the profile's database and brings its schema up to date.
func openDB(ctx context.Context, c *Config) (*sqlstore.DB, error) {
	sc, err := c.StoreConfig()
	if err != nil {
		return nil, err
	}
	db, err := sqlstore.Open(ctx, sc)
	if err != nil {
		return nil, fmt.Errorf("configs store (%s profile): %w", c.Profile, err)
	}
	if err := sqlstore.Migrate(ctx, db, serviceName, migrations); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}
