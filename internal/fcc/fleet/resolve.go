package fleet

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"

	"cpesuite/internal/platform/apperr"
)

// plan is a validated selection, ready to run.
type plan struct {
	sel   Selection
	scope Scope
	// visible is set when the scope lists more than maxInList domains: the
	// domain predicate is then applied to the rows instead of in SQL.
	visible map[int64]bool
	// serials is the distinct serial list of a SourceSerials selection.
	serials *serialList
	// none says the match is empty without reading: the caller sees
	// nothing, or the list to match is empty.
	none bool
}

// serialList is a request's serials, blanks dropped and case-insensitive
// duplicates collapsed to the first spelling, in request order.
type serialList struct {
	keys     []string          // lower-cased, distinct, in request order
	spelling map[string]string // key -> the caller's first spelling
}

func newSerialList(serials []string) *serialList {
	l := &serialList{spelling: make(map[string]string, len(serials))}
	for _, s := range serials {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		k := strings.ToLower(s)
		if _, dup := l.spelling[k]; dup {
			continue
		}
		l.spelling[k] = s
		l.keys = append(l.keys, k)
	}
	return l
}

// report lists the caller's spelling of every key that pick accepts, in
// request order; never nil.
func (l *serialList) report(pick func(key string) bool) []string {
	out := []string{}
	if l == nil {
		return out
	}
	for _, k := range l.keys {
		if pick(k) {
			out = append(out, l.spelling[k])
		}
	}
	return out
}

// prepare validates sel and narrows the scope. Every refusal happens here,
// before any statement.
func (r *Resolver) prepare(scope Scope, sel Selection) (*plan, error) {
	if _, err := ParseSourceType(string(sel.Source)); err != nil {
		return nil, err
	}
	p := &plan{sel: sel}
	switch sel.Source {
	case SourceSerials:
		p.serials = newSerialList(sel.Serials)
		if r.maxDevices > 0 && len(p.serials.keys) > r.maxDevices {
			return nil, apperr.Invalid("", "the serial list holds %d distinct serials, more than the limit of %d",
				len(p.serials.keys), r.maxDevices)
		}
		p.none = len(p.serials.keys) == 0
	case SourceDevices:
		p.none = len(sel.DeviceIDs) == 0
	}
	if sel.Source != SourceAll {
		if err := CheckRules(sel.Condition.Rules); err != nil {
			return nil, err
		}
	}
	narrowed, empty := scope.Narrow(sel.Condition.DomainIDs)
	if empty || narrowed.Empty() {
		p.none = true
	}
	p.scope = narrowed
	if !narrowed.All && len(narrowed.DomainIDs) > maxInList {
		p.visible = make(map[int64]bool, len(narrowed.DomainIDs))
		for _, id := range narrowed.DomainIDs {
			p.visible[id] = true
		}
	}
	return p, nil
}

// filter adds the selection's predicates to q. Exclusions go into SQL only
// when excludeInSQL: the serial row read applies them while reading, so that
// an unselected device still counts as found for the serial reports.
func (r *Resolver) filter(q *query, p *plan, excludeInSQL bool) {
	sel := p.sel
	if !p.scope.All && p.visible == nil {
		col := "d.domain_id"
		if sel.Source == SourceSerials {
			// A serial list is the selective predicate; keep SQLite from
			// walking every device of the visible domains instead.
			col = q.noIndex(col)
		}
		q.inList(col, p.scope.DomainIDs, false)
	}
	// Model-based predicates select product class ids in a subquery rather
	// than filter the joined rows: the WHERE clause then reads acs_devices
	// alone, so the count can aggregate before it joins (see count), and a
	// device without a product class is still excluded (NULL IN (...) is
	// not true), as the left-join reading of the contract requires.
	if name := strings.TrimSpace(sel.Manufacturer); name != "" {
		q.where("d.product_class_id IN (SELECT pcf.id FROM acs_product_classes pcf JOIN acs_manufacturers mf ON mf.id = pcf.manufacturer_id WHERE lower(mf.name) = lower(" + q.arg(name) + "))")
	}
	if name := strings.TrimSpace(sel.Model); name != "" {
		q.where("d.product_class_id IN (SELECT pcf.id FROM acs_product_classes pcf WHERE lower(pcf.model_name) = lower(" + q.arg(name) + "))")
	}
	switch sel.Source {
	case SourceDevices:
		q.inList("d.id", sel.DeviceIDs, false)
	case SourceSerials:
		q.inList("lower(d.serial)", p.serials.keys, false)
	}
	// The condition's fields narrow every source but ALL, which by
	// definition is "every visible device of the chosen model"; this is how
	// an upload honours onlyOnline.
	if sel.Source != SourceAll {
		c := sel.Condition
		if len(c.ManufacturerIDs) > 0 {
			q.where("d.product_class_id IN (SELECT pcf.id FROM acs_product_classes pcf WHERE " + q.inListExpr("pcf.manufacturer_id", c.ManufacturerIDs, false) + ")")
		}
		if len(c.ModelIDs) > 0 {
			q.inList("d.product_class_id", c.ModelIDs, false)
		}
		if c.OnlyOnline {
			q.where("d.online = TRUE")
		}
		for _, rule := range c.Rules {
			addRule(q, rule)
		}
	}
	if excludeInSQL && len(sel.Exclude) > 0 {
		q.inList("d.id", sel.Exclude, true)
	}
}

// addRule translates one rule already accepted by CheckRules. The column
// comes from the fixed map, never from the rule.
func addRule(q *query, rule Rule) {
	col := ruleColumns[rule.Key]
	switch rule.Op {
	case "eq":
		q.where(col + " = " + q.arg(rule.Value))
	case "ne":
		q.where(col + " <> " + q.arg(rule.Value))
	case "in":
		q.inList(col, rule.Values, false)
	case "notIn":
		q.inList(col, rule.Values, true)
	case "startsWith":
		q.where(col + " LIKE " + q.arg(likePrefix(rule.Value)) + ` ESCAPE '\'`)
	}
}

// modelKey identifies a countsByModel group; valid false is the group of
// devices without a product class.
type modelKey struct {
	valid bool
	id    int64
}

// count runs the one COUNT statement: per model (and per domain when the
// domain predicate is applied in memory) the device, online and unsupported
// counts. The totals are sums over the groups.
func (r *Resolver) count(ctx context.Context, p *plan) (Counts, error) {
	c := emptyCounts()
	q := newQuery(r.dialect)
	r.filter(q, p, true)
	// Aggregate acs_devices first, then join the few groups to the small
	// tables: the joins run once per model instead of once per device, and
	// with the (product_class_id, online, domain_id) index a count over a
	// model's 200,000 devices is an index-only scan.
	group, domainCol := "d.product_class_id", ""
	if p.visible != nil {
		group += ", d.domain_id"
		domainCol = ", a.domain_id"
	}
	stmt := `SELECT a.product_class_id, COALESCE(m.name, ''), COALESCE(pc.model_name, '')` + domainCol + `,
       a.n, a.online, CASE WHEN COALESCE(p.supported_by_acs, TRUE) THEN 0 ELSE a.n END
FROM (SELECT ` + group + `, COUNT(*) AS n, SUM(CASE WHEN d.online THEN 1 ELSE 0 END) AS online
      FROM acs_devices d` + q.whereClause() + "\n      GROUP BY " + group + `) a
LEFT JOIN acs_product_classes pc ON pc.id = a.product_class_id
LEFT JOIN acs_manufacturers m ON m.id = pc.manufacturer_id
LEFT JOIN acs_protocols p ON p.id = COALESCE(pc.protocol_id, 1)`
	rows, err := r.db.QueryContext(ctx, stmt, q.args...)
	if err != nil {
		return c, fmt.Errorf("counting fleet: %w", err)
	}
	defer rows.Close()
	byModel := map[modelKey]int{} // index into c.CountsByModel
	for rows.Next() {
		var (
			modelID             sql.NullInt64
			domainID            sql.NullInt64
			mc                  ModelCount
			total, online, unsp int64
		)
		dest := []any{&modelID, &mc.Manufacturer, &mc.Model}
		if p.visible != nil {
			dest = append(dest, &domainID)
		}
		dest = append(dest, &total, &online, &unsp)
		if err := rows.Scan(dest...); err != nil {
			return c, fmt.Errorf("counting fleet: %w", err)
		}
		if p.visible != nil && (!domainID.Valid || !p.visible[domainID.Int64]) {
			continue
		}
		c.TotalCount += total
		c.OnlineCount += online
		c.UnsupportedProtocolCount += unsp
		key := modelKey{modelID.Valid, modelID.Int64}
		i, ok := byModel[key]
		if !ok {
			mc.ModelID = nullableID(modelID)
			c.CountsByModel = append(c.CountsByModel, mc)
			i = len(c.CountsByModel) - 1
			byModel[key] = i
		}
		c.CountsByModel[i].DeviceCount += total
		c.CountsByModel[i].OnlineCount += online
	}
	if err := rows.Err(); err != nil {
		return c, fmt.Errorf("counting fleet: %w", err)
	}
	slices.SortFunc(c.CountsByModel, func(a, b ModelCount) int {
		if n := cmp.Compare(b.DeviceCount, a.DeviceCount); n != 0 {
			return n
		}
		return compareIDs(a.ModelID, b.ModelID)
	})
	return c, nil
}

// compareIDs orders model ids ascending with the group of devices without a
// model last.
func compareIDs(a, b *int64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return cmp.Compare(*a, *b)
}

func emptyCounts() Counts {
	return Counts{CountsByModel: []ModelCount{}, NotFoundSerials: []string{}, DuplicateSerials: []string{}}
}

func nullableID(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	v := n.Int64
	return &v
}

// read runs the one row statement, ordered by cpeId, and hands every visible
// row to visit until visit returns false. limit >= 0 pages in SQL (offset
// rows skipped by the database); that is only possible when nothing is
// filtered in memory. For serial lists visit also gets the matched key,
// lower(d.serial) as the database computed it, so that a row is attributed
// to exactly the requested serial the database matched it with.
func (r *Resolver) read(ctx context.Context, p *plan, limit, offset int64, visit func(d Device, key string) bool) error {
	q := newQuery(r.dialect)
	serials := p.serials != nil
	r.filter(q, p, !serials)
	stmt := rowColumns
	if serials {
		stmt += ", lower(d.serial)"
	}
	stmt += fromClause + q.whereClause() + "\nORDER BY d.id"
	if limit >= 0 {
		stmt += " LIMIT " + q.arg(limit) + " OFFSET " + q.arg(offset)
	}
	rows, err := r.db.QueryContext(ctx, stmt, q.args...)
	if err != nil {
		return fmt.Errorf("reading fleet: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			d                 Device
			modelID, domainID sql.NullInt64
			key               string
		)
		dest := []any{&d.CPEID, &d.Serial, &modelID, &d.Manufacturer, &d.Model, &domainID, &d.Online, &d.Protocol, &d.SupportedByACS, &d.Firmware}
		if serials {
			dest = append(dest, &key)
		}
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("reading fleet: %w", err)
		}
		if p.visible != nil && (!domainID.Valid || !p.visible[domainID.Int64]) {
			continue
		}
		d.ModelID, d.DomainID = nullableID(modelID), nullableID(domainID)
		if !visit(d, key) {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading fleet: %w", err)
	}
	return nil
}

// readSerials reads the whole match of a serial list (bounded by the serial
// count) so that both serial reports come from the same read as the
// devices. Reports describe what the serials resolve to in the caller's
// visible fleet; exclusions (unselected devices) are applied afterwards, so
// that unselecting one device of a serial neither makes the serial "not
// found" nor hides that it is ambiguous. keep gets the devices of the match.
func (r *Resolver) readSerials(ctx context.Context, p *plan, c *Counts, keep func(Device)) error {
	exclude := make(map[int64]bool, len(p.sel.Exclude))
	for _, id := range p.sel.Exclude {
		exclude[id] = true
	}
	found := make(map[string]int, len(p.serials.keys))
	err := r.read(ctx, p, -1, 0, func(d Device, key string) bool {
		found[key]++
		if !exclude[d.CPEID] {
			keep(d)
		}
		return true
	})
	if err != nil {
		return err
	}
	c.NotFoundSerials = p.serials.report(func(k string) bool { return found[k] == 0 })
	c.DuplicateSerials = p.serials.report(func(k string) bool { return found[k] > 1 })
	return nil
}

// needSerialRead says whether a serial list needs its row read for the
// reports: not when nothing matched, since every serial is then not found,
// unless exclusions may have hidden matches from the count.
func needSerialRead(p *plan, c Counts) bool {
	return c.TotalCount > 0 || len(p.sel.Exclude) > 0
}

// emptyResult is the answer for a match known to be empty without reading:
// every requested serial is not found.
func emptyResult(p *plan) Result {
	c := emptyCounts()
	c.NotFoundSerials = p.serials.report(func(string) bool { return true })
	return Result{Items: []Device{}, Counts: c}
}

// Resolve answers the counters over the whole match plus one page of items
// sliced from the match ordered by cpeId. It runs exactly one count
// statement and then at most one row statement: none when the page is empty
// (Size 0 or beyond the end) and no serial report needs the rows. An empty
// scope answers an empty result, every requested serial not found, without
// any statement.
func (r *Resolver) Resolve(ctx context.Context, scope Scope, sel Selection, page Page) (Result, error) {
	p, err := r.prepare(scope, sel)
	if err != nil {
		return Result{}, err
	}
	if p.none {
		return emptyResult(p), nil
	}
	size, offset := r.window(page)
	c, err := r.count(ctx, p)
	if err != nil {
		return Result{}, err
	}
	res := Result{Items: []Device{}, Counts: c}
	if p.serials != nil {
		if !needSerialRead(p, c) {
			res.NotFoundSerials = p.serials.report(func(string) bool { return true })
			return res, nil
		}
		// The page is sliced here rather than in SQL: the reports need
		// every row anyway.
		var i int64
		err := r.readSerials(ctx, p, &res.Counts, func(d Device) {
			if i >= offset && i-offset < size {
				res.Items = append(res.Items, d)
			}
			i++
		})
		if err != nil {
			return Result{}, err
		}
		return res, nil
	}
	if size == 0 || offset >= c.TotalCount {
		return res, nil
	}
	// Paged in SQL, unless the domain predicate is applied in memory: the
	// database cannot skip rows it does not know to be visible.
	limit, sqlOffset, skip := size, offset, int64(0)
	if p.visible != nil {
		limit, sqlOffset, skip = -1, 0, offset
	}
	err = r.read(ctx, p, limit, sqlOffset, func(d Device, _ string) bool {
		if skip > 0 {
			skip--
			return true
		}
		res.Items = append(res.Items, d)
		return int64(len(res.Items)) < size
	})
	if err != nil {
		return Result{}, err
	}
	return res, nil
}

// window turns a 1-based page into a row count and offset, capping the
// size at the per-test device limit (the spec's page ceiling).
func (r *Resolver) window(page Page) (size, offset int64) {
	size = int64(max(page.Size, 0))
	if r.maxDevices > 0 {
		size = min(size, int64(r.maxDevices))
	}
	number := int64(max(page.Number, 1))
	if size > 0 && number-1 > math.MaxInt64/size {
		// A page number this large is beyond any end; do not overflow.
		return size, math.MaxInt64
	}
	return size, (number - 1) * size
}

// Count is Resolve without items (POST /FCC/devices/count).
func (r *Resolver) Count(ctx context.Context, scope Scope, sel Selection) (Counts, error) {
	res, err := r.Resolve(ctx, scope, sel, Page{Number: 1, Size: 0})
	return res.Counts, err
}

// Fleet returns the whole match, for freezing a campaign fleet at save. It
// counts first and answers *LimitError when the match holds more than limit
// devices, before any row is read; otherwise one row statement reads every
// matching device, ordered by cpeId.
func (r *Resolver) Fleet(ctx context.Context, scope Scope, sel Selection, limit int) ([]Device, Counts, error) {
	p, err := r.prepare(scope, sel)
	if err != nil {
		return nil, Counts{}, err
	}
	if p.none {
		res := emptyResult(p)
		return res.Items, res.Counts, nil
	}
	c, err := r.count(ctx, p)
	if err != nil {
		return nil, c, err
	}
	if c.TotalCount > int64(limit) {
		return nil, c, &LimitError{Count: c.TotalCount, Limit: int64(limit)}
	}
	devices := []Device{}
	keep := func(d Device) { devices = append(devices, d) }
	switch {
	case p.serials != nil && needSerialRead(p, c):
		err = r.readSerials(ctx, p, &c, keep)
	case p.serials != nil:
		c.NotFoundSerials = p.serials.report(func(string) bool { return true })
	case c.TotalCount > 0:
		err = r.read(ctx, p, -1, 0, func(d Device, _ string) bool { keep(d); return true })
	}
	if err != nil {
		return nil, c, err
	}
	// Devices created between the two statements must not slip a fleet
	// past the limit.
	if int64(len(devices)) > int64(limit) {
		return nil, c, &LimitError{Count: int64(len(devices)), Limit: int64(limit)}
	}
	return devices, c, nil
}
