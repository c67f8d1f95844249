package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// sqliteBusyTimeout is how long a SQLite connection waits for the write lock
// before giving up with SQLITE_BUSY. Writers in one process queue on it, so
// it must outlast the longest write transaction a service runs, not just a
// typical one.
const sqliteBusyTimeout = 10 * time.Second

// Open validates cfg, opens the database with the dialect's driver, applies
// the pool settings and pings it within cfg.ConnectTimeout.
//
// Dialect specifics:
//   - SQLite: the DSN gets busy_timeout, foreign_keys=ON and, for files,
//     WAL journal mode with synchronous=NORMAL; every read-write transaction
//     begins IMMEDIATE; the file's directory is created. An in-memory
//     database is limited to one connection, because each SQLite connection
//     would otherwise see its own empty database.
//   - PostgreSQL: the pgx driver; ConnectTimeout applies to every dial
//     unless the DSN sets connect_timeout.
//   - MySQL/MariaDB: parseTime and multiStatements are forced on (the
//     migrations need several statements per file), the session time zone
//     is UTC unless the DSN sets time_zone, and ConnectTimeout applies to
//     every dial unless the DSN sets timeout.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()

	var (
		sqlDB *sql.DB
		err   error
	)
	switch cfg.Dialect {
	case SQLite:
		sqlDB, cfg, err = openSQLite(cfg)
	case Postgres:
		sqlDB, err = openPostgres(cfg)
	case MySQL:
		sqlDB, err = openMySQL(cfg)
	}
	if err != nil {
		return nil, err
	}
	sqlDB.SetMaxOpenConns(cfg.MaxOpenConns)
	sqlDB.SetMaxIdleConns(cfg.MaxIdleConns)
	sqlDB.SetConnMaxLifetime(cfg.ConnMaxLifetime)

	pingCtx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout)
	defer cancel()
	if err := sqlDB.PingContext(pingCtx); err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("connecting to %s database: %w", cfg.Dialect, err)
	}
	return &DB{DB: sqlDB, dialect: cfg.Dialect, cfg: cfg}, nil
}

// OpenSQLiteFile opens (creating if needed) the SQLite database at path with
// the default pool. It is the embedded default of every service.
func OpenSQLiteFile(ctx context.Context, path string) (*DB, error) {
	return Open(ctx, Config{Dialect: SQLite, DSN: path})
}

func openSQLite(cfg Config) (*sql.DB, Config, error) {
	dsn, file, memory, err := sqliteDSN(cfg.DSN)
	if err != nil {
		return nil, cfg, err
	}
	if memory {
		cfg.MaxOpenConns, cfg.MaxIdleConns, cfg.ConnMaxLifetime = 1, 1, 0
	}
	if dir := filepath.Dir(file); file != "" && dir != "." {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, cfg, fmt.Errorf("creating sqlite database directory: %w", err)
		}
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, cfg, fmt.Errorf("opening sqlite database: %w", err)
	}
	return db, cfg, nil
}

// sqlitePragmas are set on every connection unless the DSN already sets them.
// The keys are the pragma names; the aliases are modernc's shorthand DSN
// parameters for the same pragma, which also count as "already set".
var sqlitePragmas = []struct {
	name, value string
	aliases     []string
	fileOnly    bool
}{
	// busy_timeout makes a connection wait for the write lock instead of
	// failing at once with SQLITE_BUSY.
	{name: "busy_timeout", value: strconv.FormatInt(sqliteBusyTimeout.Milliseconds(), 10), aliases: []string{"_busy_timeout", "_timeout"}},
	// SQLite ignores foreign keys unless each connection asks for them.
	{name: "foreign_keys", value: "1", aliases: []string{"_foreign_keys", "_fk"}},
	// WAL lets readers run while one connection writes. In-memory
	// databases cannot use it.
	{name: "journal_mode", value: "WAL", aliases: []string{"_journal_mode", "_journal"}, fileOnly: true},
	// In WAL mode NORMAL cannot corrupt the database; it may lose the last
	// transactions on power loss, and it makes each commit far cheaper.
	{name: "synchronous", value: "NORMAL", aliases: []string{"_synchronous", "_sync"}, fileOnly: true},
}

// sqliteDSN adds sqlstore's settings to a SQLite DSN. It returns the DSN for
// the driver, the database file's path (empty for in-memory databases) and
// whether the database lives in memory.
func sqliteDSN(dsn string) (out, file string, memory bool, err error) {
	base, rawQuery, _ := strings.Cut(dsn, "?")
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return "", "", false, fmt.Errorf("sqlstore config: DSN: parsing sqlite parameters: %w", err)
	}
	memory = strings.Contains(base, ":memory:") || q.Get("mode") == "memory"
	if !memory {
		if file, err = sqliteFilePath(base); err != nil {
			return "", "", false, err
		}
	}

	set := map[string]bool{}
	for _, p := range q["_pragma"] {
		name, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(p)), "(")
		name, _, _ = strings.Cut(name, "=")
		set[strings.TrimSpace(name)] = true
	}
	for _, p := range sqlitePragmas {
		if set[p.name] || (p.fileOnly && memory) || hasAny(q, p.aliases) {
			continue
		}
		q.Add("_pragma", p.name+"("+p.value+")")
	}

	// A deferred transaction that reads and then writes must upgrade its
	// lock, and in WAL mode SQLite fails that upgrade with SQLITE_BUSY
	// without waiting whenever another connection committed in between.
	// Beginning every read-write transaction IMMEDIATE takes the write
	// lock up front, where busy_timeout applies. Read-only transactions
	// stay deferred in the driver.
	switch v := q.Get("_txlock"); {
	case v == "":
		q.Set("_txlock", "immediate")
	case !strings.EqualFold(v, "immediate"):
		return "", "", false, fmt.Errorf("sqlstore config: DSN: _txlock=%s is not supported; sqlstore needs immediate transactions to avoid SQLITE_BUSY", v)
	}
	// Time values written in SQLite's own format sort correctly as text
	// and work with SQLite's date functions.
	if q.Get("_time_format") == "" {
		q.Set("_time_format", "sqlite")
	}
	return base + "?" + q.Encode(), file, memory, nil
}

// sqliteFilePath extracts the file system path from a plain path or a file:
// URI such as file:data/acs.db or file:///var/lib/cpesuite/acs.db.
func sqliteFilePath(base string) (string, error) {
	if base == "" {
		return "", fmt.Errorf("sqlstore config: DSN: sqlite DSN has no file path")
	}
	rest, ok := strings.CutPrefix(base, "file:")
	if !ok {
		return base, nil
	}
	if auth, ok := strings.CutPrefix(rest, "//"); ok {
		// The authority of a file: URI is empty or localhost; the path
		// starts at the next slash.
		i := strings.IndexByte(auth, '/')
		if i < 0 {
			return "", fmt.Errorf("sqlstore config: DSN: sqlite URI %q has no path", base)
		}
		rest = auth[i:]
	}
	p, err := url.PathUnescape(rest)
	if err != nil {
		return "", fmt.Errorf("sqlstore config: DSN: sqlite URI path: %w", err)
	}
	if p == "" {
		return "", fmt.Errorf("sqlstore config: DSN: sqlite DSN has no file path")
	}
	return p, nil
}

func hasAny(q url.Values, keys []string) bool {
	for _, k := range keys {
		if q.Has(k) {
			return true
		}
	}
	return false
}

func openPostgres(cfg Config) (*sql.DB, error) {
	pcfg, err := pgx.ParseConfig(cfg.DSN)
	if err != nil {
		return nil, fmt.Errorf("sqlstore config: DSN: parsing postgres DSN: %w", err)
	}
	if pcfg.ConnectTimeout == 0 {
		pcfg.ConnectTimeout = cfg.ConnectTimeout
	}
	return stdlib.OpenDB(*pcfg), nil
}

func openMySQL(cfg Config) (*sql.DB, error) {
	mcfg, err := mysql.ParseDSN(cfg.DSN)
	if err != nil {
		return nil, fmt.Errorf("sqlstore config: DSN: parsing mysql DSN: %w", err)
	}
	mcfg.ParseTime = true
	mcfg.MultiStatements = true
	if mcfg.Timeout == 0 {
		mcfg.Timeout = cfg.ConnectTimeout
	}
	if mcfg.Params == nil {
		mcfg.Params = map[string]string{}
	}
	// The driver reads DATETIME values as UTC (its Loc default); a UTC
	// session makes NOW() and TIMESTAMP columns agree with that.
	if _, ok := mcfg.Params["time_zone"]; !ok {
		mcfg.Params["time_zone"] = "'+00:00'"
	}
	connector, err := mysql.NewConnector(mcfg)
	if err != nil {
		return nil, fmt.Errorf("sqlstore config: DSN: mysql connector: %w", err)
	}
	return sql.OpenDB(connector), nil
}

// OpenService opens a service's store as its configuration names it:
// PostgreSQL with dsn when dialect is "postgres", otherwise a SQLite file
// at dsn, or at sqlitePath when dsn is empty (the embedded default in the
// data dir).
func OpenService(ctx context.Context, dialect, dsn, sqlitePath string) (*DB, error) {
	if dialect == string(Postgres) {
		return Open(ctx, Config{Dialect: Postgres, DSN: dsn})
	}
	if dsn == "" {
		dsn = sqlitePath
	}
	return OpenSQLiteFile(ctx, dsn)
}
