package sqlstore

import (
	"strings"
	"testing"
)

func TestParseDialect(t *testing.T) {
	tests := []struct {
		in      string
		want    Dialect
		wantErr bool
	}{
		{in: "sqlite", want: SQLite},
		{in: "SQLite", want: SQLite},
		{in: "postgres", want: Postgres},
		{in: "postgresql", want: Postgres},
		{in: " PostgreSQL ", want: Postgres},
		{in: "mysql", want: MySQL},
		{in: "mariadb", want: MySQL},
		{in: "MariaDB", want: MySQL},
		{in: "", wantErr: true},
		{in: "sqlite3", wantErr: true},
		{in: "oracle", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDialect(tt.in)
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "unknown dialect") {
					t.Fatalf("ParseDialect(%q) = %q, %v; want an unknown dialect error", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseDialect(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestRebind(t *testing.T) {
	tests := []struct {
		name  string
		query string
		want  string // for Postgres; the other dialects must get query back
	}{
		{"no placeholders", "SELECT 1", "SELECT 1"},
		{"one", "SELECT * FROM t WHERE a = ?", "SELECT * FROM t WHERE a = $1"},
		{"several", "INSERT INTO t (a, b, c) VALUES (?, ?, ?)", "INSERT INTO t (a, b, c) VALUES ($1, $2, $3)"},
		{"ten or more", "VALUES (?,?,?,?,?,?,?,?,?,?,?)", "VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)"},
		{"in string literal", "SELECT '?' FROM t WHERE a = ?", "SELECT '?' FROM t WHERE a = $1"},
		{"escaped quote in literal", "SELECT 'it''s ?' , ? FROM t", "SELECT 'it''s ?' , $1 FROM t"},
		{"empty literal", "SELECT '', ?", "SELECT '', $1"},
		{"quoted identifier", `SELECT "odd?col" FROM t WHERE a = ?`, `SELECT "odd?col" FROM t WHERE a = $1`},
		{"line comment", "SELECT ? -- why?\n, ?", "SELECT $1 -- why?\n, $2"},
		{"line comment at end", "SELECT ? -- why?", "SELECT $1 -- why?"},
		{"block comment", "SELECT /* a? b? */ ?", "SELECT /* a? b? */ $1"},
		{"unterminated literal", "SELECT ?, 'oops ?", "SELECT $1, 'oops ?"},
		{"unterminated comment", "SELECT ? /* oops ?", "SELECT $1 /* oops ?"},
		{"minus and slash are not comments", "SELECT ? - 1, ? / 2", "SELECT $1 - 1, $2 / 2"},
		{"utf-8 around", "SELECT 'ünï?', ? AS größe", "SELECT 'ünï?', $1 AS größe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (&DB{dialect: Postgres}).Rebind(tt.query); got != tt.want {
				t.Errorf("postgres: Rebind(%q)\n got %q\nwant %q", tt.query, got, tt.want)
			}
			for _, d := range []Dialect{SQLite, MySQL} {
				if got := (&DB{dialect: d}).Rebind(tt.query); got != tt.query {
					t.Errorf("%s: Rebind(%q) = %q, want it unchanged", d, tt.query, got)
				}
			}
		})
	}
}
