// Package sqlstore is the one way services open relational databases.
//
// It hides the three dialects cpesuite runs on behind one small surface:
// SQLite (modernc.org/sqlite, the embedded default), PostgreSQL (pgx through
// database/sql) and MariaDB/MySQL (go-sql-driver/mysql). Services write one
// query text with ? placeholders and pass it through [DB.Rebind]; they run
// their writes through [DB.InTx]; they recognise constraint errors with
// [IsUniqueViolation] and [IsForeignKeyViolation]; and they keep their schema
// in embedded, append-only migration files applied by [Migrate].
//
// The sqltest subpackage runs a test body against every dialect on an
// isolated database.
package sqlstore
