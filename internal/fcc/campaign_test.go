package fcc

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/acs"
	"cpesuite/internal/platform/sqlstore"
)

func TestSaveAndReadShape(t *testing.T) {
	forDialects(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		cond, err := h.acs.SaveCondition(ctx, acs.Condition{Name: "Acme online", Criteria: acs.Criteria{ManufacturerIDs: nil, OnlyOnline: true,
			Rules: []acs.Rule{{Key: "productClass", Op: "eq", Value: "HG8245"}}}})
		if err != nil {
			t.Fatal(err)
		}
		c := speedCampaign("Evening speed",
			TestConfig{Manufacturer: "Acme", Model: "HG 8245", SourceType: "CONDITION", ConditionID: &cond.ID, Settings: []Setting{speedSetting()}},
			TestConfig{Manufacturer: "acme", Model: "hg 8245", SourceType: "DEVICE_LIST", SelectedDevices: []int64{h.dev["A1"], h.dev["A3"], h.dev["A4"]},
				UnselectedDevices: []int64{h.dev["A4"]}, Settings: []Setting{speedSetting()}},
		)
		c.DomainID = ptr(int64(2))
		c.Reactivation = &Reactivation{Type: ReactivationDaily, RepeatEvery: ptr(1), ReactivationCount: ptr(3)}
		id := h.save(scopeAll, c)

		got := h.get(scopeAll, id)
		if *got.ID != id || *got.DomainID != 2 || got.State != StateDraft || got.Name != "Evening speed" {
			t.Fatalf("read %+v", got)
		}
		if got.Reactivation == nil || got.Reactivation.Ends == nil || *got.Reactivation.Ends != EndsAfter || *got.Reactivation.ReactivationCount != 3 {
			t.Fatalf("reactivation %+v: ends must read After when a count is stored", got.Reactivation)
		}
		c0, c1 := got.Configs[0], got.Configs[1]
		if c0.ConditionName == nil || *c0.ConditionName != "Acme online" || *c0.DeviceCount != 2 {
			t.Fatalf("condition config: name %v, %d devices (A1, A2 are the online HG8245)", c0.ConditionName, *c0.DeviceCount)
		}
		// Manufacturer and model as chosen, exclusions applied and not read.
		if c1.Manufacturer != "acme" || c1.Model != "hg 8245" || *c1.DeviceCount != 2 || c1.UnselectedDevices != nil {
			t.Fatalf("device config %+v", c1)
		}
		st := c0.Settings[0]
		if st.ID == nil || st.Type != TypeSpeed || *st.DownloadURL != "http://speed.example/download" || st.TestHost != nil {
			t.Fatalf("settings %+v", st)
		}
		// The other kind's fields are null on the wire, not absent.
		var raw map[string]any
		h.do("POST", "/FCC/item/details", scopeAll, map[string]int64{"id": id}).want(200).decode(&raw)
		set := raw["configs"].([]any)[0].(map[string]any)["settings"].([]any)[0].(map[string]any)
		if v, ok := set["testHost"]; !ok || v != nil {
			t.Fatalf("testHost on a speed read: %v present %v", v, ok)
		}
		if _, ok := raw["configs"].([]any)[1].(map[string]any)["unselectedDevices"]; ok {
			t.Fatal("reads carry no exclusions")
		}

		// Audit: CREATE then UPDATE, in the save's transaction.
		got.Name = "Evening speed v2"
		got.Configs[1].UnselectedDevices = []int64{h.dev["A4"]}
		h.save(hdr{HeaderScope: "ALL"}, got)
		rows, err := h.svc.store.Audit(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 || rows[0].Action != "CREATE" || rows[0].UserID != "alice" || rows[1].Action != "UPDATE" || rows[1].UserID != "unknown" {
			t.Fatalf("audit %+v (user fallback literal expected on the update)", rows)
		}
		if n := h.get(scopeAll, id).Name; n != "Evening speed v2" {
			t.Fatalf("name after update %q", n)
		}
	})
}

func TestEmptySettingsReadAsEmptyList(t *testing.T) {
	h := newHarness(t, sqlstore.SQLite, nil)
	id := h.save(scopeAll, withDomain(speedCampaign("x", serialConfig("A1")), 2))
	// A draft whose configuration has no settings row (legacy data).
	if _, err := h.svc.store.db.Exec(`DELETE FROM fcc_settings`); err != nil {
		t.Fatal(err)
	}
	r := h.do("POST", "/FCC/item/details", scopeAll, map[string]int64{"id": id}).want(200)
	if !strings.Contains(r.Body.String(), `"settings":[]`) || strings.Contains(r.Body.String(), "[null]") {
		t.Fatalf("body %s", r.Body.String())
	}
}

func withDomain(c Campaign, d int64) Campaign {
	c.DomainID = &d
	return c
}

func TestDomainOfNewCampaign(t *testing.T) {
	forDialects(t, func(t *testing.T, h *harness) {
		// LIST: the header decides; the body's domainId cannot widen.
		id := h.save(scopeList(2, 2), withDomain(speedCampaign("l", serialConfig("A1")), 3))
		if d := *h.get(scopeAll, id).DomainID; d != 2 {
			t.Fatalf("domain %d, want the header's 2", d)
		}
		// ALL: the body decides.
		id = h.save(scopeAll, withDomain(speedCampaign("a", serialConfig("B1")), 3))
		if d := *h.get(scopeAll, id).DomainID; d != 3 {
			t.Fatalf("domain %d, want the body's 3", d)
		}
		h.do("PUT", "/FCC/item/details", hdr{HeaderScope: "ALL"}, speedCampaign("none", serialConfig("A1"))).want(400)
		h.do("PUT", "/FCC/item/details", hdr{HeaderScope: "LIST", HeaderDomainIDs: "2"}, speedCampaign("none", serialConfig("A1"))).want(400)
		// A header domain outside the visible list is denied.
		r := h.do("PUT", "/FCC/item/details", scopeList(3, 2), speedCampaign("x", serialConfig("A1"))).want(403)
		if r.errorBody().Code != 9403 {
			t.Fatalf("code %d", r.errorBody().Code)
		}
	})
}

func TestVisibility(t *testing.T) {
	forDialects(t, func(t *testing.T, h *harness) {
		id := h.save(scopeAll, withDomain(speedCampaign("south", serialConfig("B1")), 3))
		h.get(scopeList(3, 3), id)
		// Invisible: 404, never 403; also for updates, before any body check.
		h.do("POST", "/FCC/item/details", scopeList(2, 2), map[string]int64{"id": id}).want(404)
		bad := Campaign{ID: &id, Name: "", Type: "nonsense"}
		h.do("PUT", "/FCC/item/details", scopeList(2, 2), bad).want(404)
		h.do("PUT", "/FCC/item/details", scopeList(3, 3), bad).want(400)
		h.do("PUT", "/FCC/item/export", scopeList(2, 2), map[string]int64{"id": id}).want(404)
		h.do("POST", "/FCC/item/details", scopeAll, map[string]int64{"id": 999}).want(404)
		// More than 1000 visible domains: the predicate runs in memory.
		many := make([]int64, 1500)
		for i := range many {
			many[i] = int64(i + 3)
		}
		h.get(scopeList(3, many...), id)
		var page ListPage
		h.do("POST", "/FCC/items", scopeList(3, many...), map[string]any{}).want(200).decode(&page)
		if page.PageDetails.TotalItems != 1 || page.Items[0].ID != id {
			t.Fatalf("in-memory scope list %+v", page)
		}
	})
}

func TestSaveValidations(t *testing.T) {
	forDialects(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		badCond, err := h.acs.SaveCondition(ctx, acs.Condition{Name: "by ip", Criteria: acs.Criteria{Rules: []acs.Rule{{Key: "externalIp", Op: "eq", Value: "10.0.0.1"}}}})
		if err != nil {
			t.Fatal(err)
		}
		containsCond, err := h.acs.SaveCondition(ctx, acs.Condition{Name: "contains", Criteria: acs.Criteria{Rules: []acs.Rule{{Key: "serial", Op: "contains", Value: "A"}}}})
		if err != nil {
			t.Fatal(err)
		}
		latency := Setting{Type: TypeLatency, TestHost: ptr("ping.example")}
		cases := []struct {
			name   string
			edit   func(c *Campaign)
			status int
			msg    string
		}{
			{"1 missing block of the right kind", func(c *Campaign) { c.Configs[0].Settings = nil }, 400, "needs a SPEED settings element"},
			{"1 block of the wrong kind", func(c *Campaign) { c.Configs[0].Settings = []Setting{latency} }, 400, "not LATENCY"},
			{"1 fields of the other kind", func(c *Campaign) { c.Configs[0].Settings[0].TestHost = ptr("h") }, 400, "LATENCY fields (testHost)"},
			{"1 latency campaign with a speed block", func(c *Campaign) { c.Type = TypeLatency }, 400, "needs a LATENCY settings element"},
			{"2 iterations below one", func(c *Campaign) { c.Activation.TotalTestDuration = ptr(1); c.Activation.SingleTestDuration = ptr(61) }, 400, "= 0;"},
			{"3 reactivation count above 9", func(c *Campaign) {
				c.Reactivation = &Reactivation{Type: ReactivationDaily, RepeatEvery: ptr(1), ReactivationCount: ptr(10)}
			}, 400, "reactivationCount must be from 0 to 9"},
			{"3 negative reactivation count", func(c *Campaign) {
				c.Reactivation = &Reactivation{Type: ReactivationDaily, ReactivationCount: ptr(-1)}
			}, 400, "reactivationCount"},
			{"4 sourceType required", func(c *Campaign) { c.Configs[0].SourceType = "" }, 400, "sourceType is required"},
			{"4 sourceType enum is UPPER_SNAKE", func(c *Campaign) { c.Configs[0].SourceType = "serial_list" }, 400, "sourceType"},
			{"4 condition needs conditionId", func(c *Campaign) { c.Configs[0].SourceType = "CONDITION"; c.Configs[0].Serials = nil }, 400, "needs conditionId"},
			{"4 file-based refuses time-based fields", func(c *Campaign) { c.Configs[0].Settings[0].TimeBasedTestDuration = ptr(int64(10)) }, 400, "FILE_BASED transfer refuses"},
			{"5 condition outside the subset", func(c *Campaign) {
				c.Configs[0] = TestConfig{SourceType: "CONDITION", ConditionID: &badCond.ID, Settings: []Setting{speedSetting()}}
			}, 400, `"externalIp"`},
			{"5 operator outside the subset", func(c *Campaign) {
				c.Configs[0] = TestConfig{SourceType: "CONDITION", ConditionID: &containsCond.ID, Settings: []Setting{speedSetting()}}
			}, 400, `"contains"`},
			{"6 no configuration", func(c *Campaign) { c.Configs = nil }, 400, "at least one configuration"},
			{"6 too many configs", func(c *Campaign) {
				for range 10 {
					c.Configs = append(c.Configs, serialConfig("A1"))
				}
			}, 400, "at most 10 configurations"},
			{"8 unknown cpeIds", func(c *Campaign) {
				c.Configs[0] = TestConfig{SourceType: "DEVICE_LIST", SelectedDevices: []int64{h.dev["A1"], h.dev["B1"], 99999}, Settings: []Setting{speedSetting()}}
			}, 400, "2 cpeId(s) unknown"},
			{"10 serials matching nothing", func(c *Campaign) { c.Configs[0].Serials = []string{"A1", "NOPE", "b1"} }, 400, "NOPE, b1"},
			{"type enum", func(c *Campaign) { c.Type = "speed" }, 400, `type "speed" is not one of SPEED, LATENCY`},
			{"activation required", func(c *Campaign) { c.Activation = nil }, 400, "activation is required"},
			{"activation type enum", func(c *Campaign) { c.Activation.Type = "SCHEDULED" }, 400, "activation.type"},
			{"scheduled needs a date", func(c *Campaign) { c.Activation.Date = nil }, 400, "activation.date is required"},
			{"reactivation type enum", func(c *Campaign) { c.Reactivation = &Reactivation{Type: "DAILY"} }, 400, "reactivation.type"},
			{"reactivation ends", func(c *Campaign) { c.Reactivation = &Reactivation{Type: "Daily", Ends: ptr("Never")} }, 400, "the only value is After"},
			{"testMode enum", func(c *Campaign) { c.Configs[0].Settings[0].TestMode = ptr("file_based") }, 400, "testMode"},
			{"name required", func(c *Campaign) { c.Name = "  " }, 400, "name is required"},
			{"name too long", func(c *Campaign) { c.Name = strings.Repeat("n", 256) }, 400, "at most 255"},
			{"bad url", func(c *Campaign) { c.Configs[0].Settings[0].DownloadURL = ptr("ftp://x/y") }, 400, "downloadUrl"},
			{"connections above the model ceiling", func(c *Campaign) { c.Configs[0].Settings[0].DownloadConnections = ptr(int64(17)) }, 400, "exceeds the ceiling of 16"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				c := withDomain(speedCampaign("v", serialConfig("A1", "A2")), 2)
				c.Configs[0].Settings = []Setting{speedSetting()}
				tc.edit(&c)
				r := h.do("PUT", "/FCC/item/details", hdr{HeaderScope: "LIST", HeaderDomainID: "2", HeaderDomainIDs: "2"}, c).want(tc.status)
				if e := r.errorBody(); !strings.Contains(e.Message, tc.msg) {
					t.Fatalf("message %q lacks %q", e.Message, tc.msg)
				}
			})
		}
		var page ListPage
		h.do("POST", "/FCC/items", scopeAll, map[string]any{}).want(200).decode(&page)
		if page.PageDetails.TotalItems != 0 {
			t.Fatalf("refused saves stored %d campaigns", page.PageDetails.TotalItems)
		}
	})
}

func TestUnknownCpeIDsCappedAtTwenty(t *testing.T) {
	h := newHarness(t, sqlstore.SQLite, nil)
	var ids []int64
	for i := range 25 {
		ids = append(ids, int64(100000+i))
	}
	c := withDomain(speedCampaign("v", TestConfig{SourceType: "DEVICE_LIST", SelectedDevices: ids, Settings: []Setting{speedSetting()}}), 2)
	msg := h.do("PUT", "/FCC/item/details", scopeAll, c).want(400).errorBody().Message
	if !strings.Contains(msg, "25 cpeId(s)") || !strings.Contains(msg, "100019 and 5 more") || strings.Contains(msg, "100020") {
		t.Fatalf("message %q", msg)
	}
	// A device outside the caller's domains is unknown too.
	c.Configs[0].SelectedDevices = []int64{h.dev["A1"], h.dev["B1"]}
	msg = h.do("PUT", "/FCC/item/details", scopeList(2, 2), c).want(400).errorBody().Message
	if !strings.Contains(msg, fmt.Sprintf("1 cpeId(s) unknown to the caller's visible devices: %d", h.dev["B1"])) {
		t.Fatalf("message %q", msg)
	}
}

func TestDeviceLimitNamesBothFigures(t *testing.T) {
	h := newHarness(t, sqlstore.Postgres, func(c *Config) { c.MaxDevicesPerTest = 3 })
	c := withDomain(speedCampaign("big", TestConfig{Manufacturer: "Acme", Model: "HG 8245", SourceType: "ALL", Settings: []Setting{speedSetting()}}), 2)
	before := h.acsQ.n.Load()
	msg := h.do("PUT", "/FCC/item/details", scopeAll, c).want(400).errorBody().Message
	if !strings.Contains(msg, "resolves to 4 devices") || !strings.Contains(msg, "at most 3") {
		t.Fatalf("message %q", msg)
	}
	if n := h.acsQ.n.Load() - before; n != 1 {
		t.Fatalf("%d statements: the limit is checked on the count, before any row is read", n)
	}
}

func TestBlankSerialsOfNewDevices(t *testing.T) {
	forDialects(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		id := h.save(scopeAll, withDomain(speedCampaign("v", TestConfig{SourceType: "DEVICE_LIST", SelectedDevices: []int64{h.dev["A1"]}, Settings: []Setting{speedSetting()}}), 2))
		// A1 loses its serial after the save (rows are the ACS's; the
		// contract allows an empty serial for imported devices).
		if _, err := h.acs.DB().ExecContext(ctx, h.acs.DB().Rebind(`UPDATE acs_devices SET serial = CASE WHEN id = ? THEN ' ' ELSE '' END WHERE id IN (?, ?)`), h.dev["A1"], h.dev["A1"], h.dev["A2"]); err != nil {
			t.Fatal(err)
		}
		c := h.get(scopeAll, id)
		// Already stored A1 is not re-checked; newly added A2 is reported.
		c.Configs[0].SelectedDevices = []int64{h.dev["A1"], h.dev["A2"]}
		msg := h.do("PUT", "/FCC/item/details", scopeAll, c).want(400).errorBody().Message
		if !strings.Contains(msg, fmt.Sprintf("cpeId %d", h.dev["A2"])) || strings.Contains(msg, fmt.Sprint(h.dev["A1"])+",") {
			t.Fatalf("message %q", msg)
		}
		c.Configs[0].SelectedDevices = []int64{h.dev["A1"]}
		h.save(scopeAll, c)
	})
}

func TestSerialDuplicatesAreKept(t *testing.T) {
	h := newHarness(t, sqlstore.SQLite, nil)
	ctx := context.Background()
	// The same serial on a second product class.
	res, err := h.acs.ApplyInforms(ctx, []acs.InformUpdate{{Key: acs.DeviceKey{OUI: "AAAAAA", ProductClass: "OTHER", Serial: "a1"},
		Manufacturer: "Other", ModelName: "Other", DataModel: acs.DataModelTR098, At: time.Now(), OnlineUntil: time.Now().Add(time.Hour)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.acs.UpdateDevice(ctx, res[0].DeviceID, acs.DeviceUpdate{DomainID: ptr(int64(2))}); err != nil {
		t.Fatal(err)
	}
	id := h.save(scopeAll, withDomain(speedCampaign("dups", serialConfig("A1")), 2))
	if n := *h.get(scopeAll, id).Configs[0].DeviceCount; n != 2 {
		t.Fatalf("fleet %d, want both devices of serial A1", n)
	}
}

func TestFrozenFleet(t *testing.T) {
	forDialects(t, func(t *testing.T, h *harness) {
		id := h.save(scopeAll, withDomain(speedCampaign("frozen", serialConfig("A1", "A2")), 2))
		if _, err := h.svc.store.db.Exec(h.svc.store.q(`UPDATE fcc_campaigns SET activation_count = 1 WHERE id = ?`), id); err != nil {
			t.Fatal(err)
		}
		c := h.get(scopeAll, id)
		// Settings and name may change; the fleet may not.
		c.Name = "renamed"
		c.Configs[0].Settings[0].SpeedTierDownload = ptr(int64(5))
		h.save(scopeAll, c)
		edits := []func(c *Campaign){
			func(c *Campaign) { c.Configs[0].Serials = []string{"A1"} },
			func(c *Campaign) { c.Configs[0].Manufacturer = "Other" },
			func(c *Campaign) { c.Configs = append(c.Configs, serialConfig("B1")) },
			func(c *Campaign) { c.Configs[0].ID = nil },
		}
		for i, edit := range edits {
			c := h.get(scopeAll, id)
			edit(&c)
			if e := h.do("PUT", "/FCC/item/details", scopeAll, c).want(409).errorBody(); !strings.Contains(e.Message, "frozen") {
				t.Fatalf("edit %d: %q", i, e.Message)
			}
		}
		got := h.get(scopeAll, id)
		if got.Name != "renamed" || *got.Configs[0].DeviceCount != 2 || *got.Configs[0].Settings[0].SpeedTierDownload != 5 {
			t.Fatalf("after refused edits %+v", got)
		}
		var n CountResponse
		h.do("POST", "/FCC/activate/devices/countByGroupIds", scopeAll, map[string]any{"ids": []int64{id, id, 9999}}).want(200).decode(&n)
		if n.Count != 2 {
			t.Fatalf("countByGroupIds %d", n.Count)
		}
	})
}

func TestIOTWSwitch(t *testing.T) {
	h := newHarness(t, sqlstore.SQLite, func(c *Config) { c.IOTWEnabled = false })
	cond, err := h.acs.SaveCondition(context.Background(), acs.Condition{Name: "all", Criteria: acs.Criteria{OnlyOnline: true}})
	if err != nil {
		t.Fatal(err)
	}
	c := withDomain(speedCampaign("c", TestConfig{SourceType: "CONDITION", ConditionID: &cond.ID, Settings: []Setting{speedSetting()}}), 2)
	if msg := h.do("PUT", "/FCC/item/details", scopeAll, c).want(400).errorBody().Message; !strings.Contains(msg, "svc.fcc.iotw.enabled=false") {
		t.Fatalf("message %q", msg)
	}
}

func TestSettingsChain(t *testing.T) {
	forDialects(t, func(t *testing.T, h *harness) {
		put := func(id hdr, domain *int64, typ string, st Setting) resp {
			return h.do("PUT", "/FCC/admin/domain-setting", id, DomainSettingRequest{DomainID: domain, Type: typ, Settings: &st})
		}
		put(scopeAll, nil, TypeLatency, Setting{TestHost: ptr("global.example"), NumberOfRepetitions: ptr(int64(5)), Timeout: ptr(int64(1000))}).want(200)
		put(scopeAll, ptr(int64(3)), TypeLatency, Setting{TestHost: ptr("south.example"), NumberOfRepetitions: ptr(int64(7))}).want(200)
		put(scopeAll, ptr(int64(2)), TypeLatency, Setting{TestHost: ptr("north.example"), DSCP: ptr(int64(46))}).want(200)
		put(scopeAll, ptr(int64(2)), TypeSpeed, Setting{TimeBasedTestDuration: ptr(int64(30)), UploadConnections: ptr(int64(2))}).want(200)
		// Access: the global level needs ALL; a domain must be visible.
		put(scopeList(2, 2), nil, TypeLatency, Setting{}).want(403)
		put(scopeList(2, 2), ptr(int64(3)), TypeLatency, Setting{}).want(403)
		put(scopeAll, ptr(int64(2)), "latency", Setting{}).want(400)
		var list struct{ Items []DomainSetting }
		h.do("POST", "/FCC/admin/domain-setting/list", scopeAll, map[string]any{"domainIds": []int64{3}}).want(200).decode(&list)
		if len(list.Items) != 2 || list.Items[0].DomainID != nil || *list.Items[1].DomainID != 3 {
			t.Fatalf("global (null) and domain 3 expected: %+v", list.Items)
		}

		lat := func(st Setting) Campaign {
			c := speedCampaign("lat", TestConfig{SourceType: "SERIAL_LIST", Serials: []string{"A1"}, Settings: []Setting{st}})
			c.Type = TypeLatency
			return c
		}
		loads := h.svc.defaultsLoads.Load()
		// Caller sees 2 and 3 and creates in 3: the campaign's domain (3)
		// decides, not any other visible one. Blank testHost is absent.
		id := h.save(scopeList(3, 2, 3), lat(Setting{Type: TypeLatency, TestHost: ptr("  "), DataBlockSize: ptr(int64(64))}))
		if n := h.svc.defaultsLoads.Load() - loads; n != 1 {
			t.Fatalf("the chain was walked %d times for one save", n)
		}
		st := h.get(scopeAll, id).Configs[0].Settings[0]
		if *st.TestHost != "south.example" || *st.NumberOfRepetitions != 7 || *st.Timeout != 1000 || *st.DataBlockSize != 64 || st.DSCP != nil {
			t.Fatalf("resolved %+v (request, domain 3, global; dscp of domain 2 must not leak)", st)
		}
		// Later default edits never change saved campaigns.
		put(scopeAll, ptr(int64(3)), TypeLatency, Setting{TestHost: ptr("changed.example")}).want(200)
		if st := h.get(scopeAll, id).Configs[0].Settings[0]; *st.TestHost != "south.example" {
			t.Fatalf("saved campaign changed with its domain default: %s", *st.TestHost)
		}
		// Request value wins; no level: stored and read as null.
		id = h.save(scopeList(2, 2), lat(Setting{Type: TypeLatency, TestHost: ptr("mine.example")}))
		st = h.get(scopeAll, id).Configs[0].Settings[0]
		if *st.TestHost != "mine.example" || *st.DSCP != 46 || st.DataBlockSize != nil {
			t.Fatalf("resolved %+v", st)
		}
		// Time-based-only defaults reach only TIME_BASED campaigns.
		id = h.save(scopeList(2, 2), speedCampaign("fb", serialConfig("A1")))
		st = h.get(scopeAll, id).Configs[0].Settings[0]
		if st.TimeBasedTestDuration != nil || *st.UploadConnections != 2 {
			t.Fatalf("file-based %+v", st)
		}
		tb := serialConfig("A1")
		tb.Settings[0].TestMode = ptr(ModeTimeBased)
		id = h.save(scopeList(2, 2), speedCampaign("tb", tb))
		if st = h.get(scopeAll, id).Configs[0].Settings[0]; st.TimeBasedTestDuration == nil || *st.TimeBasedTestDuration != 30 {
			t.Fatalf("time-based %+v", st)
		}
		// No testHost anywhere: refused.
		for _, d := range []*int64{nil, ptr(int64(3))} {
			h.do("POST", "/FCC/admin/domain-setting/delete", scopeAll, DomainSettingRequest{DomainID: d, Type: TypeLatency}).want(204)
		}
		h.do("POST", "/FCC/admin/domain-setting/delete", scopeAll, DomainSettingRequest{DomainID: ptr(int64(3)), Type: TypeLatency}).want(404)
		if msg := h.do("PUT", "/FCC/item/details", scopeList(3, 3), lat(Setting{Type: TypeLatency})).want(400).errorBody().Message; !strings.Contains(msg, "testHost is required") {
			t.Fatalf("message %q", msg)
		}
		h.do("POST", "/FCC/admin/domain-setting/list", scopeList(3, 3), map[string]any{}).want(200).decode(&list)
		if len(list.Items) != 0 {
			t.Fatalf("domain 3 sees %+v", list.Items)
		}
		h.do("POST", "/FCC/admin/domain-setting/list", scopeAll, map[string]any{}).want(200).decode(&list)
		if len(list.Items) != 2 {
			t.Fatalf("all defaults %+v", list.Items)
		}
	})
}

func TestList(t *testing.T) {
	forDialects(t, func(t *testing.T, h *harness) {
		for i := range 30 {
			c := withDomain(speedCampaign(fmt.Sprintf("c%02d", i), serialConfig("A1")), 2)
			if i%3 == 0 {
				c = withDomain(speedCampaign(fmt.Sprintf("c%02d", i), TestConfig{Manufacturer: "Acme", Model: "HG 8546", SourceType: "ALL", Settings: []Setting{speedSetting()}}), 3)
			}
			h.save(scopeAll, c)
		}
		var page ListPage
		h.do("POST", "/FCC/items", scopeAll, map[string]any{}).want(200).decode(&page)
		d := page.PageDetails
		if len(page.Items) != 25 || d.PageSize != 25 || d.TotalItems != 30 || d.TotalPages != 2 || len(d.CurrentPage) != 1 || d.CurrentPage[0] != 1 {
			t.Fatalf("default page %+v", d)
		}
		r := h.do("POST", "/FCC/items", scopeAll, map[string]any{"pageNumbers": []int{2}, "pageSize": 25, "sort": []SortEntry{{Field: "name", Direction: "ASC"}}}).want(200)
		if !strings.Contains(r.Body.String(), `"currentPage":[2]`) {
			t.Fatalf("envelope %s", r.Body.String()[:200])
		}
		r.decode(&page)
		if len(page.Items) != 5 || page.Items[0].Name != "c25" {
			t.Fatalf("page 2 by name: %d items, first %q", len(page.Items), page.Items[0].Name)
		}
		// Case-insensitive whole match on the fleet's manufacturer/model.
		h.do("POST", "/FCC/items", scopeAll, ListRequest{Model: "hg 8546"}).want(200).decode(&page)
		if page.PageDetails.TotalItems != 10 {
			t.Fatalf("model filter %d", page.PageDetails.TotalItems)
		}
		h.do("POST", "/FCC/items", scopeAll, ListRequest{Model: "hg 85"}).want(200).decode(&page)
		if page.PageDetails.TotalItems != 0 {
			t.Fatal("model matches whole names only")
		}
		// A configuration's chosen labels are not the fleet: "Zeta"/"Z 1"
		// label devices that are Acme HG 8245.
		labelled := serialConfig("A1")
		labelled.Manufacturer, labelled.Model = "Zeta", "Z 1"
		h.save(scopeAll, withDomain(speedCampaign("labelled", labelled), 2))
		for _, f := range []ListRequest{{Manufacturer: "zeta"}, {Model: "z 1"}, {Manufacturer: "ZETA", Name: "labelled"}} {
			h.do("POST", "/FCC/items", scopeAll, f).want(200).decode(&page)
			if page.PageDetails.TotalItems != 0 {
				t.Fatalf("%+v matched a configuration label, not the fleet: %d", f, page.PageDetails.TotalItems)
			}
		}
		h.do("POST", "/FCC/items", scopeAll, ListRequest{Manufacturer: "acme", Model: "HG 8245", Name: "labelled"}).want(200).decode(&page)
		if page.PageDetails.TotalItems != 1 {
			t.Fatalf("fleet match of a labelled campaign: %d", page.PageDetails.TotalItems)
		}
		h.do("POST", "/FCC/items", scopeList(2, 2), ListRequest{Manufacturer: "ACME", Name: "c01"}).want(200).decode(&page)
		if page.PageDetails.TotalItems != 1 || page.Items[0].DeviceCount != 1 || page.Items[0].ConfigCount != 1 {
			t.Fatalf("exact filters %+v", page)
		}
		h.do("POST", "/FCC/items", scopeAll, ListRequest{State: StateDraft, Type: TypeSpeed}).want(200).decode(&page)
		if page.PageDetails.TotalItems != 31 {
			t.Fatalf("state filter %d", page.PageDetails.TotalItems)
		}
		for _, bad := range []any{
			map[string]any{"pageSize": 501}, map[string]any{"pageSize": 0}, map[string]any{"pageNumbers": 0.5},
			map[string]any{"pageNumbers": -1}, map[string]any{"state": "draft"}, map[string]any{"sort": []SortEntry{{Field: "password"}}},
			map[string]any{"sort": []SortEntry{{Field: "name", Direction: "up"}}}, `{"pageSize":`,
		} {
			h.do("POST", "/FCC/items", scopeAll, bad).want(400)
		}
		if msg := h.do("POST", "/FCC/items", scopeAll, `{"pageNumbers": [1, 2]}`).want(400).errorBody().Message; !strings.Contains(msg, "pageNumbers") {
			t.Fatalf("message %q names no field", msg)
		}
		h.do("POST", "/FCC/items", scopeAll, map[string]any{"pageSize": 500}).want(200)
	})
}

func TestMalformedBodies(t *testing.T) {
	h := newHarness(t, sqlstore.SQLite, nil)
	for _, body := range []string{`{`, `[]`, `{"name": 5}`, `{"id": "x"}`, `{} {}`} {
		r := h.do("PUT", "/FCC/item/details", scopeAll, body).want(400)
		if strings.Contains(r.Body.String(), "goroutine") || strings.Contains(r.Body.String(), ".go:") {
			t.Fatalf("internals in %s", r.Body.String())
		}
	}
	req := h.do("PUT", "/FCC/item/details", scopeAll, nil)
	req.want(400)
	// A JSON endpoint refuses other content types with 415.
	r := httptestRequest(h, "POST", "/FCC/items", "text/plain", `{}`)
	r.want(415)
	var e ErrorBody
	_ = json.Unmarshal(r.Body.Bytes(), &e)
	if e.Code != 9415 {
		t.Fatalf("code %d", e.Code)
	}
}

// Unknown paths and methods answer in the service's error body, not the
// router's plain text.
func TestRouteMissesUseErrorBody(t *testing.T) {
	h := newHarness(t, sqlstore.SQLite, nil)
	tests := []struct {
		method, path string
		status, code int
		allow        string
	}{
		{"POST", "/FCC/nothing-here", 404, 9404, ""},
		{"GET", "/FCC/items", 405, 9405, "POST"},
		{"DELETE", "/FCC/item/details", 405, 9405, "POST, PUT"},
		{"GET", "/elsewhere", 404, 9404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			r := h.do(tt.method, tt.path, scopeAll, nil).want(tt.status)
			if ct := r.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Fatalf("content type %q", ct)
			}
			e := r.errorBody()
			if e.Code != tt.code || e.Message == "" || e.Description == "" {
				t.Fatalf("body %s", r.Body)
			}
			if got := r.Header().Get("Allow"); got != tt.allow {
				t.Fatalf("Allow %q, want %q", got, tt.allow)
			}
		})
	}
}
