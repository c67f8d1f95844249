package sqlstore_test

import (
	"errors"
	"fmt"
	"testing"

	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
)

func TestConstraintViolations(t *testing.T) {
	sqltest.ForEachDialect(t, func(t *testing.T, db *sqlstore.DB) {
		mustExec(t, db, "CREATE TABLE parent (id INTEGER PRIMARY KEY, code VARCHAR(20) NOT NULL UNIQUE)")
		// MySQL ignores REFERENCES written on a column; the table-level
		// form works everywhere.
		mustExec(t, db, "CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL, FOREIGN KEY (parent_id) REFERENCES parent (id))")
		mustExec(t, db, "INSERT INTO parent (id, code) VALUES (1, 'a')")
		mustExec(t, db, "INSERT INTO child (id, parent_id) VALUES (1, 1)")

		tests := []struct {
			name       string
			query      string
			wantUnique bool
			wantFK     bool
		}{
			{name: "duplicate unique column", query: "INSERT INTO parent (id, code) VALUES (2, 'a')", wantUnique: true},
			{name: "duplicate primary key", query: "INSERT INTO parent (id, code) VALUES (1, 'b')", wantUnique: true},
			{name: "orphan child", query: "INSERT INTO child (id, parent_id) VALUES (2, 99)", wantFK: true},
			{name: "referenced parent deleted", query: "DELETE FROM parent WHERE id = 1", wantFK: true},
			{name: "not null", query: "INSERT INTO parent (id, code) VALUES (3, NULL)"},
			{name: "syntax error", query: "INSERT INTO nowhere VALUES (1)"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := db.ExecContext(t.Context(), tt.query)
				if err == nil {
					t.Fatalf("%s succeeded, want an error", tt.query)
				}
				wrapped := fmt.Errorf("storing: %w", err)
				if got := sqlstore.IsUniqueViolation(wrapped); got != tt.wantUnique {
					t.Errorf("IsUniqueViolation(%v) = %v, want %v", err, got, tt.wantUnique)
				}
				if got := sqlstore.IsForeignKeyViolation(wrapped); got != tt.wantFK {
					t.Errorf("IsForeignKeyViolation(%v) = %v, want %v", err, got, tt.wantFK)
				}
			})
		}
	})

	for _, err := range []error{nil, errors.New("unique violation")} {
		if sqlstore.IsUniqueViolation(err) || sqlstore.IsForeignKeyViolation(err) {
			t.Errorf("%v is reported as a constraint violation", err)
		}
	}
}
