package fcc

import (
	"regexp"
	"strings"
	"testing"
)

func TestExportImportRoundTrip(t *testing.T) {
	forDialects(t, func(t *testing.T, h *harness) {
		c := withDomain(speedCampaign("Évening / speed*test", serialConfig("A1", "A2", "a3")), 2)
		c.Reactivation = &Reactivation{Type: ReactivationWeekly, RepeatEvery: ptr(2), ReactivationCount: ptr(1)}
		id := h.save(scopeAll, c)

		r := h.do("PUT", "/FCC/item/export", scopeAll, map[string]int64{"id": id}).want(200)
		if ct := r.Header().Get("Content-Type"); ct != "application/xml" {
			t.Fatalf("content type %q", ct)
		}
		if cl := r.Header().Get("Content-Length"); cl != "" {
			t.Fatalf("streamed export carries Content-Length %s", cl)
		}
		cd := r.Header().Get("Content-Disposition")
		if !regexp.MustCompile(`^attachment; filename="fcc-vening-speed-test-\d{8}-\d{6}\.xml"$`).MatchString(cd) {
			t.Fatalf("Content-Disposition %q", cd)
		}
		doc := r.Body.String()
		for _, want := range []string{"<formatVersion>1</formatVersion>", "<reactivationDays>14</reactivationDays>", "<domain>2</domain>",
			"<speedSettings>", "<downloadUrl>http://speed.example/download</downloadUrl>", `<fleet page="1">`, "<serial>A3</serial>"} {
			if !strings.Contains(doc, want) {
				t.Fatalf("document lacks %s:\n%s", want, doc)
			}
		}
		for _, never := range []string{"Scheduled", "DRAFT", "2026-12-01", "<activation"} {
			if strings.Contains(doc, never) {
				t.Fatalf("document carries schedule or state (%s):\n%s", never, doc)
			}
		}

		var form Campaign
		h.multipart("PUT", "/FCC/item/import", scopeAll, part{name: "file", fileName: "c.xml", contentType: "application/xml", body: []byte(doc)}).want(200).decode(&form)
		if form.ID != nil || form.Name != "Évening / speed*test" || form.Type != TypeSpeed || *form.DomainID != 2 || *form.Reactivation.RepeatEvery != 14 {
			t.Fatalf("form %+v", form)
		}
		fc := form.Configs[0]
		if fc.SourceType != "SERIAL_LIST" || len(fc.Serials) != 3 || *fc.Settings[0].DownloadConnections != 4 || *fc.Settings[0].TestMode != ModeFileBased {
			t.Fatalf("form config %+v", fc)
		}
		// Import creates nothing; the form saves as it is.
		var page ListPage
		h.do("POST", "/FCC/items", scopeAll, map[string]any{}).want(200).decode(&page)
		if page.PageDetails.TotalItems != 1 {
			t.Fatalf("import stored something: %d campaigns", page.PageDetails.TotalItems)
		}
		form.Activation = c.Activation
		h.save(scopeAll, form)

		// Two campaigns in one document, DTDs and garbage are refused.
		two := strings.Replace(doc, "</test>", "</test><test><name>x</name></test>", 1)
		if msg := h.multipart("PUT", "/FCC/item/import", scopeAll, part{name: "file", body: []byte(two)}).want(400).errorBody().Message; !strings.Contains(msg, "second test element") {
			t.Fatalf("message %q", msg)
		}
		h.multipart("PUT", "/FCC/item/import", scopeAll, part{name: "file", body: []byte(`<!DOCTYPE fccExport [<!ENTITY x "y">]>` + doc[strings.Index(doc, "<fccExport"):])}).want(400)
		h.multipart("PUT", "/FCC/item/import", scopeAll, part{name: "file", body: []byte("not xml")}).want(400)
		h.multipart("PUT", "/FCC/item/import", scopeAll, part{name: "file", body: []byte(doc)}, part{name: "request", contentType: "application/json", body: []byte("{}")}).want(400)
		h.multipart("PUT", "/FCC/item/import", scopeAll).want(400)
	})
}

func TestExportRefusals(t *testing.T) {
	forDialects(t, func(t *testing.T, h *harness) {
		id := h.save(scopeAll, withDomain(speedCampaign("legacy", serialConfig("A1")), 2))
		if _, err := h.svc.store.db.Exec(h.svc.store.q(`UPDATE fcc_campaigns SET legacy_ug_id = 77 WHERE id = ?`), id); err != nil {
			t.Fatal(err)
		}
		if msg := h.do("PUT", "/FCC/item/export", scopeAll, map[string]int64{"id": id}).want(400).errorBody().Message; !strings.Contains(msg, "legacy") {
			t.Fatalf("message %q", msg)
		}
		h.do("PUT", "/FCC/item/export", scopeAll, map[string]int64{"id": id + 100}).want(404)
		h.do("PUT", "/FCC/item/export", scopeAll, map[string]any{}).want(400)
	})
}

func TestExportPagesOfAThousand(t *testing.T) {
	h := newHarness(t, "sqlite", nil)
	id := h.save(scopeAll, withDomain(speedCampaign("big", serialConfig("A1")), 2))
	cfg := *h.get(scopeAll, id).Configs[0].ID
	// A large frozen fleet written directly: the export must page it.
	tx, err := h.svc.store.db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2500 {
		if _, err := tx.Exec(`INSERT INTO fcc_fleet (config_id, campaign_id, cpe_id, serial, protocol, supported_by_acs) VALUES (?, ?, ?, ?, 'TR069', 1)`, cfg, id, 1000+i, "S"+itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	doc := h.do("PUT", "/FCC/item/export", scopeAll, map[string]int64{"id": id}).want(200).Body.String()
	if strings.Count(doc, "<fleet ") != 3 || !strings.Contains(doc, `<fleet page="3">`) || strings.Count(doc, "<serial>") != 2501 {
		t.Fatalf("%d fleet pages, %d serials", strings.Count(doc, "<fleet "), strings.Count(doc, "<serial>"))
	}
}
