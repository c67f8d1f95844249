package sqlstore

import (
	"fmt"
	"strconv"
	"strings"
)

// Dialect names a family of SQL databases. Its value is also the name of the
// directory that holds the dialect's migrations.
type Dialect string

// The dialects sqlstore supports.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
	// MySQL covers MariaDB as well; the two speak the same wire protocol and,
	// for what services use, the same SQL.
	MySQL Dialect = "mysql"
)

// ParseDialect turns a configuration value into a Dialect. It accepts
// "sqlite", "postgres" or "postgresql", and "mysql" or "mariadb", in any case.
func ParseDialect(s string) (Dialect, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "sqlite":
		return SQLite, nil
	case "postgres", "postgresql":
		return Postgres, nil
	case "mysql", "mariadb":
		return MySQL, nil
	}
	return "", fmt.Errorf("unknown dialect %q (want sqlite, postgres or mysql)", s)
}

// String returns the dialect's canonical name.
func (d Dialect) String() string { return string(d) }

// valid reports whether d is one of the supported dialects.
func (d Dialect) valid() bool {
	return d == SQLite || d == Postgres || d == MySQL
}

// rebind rewrites ? placeholders into the dialect's native form. Only
// PostgreSQL needs it ($1, $2, ...); SQLite and MySQL take ? as written.
//
// Question marks inside string literals, quoted identifiers and comments are
// not placeholders and are left alone. Not understood, because store queries
// have no need for them: backslash escapes in E'...' strings, dollar-quoted
// strings, and PostgreSQL's jsonb operators ?, ?| and ?& (use the functions
// jsonb_exists, jsonb_exists_any and jsonb_exists_all instead).
func rebind(d Dialect, query string) string {
	if d != Postgres || !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '\'' || c == '"':
			// A doubled quote inside a literal ('it''s') closes and reopens
			// it, so scanning to the next quote handles escaping for free.
			end := strings.IndexByte(query[i+1:], c)
			if end < 0 {
				b.WriteString(query[i:])
				return b.String()
			}
			b.WriteString(query[i : i+end+2])
			i += end + 1
		case c == '-' && i+1 < len(query) && query[i+1] == '-':
			end := strings.IndexByte(query[i:], '\n')
			if end < 0 {
				b.WriteString(query[i:])
				return b.String()
			}
			b.WriteString(query[i : i+end+1])
			i += end
		case c == '/' && i+1 < len(query) && query[i+1] == '*':
			end := strings.Index(query[i+2:], "*/")
			if end < 0 {
				b.WriteString(query[i:])
				return b.String()
			}
			b.WriteString(query[i : i+end+4])
			i += end + 3
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
