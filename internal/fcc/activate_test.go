package fcc

import (
	"testing"
	"time"

	"cpesuite/internal/fcc/fleet"
	"cpesuite/internal/fcc/results"
	"cpesuite/internal/platform/sqlstore"
)

// TestActivateEndpoint holds POST /FCC/activate to its statuses: 503 first
// whenever the result store is not UP (even before the body is read),
// 404 outside scope, 400 for an empty fleet or a blank serial, 409 while
// something is planned, 200 with the plan otherwise.
func TestActivateEndpoint(t *testing.T) {
	forDialects(t, func(t *testing.T, h *harness) {
		good := h.immediateCampaign(nil)
		future := h.immediateCampaign(func(c *Campaign) {
			d := time.Now().UTC().Add(48 * time.Hour).Truncate(time.Second)
			c.Activation.Type, c.Activation.Date = ActivationScheduled, &d
		})
		empty := h.immediateCampaign(func(c *Campaign) {
			c.Configs = []TestConfig{{Manufacturer: "Nobody", Model: "None", SourceType: string(fleet.SourceAll), Settings: []Setting{speedSetting()}}}
		})
		blank := h.immediateCampaign(nil)
		if _, err := h.svc.store.db.Exec(h.svc.store.q(`UPDATE fcc_fleet SET serial = ' ' WHERE campaign_id = ? AND serial = 'A2'`), blank); err != nil {
			t.Fatal(err)
		}

		for _, gate := range []ResultGate{nil, fakeGate{results.StateUnavailable}, fakeGate{results.StateSchemaBehind}} {
			useGate(h.svc, gate)
			h.do("POST", "/FCC/activate", scopeAll, map[string]int64{"id": good}).want(503)
			h.do("POST", "/FCC/activate", scopeAll, "{not json").want(503)
		}
		useGate(h.svc, fakeGate{results.StateUp})

		tests := []struct {
			name     string
			id       hdr
			campaign int64
			status   int
			contains string
		}{
			{"outside scope", scopeList(3, 3), good, 404, "not found"},
			{"unknown campaign", scopeAll, 999999, 404, "not found"},
			{"empty fleet", scopeAll, empty, 400, "empty fleet"},
			{"blank serial", scopeAll, blank, 400, "cpeId " + itoa(int(h.dev["A2"]))},
			{"activates", scopeAll, good, 200, ""},
			{"again while planned", scopeAll, good, 409, "planned"},
			{"future date", scopeList(2, 2), future, 200, ""},
		}
		for _, tc := range tests {
			r := h.do("POST", "/FCC/activate", tc.id, map[string]int64{"id": tc.campaign}).want(tc.status)
			if tc.status != 200 {
				mustContain(t, r.errorBody().Message, tc.contains)
				continue
			}
			var out ActivateResponse
			r.decode(&out)
			if out.ID != tc.campaign || out.State != StateScheduled || out.PlannedStart == nil {
				t.Fatalf("%s: answer %+v", tc.name, out)
			}
		}
		var count int
		if err := h.svc.store.db.QueryRow(h.svc.store.q(`SELECT activation_count FROM fcc_campaigns WHERE id = ?`), good).Scan(&count); err != nil || count != 1 {
			t.Fatalf("activation_count %d, %v", count, err)
		}
		audit, err := h.svc.store.Audit(t.Context(), good)
		if err != nil || audit[len(audit)-1].Action != "ACTIVATE" || audit[len(audit)-1].UserID != "alice" {
			t.Fatalf("audit %+v, %v", audit, err)
		}
		// The activation froze the fleet (save rule 11).
		c := h.get(scopeAll, good)
		c.Configs[0].Serials = []string{"A1"}
		h.do("PUT", "/FCC/item/details", scopeAll, c).want(409)
	})
}

// TestDeactivateEndpoint: 404 outside scope, 409 with nothing planned or
// running, and a planned first run that never started is dropped and the
// campaign COMPLETED.
func TestDeactivateEndpoint(t *testing.T) {
	forDialects(t, func(t *testing.T, h *harness) {
		useGate(h.svc, fakeGate{results.StateUp})
		draft := h.immediateCampaign(nil)
		future := h.immediateCampaign(func(c *Campaign) {
			d := time.Now().UTC().Add(48 * time.Hour).Truncate(time.Second)
			c.Activation.Type, c.Activation.Date = ActivationScheduled, &d
		})
		h.activate(future)
		h.do("POST", "/FCC/deactivate", scopeList(3, 3), map[string]int64{"id": future}).want(404)
		mustContain(t, h.do("POST", "/FCC/deactivate", scopeAll, map[string]int64{"id": draft}).want(409).errorBody().Message, "no run planned")
		var out ActivateResponse
		h.do("POST", "/FCC/deactivate", scopeAll, map[string]int64{"id": future}).want(200).decode(&out)
		if out.State != StateCompleted {
			t.Fatalf("answer %+v", out)
		}
		h.do("POST", "/FCC/deactivate", scopeAll, map[string]int64{"id": future}).want(409)
		audit, err := h.svc.store.Audit(t.Context(), future)
		if err != nil || audit[len(audit)-1].Action != "DEACTIVATE" {
			t.Fatalf("audit %+v, %v", audit, err)
		}
		// A completed campaign may be activated again.
		h.activate(future)
	})
}

// TestTwoSchedulersCreateOneRun: two service instances on one database
// racing for the same due campaign create its run once.
func TestTwoSchedulersCreateOneRun(t *testing.T) {
	forDialects(t, func(t *testing.T, h *harness) {
		useGate(h.svc, fakeGate{results.StateUp})
		h.svc.cfg.Runs = fastRuns()
		other := New(h.svc.cfg, h.svc.store, h.svc.fleet, h.svc.log)
		for range 5 {
			c := h.immediateCampaign(nil)
			h.activate(c)
			errs := make(chan error, 2)
			created := make(chan bool, 2)
			for _, s := range []*Service{h.svc, other} {
				go func() {
					ok, err := s.createRun(t.Context(), c)
					created <- ok
					errs <- err
				}()
			}
			n := 0
			for range 2 {
				if <-created {
					n++
				}
				if err := <-errs; err != nil && h.dialect == sqlstore.SQLite {
					t.Fatal(err)
				}
			}
			var runs, rows int
			if err := h.svc.store.db.QueryRow(h.svc.store.q(`SELECT COUNT(*) FROM fcc_runs WHERE campaign_id = ?`), c).Scan(&runs); err != nil {
				t.Fatal(err)
			}
			if err := h.svc.store.db.QueryRow(h.svc.store.q(`SELECT COUNT(*) FROM fcc_outbox o JOIN fcc_runs r ON r.id = o.run_id WHERE r.campaign_id = ?`), c).Scan(&rows); err != nil {
				t.Fatal(err)
			}
			if n != 1 || runs != 1 || rows != 1 {
				t.Fatalf("created %d, runs %d, outbox rows %d; want 1 each", n, runs, rows)
			}
		}
	})
}
