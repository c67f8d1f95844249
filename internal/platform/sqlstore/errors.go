package sqlstore

import (
	"errors"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// PostgreSQL SQLSTATE codes (class 23, integrity constraint violation).
const (
	pgUniqueViolation     = "23505"
	pgForeignKeyViolation = "23503"
)

// MySQL/MariaDB server error numbers.
const (
	myDupEntry            = 1062 // ER_DUP_ENTRY
	myDupEntryWithKeyName = 1586 // ER_DUP_ENTRY_WITH_KEY_NAME
	myNoReferencedRow     = 1216 // ER_NO_REFERENCED_ROW (older servers)
	myRowIsReferenced     = 1217 // ER_ROW_IS_REFERENCED (older servers)
	myRowIsReferenced2    = 1451 // ER_ROW_IS_REFERENCED_2: deleting a referenced parent
	myNoReferencedRow2    = 1452 // ER_NO_REFERENCED_ROW_2: inserting an orphan child
)

// IsUniqueViolation reports whether err, or an error it wraps, is a unique
// or primary key constraint violation from any of the three drivers.
func IsUniqueViolation(err error) bool {
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		return pgErr.Code == pgUniqueViolation
	}
	if myErr, ok := errors.AsType[*mysql.MySQLError](err); ok {
		return myErr.Number == myDupEntry || myErr.Number == myDupEntryWithKeyName
	}
	if sqErr, ok := errors.AsType[*sqlite.Error](err); ok {
		// modernc turns on extended result codes, which tell unique and
		// primary key violations apart from the other constraint kinds.
		return sqErr.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || sqErr.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// IsForeignKeyViolation reports whether err, or an error it wraps, is a
// foreign key constraint violation from any of the three drivers: a child row
// that references a missing parent, or a parent deleted while still
// referenced.
func IsForeignKeyViolation(err error) bool {
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		return pgErr.Code == pgForeignKeyViolation
	}
	if myErr, ok := errors.AsType[*mysql.MySQLError](err); ok {
		switch myErr.Number {
		case myNoReferencedRow, myRowIsReferenced, myRowIsReferenced2, myNoReferencedRow2:
			return true
		}
		return false
	}
	if sqErr, ok := errors.AsType[*sqlite.Error](err); ok {
		return sqErr.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
	}
	return false
}
