package fleet_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/acs"
	"cpesuite/internal/fcc/fleet"
	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
)

// countingDB counts and records the statements the resolver sends, so that
// tests can hold it to "one COUNT, then at most one row read".
type countingDB struct {
	db    fleet.Queryer
	mu    sync.Mutex
	stmts []string
}

func (c *countingDB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	c.mu.Lock()
	c.stmts = append(c.stmts, query)
	c.mu.Unlock()
	return c.db.QueryContext(ctx, query, args...)
}

// take returns the statements recorded since the last call and forgets them.
func (c *countingDB) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stmts
	c.stmts = nil
	return s
}

// fixture is a small fleet created through the ACS store:
//
//	#  serial    model (manufacturer)      protocol  domain  online  firmware
//	1  SN-A1     HG 8245 (Acme)            TR069     1       yes     1.0
//	2  SN-A2     HG 8245 (Acme)            TR069     d2      no      2.0_beta
//	3  sn-a3     HG 8245 (Acme)            TR069     d3      yes     2.0xbeta
//	4  DUP-1     HG 8245 (Acme)            TR069     1       yes     1.0
//	5  DUP-1     X 200 (Beta)              TR181     1       no      1.0
//	6  USP-1     U 1 (Gamma)               USP       d2      yes     3.0
//	7  NODOM-1   HG 8245 (Acme)            TR069     NULL    yes     1.0
//	8  ORPHAN-1  no product class          TR069     1       no      ""
type fixture struct {
	dialect sqlstore.Dialect
	store   *acs.Store
	db      *countingDB
	r       *fleet.Resolver
	id      map[string]int64 // label (serial, DUP-1a/DUP-1b) -> cpe id
	d2, d3  int64
	model   map[string]int64 // model name -> product class id
	mf      map[string]int64 // manufacturer name -> id
}

const maxDevices = 20000

// forDialects runs fn on a fresh fixture per dialect.
func forDialects(t *testing.T, fn func(t *testing.T, f *fixture)) {
	t.Helper()
	for _, d := range []sqlstore.Dialect{sqlstore.SQLite, sqlstore.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			fn(t, newFixture(t, d))
		})
	}
}

func newFixture(t testing.TB, d sqlstore.Dialect) *fixture {
	t.Helper()
	ctx := context.Background()
	db := sqltest.Open(t, d)
	s, err := acs.OpenStore(ctx, db, 1)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{dialect: d, store: s, id: map[string]int64{}, model: map[string]int64{}, mf: map[string]int64{}}
	d2, err := s.CreateDomain(ctx, "d2", ptr(int64(1)))
	if err != nil {
		t.Fatal(err)
	}
	d3, err := s.CreateDomain(ctx, "d3", ptr(int64(1)))
	if err != nil {
		t.Fatal(err)
	}
	f.d2, f.d3 = d2.ID, d3.ID

	now := time.Now()
	type dev struct {
		label, serial, oui, pc, mf, model, dm, fw string
		domain                                    int64
		online                                    bool
	}
	devs := []dev{
		{"SN-A1", "SN-A1", "00D09E", "HG8245", "Acme", "HG 8245", acs.DataModelTR098, "1.0", 1, true},
		{"SN-A2", "SN-A2", "00D09E", "HG8245", "Acme", "HG 8245", acs.DataModelTR098, "2.0_beta", f.d2, false},
		{"sn-a3", "sn-a3", "00D09E", "HG8245", "Acme", "HG 8245", acs.DataModelTR098, "2.0xbeta", f.d3, true},
		{"DUP-1a", "DUP-1", "00D09E", "HG8245", "Acme", "HG 8245", acs.DataModelTR098, "1.0", 1, true},
		{"DUP-1b", "DUP-1", "00AA11", "X200", "Beta", "X 200", acs.DataModelTR181, "1.0", 1, false},
		{"USP-1", "USP-1", "00BB22", "U1", "Gamma", "U 1", acs.DataModelTR181, "3.0", f.d2, true},
		{"NODOM-1", "NODOM-1", "00D09E", "HG8245", "Acme", "HG 8245", acs.DataModelTR098, "1.0", 1, true},
	}
	for _, v := range devs {
		until := now.Add(10 * time.Minute)
		if !v.online {
			until = now.Add(-time.Hour)
		}
		// One Inform per call keeps cpe ids in the order of the table.
		res, err := s.ApplyInforms(ctx, []acs.InformUpdate{{
			Key:          acs.DeviceKey{OUI: v.oui, ProductClass: v.pc, Serial: v.serial},
			Manufacturer: v.mf, ModelName: v.model, SoftwareVersion: v.fw, DataModel: v.dm,
			At: now, OnlineUntil: until,
		}})
		if err != nil {
			t.Fatal(err)
		}
		id := res[0].DeviceID
		f.id[v.label] = id
		if v.domain != 1 {
			if err := s.UpdateDevice(ctx, id, acs.DeviceUpdate{DomainID: ptr(v.domain)}); err != nil {
				t.Fatal(err)
			}
		}
		dev, err := s.Device(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		f.model[v.model] = *dev.ModelID
	}
	if _, err := s.SweepOffline(ctx, now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateProductClass(ctx, f.model["U 1"], acs.ProductClassUpdate{ProtocolID: ptr(acs.ProtocolUSP)}); err != nil {
		t.Fatal(err)
	}
	// The ACS has no call that clears a device's domain or creates a
	// device without a model (imports do), so these two go in as SQL.
	if _, err := db.ExecContext(ctx, db.Rebind(`UPDATE acs_devices SET domain_id = NULL WHERE id = ?`), f.id["NODOM-1"]); err != nil {
		t.Fatal(err)
	}
	var orphan int64
	if err := db.QueryRowContext(ctx, db.Rebind(`INSERT INTO acs_devices (oui, product_class, serial, domain_id) VALUES (?, ?, ?, ?) RETURNING id`),
		"X", "Y", "ORPHAN-1", 1).Scan(&orphan); err != nil {
		t.Fatal(err)
	}
	f.id["ORPHAN-1"] = orphan
	mfs, err := s.Manufacturers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mfs {
		f.mf[m.Name] = m.ID
	}
	f.db = &countingDB{db: db}
	f.r = fleet.New(f.db, d, maxDevices)
	return f
}

func ptr[T any](v T) *T { return &v }

// labels names devices by fixture label (DUP-1 by its product class).
func (f *fixture) labels(devs []fleet.Device) []string {
	byID := map[int64]string{}
	for l, id := range f.id {
		byID[id] = l
	}
	out := []string{}
	for _, d := range devs {
		out = append(out, byID[d.CPEID])
	}
	return out
}

func (f *fixture) ids(labels ...string) []int64 {
	out := []int64{}
	for _, l := range labels {
		out = append(out, f.id[l])
	}
	return out
}

// bigScope is a LIST scope of more than 1000 domains that sees exactly the
// given domains among those holding devices, forcing the in-memory domain
// predicate.
func bigScope(domains ...int64) fleet.Scope {
	s := fleet.Scope{DomainIDs: slices.Clone(domains)}
	for i := range int64(1001) {
		s.DomainIDs = append(s.DomainIDs, 1_000_000+i)
	}
	return s
}

type resolveCase struct {
	name       string
	scope      fleet.Scope
	sel        fleet.Selection
	page       fleet.Page
	items      []string
	total      int64
	online     int64
	unsup      int64
	notFound   []string
	duplicates []string
	stmts      int
}

func TestResolve(t *testing.T) {
	t.Parallel()
	forDialects(t, func(t *testing.T, f *fixture) {
		all := fleet.Scope{All: true}
		visible := fleet.Scope{DomainIDs: []int64{1, f.d2, f.d3}}
		serials := []string{"sn-a1", " SN-A1 ", "Sn-A3", "missing-1", "MISSING-1", "", "  ", "dup-1", "usp-1", "orphan-1", "nodom-1"}
		cases := []resolveCase{
			{
				name: "serial list: reports, counters and a page from one count and one read", scope: visible,
				sel:   fleet.Selection{Source: fleet.SourceSerials, Serials: serials},
				page:  fleet.Page{Number: 1, Size: 4},
				items: []string{"SN-A1", "sn-a3", "DUP-1a", "DUP-1b"}, total: 6, online: 4, unsup: 1,
				notFound: []string{"missing-1", "nodom-1"}, duplicates: []string{"dup-1"}, stmts: 2,
			},
			{
				name: "serial list page 2", scope: visible,
				sel:   fleet.Selection{Source: fleet.SourceSerials, Serials: serials},
				page:  fleet.Page{Number: 2, Size: 4},
				items: []string{"USP-1", "ORPHAN-1"}, total: 6, online: 4, unsup: 1,
				notFound: []string{"missing-1", "nodom-1"}, duplicates: []string{"dup-1"}, stmts: 2,
			},
			{
				name: "serial list page beyond the end still reports", scope: visible,
				sel:   fleet.Selection{Source: fleet.SourceSerials, Serials: serials},
				page:  fleet.Page{Number: 3, Size: 4},
				items: []string{}, total: 6, online: 4, unsup: 1,
				notFound: []string{"missing-1", "nodom-1"}, duplicates: []string{"dup-1"}, stmts: 2,
			},
			{
				name: "serial list under ALL finds the device without a domain", scope: all,
				sel:   fleet.Selection{Source: fleet.SourceSerials, Serials: []string{"NoDom-1", "missing-1"}},
				page:  fleet.Page{Number: 1, Size: 10},
				items: []string{"NODOM-1"}, total: 1, online: 1,
				notFound: []string{"missing-1"}, duplicates: []string{}, stmts: 2,
			},
			{
				name: "serial list matching nothing needs no row read", scope: visible,
				sel:   fleet.Selection{Source: fleet.SourceSerials, Serials: []string{"nope-1", "Nope-2", "NOPE-1"}},
				page:  fleet.Page{Number: 1, Size: 10},
				items: []string{}, notFound: []string{"nope-1", "Nope-2"}, duplicates: []string{}, stmts: 1,
			},
			{
				name: "serial of an invisible device is not found", scope: fleet.Scope{DomainIDs: []int64{1}},
				sel:   fleet.Selection{Source: fleet.SourceSerials, Serials: []string{"SN-A2", "SN-A1"}},
				page:  fleet.Page{Number: 1, Size: 10},
				items: []string{"SN-A1"}, total: 1, online: 1,
				notFound: []string{"SN-A2"}, duplicates: []string{}, stmts: 2,
			},
			{
				name: "unselecting one device of a duplicate serial keeps the reports", scope: visible,
				sel:   fleet.Selection{Source: fleet.SourceSerials, Serials: []string{"DUP-1", "usp-1"}, Exclude: f.ids("DUP-1b", "USP-1")},
				page:  fleet.Page{Number: 1, Size: 10},
				items: []string{"DUP-1a"}, total: 1, online: 1,
				notFound: []string{}, duplicates: []string{"DUP-1"}, stmts: 2,
			},
			{
				name: "serial list honours onlyOnline", scope: visible,
				sel:   fleet.Selection{Source: fleet.SourceSerials, Serials: []string{"DUP-1", "orphan-1"}, Condition: fleet.Condition{OnlyOnline: true}},
				page:  fleet.Page{Number: 1, Size: 10},
				items: []string{"DUP-1a"}, total: 1, online: 1,
				notFound: []string{"orphan-1"}, duplicates: []string{}, stmts: 2,
			},
			{
				name: "count only: serial reports still read, items empty", scope: visible,
				sel:   fleet.Selection{Source: fleet.SourceSerials, Serials: []string{"DUP-1"}},
				page:  fleet.Page{Number: 1, Size: 0},
				items: []string{}, total: 2, online: 1, notFound: []string{}, duplicates: []string{"DUP-1"}, stmts: 2,
			},
			{
				name: "empty intersection: nothing read, every serial not found", scope: fleet.Scope{DomainIDs: []int64{1}},
				sel:   fleet.Selection{Source: fleet.SourceSerials, Serials: []string{"SN-A1", "sn-a1", "x"}, Condition: fleet.Condition{DomainIDs: []int64{f.d2}}},
				page:  fleet.Page{Number: 1, Size: 10},
				items: []string{}, notFound: []string{"SN-A1", "x"}, duplicates: []string{}, stmts: 0,
			},
			{
				name: "an empty body domain list is never 'no restriction'", scope: all,
				sel:   fleet.Selection{Source: fleet.SourceAll, Condition: fleet.Condition{DomainIDs: []int64{}}},
				page:  fleet.Page{Number: 1, Size: 10},
				items: []string{}, notFound: []string{}, duplicates: []string{}, stmts: 0,
			},
			{
				name: "empty LIST scope reads nothing", scope: fleet.Scope{DomainIDs: []int64{}},
				sel:   fleet.Selection{Source: fleet.SourceAll},
				page:  fleet.Page{Number: 1, Size: 10},
				items: []string{}, notFound: []string{}, duplicates: []string{}, stmts: 0,
			},
			{
				name: "body domain list narrows ALL", scope: all,
				sel:   fleet.Selection{Source: fleet.SourceAll, Condition: fleet.Condition{DomainIDs: []int64{f.d2, f.d2}}},
				page:  fleet.Page{Number: 1, Size: 10},
				items: []string{"SN-A2", "USP-1"}, total: 2, online: 1, unsup: 1, notFound: []string{}, duplicates: []string{}, stmts: 2,
			},
			{
				name: "ALL by manufacturer and model, case-insensitive", scope: all,
				sel:   fleet.Selection{Source: fleet.SourceAll, Manufacturer: "ACME", Model: " hg 8245 "},
				page:  fleet.Page{Number: 1, Size: 10},
				items: []string{"SN-A1", "SN-A2", "sn-a3", "DUP-1a", "NODOM-1"}, total: 5, online: 4,
				notFound: []string{}, duplicates: []string{}, stmts: 2,
			},
			{
				name: "ALL ignores condition fields but excludes unselected devices", scope: visible,
				sel:   fleet.Selection{Source: fleet.SourceAll, Manufacturer: "acme", Condition: fleet.Condition{OnlyOnline: true}, Exclude: f.ids("SN-A1")},
				page:  fleet.Page{Number: 1, Size: 10},
				items: []string{"SN-A2", "sn-a3", "DUP-1a"}, total: 3, online: 2,
				notFound: []string{}, duplicates: []string{}, stmts: 2,
			},
			{
				name: "ALL page 2 in SQL", scope: all,
				sel:   fleet.Selection{Source: fleet.SourceAll},
				page:  fleet.Page{Number: 2, Size: 3},
				items: []string{"DUP-1a", "DUP-1b", "USP-1"}, total: 8, online: 5, unsup: 1,
				notFound: []string{}, duplicates: []string{}, stmts: 2,
			},
			{
				name: "page beyond the end: counters, no row read", scope: all,
				sel:   fleet.Selection{Source: fleet.SourceAll},
				page:  fleet.Page{Number: 5, Size: 3},
				items: []string{}, total: 8, online: 5, unsup: 1, notFound: []string{}, duplicates: []string{}, stmts: 1,
			},
			{
				name: "a huge page number does not overflow", scope: all,
				sel:   fleet.Selection{Source: fleet.SourceAll},
				page:  fleet.Page{Number: math.MaxInt, Size: 3},
				items: []string{}, total: 8, online: 5, unsup: 1, notFound: []string{}, duplicates: []string{}, stmts: 1,
			},
			{
				name: "page size above the device limit is capped", scope: all,
				sel:   fleet.Selection{Source: fleet.SourceAll, Manufacturer: "gamma"},
				page:  fleet.Page{Number: 1, Size: math.MaxInt},
				items: []string{"USP-1"}, total: 1, online: 1, unsup: 1, notFound: []string{}, duplicates: []string{}, stmts: 2,
			},
			{
				name: "page number 0 counts as 1", scope: all,
				sel:   fleet.Selection{Source: fleet.SourceAll},
				page:  fleet.Page{Number: 0, Size: 2},
				items: []string{"SN-A1", "SN-A2"}, total: 8, online: 5, unsup: 1, notFound: []string{}, duplicates: []string{}, stmts: 2,
			},
			{
				name: "condition: manufacturer ids and online", scope: all,
				sel:   fleet.Selection{Source: fleet.SourceCondition, Condition: fleet.Condition{ManufacturerIDs: []int64{f.mf["Acme"], f.mf["Gamma"]}, OnlyOnline: true}},
				page:  fleet.Page{Number: 1, Size: 10},
				items: []string{"SN-A1", "sn-a3", "DUP-1a", "USP-1", "NODOM-1"}, total: 5, online: 5, unsup: 1,
				notFound: []string{}, duplicates: []string{}, stmts: 2,
			},
			{
				name: "condition: model ids leave out the device without a model", scope: visible,
				sel:   fleet.Selection{Source: fleet.SourceCondition, Condition: fleet.Condition{ModelIDs: []int64{f.model["X 200"], f.model["U 1"]}}},
				page:  fleet.Page{Number: 1, Size: 10},
				items: []string{"DUP-1b", "USP-1"}, total: 2, online: 1, unsup: 1,
				notFound: []string{}, duplicates: []string{}, stmts: 2,
			},
			{
				name: "condition with a model name filter", scope: all,
				sel:   fleet.Selection{Source: fleet.SourceCondition, Model: "x 200", Condition: fleet.Condition{ModelIDs: []int64{f.model["X 200"], f.model["U 1"]}}},
				page:  fleet.Page{Number: 1, Size: 10},
				items: []string{"DUP-1b"}, total: 1, notFound: []string{}, duplicates: []string{}, stmts: 2,
			},
			{
				name: "condition rule startsWith escapes the underscore", scope: all,
				sel: fleet.Selection{Source: fleet.SourceCondition, Condition: fleet.Condition{Rules: []fleet.Rule{
					{Key: "softwareVersion", Op: "startsWith", Value: "2.0_"},
				}}},
				page:  fleet.Page{Number: 1, Size: 10},
				items: []string{"SN-A2"}, total: 1, notFound: []string{}, duplicates: []string{}, stmts: 2,
			},
			{
				name: "condition rules in, notIn, ne, eq combined", scope: all,
				sel: fleet.Selection{Source: fleet.SourceCondition, Condition: fleet.Condition{Rules: []fleet.Rule{
					{Key: "serial", Op: "in", Values: []string{"SN-A1", "DUP-1", "USP-1", "ORPHAN-1"}},
					{Key: "oui", Op: "notIn", Values: []string{"00BB22"}},
					{Key: "productClass", Op: "ne", Value: "X200"},
					{Key: "dataModel", Op: "eq", Value: acs.DataModelTR098},
				}}},
				page:  fleet.Page{Number: 1, Size: 10},
				items: []string{"SN-A1", "DUP-1a"}, total: 2, online: 2, notFound: []string{}, duplicates: []string{}, stmts: 2,
			},
			{
				name: "condition rule finds the device without a model", scope: all,
				sel: fleet.Selection{Source: fleet.SourceCondition, Condition: fleet.Condition{Rules: []fleet.Rule{
					{Key: "oui", Op: "eq", Value: "X"},
				}}},
				page:  fleet.Page{Number: 1, Size: 10},
				items: []string{"ORPHAN-1"}, total: 1, notFound: []string{}, duplicates: []string{}, stmts: 2,
			},
			{
				name: "device list: unknown and invisible ids drop out", scope: fleet.Scope{DomainIDs: []int64{1}},
				sel:   fleet.Selection{Source: fleet.SourceDevices, DeviceIDs: append(f.ids("ORPHAN-1", "SN-A1", "SN-A2", "NODOM-1"), 999999)},
				page:  fleet.Page{Number: 1, Size: 10},
				items: []string{"SN-A1", "ORPHAN-1"}, total: 2, online: 1, notFound: []string{}, duplicates: []string{}, stmts: 2,
			},
			{
				name: "device list with a manufacturer filter leaves out the orphan", scope: all,
				sel:   fleet.Selection{Source: fleet.SourceDevices, Manufacturer: "acme", DeviceIDs: f.ids("ORPHAN-1", "SN-A1")},
				page:  fleet.Page{Number: 1, Size: 10},
				items: []string{"SN-A1"}, total: 1, online: 1, notFound: []string{}, duplicates: []string{}, stmts: 2,
			},
			{
				name: "empty device list reads nothing", scope: all,
				sel:   fleet.Selection{Source: fleet.SourceDevices},
				page:  fleet.Page{Number: 1, Size: 10},
				items: []string{}, notFound: []string{}, duplicates: []string{}, stmts: 0,
			},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				f.db.take()
				res, err := f.r.Resolve(context.Background(), tc.scope, tc.sel, tc.page)
				if err != nil {
					t.Fatal(err)
				}
				checkResult(t, f, tc, res, f.db.take())
			})
		}
	})
}

func checkResult(t *testing.T, f *fixture, tc resolveCase, res fleet.Result, stmts []string) {
	t.Helper()
	if got := f.labels(res.Items); !slices.Equal(got, tc.items) {
		t.Errorf("items = %v, want %v", got, tc.items)
	}
	if res.Items == nil || res.CountsByModel == nil || res.NotFoundSerials == nil || res.DuplicateSerials == nil {
		t.Errorf("nil slice in %+v", res)
	}
	if res.TotalCount != tc.total || res.OnlineCount != tc.online || res.UnsupportedProtocolCount != tc.unsup {
		t.Errorf("total/online/unsupported = %d/%d/%d, want %d/%d/%d",
			res.TotalCount, res.OnlineCount, res.UnsupportedProtocolCount, tc.total, tc.online, tc.unsup)
	}
	if !slices.Equal(res.NotFoundSerials, tc.notFound) {
		t.Errorf("notFoundSerials = %q, want %q", res.NotFoundSerials, tc.notFound)
	}
	if !slices.Equal(res.DuplicateSerials, tc.duplicates) {
		t.Errorf("duplicateSerials = %q, want %q", res.DuplicateSerials, tc.duplicates)
	}
	var sum, online int64
	for _, m := range res.CountsByModel {
		sum += m.DeviceCount
		online += m.OnlineCount
	}
	if sum != res.TotalCount || online != res.OnlineCount {
		t.Errorf("countsByModel sums %d/%d, totals %d/%d", sum, online, res.TotalCount, res.OnlineCount)
	}
	if len(stmts) != tc.stmts {
		t.Errorf("%d statements, want %d:\n%s", len(stmts), tc.stmts, strings.Join(stmts, "\n---\n"))
	}
	if len(stmts) > 0 && !strings.Contains(stmts[0], "COUNT(*)") {
		t.Errorf("first statement is not the count:\n%s", stmts[0])
	}
}

// TestInMemoryDomains checks that above 1000 visible domains the answer is
// the same as with the domain predicate in SQL, and that the SQL then
// carries no domain list.
func TestInMemoryDomains(t *testing.T) {
	t.Parallel()
	forDialects(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		serials := []string{"SN-A1", "sn-a2", "SN-A3", "dup-1", "usp-1", "orphan-1", "nodom-1", "missing"}
		sels := map[string]fleet.Selection{
			"all":       {Source: fleet.SourceAll},
			"acme":      {Source: fleet.SourceAll, Manufacturer: "Acme", Exclude: f.ids("SN-A1")},
			"serials":   {Source: fleet.SourceSerials, Serials: serials},
			"condition": {Source: fleet.SourceCondition, Condition: fleet.Condition{OnlyOnline: true}},
			"devices":   {Source: fleet.SourceDevices, DeviceIDs: f.ids("SN-A1", "SN-A2", "sn-a3", "NODOM-1", "USP-1")},
		}
		pages := []fleet.Page{{Number: 1, Size: 2}, {Number: 2, Size: 2}, {Number: 1, Size: 0}, {Number: 9, Size: 2}, {Number: 1, Size: 100}}
		for _, domains := range [][]int64{{1}, {f.d2, f.d3}, {1, f.d2, f.d3}} {
			for name, sel := range sels {
				for _, pg := range pages {
					t.Run(fmt.Sprintf("%v/%s/%d-%d", domains, name, pg.Number, pg.Size), func(t *testing.T) {
						want, err := f.r.Resolve(ctx, fleet.Scope{DomainIDs: domains}, sel, pg)
						if err != nil {
							t.Fatal(err)
						}
						f.db.take()
						got, err := f.r.Resolve(ctx, bigScope(domains...), sel, pg)
						if err != nil {
							t.Fatal(err)
						}
						if !reflect.DeepEqual(got, want) {
							t.Fatalf("in memory:\n%+v\nin SQL:\n%+v", got, want)
						}
						stmts := f.db.take()
						if len(stmts) > 2 {
							t.Fatalf("%d statements", len(stmts))
						}
						for _, s := range stmts {
							if strings.Contains(s, "domain_id IN") || strings.Contains(s, "domain_id = ANY") {
								t.Fatalf("domain predicate in SQL above 1000 domains:\n%s", s)
							}
						}
						if len(stmts) > 0 && !strings.Contains(stmts[0], "d.domain_id\n") && !strings.Contains(stmts[0], ", d.domain_id") {
							t.Fatalf("count does not group by domain:\n%s", stmts[0])
						}
					})
				}
			}
		}
		// Fleet and Catalog take the same path.
		for _, domains := range [][]int64{{1}, {1, f.d2, f.d3}} {
			wantDevs, wantCounts, err := f.r.Fleet(ctx, fleet.Scope{DomainIDs: domains}, sels["serials"], maxDevices)
			if err != nil {
				t.Fatal(err)
			}
			gotDevs, gotCounts, err := f.r.Fleet(ctx, bigScope(domains...), sels["serials"], maxDevices)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gotDevs, wantDevs) || !reflect.DeepEqual(gotCounts, wantCounts) {
				t.Fatalf("fleet in memory %v %+v, in SQL %v %+v", f.labels(gotDevs), gotCounts, f.labels(wantDevs), wantCounts)
			}
			wantCat, err := f.r.Catalog(ctx, fleet.Scope{DomainIDs: domains})
			if err != nil {
				t.Fatal(err)
			}
			gotCat, err := f.r.Catalog(ctx, bigScope(domains...))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gotCat, wantCat) {
				t.Fatalf("catalog in memory %+v, in SQL %+v", gotCat, wantCat)
			}
		}
	})
}

func TestResolveDeviceFields(t *testing.T) {
	t.Parallel()
	forDialects(t, func(t *testing.T, f *fixture) {
		res, err := f.r.Resolve(context.Background(), fleet.Scope{All: true}, fleet.Selection{Source: fleet.SourceAll}, fleet.Page{Number: 1, Size: 100})
		if err != nil {
			t.Fatal(err)
		}
		by := map[string]fleet.Device{}
		for i, d := range res.Items {
			by[f.labels(res.Items)[i]] = d
		}
		want := map[string]fleet.Device{
			"SN-A2": {CPEID: f.id["SN-A2"], Serial: "SN-A2", ModelID: ptr(f.model["HG 8245"]), Manufacturer: "Acme", Model: "HG 8245",
				DomainID: ptr(f.d2), Online: false, Protocol: "TR069", SupportedByACS: true, Firmware: "2.0_beta"},
			"DUP-1b": {CPEID: f.id["DUP-1b"], Serial: "DUP-1", ModelID: ptr(f.model["X 200"]), Manufacturer: "Beta", Model: "X 200",
				DomainID: ptr(int64(1)), Online: false, Protocol: "TR181", SupportedByACS: true, Firmware: "1.0"},
			"USP-1": {CPEID: f.id["USP-1"], Serial: "USP-1", ModelID: ptr(f.model["U 1"]), Manufacturer: "Gamma", Model: "U 1",
				DomainID: ptr(f.d2), Online: true, Protocol: "USP", SupportedByACS: false, Firmware: "3.0"},
			"NODOM-1": {CPEID: f.id["NODOM-1"], Serial: "NODOM-1", ModelID: ptr(f.model["HG 8245"]), Manufacturer: "Acme", Model: "HG 8245",
				Online: true, Protocol: "TR069", SupportedByACS: true, Firmware: "1.0"},
			"ORPHAN-1": {CPEID: f.id["ORPHAN-1"], Serial: "ORPHAN-1", DomainID: ptr(int64(1)), Protocol: "TR069", SupportedByACS: true},
		}
		for label, w := range want {
			if !reflect.DeepEqual(by[label], w) {
				t.Errorf("%s:\n got %+v\nwant %+v", label, by[label], w)
			}
		}
		wantModels := []fleet.ModelCount{
			{ModelID: ptr(f.model["HG 8245"]), Manufacturer: "Acme", Model: "HG 8245", DeviceCount: 5, OnlineCount: 4},
			{ModelID: ptr(f.model["X 200"]), Manufacturer: "Beta", Model: "X 200", DeviceCount: 1, OnlineCount: 0},
			{ModelID: ptr(f.model["U 1"]), Manufacturer: "Gamma", Model: "U 1", DeviceCount: 1, OnlineCount: 1},
			{ModelID: nil, Manufacturer: "", Model: "", DeviceCount: 1, OnlineCount: 0},
		}
		if !reflect.DeepEqual(res.CountsByModel, wantModels) {
			t.Errorf("countsByModel:\n got %+v\nwant %+v", res.CountsByModel, wantModels)
		}
		b, err := json.Marshal(fleet.Result{Items: []fleet.Device{}, Counts: fleet.Counts{CountsByModel: []fleet.ModelCount{}, NotFoundSerials: []string{}, DuplicateSerials: []string{}}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"notFoundSerials":[]`) || !strings.Contains(string(b), `"countsByModel":[]`) {
			t.Errorf("json %s", b)
		}
	})
}

func TestRefusalsBeforeAnyStatement(t *testing.T) {
	t.Parallel()
	forDialects(t, func(t *testing.T, f *fixture) {
		small := fleet.New(f.db, f.dialect, 3)
		cases := []struct {
			name string
			r    *fleet.Resolver
			sel  fleet.Selection
			want string
		}{
			{"too many distinct serials", small,
				fleet.Selection{Source: fleet.SourceSerials, Serials: []string{"a", "b", "c", "d", "A"}},
				"4 distinct serials, more than the limit of 3"},
			{"unsupported rule", f.r,
				fleet.Selection{Source: fleet.SourceCondition, Condition: fleet.Condition{Rules: []fleet.Rule{{Key: "serial", Op: "eq", Value: "x"}, {Key: "externalIp", Op: "eq", Value: "1.2.3.4"}}}},
				`condition rule 2: key "externalIp" with operator "eq"`},
			{"missing source", f.r, fleet.Selection{}, "sourceType is required"},
			{"unknown source", f.r, fleet.Selection{Source: "All"}, `sourceType "All"`},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				f.db.take()
				for _, call := range []func() error{
					func() error {
						_, err := tc.r.Resolve(context.Background(), fleet.Scope{All: true}, tc.sel, fleet.Page{Number: 1, Size: 10})
						return err
					},
					func() error { _, err := tc.r.Count(context.Background(), fleet.Scope{All: true}, tc.sel); return err },
					func() error {
						_, _, err := tc.r.Fleet(context.Background(), fleet.Scope{All: true}, tc.sel, 10)
						return err
					},
				} {
					err := call()
					if apperr.Status(err) != 400 || !strings.Contains(apperr.PublicMessage(err), tc.want) {
						t.Errorf("err = %v (status %d), want 400 with %q", err, apperr.Status(err), tc.want)
					}
				}
				if stmts := f.db.take(); len(stmts) != 0 {
					t.Errorf("%d statements before the refusal", len(stmts))
				}
			})
		}
		// Exactly at the limit, counting case-insensitively and without blanks.
		res, err := small.Resolve(context.Background(), fleet.Scope{All: true},
			fleet.Selection{Source: fleet.SourceSerials, Serials: []string{"sn-a1", "SN-A1", "", "usp-1", "x"}}, fleet.Page{Number: 1, Size: 10})
		if err != nil {
			t.Fatal(err)
		}
		if got := f.labels(res.Items); !slices.Equal(got, []string{"SN-A1", "USP-1"}) {
			t.Fatalf("items %v", got)
		}
	})
}

func TestCount(t *testing.T) {
	t.Parallel()
	forDialects(t, func(t *testing.T, f *fixture) {
		sel := fleet.Selection{Source: fleet.SourceSerials, Serials: []string{"dup-1", "Missing"}}
		f.db.take()
		c, err := f.r.Count(context.Background(), fleet.Scope{All: true}, sel)
		if err != nil {
			t.Fatal(err)
		}
		if c.TotalCount != 2 || !slices.Equal(c.NotFoundSerials, []string{"Missing"}) || !slices.Equal(c.DuplicateSerials, []string{"dup-1"}) {
			t.Fatalf("counts %+v", c)
		}
		if n := len(f.db.take()); n != 2 {
			t.Fatalf("%d statements, want 2", n)
		}
		c, err = f.r.Count(context.Background(), fleet.Scope{All: true}, fleet.Selection{Source: fleet.SourceAll, Manufacturer: "beta"})
		if err != nil {
			t.Fatal(err)
		}
		if c.TotalCount != 1 || len(c.CountsByModel) != 1 || c.CountsByModel[0].Model != "X 200" {
			t.Fatalf("counts %+v", c)
		}
		if n := len(f.db.take()); n != 1 {
			t.Fatalf("%d statements, want 1 (no items, no serials)", n)
		}
	})
}

func TestFleet(t *testing.T) {
	t.Parallel()
	forDialects(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		acme := fleet.Selection{Source: fleet.SourceAll, Manufacturer: "Acme"}

		f.db.take()
		devs, c, err := f.r.Fleet(ctx, fleet.Scope{All: true}, acme, 4)
		var le *fleet.LimitError
		if !errors.As(err, &le) || le.Count != 5 || le.Limit != 4 || devs != nil {
			t.Fatalf("err = %v, devices %v", err, devs)
		}
		if apperr.Status(err) != 400 || !errors.Is(err, apperr.ErrInvalid) {
			t.Fatalf("status %d", apperr.Status(err))
		}
		msg := apperr.PublicMessage(err)
		if !strings.Contains(msg, "5 devices") || !strings.Contains(msg, "limit of 4") {
			t.Fatalf("public message %q must name both figures", msg)
		}
		if c.TotalCount != 5 {
			t.Fatalf("counts %+v", c)
		}
		if stmts := f.db.take(); len(stmts) != 1 {
			t.Fatalf("%d statements, want only the count before the limit error", len(stmts))
		}

		devs, c, err = f.r.Fleet(ctx, fleet.Scope{All: true}, acme, 5)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.labels(devs); !slices.Equal(got, []string{"SN-A1", "SN-A2", "sn-a3", "DUP-1a", "NODOM-1"}) || c.TotalCount != 5 {
			t.Fatalf("fleet %v %+v", got, c)
		}
		if stmts := f.db.take(); len(stmts) != 2 {
			t.Fatalf("%d statements, want 2", len(stmts))
		}

		devs, c, err = f.r.Fleet(ctx, fleet.Scope{DomainIDs: []int64{1, f.d2}},
			fleet.Selection{Source: fleet.SourceSerials, Serials: []string{"dup-1", "Sn-A3", "usp-1"}, Exclude: f.ids("DUP-1b")}, maxDevices)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.labels(devs); !slices.Equal(got, []string{"DUP-1a", "USP-1"}) ||
			!slices.Equal(c.NotFoundSerials, []string{"Sn-A3"}) || !slices.Equal(c.DuplicateSerials, []string{"dup-1"}) || c.TotalCount != 2 {
			t.Fatalf("fleet %v %+v", got, c)
		}

		f.db.take()
		devs, c, err = f.r.Fleet(ctx, fleet.Scope{DomainIDs: []int64{f.d3}},
			fleet.Selection{Source: fleet.SourceSerials, Serials: []string{"x"}, Condition: fleet.Condition{DomainIDs: []int64{1}}}, maxDevices)
		if err != nil || devs == nil || len(devs) != 0 || !slices.Equal(c.NotFoundSerials, []string{"x"}) {
			t.Fatalf("empty intersection: %v %+v %v", devs, c, err)
		}
		if stmts := f.db.take(); len(stmts) != 0 {
			t.Fatalf("%d statements for an empty intersection", len(stmts))
		}
	})
}

func TestCatalog(t *testing.T) {
	t.Parallel()
	forDialects(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		entry := func(mf, model, proto string, supported bool, n int64) fleet.CatalogEntry {
			return fleet.CatalogEntry{ManufacturerID: ptr(f.mf[mf]), Manufacturer: mf, ModelID: f.model[model], Model: model,
				Protocol: proto, SupportedByACS: supported, DeviceCount: n}
		}
		cases := []struct {
			name  string
			scope fleet.Scope
			want  []fleet.CatalogEntry
			stmts int
		}{
			{"all", fleet.Scope{All: true}, []fleet.CatalogEntry{
				entry("Acme", "HG 8245", "TR069", true, 5), entry("Beta", "X 200", "TR181", true, 1), entry("Gamma", "U 1", "USP", false, 1),
			}, 1},
			{"root only", fleet.Scope{DomainIDs: []int64{1}}, []fleet.CatalogEntry{
				entry("Acme", "HG 8245", "TR069", true, 2), entry("Beta", "X 200", "TR181", true, 1),
			}, 1},
			{"d2 and d3", fleet.Scope{DomainIDs: []int64{f.d2, f.d3}}, []fleet.CatalogEntry{
				entry("Acme", "HG 8245", "TR069", true, 2), entry("Gamma", "U 1", "USP", false, 1),
			}, 1},
			{"empty scope", fleet.Scope{DomainIDs: []int64{}}, []fleet.CatalogEntry{}, 0},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				f.db.take()
				got, err := f.r.Catalog(ctx, tc.scope)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("catalog\n got %+v\nwant %+v", got, tc.want)
				}
				if n := len(f.db.take()); n != tc.stmts {
					t.Fatalf("%d statements, want %d", n, tc.stmts)
				}
			})
		}
	})
}

func TestLoadCondition(t *testing.T) {
	t.Parallel()
	forDialects(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		saved, err := f.store.SaveCondition(ctx, acs.Condition{Name: "online acme", DomainID: ptr(f.d2), Criteria: acs.Criteria{
			ManufacturerIDs: []int64{f.mf["Acme"]}, ModelIDs: []int64{f.model["HG 8245"]}, DomainIDs: []int64{f.d2, f.d3}, OnlyOnline: true,
			Rules: []acs.Rule{{Key: "softwareVersion", Op: "in", Values: []string{"1.0", "2.0xbeta"}}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		bare, err := f.store.SaveCondition(ctx, acs.Condition{Name: "external ip", Criteria: acs.Criteria{
			Rules: []acs.Rule{{Key: "externalIp", Op: "eq", Value: "10.0.0.1"}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		f.db.take()
		got, err := f.r.LoadCondition(ctx, saved.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := fleet.SavedCondition{ID: saved.ID, Name: "online acme", DomainID: ptr(f.d2), Condition: fleet.Condition{
			ManufacturerIDs: []int64{f.mf["Acme"]}, ModelIDs: []int64{f.model["HG 8245"]}, DomainIDs: []int64{f.d2, f.d3}, OnlyOnline: true,
			Rules: []fleet.Rule{{Key: "softwareVersion", Op: "in", Values: []string{"1.0", "2.0xbeta"}}},
		}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("loaded\n got %+v\nwant %+v", got, want)
		}
		if n := len(f.db.take()); n != 1 {
			t.Fatalf("%d statements, want 1", n)
		}
		// The loaded condition resolves: its domains narrow, its fields filter.
		res, err := f.r.Resolve(ctx, fleet.Scope{All: true}, fleet.Selection{Source: fleet.SourceCondition, Condition: got.Condition}, fleet.Page{Number: 1, Size: 10})
		if err != nil {
			t.Fatal(err)
		}
		if labels := f.labels(res.Items); !slices.Equal(labels, []string{"sn-a3"}) {
			t.Fatalf("items %v", labels)
		}

		other, err := f.r.LoadCondition(ctx, bare.ID)
		if err != nil {
			t.Fatal(err)
		}
		if other.DomainID != nil || other.Condition.DomainIDs != nil || len(other.Condition.Rules) != 1 {
			t.Fatalf("loaded %+v", other)
		}
		if _, err := f.r.Resolve(ctx, fleet.Scope{All: true}, fleet.Selection{Source: fleet.SourceCondition, Condition: other.Condition}, fleet.Page{Number: 1, Size: 10}); apperr.Status(err) != 400 ||
			!strings.Contains(apperr.PublicMessage(err), `key "externalIp" with operator "eq"`) {
			t.Fatalf("externalIp rule: %v", err)
		}

		_, err = f.r.LoadCondition(ctx, 424242)
		if !errors.Is(err, apperr.ErrNotFound) || apperr.PublicMessage(err) != "condition 424242 not found" {
			t.Fatalf("missing condition: %v", err)
		}
	})
}

// TestLargeLists passes 20000 serials and ids through one parameter on
// each dialect (a list of placeholders would exceed SQLite's limit). How
// fast that is belongs to BenchmarkLargeLists and bench/fccbench, not here:
// a busy machine must not fail a correct answer.
func TestLargeLists(t *testing.T) {
	t.Parallel()
	forDialects(t, func(t *testing.T, f *fixture) {
		resolveLargeLists(t, f, largeLists(f))
	})
}

// BenchmarkLargeLists times the two resolves of TestLargeLists (20000
// serials, then 20000 ids) on each dialect.
func BenchmarkLargeLists(b *testing.B) {
	for _, d := range []sqlstore.Dialect{sqlstore.SQLite, sqlstore.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			f := newFixture(b, d)
			lists := largeLists(f)
			for b.Loop() {
				resolveLargeLists(b, f, lists)
			}
		})
	}
}

type lists struct {
	serials []string
	ids     []int64
}

// largeLists is maxDevices serials and ids, almost all unknown, with one
// known serial in lower case, one duplicated serial and two known ids.
func largeLists(f *fixture) lists {
	l := lists{serials: make([]string, 0, maxDevices), ids: make([]int64, 0, maxDevices)}
	for i := range maxDevices - 2 {
		l.serials = append(l.serials, fmt.Sprintf("bulk-%05d", i))
		l.ids = append(l.ids, int64(10_000_000+i))
	}
	l.serials = append(l.serials, "sn-a1", "Dup-1")
	l.ids = append(l.ids, f.id["SN-A1"], f.id["USP-1"])
	return l
}

func resolveLargeLists(t testing.TB, f *fixture, l lists) {
	t.Helper()
	ctx := context.Background()
	res, err := f.r.Resolve(ctx, fleet.Scope{All: true}, fleet.Selection{Source: fleet.SourceSerials, Serials: l.serials, Exclude: l.ids}, fleet.Page{Number: 1, Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.labels(res.Items); !slices.Equal(got, []string{"DUP-1a", "DUP-1b"}) ||
		len(res.NotFoundSerials) != maxDevices-2 || res.NotFoundSerials[0] != "bulk-00000" || !slices.Equal(res.DuplicateSerials, []string{"Dup-1"}) {
		t.Fatalf("items %v, %d not found, duplicates %v", got, len(res.NotFoundSerials), res.DuplicateSerials)
	}
	res, err = f.r.Resolve(ctx, fleet.Scope{All: true}, fleet.Selection{Source: fleet.SourceDevices, DeviceIDs: l.ids}, fleet.Page{Number: 1, Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.labels(res.Items); !slices.Equal(got, []string{"SN-A1", "USP-1"}) {
		t.Fatalf("items %v", got)
	}
}

func TestCheckRules(t *testing.T) {
	cases := []struct {
		name  string
		rules []fleet.Rule
		want  string // "" = accepted
	}{
		{"none", nil, ""},
		{"every supported key and operator", []fleet.Rule{
			{Key: "serial", Op: "eq", Value: "a"}, {Key: "oui", Op: "ne", Value: "b"},
			{Key: "productClass", Op: "in", Values: []string{"c"}}, {Key: "softwareVersion", Op: "notIn", Values: []string{"d"}},
			{Key: "hardwareVersion", Op: "startsWith", Value: "e"}, {Key: "dataModel", Op: "eq", Value: "TR-181"},
		}, ""},
		{"contains", []fleet.Rule{{Key: "serial", Op: "contains", Value: "x"}}, `condition rule 1: key "serial" with operator "contains" is not supported`},
		{"externalIp", []fleet.Rule{{Key: "serial", Op: "eq"}, {Key: "externalIp", Op: "eq", Value: "1.2.3.4"}},
			`condition rule 2: key "externalIp" with operator "eq" is not supported by the campaign service (supported keys: serial, oui, productClass, softwareVersion, hardwareVersion, dataModel; operators: eq, ne, in, notIn, startsWith)`},
		{"unknown key", []fleet.Rule{{Key: "d.serial; DROP TABLE x", Op: "eq"}}, `key "d.serial; DROP TABLE x" with operator "eq"`},
		{"unknown operator", []fleet.Rule{{Key: "oui", Op: "like"}}, `key "oui" with operator "like"`},
		{"operator case matters", []fleet.Rule{{Key: "oui", Op: "EQ"}}, `key "oui" with operator "EQ"`},
		{"in without values", []fleet.Rule{{Key: "oui", Op: "in"}}, `condition rule 1: key "oui" with operator "in" needs at least one value`},
		{"notIn without values", []fleet.Rule{{Key: "oui", Op: "notIn", Values: []string{}}}, `operator "notIn" needs at least one value`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := fleet.CheckRules(tc.rules)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if apperr.Status(err) != 400 || !strings.Contains(apperr.PublicMessage(err), tc.want) {
				t.Fatalf("err = %v, want 400 containing %q", err, tc.want)
			}
		})
	}
}

func TestScopeNarrow(t *testing.T) {
	cases := []struct {
		name  string
		scope fleet.Scope
		ids   []int64
		want  fleet.Scope
		empty bool
	}{
		{"no body list keeps ALL", fleet.Scope{All: true}, nil, fleet.Scope{All: true}, false},
		{"no body list keeps LIST", fleet.Scope{DomainIDs: []int64{1, 2}}, nil, fleet.Scope{DomainIDs: []int64{1, 2}}, false},
		{"ALL becomes the list, deduplicated", fleet.Scope{All: true}, []int64{3, 1, 3}, fleet.Scope{DomainIDs: []int64{3, 1}}, false},
		{"LIST intersects", fleet.Scope{DomainIDs: []int64{1, 2, 3}}, []int64{3, 4, 1}, fleet.Scope{DomainIDs: []int64{3, 1}}, false},
		{"disjoint lists see nothing", fleet.Scope{DomainIDs: []int64{1}}, []int64{2}, fleet.Scope{DomainIDs: []int64{}}, true},
		{"an empty body list sees nothing under ALL", fleet.Scope{All: true}, []int64{}, fleet.Scope{DomainIDs: []int64{}}, true},
		{"an empty body list sees nothing under LIST", fleet.Scope{DomainIDs: []int64{1}}, []int64{}, fleet.Scope{DomainIDs: []int64{}}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, empty := tc.scope.Narrow(tc.ids)
			if !reflect.DeepEqual(got, tc.want) || empty != tc.empty {
				t.Fatalf("Narrow = %+v, %v; want %+v, %v", got, empty, tc.want, tc.empty)
			}
			if got.Empty() != tc.empty {
				t.Fatalf("Empty() = %v", got.Empty())
			}
		})
	}
	if !(fleet.Scope{}).Empty() || (fleet.Scope{All: true}).Empty() {
		t.Fatal("Empty")
	}
}

func TestParseSourceType(t *testing.T) {
	cases := []struct {
		in   string
		want fleet.SourceType
		err  string
	}{
		{"ALL", fleet.SourceAll, ""},
		{"CONDITION", fleet.SourceCondition, ""},
		{"DEVICE_LIST", fleet.SourceDevices, ""},
		{"SERIAL_LIST", fleet.SourceSerials, ""},
		{"all", "", `sourceType "all" is not supported (one of ALL, CONDITION, DEVICE_LIST, SERIAL_LIST)`},
		{"", "", "sourceType is required (one of ALL, CONDITION, DEVICE_LIST, SERIAL_LIST)"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := fleet.ParseSourceType(tc.in)
			if tc.err == "" {
				if err != nil || got != tc.want {
					t.Fatalf("ParseSourceType(%q) = %q, %v", tc.in, got, err)
				}
				return
			}
			if apperr.Status(err) != 400 || apperr.PublicMessage(err) != tc.err {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
		})
	}
}

// TestPageCeiling: a page never holds more than maxDevices items (the spec's
// resolve page ceiling), on the SQL and the in-memory paths alike.
func TestPageCeiling(t *testing.T) {
	t.Parallel()
	forDialects(t, func(t *testing.T, f *fixture) {
		r := fleet.New(f.db, f.dialect, 2)
		for _, scope := range []fleet.Scope{{All: true}, bigScope(1, f.d2, f.d3)} {
			for _, sel := range []fleet.Selection{
				{Source: fleet.SourceAll},
				{Source: fleet.SourceSerials, Serials: []string{"sn-a1", "sn-a2"}},
			} {
				res, err := r.Resolve(context.Background(), scope, sel, fleet.Page{Number: 1, Size: 50})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Items) != 2 || res.TotalCount < 2 {
					t.Fatalf("%s: %d items of %d, want a page of 2", sel.Source, len(res.Items), res.TotalCount)
				}
			}
		}
	})
}
