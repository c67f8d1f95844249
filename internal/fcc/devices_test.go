package fcc

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"cpesuite/internal/acs"
	"cpesuite/internal/fcc/fleet"
	"cpesuite/internal/platform/sqlstore"
)

func TestResolveJSON(t *testing.T) {
	forDialects(t, func(t *testing.T, h *harness) {
		var res ResolveResponse
		before := h.acsQ.n.Load()
		h.do("POST", "/FCC/devices/resolve", scopeAll, map[string]any{
			"sourceType": "SERIAL_LIST", "serials": []string{"a1", "A2", "U1", "nope", "NOPE", "b1"}, "pageSize": 2, "pageNumbers": 2,
		}).want(200).decode(&res)
		if n := h.acsQ.n.Load() - before; n != 2 {
			t.Fatalf("%d statements, want one COUNT and one row read", n)
		}
		if res.TotalCount != 4 || res.OnlineCount != 4 || res.UnsupportedProtocolCount != 1 || len(res.Items) != 2 {
			t.Fatalf("counters %+v", res.Counts)
		}
		if !slices.Equal(res.NotFoundSerials, []string{"nope"}) || len(res.DuplicateSerials) != 0 {
			t.Fatalf("serial reports %v %v", res.NotFoundSerials, res.DuplicateSerials)
		}
		if d := res.PageDetails; d.CurrentPage[0] != 2 || d.PageSize != 2 || d.TotalItems != 4 || d.TotalPages != 2 || d.PageItems != 2 {
			t.Fatalf("page %+v", d)
		}
		var usp *fleet.Device
		for i, d := range res.Items {
			if d.Serial == "U1" {
				usp = &res.Items[i]
			}
		}
		if usp == nil || usp.SupportedByACS || usp.Protocol != "USP" {
			t.Fatalf("the USP device must be in page 2 and flagged: %+v", res.Items)
		}

		// A condition with a domainIds narrowing: intersected with the scope.
		h.do("POST", "/FCC/devices/resolve", scopeList(2, 2, 3), map[string]any{
			"sourceType": "CONDITION", "condition": map[string]any{"manufacturerIds": []int64{}, "onlyOnline": true, "domainIds": []int64{3, 7}},
		}).want(200).decode(&res)
		if res.TotalCount != 2 || res.Items[0].Serial != "B1" {
			t.Fatalf("narrowed condition %+v", res)
		}
		// An empty intersection reads nothing.
		before = h.acsQ.n.Load()
		h.do("POST", "/FCC/devices/resolve", scopeList(2, 2), map[string]any{
			"sourceType": "SERIAL_LIST", "serials": []string{"A1"}, "condition": map[string]any{"domainIds": []int64{3}},
		}).want(200).decode(&res)
		if h.acsQ.n.Load() != before || res.TotalCount != 0 || !slices.Equal(res.NotFoundSerials, []string{"A1"}) {
			t.Fatalf("empty intersection: %+v, %d statements", res, h.acsQ.n.Load()-before)
		}
		// Count: the same figures without a page.
		var counts fleet.Counts
		h.do("POST", "/FCC/devices/count", scopeAll, map[string]any{"sourceType": "ALL", "manufacturer": "ACME"}).want(200).decode(&counts)
		if counts.TotalCount != 6 || len(counts.CountsByModel) != 2 {
			t.Fatalf("count %+v", counts)
		}
		for _, bad := range []map[string]any{
			{}, {"sourceType": "serials"}, {"sourceType": "CONDITION"}, {"sourceType": "ALL", "pageSize": 20001},
			{"sourceType": "ALL", "pageNumbers": 0, "pageSize": -1},
		} {
			h.do("POST", "/FCC/devices/resolve", scopeAll, bad).want(400)
		}
	})
}

func TestResolveSerialLimitBeforeAnyStatement(t *testing.T) {
	h := newHarness(t, sqlstore.SQLite, func(c *Config) { c.MaxDevicesPerTest = 3; c.ResolvePageSize = 3 })
	before := h.acsQ.n.Load()
	msg := h.do("POST", "/FCC/devices/count", scopeAll, map[string]any{"sourceType": "SERIAL_LIST", "serials": []string{"a", "b", "c", "D", "d"}}).want(400).errorBody().Message
	if h.acsQ.n.Load() != before || !strings.Contains(msg, "4") || !strings.Contains(msg, "3") {
		t.Fatalf("message %q, %d statements", msg, h.acsQ.n.Load()-before)
	}
}

func TestResolveMultipart(t *testing.T) {
	forDialects(t, func(t *testing.T, h *harness) {
		var res ResolveResponse
		h.multipart("POST", "/FCC/devices/resolve", scopeAll,
			part{name: "file", fileName: "serials.csv", contentType: "text/csv", body: []byte("serial\nA1,a2\r\nB1;missing\n")},
			part{name: "request", contentType: "application/json", body: []byte(`{"pageSize": 1, "condition": {"onlyOnline": true}}`)},
		).want(200).decode(&res)
		if res.TotalCount != 3 || len(res.Items) != 1 || !slices.Equal(res.NotFoundSerials, []string{"missing"}) {
			t.Fatalf("upload %+v", res)
		}
		// XML is recognised by its content.
		h.multipart("POST", "/FCC/devices/count", scopeAll,
			part{name: "file", fileName: "s.xml", body: []byte(`<list><a><serial>A3</serial></a><serial>b2</serial></list>`)},
		).want(200).decode(&res)
		if res.TotalCount != 2 {
			t.Fatalf("xml upload %+v", res.Counts)
		}
		// Refusals: missing file part, request part without its own type,
		// unknown part, DTD, oversize.
		h.multipart("POST", "/FCC/devices/resolve", scopeAll, part{name: "request", contentType: "application/json", body: []byte(`{}`)}).want(400)
		r := h.multipart("POST", "/FCC/devices/resolve", scopeAll, part{name: "file", body: []byte("A1")}, part{name: "request", body: []byte(`{}`)}).want(415)
		if !strings.Contains(r.errorBody().Message, "application/json") {
			t.Fatalf("415 message %q", r.errorBody().Message)
		}
		h.multipart("POST", "/FCC/devices/resolve", scopeAll, part{name: "file", contentType: "image/png", body: []byte("A1")}).want(415)
		h.multipart("POST", "/FCC/devices/resolve", scopeAll, part{name: "file", body: []byte("A1")}, part{name: "other", body: []byte("x")}).want(400)
		h.multipart("POST", "/FCC/devices/resolve", scopeAll, part{name: "file", body: []byte("A1")}, part{name: "request", contentType: "application/json", body: []byte(`{"pageSize":`)}).want(400)
		h.multipart("POST", "/FCC/devices/resolve", scopeAll, part{name: "file", body: []byte(`<!DOCTYPE x [<!ENTITY e "A1">]><x><serial>&e;</serial></x>`)}).want(400)
	})
}

func TestUploadLimit(t *testing.T) {
	h := newHarness(t, sqlstore.SQLite, func(c *Config) { c.SerialFileMaxSize = 2048 })
	big := []byte(strings.Repeat("SERIAL0001\n", 300))
	for _, path := range []string{"POST /FCC/devices/resolve", "POST /FCC/devices/count", "PUT /FCC/devices/import", "PUT /FCC/item/import"} {
		method, p, _ := strings.Cut(path, " ")
		e := h.multipart(method, p, scopeAll, part{name: "file", body: big}).want(413).errorBody()
		if !strings.Contains(e.Description, "2048 bytes") {
			t.Fatalf("%s: description %q must name the configured maximum", path, e.Description)
		}
	}
	// A JSON body on a multipart-only endpoint: 415.
	h.do("PUT", "/FCC/devices/import", scopeAll, map[string]any{}).want(415)
}

func TestDevicesImport(t *testing.T) {
	forDialects(t, func(t *testing.T, h *harness) {
		doc := `<?xml version="1.0"?><import><group><device><serial> A1 </serial></device><device><serial>A3</serial></device></group><serial>B1</serial><serial>zz</serial></import>`
		var res ResolveResponse
		h.multipart("PUT", "/FCC/devices/import", scopeList(2, 2, 3),
			part{name: "file", fileName: "fleet.xml", contentType: "application/xml", body: []byte(doc)},
			// Only paging, onlyOnline and domainIds are read: sourceType and
			// serials here change nothing.
			part{name: "request", contentType: "application/json", body: []byte(`{"onlyOnline": true, "domainIds": [2], "sourceType": "ALL", "serials": ["B2"]}`)},
		).want(200).decode(&res)
		if res.TotalCount != 1 || res.Items[0].Serial != "A1" || !slices.Equal(res.NotFoundSerials, []string{"A3", "B1", "zz"}) {
			t.Fatalf("import %+v", res)
		}
		h.multipart("PUT", "/FCC/devices/import", scopeAll, part{name: "file", body: []byte(`<!DOCTYPE a SYSTEM "file:///etc/passwd"><a/>`)}).want(400)
		h.multipart("PUT", "/FCC/devices/import", scopeAll, part{name: "file", body: []byte(`<a><serial>x</a>`)}).want(400)
	})
}

func TestCountByGroupConfigs(t *testing.T) {
	forDialects(t, func(t *testing.T, h *harness) {
		cond, err := h.acs.SaveCondition(context.Background(), acs.Condition{Name: "online", Criteria: acs.Criteria{OnlyOnline: true}})
		if err != nil {
			t.Fatal(err)
		}
		id := h.save(scopeAll, withDomain(speedCampaign("s", serialConfig("A1", "A2", "A3")), 2))
		cfgID := *h.get(scopeAll, id).Configs[0].ID
		var n CountResponse
		// A sum, not a union: A1/A2 are counted by both ALL and the condition.
		h.do("POST", "/FCC/activate/devices/countByGroupConfigs", scopeAll, map[string]any{"configs": []map[string]any{
			{"manufacturer": "Acme", "model": "HG 8245", "sourceType": "ALL"},
			{"manufacturer": " ", "model": "", "sourceType": "CONDITION", "conditionId": cond.ID},
			{"id": cfgID, "sourceType": "SERIAL_LIST"},
		}}).want(200).decode(&n)
		if n.Count != 4+5+3 {
			t.Fatalf("count %d, want 12", n.Count)
		}
		h.do("POST", "/FCC/activate/devices/countByGroupConfigs", scopeList(3, 3), map[string]any{"configs": []map[string]any{
			{"id": cfgID, "sourceType": "SERIAL_LIST"}, {"sourceType": "ALL"},
		}}).want(200).decode(&n)
		if n.Count != 2 {
			t.Fatalf("domain 3 count %d (the invisible config contributes nothing)", n.Count)
		}
		h.do("POST", "/FCC/activate/devices/countByGroupConfigs", scopeAll, map[string]any{"configs": []map[string]any{{"manufacturer": "Acme"}}}).want(400)
		h.do("POST", "/FCC/activate/devices/countByGroupIds", scopeList(3, 3), map[string]any{"ids": []int64{id}}).want(200).decode(&n)
		if n.Count != 0 {
			t.Fatalf("invisible campaign counted %d", n.Count)
		}
	})
}

func TestCatalog(t *testing.T) {
	forDialects(t, func(t *testing.T, h *harness) {
		var res CatalogResponse
		h.do("POST", "/FCC/manufacturerAndModelByTestType", scopeList(2, 2), CatalogRequest{Type: TypeSpeed}).want(200).decode(&res)
		var got []string
		for _, e := range res.Items {
			got = append(got, fmt.Sprintf("%s/%s/%s/%v/%d", e.Manufacturer, e.Model, e.Protocol, e.SupportedByACS, e.DeviceCount))
		}
		if want := []string{"Acme/HG 8245/TR069/true/4", "Zyx/VMG/USP/false/1"}; !slices.Equal(got, want) {
			t.Fatalf("catalog %v, want %v", got, want)
		}
		before := h.acsQ.n.Load()
		h.do("POST", "/FCC/manufacturerAndModelByTestType", scopeList(2, 2), CatalogRequest{Type: TypeLatency, DomainIDs: []int64{3}}).want(200).decode(&res)
		if len(res.Items) != 0 || h.acsQ.n.Load() != before {
			t.Fatalf("empty intersection read %d statements: %+v", h.acsQ.n.Load()-before, res)
		}
		h.do("POST", "/FCC/manufacturerAndModelByTestType", scopeAll, CatalogRequest{Type: "Speed"}).want(400)
	})
}
