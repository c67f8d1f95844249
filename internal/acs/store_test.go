package acs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
)

// forStores runs fn against a fresh store on SQLite and on PostgreSQL.
func forStores(t *testing.T, fn func(t *testing.T, s *Store)) {
	for _, d := range []sqlstore.Dialect{sqlstore.SQLite, sqlstore.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			db := sqltest.Open(t, d)
			s, err := OpenStore(context.Background(), db, 1)
			if err != nil {
				t.Fatal(err)
			}
			fn(t, s)
		})
	}
}

func inform(serial string, at time.Time, params Params) InformUpdate {
	return InformUpdate{
		Key:          DeviceKey{OUI: "00D09E", ProductClass: "HG8245", Serial: serial},
		Manufacturer: "Acme", ModelName: "HG 8245", SoftwareVersion: "1.0", DataModel: DataModelTR098,
		CWMPVersion: "cwmp-1-2", ConnReqURL: "http://10.0.0.1:7547/cr", ExternalIP: "10.0.0.1",
		PeriodicInterval: 300, Events: []string{"2 PERIODIC"}, Params: params, At: at, OnlineUntil: at.Add(10 * time.Minute),
	}
}

func TestApplyInformsAndRead(t *testing.T) {
	forStores(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
		u1 := inform("SN1", at, Params{"InternetGatewayDevice.DeviceInfo.UpTime": {"100", "xsd:unsignedInt"}})
		u1.Boot = true
		u2 := inform("sn2", at, nil)
		u2.Key.ProductClass = "OTHER"
		u2.DataModel = DataModelTR181
		res, err := s.ApplyInforms(ctx, []InformUpdate{u1, u2})
		if err != nil {
			t.Fatal(err)
		}
		if res[0].DeviceID == 0 || res[1].DeviceID == 0 || res[0].DeviceID == res[1].DeviceID {
			t.Fatalf("ids %+v", res)
		}
		d, err := s.Device(ctx, res[0].DeviceID)
		if err != nil {
			t.Fatal(err)
		}
		if d.Serial != "SN1" || d.Manufacturer != "Acme" || d.ModelName != "HG 8245" || d.Protocol != "TR069" || !d.SupportedByACS ||
			!d.Online || d.DomainID == nil || *d.DomainID != 1 || d.LastBootAt == nil || !d.LastBootAt.Equal(at) || d.PeriodicInterval != 300 {
			t.Fatalf("device %+v", d)
		}
		d2, _ := s.Device(ctx, res[1].DeviceID)
		if d2.Protocol != "TR181" {
			t.Errorf("TR-181 data model must give protocol TR181, got %s", d2.Protocol)
		}

		// A second Inform: merged params, kept boot time, empty fields keep stored values.
		later := at.Add(5 * time.Minute)
		u1b := inform("SN1", later, Params{"InternetGatewayDevice.DeviceInfo.UpTime": {"400", "xsd:unsignedInt"}, "X.New": {"a", ""}})
		u1b.ExternalIP, u1b.PeriodicInterval, u1b.SoftwareVersion = "", 0, "2.0"
		res2, err := s.ApplyInforms(ctx, []InformUpdate{u1b})
		if err != nil {
			t.Fatal(err)
		}
		if res2[0].DeviceID != res[0].DeviceID {
			t.Fatalf("same device got a new id")
		}
		d, _ = s.Device(ctx, res[0].DeviceID)
		if d.ExternalIP != "10.0.0.1" || d.PeriodicInterval != 300 || d.SoftwareVersion != "2.0" || !d.LastBootAt.Equal(at) || !d.LastInformAt.Equal(later) {
			t.Fatalf("after second inform %+v", d)
		}
		p, err := s.Params(ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if p["InternetGatewayDevice.DeviceInfo.UpTime"].Value != "400" || p["X.New"].Value != "a" || len(p) != 2 {
			t.Fatalf("params %+v", p)
		}
		if err := s.MergeParams(ctx, d.ID, Params{"X.Gpv": {"1", "xsd:boolean"}}); err != nil {
			t.Fatal(err)
		}
		p, _ = s.Params(ctx, d.ID)
		if len(p) != 3 || p["X.Gpv"].Type != "xsd:boolean" {
			t.Fatalf("after GPV merge %+v", p)
		}
		if _, err := s.DeviceByKey(ctx, DeviceKey{"00D09E", "HG8245", "nope"}); !errors.Is(err, apperr.ErrNotFound) {
			t.Fatalf("unknown key: %v", err)
		}
	})
}

func TestListDevicesFilters(t *testing.T) {
	forStores(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := time.Now().UTC()
		var ups []InformUpdate
		for i := 0; i < 30; i++ {
			u := inform(fmt.Sprintf("SN%03d", i), at, nil)
			if i%3 == 0 {
				u.Key.ProductClass = "B"
			}
			ups = append(ups, u)
		}
		res, err := s.ApplyInforms(ctx, ups)
		if err != nil {
			t.Fatal(err)
		}
		dom, err := s.CreateDomain(ctx, "Region A", ptr(int64(1)))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res[:5] {
			if err := s.UpdateDevice(ctx, r.DeviceID, DeviceUpdate{DomainID: &dom.ID}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.SweepOffline(ctx, at.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.MarkOnline(ctx, res[1].DeviceID, at, at.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		d0, _ := s.Device(ctx, res[0].DeviceID)
		tr := true
		tests := []struct {
			name  string
			f     DeviceFilter
			total int64
		}{
			{"all", DeviceFilter{}, 30},
			{"serial case-insensitive", DeviceFilter{Serial: "sn007"}, 1},
			{"serial prefix", DeviceFilter{SerialPrefix: "sn00"}, 10},
			{"prefix wildcard is literal", DeviceFilter{SerialPrefix: "SN_"}, 0},
			{"model", DeviceFilter{ModelIDs: []int64{*d0.ModelID}}, 10},
			{"domain", DeviceFilter{DomainIDs: []int64{dom.ID}}, 5},
			{"empty visible set sees nothing", DeviceFilter{DomainIDs: []int64{}}, 0},
			{"online", DeviceFilter{Online: &tr}, 1},
			{"combined", DeviceFilter{DomainIDs: []int64{dom.ID}, Online: &tr}, 1},
		}
		for _, tt := range tests {
			items, total, err := s.ListDevices(ctx, tt.f, Page{Number: 1, Size: 4})
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if total != tt.total || len(items) != int(min(tt.total, 4)) {
				t.Errorf("%s: total %d items %d, want %d", tt.name, total, len(items), tt.total)
			}
		}
		items, _, _ := s.ListDevices(ctx, DeviceFilter{}, Page{Number: 8, Size: 4})
		if len(items) != 2 || items[0].Serial != "SN028" {
			t.Errorf("last page: %d items", len(items))
		}
	})
}

func ptr[T any](v T) *T { return &v }

// TestCampaignRead is the read the campaign service does against these
// tables (schema.md): one COUNT and one row read, left joins only, a
// device without a product class still found by serial.
func TestCampaignRead(t *testing.T) {
	forStores(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		res, err := s.ApplyInforms(ctx, []InformUpdate{inform("A1", time.Now(), nil)})
		if err != nil {
			t.Fatal(err)
		}
		// A device with no product class (inserted by an import).
		if _, err := s.db.ExecContext(ctx, s.q(`INSERT INTO acs_devices (oui, product_class, serial, domain_id) VALUES (?, ?, ?, ?)`), "X", "Y", "ORPHAN", 1); err != nil {
			t.Fatal(err)
		}
		pcID := *mustDevice(t, s, res[0].DeviceID).ModelID
		if _, err := s.UpdateProductClass(ctx, pcID, ProductClassUpdate{ProtocolID: ptr(ProtocolUSP)}); err != nil {
			t.Fatal(err)
		}
		const q = `SELECT d.id, d.serial, d.product_class_id, COALESCE(m.name, ''), COALESCE(pc.model_name, ''), d.domain_id, d.online,
			COALESCE(p.name, 'TR069'), COALESCE(p.supported_by_acs, TRUE), d.software_version
			FROM acs_devices d
			LEFT JOIN acs_product_classes pc ON pc.id = d.product_class_id
			LEFT JOIN acs_manufacturers m ON m.id = pc.manufacturer_id
			LEFT JOIN acs_protocols p ON p.id = COALESCE(pc.protocol_id, 1)
			WHERE lower(d.serial) IN (?, ?) ORDER BY d.id`
		rows, err := s.db.QueryContext(ctx, s.q(q), "a1", "orphan")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		type row struct {
			serial, mf, model, proto string
			supported                bool
		}
		var got []row
		for rows.Next() {
			var r row
			var id int64
			var model, dom *int64
			var online bool
			var fw string
			if err := rows.Scan(&id, &r.serial, &model, &r.mf, &r.model, &dom, &online, &r.proto, &r.supported, &fw); err != nil {
				t.Fatal(err)
			}
			got = append(got, r)
		}
		want := []row{{"A1", "Acme", "HG 8245", "USP", false}, {"ORPHAN", "", "", "TR069", true}}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
}

func mustDevice(t *testing.T, s *Store, id int64) Device {
	t.Helper()
	d, err := s.Device(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestTasksLifecycleAndTransactions(t *testing.T) {
	forStores(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		res, err := s.ApplyInforms(ctx, []InformUpdate{inform("T1", time.Now(), nil)})
		if err != nil {
			t.Fatal(err)
		}
		dev := res[0].DeviceID
		txn, err := s.Enqueue(ctx, "test", []NewTask{
			{DeviceID: dev, Kind: KindGetParameterValues, Args: json.RawMessage(`{"names":["A."]}`)},
			{DeviceID: dev, Kind: KindReboot},
		})
		if err != nil {
			t.Fatal(err)
		}
		if txn.ID <= 0 || len(txn.Tasks) != 2 || txn.Tasks[0].ID >= txn.Tasks[1].ID {
			t.Fatalf("txn %+v", txn)
		}
		if _, err := s.Enqueue(ctx, "bad", []NewTask{{DeviceID: 999999, Kind: KindReboot}}); !errors.Is(err, apperr.ErrNotFound) {
			t.Fatalf("unknown device: %v", err)
		}
		next, err := s.NextTask(ctx, dev)
		if err != nil || next == nil || next.Kind != KindGetParameterValues {
			t.Fatalf("next %+v %v", next, err)
		}
		now := time.Now().UTC()
		next.State, next.Phase, next.Attempts, next.StartedAt = TaskRunning, PhaseSent, 1, &now
		if err := s.SaveTask(ctx, next); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordConnectionRequest(ctx, dev, now, "dial tcp: connection refused"); err != nil {
			t.Fatal(err)
		}
		next.State, next.FinishedAt, next.Result = TaskDone, &now, json.RawMessage(`{"A.B":"1"}`)
		if err := s.SaveTask(ctx, next); err != nil {
			t.Fatal(err)
		}
		second, _ := s.NextTask(ctx, dev)
		if second == nil || second.Kind != KindReboot || second.ConnReqCount != 1 || second.ConnReqError == "" {
			t.Fatalf("second %+v", second)
		}
		second.State, second.FinishedAt = TaskFault, &now
		second.Fault = &Fault{Code: 9002, Message: "Internal error", Detail: json.RawMessage(`[{"p":1}]`)}
		if err := s.SaveTask(ctx, second); err != nil {
			t.Fatal(err)
		}
		got, err := s.Transaction(ctx, txn.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != TaskFault || string(got.Tasks[0].Result) != `{"A.B":"1"}` || got.Tasks[1].Fault.Code != 9002 || string(got.Tasks[1].Fault.Detail) != `[{"p":1}]` {
			t.Fatalf("transaction %+v", got)
		}
		if n, _ := s.NextTask(ctx, dev); n != nil {
			t.Fatalf("no open task expected, got %+v", n)
		}
		if _, err := s.Transaction(ctx, 424242); !errors.Is(err, apperr.ErrNotFound) {
			t.Fatal(err)
		}
		// Cancel, and deleting the device removes its tasks.
		txn2, _ := s.Enqueue(ctx, "", []NewTask{{DeviceID: dev, Kind: KindFactoryReset}})
		if _, err := s.CancelTask(ctx, txn2.Tasks[0].ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CancelTask(ctx, txn2.Tasks[0].ID); !errors.Is(err, apperr.ErrConflict) {
			t.Fatalf("second cancel: %v", err)
		}
		if err := s.DeleteDevice(ctx, dev); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Task(ctx, txn2.Tasks[0].ID); !errors.Is(err, apperr.ErrNotFound) {
			t.Fatalf("task after device delete: %v", err)
		}
	})
}

func TestConcurrentInformBatches(t *testing.T) {
	forStores(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var ups []InformUpdate
				for i := 0; i < 20; i++ {
					u := inform(fmt.Sprintf("C%d-%d", g, i), time.Now(), Params{"P": {fmt.Sprint(i), ""}})
					u.Key.ProductClass = fmt.Sprintf("PC%d", i%3) // new models raced from many batches
					ups = append(ups, u)
				}
				if _, err := s.ApplyInforms(ctx, ups); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		total, online, err := s.CountDevices(ctx)
		if err != nil || total != 160 || online != 160 {
			t.Fatalf("total %d online %d err %v", total, online, err)
		}
		classes, _ := s.ProductClasses(ctx)
		if len(classes) != 3 {
			t.Fatalf("%d product classes, want 3", len(classes))
		}
	})
}

func TestCatalogAndConditions(t *testing.T) {
	forStores(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		if _, err := s.CreateDomain(ctx, " ", nil); !errors.Is(err, apperr.ErrInvalid) {
			t.Fatal(err)
		}
		if _, err := s.CreateDomain(ctx, "x", ptr(int64(777))); !errors.Is(err, apperr.ErrInvalid) {
			t.Fatalf("unknown parent: %v", err)
		}
		dom, err := s.CreateDomain(ctx, "City", ptr(int64(1)))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteDomain(ctx, 1); !errors.Is(err, apperr.ErrConflict) {
			t.Fatalf("deleting a domain with children: %v", err)
		}
		res, _ := s.ApplyInforms(ctx, []InformUpdate{inform("D1", time.Now(), nil), inform("D2", time.Now(), nil)})
		s.UpdateDevice(ctx, res[0].DeviceID, DeviceUpdate{DomainID: &dom.ID})
		c, err := s.SaveCondition(ctx, Condition{Name: "city", DomainID: &dom.ID, Criteria: Criteria{
			DomainIDs: []int64{dom.ID}, Rules: []Rule{{Key: "serial", Op: "startsWith", Value: "D"}}}})
		if err != nil {
			t.Fatal(err)
		}
		ids, err := s.ConditionDeviceIDs(ctx, c, 100)
		if err != nil || len(ids) != 1 || ids[0] != res[0].DeviceID {
			t.Fatalf("condition ids %v %v", ids, err)
		}
		c.Criteria = Criteria{Rules: []Rule{{Key: "serial", Op: "in", Values: []string{"D1", "D2"}}, {Key: "softwareVersion", Op: "eq", Value: "1.0"}}}
		if c, err = s.SaveCondition(ctx, c); err != nil {
			t.Fatal(err)
		}
		if ids, _ := s.ConditionDeviceIDs(ctx, c, 100); len(ids) != 2 {
			t.Fatalf("rule in: %v", ids)
		}
		bad := []Criteria{
			{Rules: []Rule{{Key: "password", Op: "eq"}}},
			{Rules: []Rule{{Key: "serial", Op: "regex"}}},
			{Rules: []Rule{{Key: "serial", Op: "in"}}},
		}
		for _, crit := range bad {
			if _, err := s.SaveCondition(ctx, Condition{Name: "bad", Criteria: crit}); !errors.Is(err, apperr.ErrInvalid) {
				t.Errorf("%+v accepted: %v", crit, err)
			}
		}
		list, _ := s.Conditions(ctx, []int64{dom.ID})
		if len(list) != 1 {
			t.Fatalf("conditions %v", list)
		}
		if err := s.DeleteCondition(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Condition(ctx, c.ID); !errors.Is(err, apperr.ErrNotFound) {
			t.Fatal(err)
		}
		pcs, _ := s.ProductClasses(ctx)
		pc, err := s.UpdateProductClass(ctx, pcs[0].ID, ProductClassUpdate{ModelName: ptr("New"), Manufacturer: ptr("Other Co"), ProtocolID: ptr(2)})
		if err != nil || pc.ModelName != "New" || pc.Manufacturer != "Other Co" || pc.Protocol != "TR181" {
			t.Fatalf("update class %+v %v", pc, err)
		}
		if _, err := s.UpdateProductClass(ctx, pcs[0].ID, ProductClassUpdate{ProtocolID: ptr(9)}); !errors.Is(err, apperr.ErrInvalid) {
			t.Fatal(err)
		}
		mfs, _ := s.Manufacturers(ctx)
		if len(mfs) != 2 {
			t.Fatalf("manufacturers %v", mfs)
		}
	})
}
