package results

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

//go:embed migrations
var migrationFS embed.FS

// migration is one numbered file of migrations/<engine>/, NNNN_name.sql.
// The list per engine is append-only: a released file never changes.
type migration struct {
	version    int
	name       string
	statements []string
}

// loadMigrations reads an engine's migrations in version order and checks
// that they are numbered 1, 2, 3, ... without gaps, so "N pending" is
// simply the code's count minus the stored version.
func loadMigrations(engine string) ([]migration, error) {
	dir := path.Join("migrations", engine)
	entries, err := fs.ReadDir(migrationFS, dir)
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("migration %s: want NNNN_name.sql", e.Name())
		}
		b, err := migrationFS.ReadFile(path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: e.Name(), statements: statements(string(b))})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: want version %d", m.name, i+1)
		}
	}
	return ms, nil
}

// mustMigrations panics on a malformed embedded list: a build error, which
// the tests catch.
func mustMigrations(engine string) []migration {
	ms, err := loadMigrations(engine)
	if err != nil {
		panic(err)
	}
	return ms
}

// statements splits a file at semicolons that end a line: the ClickHouse
// protocol takes one statement per query. Comment lines are dropped.
func statements(sql string) []string {
	var out []string
	var cur strings.Builder
	for line := range strings.Lines(sql) {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "--") || t == "" {
			continue
		}
		cur.WriteString(line)
		if strings.HasSuffix(t, ";") {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"))
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

// schemaStatus turns stored and code versions into a Status.
func schemaStatus(stored, code int) Status {
	switch {
	case stored < code:
		return Status{State: StateSchemaBehind, Reason: fmt.Sprintf("%d migrations pending", code-stored)}
	case stored > code:
		// A newer build migrated; the list is append-only, so this build's
		// tables are all there.
		return Status{State: StateUp, Reason: fmt.Sprintf("schema version %d is newer than this build's %d", stored, code)}
	}
	return Status{State: StateUp}
}
