package fccseed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/acs"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
)

var testSpec = Spec{Devices: 5000, Models: 60, Manufacturers: 7, Domains: 40, Seed: 42}

func TestSeed(t *testing.T) {
	for _, d := range []sqlstore.Dialect{sqlstore.SQLite, sqlstore.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			db := sqltest.Open(t, d)
			ctx := context.Background()
			last := 0
			if err := Seed(ctx, db, testSpec, func(done int) {
				if done < last {
					t.Errorf("progress went back from %d to %d", last, done)
				}
				last = done
			}); err != nil {
				t.Fatalf("Seed: %v", err)
			}
			if last != testSpec.Devices {
				t.Errorf("last progress = %d, want %d", last, testSpec.Devices)
			}
			checkDataset(t, db, testSpec)
			first := fingerprint(t, db)

			// Seeding twice would collide: refused.
			err := Seed(ctx, db, testSpec, nil)
			if err == nil || !strings.Contains(err.Error(), "acs_devices is not empty") {
				t.Fatalf("second Seed: error = %v, want a refusal", err)
			}

			// The ACS keeps working on the seeded tables: a new device
			// of a new model by a new manufacturer, and a new domain,
			// get fresh ids.
			store, err := acs.OpenStore(ctx, db, 1)
			if err != nil {
				t.Fatalf("OpenStore: %v", err)
			}
			seeded, err := store.Device(ctx, 1)
			if err != nil {
				t.Fatalf("Device 1: %v", err)
			}
			now := time.Now()
			res, err := store.ApplyInforms(ctx, []acs.InformUpdate{
				{Key: acs.DeviceKey{OUI: "FFFFFF", ProductClass: "NEW", Serial: "NEW0001"}, Manufacturer: "New Vendor",
					DataModel: acs.DataModelTR181, At: now, OnlineUntil: now.Add(time.Hour)},
				{Key: seeded.Key(), At: now, OnlineUntil: now.Add(time.Hour)},
			})
			if err != nil {
				t.Fatalf("ApplyInforms after seeding: %v", err)
			}
			if res[0].DeviceID != int64(testSpec.Devices)+1 {
				t.Errorf("new device id = %d, want %d", res[0].DeviceID, testSpec.Devices+1)
			}
			if res[1].DeviceID != 1 {
				t.Errorf("inform of seeded SN00000001 updated device %d, want 1", res[1].DeviceID)
			}
			dev, err := store.Device(ctx, res[0].DeviceID)
			if err != nil {
				t.Fatalf("Device: %v", err)
			}
			if dev.Manufacturer != "New Vendor" || dev.ModelID == nil || *dev.ModelID != int64(testSpec.Models)+1 {
				t.Errorf("new device = %+v, want manufacturer New Vendor on model %d", dev, testSpec.Models+1)
			}
			dom, err := store.CreateDomain(ctx, "after seeding", nil)
			if err != nil {
				t.Fatalf("CreateDomain: %v", err)
			}
			if dom.ID != int64(testSpec.Domains)+2 {
				t.Errorf("new domain id = %d, want %d", dom.ID, testSpec.Domains+2)
			}

			// Reset empties the tables; seeding again gives the same
			// rows.
			if err := Reset(ctx, db); err != nil {
				t.Fatalf("Reset: %v", err)
			}
			for _, table := range []string{"acs_devices", "acs_product_classes", "acs_manufacturers"} {
				if n := count(t, db, "SELECT COUNT(*) FROM "+table); n != 0 {
					t.Errorf("%s holds %d rows after Reset", table, n)
				}
			}
			if n := count(t, db, "SELECT COUNT(*) FROM acs_domains"); n != 1 {
				t.Errorf("acs_domains holds %d rows after Reset, want Root only", n)
			}
			if err := Seed(ctx, db, testSpec, nil); err != nil {
				t.Fatalf("Seed after Reset: %v", err)
			}
			if again := fingerprint(t, db); again != first {
				t.Errorf("Seed after Reset gave other rows: fingerprint %s, first %s", again, first)
			}
			if _, err := store.ApplyInforms(ctx, []acs.InformUpdate{
				{Key: acs.DeviceKey{OUI: "FFFFFF", ProductClass: "NEW2", Serial: "NEW0002"}, Manufacturer: "Newer Vendor", At: now, OnlineUntil: now},
			}); err != nil {
				t.Fatalf("ApplyInforms after Reset and Seed: %v", err)
			}
		})
	}
}

// TestSeedSameOnBothDialects checks that the dataset depends on the Spec
// only.
func TestSeedSameOnBothDialects(t *testing.T) {
	ctx := context.Background()
	spec := Spec{Devices: 3000, Models: 30, Manufacturers: 4, Domains: 10, Seed: 7, OnlineRatio: 0.3}
	var prints []string
	for _, d := range []sqlstore.Dialect{sqlstore.SQLite, sqlstore.Postgres} {
		db := sqltest.Open(t, d)
		if err := Seed(ctx, db, spec, nil); err != nil {
			t.Fatalf("%s: Seed: %v", d, err)
		}
		prints = append(prints, fingerprint(t, db))
	}
	if prints[0] != prints[1] {
		t.Fatalf("SQLite and PostgreSQL datasets differ: %s vs %s", prints[0], prints[1])
	}
	other := sqltest.Open(t, sqlstore.SQLite)
	spec.Seed++
	if err := Seed(ctx, other, spec, nil); err != nil {
		t.Fatal(err)
	}
	if fingerprint(t, other) == prints[0] {
		t.Fatal("another seed gave the same dataset")
	}
}

func TestSpecValidate(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"defaults", Spec{}, ""},
		{"negative", Spec{Devices: -1}, "negative"},
		{"one model", Spec{Models: 1}, "at least 2 models"},
		{"ratio", Spec{OnlineRatio: 1.5}, "online ratio"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.spec.Validate()
			if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want %q", err, tt.want)
			}
		})
	}
}

func count(t *testing.T, db *sqlstore.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(), db.Rebind(q), args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func checkDataset(t *testing.T, db *sqlstore.DB, s Spec) {
	t.Helper()
	want := s.Counts()
	if want.Duplicates != 100 || want.Orphans != 4 || want.USPModels != 2 {
		t.Fatalf("Counts = %+v; the test expects 100 duplicates, 4 orphans, 2 USP models", want)
	}
	checks := []struct {
		name  string
		query string
		want  int
	}{
		{"devices", "SELECT COUNT(*) FROM acs_devices", s.Devices},
		{"device ids 1..N", "SELECT COUNT(*) FROM acs_devices WHERE id BETWEEN 1 AND ?", s.Devices},
		{"distinct serials", "SELECT COUNT(DISTINCT serial) FROM acs_devices", want.Distinct},
		{"serials on two devices", "SELECT COUNT(*) FROM (SELECT serial FROM acs_devices GROUP BY serial HAVING COUNT(*) = 2) x", want.Duplicates},
		{"serials on more than two devices", "SELECT COUNT(*) FROM (SELECT serial FROM acs_devices GROUP BY serial HAVING COUNT(*) > 2) x", 0},
		{"duplicates on another model and OUI", `SELECT COUNT(*) FROM acs_devices a JOIN acs_devices b ON a.serial = b.serial AND a.id < b.id
			WHERE a.product_class_id <> b.product_class_id AND a.oui <> b.oui`, want.Duplicates},
		{"orphans", "SELECT COUNT(*) FROM acs_devices WHERE product_class_id IS NULL", want.Orphans},
		{"orphans are not duplicated", `SELECT COUNT(*) FROM acs_devices a JOIN acs_devices b ON a.serial = b.serial AND a.id <> b.id
			WHERE a.product_class_id IS NULL`, 0},
		{"manufacturers", "SELECT COUNT(*) FROM acs_manufacturers", s.Manufacturers},
		{"product classes", "SELECT COUNT(*) FROM acs_product_classes", s.Models},
		{"USP models", "SELECT COUNT(*) FROM acs_product_classes WHERE protocol_id = 3", want.USPModels},
		{"TR181 models", "SELECT COUNT(*) FROM acs_product_classes WHERE protocol_id = 2", 6},
		{"devices of USP models", `SELECT CASE WHEN COUNT(*) > 0 THEN 1 ELSE 0 END FROM acs_devices d
			JOIN acs_product_classes pc ON pc.id = d.product_class_id WHERE pc.protocol_id = 3`, 1},
		{"domains", "SELECT COUNT(*) FROM acs_domains WHERE parent_id = 1 AND id BETWEEN 2 AND ?", s.Domains},
		{"devices in seeded domains", "SELECT COUNT(*) FROM acs_devices WHERE domain_id BETWEEN 2 AND ?", s.Devices},
		{"every domain used", "SELECT COUNT(DISTINCT domain_id) FROM acs_devices", s.Domains},
		{"every model used", "SELECT COUNT(DISTINCT product_class_id) FROM acs_devices", s.Models},
		{"model OUI matches the device", `SELECT COUNT(*) FROM acs_devices d JOIN acs_product_classes pc ON pc.id = d.product_class_id
			WHERE pc.oui <> d.oui OR pc.product_class <> d.product_class`, 0},
		{"online ones are online until later", "SELECT COUNT(*) FROM acs_devices WHERE online = ? AND online_until <= ?", 0},
		{"offline ones are offline since earlier", "SELECT COUNT(*) FROM acs_devices WHERE online = ? AND online_until > ?", 0},
		{"software versions", "SELECT COUNT(*) FROM acs_devices WHERE product_class_id IS NOT NULL AND software_version = ''", 0},
		{"data models", "SELECT COUNT(*) FROM acs_devices WHERE data_model NOT IN ('TR-098', 'TR-181')", 0},
	}
	now := time.Now().UTC()
	for _, c := range checks {
		var args []any
		switch {
		case strings.Contains(c.name, "ids 1..N"):
			args = []any{s.Devices}
		case strings.Contains(c.query, "BETWEEN 2 AND ?"):
			args = []any{s.Domains + 1}
		case strings.HasPrefix(c.name, "online ones"):
			args = []any{true, now}
		case strings.HasPrefix(c.name, "offline ones"):
			args = []any{false, now}
		}
		if got := count(t, db, c.query, args...); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	online := count(t, db, "SELECT COUNT(*) FROM acs_devices WHERE online = ?", true)
	if ratio := float64(online) / float64(s.Devices); ratio < 0.55 || ratio > 0.65 {
		t.Errorf("online ratio %.3f, want about 0.6", ratio)
	}
	// Zipf: model 1 holds far more devices than the last model.
	first := count(t, db, "SELECT COUNT(*) FROM acs_devices WHERE product_class_id = 1")
	lastModel := count(t, db, "SELECT COUNT(*) FROM acs_devices WHERE product_class_id = ?", s.Models)
	if first < 5*lastModel {
		t.Errorf("model 1 has %d devices, model %d has %d: not Zipf-like", first, s.Models, lastModel)
	}
}

// fingerprint hashes the rows Seed writes, timestamps left out.
func fingerprint(t *testing.T, db *sqlstore.DB) string {
	t.Helper()
	h := sha256.New()
	queries := []string{
		"SELECT id, parent_id, name FROM acs_domains ORDER BY id",
		"SELECT id, name, 0 FROM acs_manufacturers ORDER BY id",
		"SELECT id, manufacturer_id, oui || product_class || model_name || protocol_id FROM acs_product_classes ORDER BY id",
		`SELECT id, COALESCE(product_class_id, 0) * 100000 + domain_id,
			oui || product_class || serial || software_version || data_model || CASE WHEN online THEN 'on' ELSE 'off' END
			FROM acs_devices ORDER BY id`,
	}
	for _, q := range queries {
		rows, err := db.QueryContext(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for rows.Next() {
			var a, b any
			var c string
			if err := rows.Scan(&a, &b, &c); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(h, "%v|%v|%s\n", a, b, c)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
