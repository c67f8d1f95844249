package fleet

import (
	"encoding/json"
	"strconv"
	"strings"

	"cpesuite/internal/platform/sqlstore"
)

// The dialect differences of this package live in this file: placeholders
// and how a list of values is passed.

// fromClause is the campaign read of schema.md: every join is a left join,
// so that a device without a product class is still found (by serial or id)
// and a null protocol counts as TR069.
const fromClause = `
FROM acs_devices d
LEFT JOIN acs_product_classes pc ON pc.id = d.product_class_id
LEFT JOIN acs_manufacturers m ON m.id = pc.manufacturer_id
LEFT JOIN acs_protocols p ON p.id = COALESCE(pc.protocol_id, 1)`

// rowColumns are the columns of a Device, in scanDevice's order.
const rowColumns = `SELECT d.id, d.serial, d.product_class_id,
       COALESCE(m.name, ''), COALESCE(pc.model_name, ''),
       d.domain_id, d.online,
       COALESCE(p.name, 'TR069'), COALESCE(p.supported_by_acs, TRUE),
       d.software_version`

// maxInList is the largest visible-domain list put into SQL. Above it the
// spec applies the domain predicate in memory, which also keeps statements
// with tens of thousands of domains from being planned per request.
const maxInList = 1000

// query collects the conditions and arguments of one statement and writes
// placeholders in the dialect's form. The resolver only gets a Queryer, not
// a *sqlstore.DB, so it cannot rely on Rebind.
type query struct {
	dialect sqlstore.Dialect
	conds   []string
	args    []any
}

func newQuery(d sqlstore.Dialect) *query { return &query{dialect: d} }

// arg records v and returns its placeholder.
func (q *query) arg(v any) string {
	q.args = append(q.args, v)
	if q.dialect == sqlstore.Postgres {
		return "$" + strconv.Itoa(len(q.args))
	}
	return "?"
}

func (q *query) where(cond string) { q.conds = append(q.conds, cond) }

// whereClause renders the collected conditions.
func (q *query) whereClause() string {
	if len(q.conds) == 0 {
		return ""
	}
	return "\nWHERE " + strings.Join(q.conds, "\n  AND ")
}

// noIndex marks col so that SQLite does not use an index for the term it
// appears in (the unary + of the SQLite query planner documentation).
// Without statistics SQLite picks the domain index over the serial index,
// scanning a whole domain to find a few serials; PostgreSQL plans from
// statistics and gets the column as is.
func (q *query) noIndex(col string) string {
	if q.dialect == sqlstore.SQLite {
		return "+" + col
	}
	return col
}

// inList adds "col IN list" (or NOT IN) with the whole list as ONE
// parameter, so that lists of 20000 ids or serials neither hit the
// placeholder limits (SQLite 32766, PostgreSQL 65535) nor make every request
// a differently shaped statement. PostgreSQL takes an array (pgx encodes Go
// slices as arrays); SQLite takes a JSON array read through json_each.
// Callers pass []int64 or []string and only use NOT NULL columns with not,
// so the NULL semantics of NOT IN and <> ALL do not come into play.
func (q *query) inList(col string, list any, not bool) { q.where(q.inListExpr(col, list, not)) }

// inListExpr is the condition inList adds, for use inside a subquery.
func (q *query) inListExpr(col string, list any, not bool) string {
	if q.dialect == sqlstore.Postgres {
		if not {
			return col + " <> ALL(" + q.arg(list) + ")"
		}
		return col + " = ANY(" + q.arg(list) + ")"
	}
	// Marshalling a []int64 or []string cannot fail.
	b, _ := json.Marshal(list)
	op := " IN "
	if not {
		op = " NOT IN "
	}
	return col + op + "(SELECT value FROM json_each(" + q.arg(string(b)) + "))"
}
