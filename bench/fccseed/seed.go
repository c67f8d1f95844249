// Package fccseed fills the ACS device tables with a large, deterministic
// dataset for the campaign service benchmarks (device resolution, counts,
// serial lists, exports).
//
// It writes the real ACS tables, created by the ACS's own migrations, so the
// campaign service reads them exactly as in production. Loading is bulk:
// COPY on PostgreSQL, multi-row prepared INSERTs in one transaction on
// SQLite. On a 2-core machine 1,000,000 devices took about 20 s on
// PostgreSQL 15 and 20 to 25 s on SQLite, indexes and ANALYZE included
// (cmd/fccseed prints the figures of a run).
//
// # The dataset
//
// With Spec{Devices: N, Models: P, Manufacturers: M, Domains: D}:
//   - Domains 2..D+1, all children of Root (1), named "Domain 0002" and so on.
//   - Manufacturers 1..M named "Manufacturer 001"...; each has its own OUI
//     (A00000 + id, hex).
//   - Product classes (models) 1..P. Model m belongs to manufacturer
//     (m-1) mod M + 1; it has product class "PC-%04d", model name
//     "Model %04d" and the OUI of its manufacturer. Protocols: every 25th
//     model (m mod 25 = 0) is USP (3), models with m mod 10 = 7 are TR181
//     (2), all others TR069 (1). Devices of TR069 models have data model
//     TR-098, the others TR-181.
//   - N devices, ids 1..N. The first N - N/50 devices have the distinct
//     serials SN00000001, SN00000002, ... in id order; their model follows a
//     Zipf distribution (s = 1.1), so model 1 is the most common (about a
//     fifth of the devices with 500 models) and the last ones hold a few
//     hundred each; their domain is uniform over the seeded domains. Every
//     1000th of them (serial number divisible by 1000) has no product class
//     (NULL product_class_id, OUI 000000, product class IMPORT), like a
//     device created by an import: N/1000 orphans in all.
//   - The last N/50 devices (2%) are duplicates: each repeats the serial of
//     an earlier, distinct non-orphan device, spread evenly over the
//     serials, on the next model (m mod P + 1), hence another product class
//     and, with more than one manufacturer, another OUI. No serial appears
//     more than twice.
//   - online is true for a share OnlineRatio of the devices, drawn per
//     device; online_until is 24 hours after the seeding for online devices
//     and up to 7 days before it for the others. software_version is one of
//     three versions per model.
//
// Everything but the timestamps follows from the Spec and its Seed (PCG of
// math/rand/v2): the same Spec gives the same rows, on either dialect.
package fccseed

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"cpesuite/internal/acs"
	"cpesuite/internal/platform/sqlstore"
)

// Spec sizes the dataset. Zero fields take the defaults.
type Spec struct {
	Devices, Models, Manufacturers, Domains int     // defaults 1_000_000, 500, 50, 2000
	Seed                                    int64   // deterministic (math/rand/v2 PCG with this seed)
	OnlineRatio                             float64 // default 0.6
}

// Defaults of Spec.
const (
	DefaultDevices       = 1_000_000
	DefaultModels        = 500
	DefaultManufacturers = 50
	DefaultDomains       = 2000
	DefaultOnlineRatio   = 0.6
)

// Shape of the dataset.
const (
	duplicateEvery = 50   // one device in 50 repeats an earlier serial
	orphanEvery    = 1000 // one distinct serial in 1000 has no product class
	uspEvery       = 25   // every 25th model is USP
	zipfS          = 1.1  // Zipf exponent of devices per model
	onlineFor      = 24 * time.Hour
	offlineSince   = 7 * 24 * time.Hour
)

func (s Spec) withDefaults() Spec {
	if s.Devices == 0 {
		s.Devices = DefaultDevices
	}
	if s.Models == 0 {
		s.Models = DefaultModels
	}
	if s.Manufacturers == 0 {
		s.Manufacturers = DefaultManufacturers
	}
	if s.Domains == 0 {
		s.Domains = DefaultDomains
	}
	if s.OnlineRatio == 0 {
		s.OnlineRatio = DefaultOnlineRatio
	}
	return s
}

// Validate reports a Spec that cannot be seeded (after defaults).
func (s Spec) Validate() error {
	s = s.withDefaults()
	switch {
	case s.Devices < 0, s.Models < 0, s.Manufacturers < 0, s.Domains < 0:
		return errors.New("counts must not be negative")
	case s.Models < 2:
		return errors.New("at least 2 models are needed (duplicates sit on another model)")
	case s.OnlineRatio < 0 || s.OnlineRatio > 1:
		return fmt.Errorf("online ratio %v is not between 0 and 1", s.OnlineRatio)
	}
	return nil
}

// Counts of the dataset a Spec gives, for callers and tests.
type Counts struct {
	Devices, Distinct, Duplicates, Orphans, USPModels int
}

// Counts returns the sizes of the dataset s describes.
func (s Spec) Counts() Counts {
	s = s.withDefaults()
	dup := s.Devices / duplicateEvery
	distinct := s.Devices - dup
	return Counts{
		Devices:    s.Devices,
		Distinct:   distinct,
		Duplicates: dup,
		Orphans:    distinct / orphanEvery,
		USPModels:  s.Models / uspEvery,
	}
}

// seededTables are checked for emptiness before seeding and emptied by
// Reset, in an order that respects the foreign keys.
var seededTables = []string{"acs_devices", "acs_product_classes", "acs_manufacturers"}

// Seed migrates the ACS tables (acs.OpenStore) and fills them with the
// dataset of s (see the package documentation). progress, when not nil, is
// called with the number of devices written so far, after every batch.
//
// It refuses to run unless acs_devices, acs_product_classes and
// acs_manufacturers are empty and acs_domains holds only Root: seeding on
// top of data would collide on ids. Call Reset first. The load is one
// transaction: on failure nothing stays behind. Afterwards the PostgreSQL
// identity sequences are moved past the explicit ids (so the ACS can keep
// inserting) and the tables are analyzed.
func Seed(ctx context.Context, db *sqlstore.DB, s Spec, progress func(done int)) error {
	if err := s.Validate(); err != nil {
		return err
	}
	s = s.withDefaults()
	if progress == nil {
		progress = func(int) {}
	}
	if _, err := acs.OpenStore(ctx, db, 1); err != nil {
		return err
	}
	if err := checkEmpty(ctx, db); err != nil {
		return err
	}
	g := newGenerator(s, time.Now().UTC())
	var err error
	switch db.Dialect() {
	case sqlstore.Postgres:
		err = loadPostgres(ctx, db, g, progress)
	case sqlstore.SQLite:
		err = loadSQLite(ctx, db, g, progress)
	default:
		err = fmt.Errorf("dialect %s is not supported", db.Dialect())
	}
	if err != nil {
		return fmt.Errorf("loading: %w", err)
	}
	return afterLoad(ctx, db)
}

func checkEmpty(ctx context.Context, db *sqlstore.DB) error {
	for _, table := range seededTables {
		var n int
		// EXISTS instead of COUNT(*): a count of a large table is slow.
		if err := db.QueryRowContext(ctx, "SELECT CASE WHEN EXISTS (SELECT 1 FROM "+table+") THEN 1 ELSE 0 END").Scan(&n); err != nil {
			return fmt.Errorf("checking %s: %w", table, err)
		}
		if n != 0 {
			return fmt.Errorf("%s is not empty; reset the database first (fccseed -reset)", table)
		}
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT CASE WHEN EXISTS (SELECT 1 FROM acs_domains WHERE id <> 1) THEN 1 ELSE 0 END").Scan(&n); err != nil {
		return fmt.Errorf("checking acs_domains: %w", err)
	}
	if n != 0 {
		return errors.New("acs_domains holds domains besides Root; reset the database first (fccseed -reset)")
	}
	return nil
}

// afterLoad moves the identity sequences past the explicit ids and
// refreshes the planner statistics.
func afterLoad(ctx context.Context, db *sqlstore.DB) error {
	if db.Dialect() == sqlstore.Postgres {
		// SQLite's AUTOINCREMENT follows explicit ids by itself;
		// PostgreSQL's identity sequences do not, and the ACS's next
		// insert would collide with id 1.
		for _, table := range []string{"acs_domains", "acs_manufacturers", "acs_product_classes", "acs_devices"} {
			q := "SELECT setval(pg_get_serial_sequence('" + table + "', 'id'), COALESCE((SELECT max(id) FROM " + table + "), 1))"
			if _, err := db.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("advancing the id sequence of %s: %w", table, err)
			}
		}
		// VACUUM as well: it sets the visibility map that index-only
		// scans need, which autovacuum does for a settled production table
		// some time after a bulk load. Measuring before it would measure
		// the load, not the service.
		if _, err := db.ExecContext(ctx, "VACUUM ANALYZE acs_domains, acs_manufacturers, acs_product_classes, acs_devices"); err != nil {
			return fmt.Errorf("vacuuming: %w", err)
		}
		return nil
	}
	if _, err := db.ExecContext(ctx, "ANALYZE"); err != nil {
		return fmt.Errorf("analyzing: %w", err)
	}
	return nil
}

// Reset deletes what Seed creates: all devices (and their tasks), product
// classes, manufacturers, saved conditions placed in a domain other than
// Root (they would keep their domain alive) and every domain except Root.
// It also migrates the ACS tables, so it works on an empty database.
func Reset(ctx context.Context, db *sqlstore.DB) error {
	if _, err := acs.OpenStore(ctx, db, 1); err != nil {
		return err
	}
	err := db.InTx(ctx, func(tx *sql.Tx) error {
		var stmts []string
		if db.Dialect() == sqlstore.Postgres {
			// TRUNCATE instead of a DELETE of a million rows. No
			// CASCADE: should another table reference these, this
			// fails instead of emptying it.
			stmts = []string{"TRUNCATE acs_tasks, acs_devices, acs_product_classes, acs_manufacturers"}
		} else {
			stmts = []string{"DELETE FROM acs_tasks", "DELETE FROM acs_devices", "DELETE FROM acs_product_classes", "DELETE FROM acs_manufacturers"}
		}
		stmts = append(stmts, "DELETE FROM acs_conditions WHERE domain_id <> 1", "DELETE FROM acs_domains WHERE id <> 1")
		for _, q := range stmts {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	return nil
}

// ---------------------------------------------------------------- rows

// productClass is one seeded model.
type productClass struct {
	id, manufacturer int64
	oui, class, name string
	protocol         int
	dataModel        string
	versions         [3]string
}

// device is one seeded device row.
type device struct {
	id                 int64
	oui, class, serial string
	productClass       int64 // 0: NULL
	domain             int64
	softwareVersion    string
	dataModel          string
	online             bool
	onlineUntil        time.Time
}

// generator produces the rows of a Spec in a fixed order from one random
// stream, so the dataset does not depend on the dialect or on batching.
type generator struct {
	s       Spec
	now     time.Time
	rng     *rand.Rand
	zipf    *rand.Zipf
	classes []productClass
	counts  Counts

	next       int     // index of the next device, 0-based
	models     []int32 // model index of each distinct-serial device, -1 for orphans
	dupStride  float64 // distance between the serials the duplicates repeat
	orphanOUI  string
	orphanName string
}

func newGenerator(s Spec, now time.Time) *generator {
	rng := rand.New(rand.NewPCG(uint64(s.Seed), 0x9e3779b97f4a7c15))
	g := &generator{
		s:          s,
		now:        now,
		rng:        rng,
		zipf:       rand.NewZipf(rng, zipfS, 1, uint64(s.Models-1)),
		counts:     s.Counts(),
		orphanOUI:  "000000",
		orphanName: "IMPORT",
	}
	g.models = make([]int32, g.counts.Distinct)
	if g.counts.Duplicates > 0 {
		g.dupStride = float64(g.counts.Distinct) / float64(g.counts.Duplicates)
	}
	g.classes = make([]productClass, s.Models)
	for i := range g.classes {
		m := int64(i + 1)
		mf := (m-1)%int64(s.Manufacturers) + 1
		pc := productClass{
			id: m, manufacturer: mf,
			oui:   manufacturerOUI(mf),
			class: fmt.Sprintf("PC-%04d", m), name: fmt.Sprintf("Model %04d", m),
			protocol: acs.ProtocolTR069, dataModel: acs.DataModelTR098,
		}
		switch {
		case m%uspEvery == 0:
			pc.protocol, pc.dataModel = acs.ProtocolUSP, acs.DataModelTR181
		case m%10 == 7:
			pc.protocol, pc.dataModel = acs.ProtocolTR181, acs.DataModelTR181
		}
		major := 1 + rng.IntN(5)
		for v := range pc.versions {
			pc.versions[v] = fmt.Sprintf("%d.%d.%d", major, v, rng.IntN(20))
		}
		g.classes[i] = pc
	}
	return g
}

func manufacturerOUI(id int64) string { return fmt.Sprintf("%06X", 0xA00000+id) }

func manufacturerName(id int64) string { return fmt.Sprintf("Manufacturer %03d", id) }

func domainName(id int64) string { return fmt.Sprintf("Domain %04d", id) }

// done reports whether all devices have been produced.
func (g *generator) done() bool { return g.next >= g.counts.Devices }

// device produces the next device.
func (g *generator) device() device {
	i := g.next
	g.next++
	d := device{
		id:     int64(i + 1),
		domain: 2 + g.rng.Int64N(int64(g.s.Domains)),
		online: g.rng.Float64() < g.s.OnlineRatio,
	}
	if d.online {
		d.onlineUntil = g.now.Add(onlineFor)
	} else {
		d.onlineUntil = g.now.Add(-time.Duration(g.rng.Int64N(int64(offlineSince))))
	}
	var model int
	if i < g.counts.Distinct {
		d.serial = serial(i)
		if (i+1)%orphanEvery == 0 {
			g.models[i] = -1
			d.oui, d.class, d.dataModel = g.orphanOUI, g.orphanName, acs.DataModelTR098
			return d
		}
		model = int(g.zipf.Uint64())
		g.models[i] = int32(model)
	} else {
		// The k-th duplicate repeats a serial from an even spread;
		// an orphan's serial is replaced by its neighbour's.
		k := int(float64(i-g.counts.Distinct) * g.dupStride)
		if g.models[k] < 0 {
			k--
		}
		d.serial = serial(k)
		model = (int(g.models[k]) + 1) % g.s.Models
	}
	pc := &g.classes[model]
	d.oui, d.class, d.productClass, d.dataModel = pc.oui, pc.class, pc.id, pc.dataModel
	d.softwareVersion = pc.versions[g.rng.IntN(len(pc.versions))]
	return d
}

// serial is the serial of the device with index i among the distinct ones.
func serial(i int) string { return fmt.Sprintf("SN%08d", i+1) }
