package fcc

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cpesuite/internal/acs"
	"cpesuite/internal/fcc/fleet"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
)

// countingDB counts the statements the fleet resolver sends to the ACS
// tables.
type countingDB struct {
	db *sql.DB
	n  atomic.Int64
}

func (c *countingDB) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	c.n.Add(1)
	return c.db.QueryContext(ctx, q, args...)
}

// harness is one campaign service over real ACS tables filled through the
// ACS store, on one dialect.
type harness struct {
	t       *testing.T
	dialect sqlstore.Dialect
	acs     *acs.Store
	svc     *Service
	h       http.Handler
	acsQ    *countingDB

	dev    map[string]int64 // serial -> cpe id
	models map[string]int64 // product class -> model id
}

// forDialects runs fn on SQLite and PostgreSQL.
func forDialects(t *testing.T, fn func(t *testing.T, h *harness)) {
	for _, d := range []sqlstore.Dialect{sqlstore.SQLite, sqlstore.Postgres} {
		t.Run(string(d), func(t *testing.T) { fn(t, newHarness(t, d, nil)) })
	}
}

func newHarness(t *testing.T, d sqlstore.Dialect, edit func(*Config)) *harness {
	t.Helper()
	ctx := context.Background()
	acsDB := sqltest.Open(t, d)
	as, err := acs.OpenStore(ctx, acsDB, 1)
	if err != nil {
		t.Fatal(err)
	}
	store, err := OpenStore(ctx, sqltest.Open(t, d))
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	if edit != nil {
		edit(&cfg)
	}
	q := &countingDB{db: acsDB.DB}
	svc := New(cfg, store, fleet.New(q, d, cfg.MaxDevicesPerTest), slog.New(slog.DiscardHandler))
	mux := httpx.NewMux()
	NewAPI(svc).Routes(mux)
	h := &harness{t: t, dialect: d, acs: as, svc: svc, h: httpx.Chain(mux, httpx.Recover(slog.New(slog.DiscardHandler), writeError)), acsQ: q,
		dev: map[string]int64{}, models: map[string]int64{}}
	h.fixture()
	return h
}

func testConfig() Config {
	return Config{MaxDevicesPerTest: 20000, MaxConfigsPerTest: 10, ResolvePageSize: 100, SerialFileMaxSize: 10 << 20,
		ExportTimeout: time.Minute, IOTWEnabled: true, DefaultConnections: 16, UserFallback: "unknown", ACSSchemaCheck: true}
}

// fixture: domains 2 and 3; models HG8245 (Acme, TR-098), HG8546 (Acme,
// TR-181) and VMG (Zyx, USP); devices A1-A4 (HG8245, domain 2; A1 and A2
// online), B1-B2 (HG8546, domain 3, online), U1 (VMG, domain 2, USP).
func (h *harness) fixture() {
	t, ctx := h.t, context.Background()
	for _, name := range []string{"North", "South"} {
		if _, err := h.acs.CreateDomain(ctx, name, nil); err != nil {
			t.Fatal(err)
		}
	}
	type dev struct {
		serial, pc, mf, model, dm string
		domain                    int64
		online                    bool
	}
	devs := []dev{
		{"A1", "HG8245", "Acme", "HG 8245", acs.DataModelTR098, 2, true},
		{"A2", "HG8245", "Acme", "HG 8245", acs.DataModelTR098, 2, true},
		{"A3", "HG8245", "Acme", "HG 8245", acs.DataModelTR098, 2, false},
		{"A4", "HG8245", "Acme", "HG 8245", acs.DataModelTR098, 2, false},
		{"B1", "HG8546", "Acme", "HG 8546", acs.DataModelTR181, 3, true},
		{"B2", "HG8546", "Acme", "HG 8546", acs.DataModelTR181, 3, true},
		{"U1", "VMG", "Zyx", "VMG", acs.DataModelTR181, 2, true},
	}
	now := time.Now().UTC()
	for _, d := range devs {
		until := now.Add(time.Hour)
		if !d.online {
			until = now.Add(-time.Minute)
		}
		res, err := h.acs.ApplyInforms(ctx, []acs.InformUpdate{{
			Key:          acs.DeviceKey{OUI: "00D09E", ProductClass: d.pc, Serial: d.serial},
			Manufacturer: d.mf, ModelName: d.model, SoftwareVersion: "1.0", DataModel: d.dm, CWMPVersion: "cwmp-1-2",
			PeriodicInterval: 300, Events: []string{"1 BOOT"}, At: now, OnlineUntil: until,
		}})
		if err != nil {
			t.Fatal(err)
		}
		id := res[0].DeviceID
		h.dev[d.serial] = id
		if err := h.acs.UpdateDevice(ctx, id, acs.DeviceUpdate{DomainID: &d.domain}); err != nil {
			t.Fatal(err)
		}
		dd, err := h.acs.Device(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		h.models[d.pc] = *dd.ModelID
	}
	if _, err := h.acs.SweepOffline(ctx, now); err != nil {
		t.Fatal(err)
	}
	usp := acs.ProtocolUSP
	if _, err := h.acs.UpdateProductClass(ctx, h.models["VMG"], acs.ProductClassUpdate{ProtocolID: &usp}); err != nil {
		t.Fatal(err)
	}
}

// Identity headers.
type hdr map[string]string

var scopeAll = hdr{HeaderScope: "ALL", HeaderUserID: "alice", HeaderClientType: "UI"}

func scopeList(domain int64, visible ...int64) hdr {
	ids := make([]string, len(visible))
	for i, v := range visible {
		ids[i] = strconv.FormatInt(v, 10)
	}
	return hdr{HeaderScope: "LIST", HeaderDomainID: strconv.FormatInt(domain, 10), HeaderDomainIDs: strings.Join(ids, ","), HeaderUserID: "bob"}
}

type resp struct {
	*httptest.ResponseRecorder
	t *testing.T
}

func (r resp) decode(v any) {
	r.t.Helper()
	if err := json.Unmarshal(r.Body.Bytes(), v); err != nil {
		r.t.Fatalf("decoding %s: %v", r.Body.String(), err)
	}
}

// want checks the status and, for errors, the FT code of the body.
func (r resp) want(status int) resp {
	r.t.Helper()
	if r.Code != status {
		r.t.Fatalf("status %d, want %d; body %s", r.Code, status, r.Body.String())
	}
	if status >= 400 {
		var e ErrorBody
		r.decode(&e)
		if e.Code != 9000+status && !(status == 403 && e.Code == 9401) || e.Message == "" || e.Description == "" {
			r.t.Fatalf("error body %s for status %d", r.Body.String(), status)
		}
	}
	return r
}

func (r resp) errorBody() ErrorBody {
	var e ErrorBody
	r.decode(&e)
	return e
}

func (h *harness) do(method, path string, id hdr, body any) resp {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		js, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(js)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range id {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.h.ServeHTTP(w, req)
	return resp{w, h.t}
}

// part is one multipart part; contentType "" sends none.
type part struct {
	name, fileName, contentType string
	body                        []byte
}

func (h *harness) multipart(method, path string, id hdr, parts ...part) resp {
	h.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		mh := textproto.MIMEHeader{}
		cd := `form-data; name="` + p.name + `"`
		if p.fileName != "" {
			cd += `; filename="` + p.fileName + `"`
		}
		mh.Set("Content-Disposition", cd)
		if p.contentType != "" {
			mh.Set("Content-Type", p.contentType)
		}
		w, err := mw.CreatePart(mh)
		if err != nil {
			h.t.Fatal(err)
		}
		w.Write(p.body)
	}
	mw.Close()
	req := httptest.NewRequest(method, path, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	for k, v := range id {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.h.ServeHTTP(w, req)
	return resp{w, h.t}
}

// Builders of valid bodies.
func ptr[T any](v T) *T { return &v }

func speedSetting() Setting {
	return Setting{Type: TypeSpeed, DownloadURL: ptr("http://speed.example/download"), UploadURL: ptr("http://speed.example/upload"),
		DownloadConnections: ptr(int64(4)), TestMode: ptr(ModeFileBased), SpeedTierDownload: ptr(int64(100000))}
}

func speedCampaign(name string, cfgs ...TestConfig) Campaign {
	date := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	return Campaign{Name: name, Type: TypeSpeed,
		Activation: &Activation{Type: ActivationScheduled, Date: &date, TotalTestDuration: ptr(2), SingleTestDuration: ptr(30)},
		Configs:    cfgs}
}

func serialConfig(serials ...string) TestConfig {
	return TestConfig{Manufacturer: "Acme", Model: "HG 8245", SourceType: "SERIAL_LIST", Serials: serials, Settings: []Setting{speedSetting()}}
}

func (h *harness) save(id hdr, c Campaign) int64 {
	h.t.Helper()
	var out struct{ ID int64 }
	h.do("PUT", "/FCC/item/details", id, c).want(200).decode(&out)
	if out.ID == 0 {
		h.t.Fatal("save answered no id")
	}
	return out.ID
}

func (h *harness) get(id hdr, campaign int64) Campaign {
	h.t.Helper()
	var c Campaign
	h.do("POST", "/FCC/item/details", id, map[string]int64{"id": campaign}).want(200).decode(&c)
	return c
}

func httptestRequest(h *harness, method, path, contentType, body string) resp {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	req.Header.Set(HeaderScope, "ALL")
	w := httptest.NewRecorder()
	h.h.ServeHTTP(w, req)
	return resp{w, h.t}
}
