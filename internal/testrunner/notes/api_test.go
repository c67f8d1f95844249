package notes

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/testrunner/identity"
)

var everyRoute = []struct{ method, path string }{
	{"GET", "/api/notes"},
	{"POST", "/api/notes"},
	{"GET", "/api/notes/raw"},
	{"GET", "/api/notes/_meta/options"},
	{"POST", "/api/notes/reindex"},
	{"GET", "/api/notes/some-note"},
	{"PUT", "/api/notes/some-note"},
	{"DELETE", "/api/notes/some-note"},
}

func TestEveryRouteNeedsAValidIdentity(t *testing.T) {
	e := newEnv(t)
	e.create(note("Some note"))
	forged := identity.Identity{Username: "mallory", Role: identity.RoleAdmin}
	for _, rt := range everyRoute {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			for name, sign := range map[string]func(*http.Request){
				"missing": func(*http.Request) {},
				"forged": func(r *http.Request) {
					identity.SignRequest([]byte("another-secret-another-secret-xx"), r, forged, time.Now())
				},
				"other path": func(r *http.Request) {
					r.Header.Set(identity.Header, identity.Sign(testSecret, root, r.Method, "/api/other", time.Now()))
				},
			} {
				req, _ := http.NewRequest(rt.method, e.srv.URL+rt.path, strings.NewReader(`{}`))
				sign(req)
				resp, err := e.srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				var body map[string]any
				_ = json.NewDecoder(resp.Body).Decode(&body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized || body["code"] != "UNAUTHENTICATED" {
					t.Fatalf("%s identity: %d %v, want 401 UNAUTHENTICATED", name, resp.StatusCode, body)
				}
				if resp.Header.Get("WWW-Authenticate") == "" {
					t.Fatalf("%s identity: 401 without WWW-Authenticate", name)
				}
			}
		})
	}
	// Nothing was changed by the refused calls.
	if got := e.store.all(); len(got) != 1 || got[0].Version != 1 || got[0].Status != StatusActive {
		t.Fatalf("refused calls changed the store: %+v", got)
	}
}

func TestCreate(t *testing.T) {
	tests := []struct {
		name string
		body map[string]any
		as   identity.Identity
		want Note // ID, Version and UpdatedAt are checked separately
		id   string
	}{
		{
			name: "defaults and caller as creator",
			body: note("Speed gauge rounds down"),
			as:   alice,
			id:   "speed-gauge-rounds-down",
			want: Note{Title: "Speed gauge rounds down", Body: "Body of Speed gauge rounds down",
				Scope:    Scope{TestIDs: []string{}, Widgets: []string{"speed-gauge"}, KPITypes: []string{}, Topologies: []string{}},
				Severity: "info", Status: "active", Tags: []string{}, CreatedBy: "alice"},
		},
		{
			name: "every field given, normalised",
			body: map[string]any{
				"id": "mesh-latency", "title": "  Mesh latency spikes  ", "body": "line one\n\tline two",
				"scope": map[string]any{
					"test_ids": []string{" TC-1 ", "TC-1", "", "TC-2"}, "widgets": []string{},
					"kpi_types": []string{"Latency", "jitter"}, "topologies": []string{"MESH"}, "global": false,
				},
				"severity": "critical", "status": "draft", "tags": []string{"Known  Issue", "wifi", "known-issue", " "},
				"created_by": "qa-lead",
			},
			as: root,
			id: "mesh-latency",
			want: Note{Title: "Mesh latency spikes", Body: "line one\n\tline two",
				Scope:    Scope{TestIDs: []string{"TC-1", "TC-2"}, Widgets: []string{}, KPITypes: []string{"latency", "jitter"}, Topologies: []string{"mesh"}},
				Severity: "critical", Status: "draft", Tags: []string{"known-issue", "wifi"}, CreatedBy: "qa-lead"},
		},
		{
			name: "global scope alone",
			body: map[string]any{"title": "Ünïcode: Ärger mit WLAN!", "body": "b", "scope": map[string]any{"global": true}},
			as:   alice,
			id:   "n-code-rger-mit-wlan",
			want: Note{Title: "Ünïcode: Ärger mit WLAN!", Body: "b",
				Scope:    Scope{TestIDs: []string{}, Widgets: []string{}, KPITypes: []string{}, Topologies: []string{}, Global: true},
				Severity: "info", Status: "active", Tags: []string{}, CreatedBy: "alice"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			resp, raw := e.do(&tt.as, "POST", "/api/notes", tt.body)
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("status %d, want 201: %s", resp.StatusCode, raw)
			}
			var got Note
			decodeInto(t, raw, &got)
			if got.ID != tt.id || got.Version != 1 || got.UpdatedAt.IsZero() || got.UpdatedAt.Location() != time.UTC {
				t.Fatalf("id %q version %d updated_at %v; want id %q, version 1, a UTC time", got.ID, got.Version, got.UpdatedAt, tt.id)
			}
			if loc := resp.Header.Get("Location"); loc != "/api/notes/"+tt.id {
				t.Fatalf("Location %q", loc)
			}
			tt.want.ID, tt.want.Version, tt.want.UpdatedAt = got.ID, got.Version, got.UpdatedAt
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("created\n%+v\nwant\n%+v", got, tt.want)
			}
			var read Note
			decodeInto(t, e.call("GET", "/api/notes/"+tt.id, nil, http.StatusOK), &read)
			if !reflect.DeepEqual(read, got) {
				t.Fatalf("GET answers %+v, POST answered %+v", read, got)
			}
			// updated_at is RFC 3339 in UTC on the wire.
			var wire map[string]any
			decodeInto(t, raw, &wire)
			ts, _ := wire["updated_at"].(string)
			if _, err := time.Parse(time.RFC3339, ts); err != nil || !strings.HasSuffix(ts, "Z") {
				t.Fatalf("updated_at %q is not RFC 3339 UTC", ts)
			}
			// Stored as one private document, in a private directory.
			fi, err := os.Stat(filepath.Join(e.dir, tt.id+".json"))
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("stored document: %v, mode %v", err, fi.Mode())
			}
			di, _ := os.Stat(e.dir)
			if di.Mode().Perm() != 0o700 {
				t.Fatalf("directory mode %v, want 0700", di.Mode().Perm())
			}
		})
	}
}

func TestCreateRejects(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	scope := map[string]any{"widgets": []string{"w"}}
	tests := []struct {
		name   string
		body   any
		status int
		code   string
		detail string // a part of the detail
	}{
		{"no title", map[string]any{"body": "b", "scope": scope}, 400, "TITLE_REQUIRED", "title"},
		{"blank title", note("   "), 400, "TITLE_REQUIRED", "title"},
		{"no body", map[string]any{"title": "t", "scope": scope}, 400, "BODY_REQUIRED", "body"},
		{"blank body", note("t", "body", " \n\t "), 400, "BODY_REQUIRED", "body"},
		{"no scope", map[string]any{"title": "t", "body": "b"}, 400, "SCOPE_REQUIRED", "scope"},
		{"empty scope", note("t", "scope", map[string]any{"widgets": []string{" "}, "global": false}), 400, "SCOPE_REQUIRED", "global"},
		{"bad severity", note("t", "severity", "fatal"), 400, "INVALID_SEVERITY", `"fatal"`},
		{"bad status", note("t", "status", "removed"), 400, "INVALID_STATUS", `"removed"`},
		{"bad kpi type", note("t", "scope", map[string]any{"kpi_types": []string{"latency", "bogus_kpi"}}), 400, "INVALID_KPI_TYPE", `"bogus_kpi"`},
		{"bad topology", note("t", "scope", map[string]any{"topologies": []string{"ring"}}), 400, "INVALID_TOPOLOGY", `"ring"`},
		{"bad tag", note("t", "tags", []string{"ok", "no$pe"}), 400, "INVALID_TAG", "no$pe"},
		{"long tag", note("t", "tags", []string{long(51)}), 400, "INVALID_TAG", "50"},
		{"too many tags", note("t", "tags", distinct(21)), 400, "INVALID_TAG", "20"},
		{"long title", note(long(201)), 400, "INVALID_FIELD", "title"},
		{"long body", note("t", "body", long(20001)), 400, "INVALID_FIELD", "body"},
		{"control character in title", note("a\x07b"), 400, "INVALID_FIELD", "title"},
		{"control character in body", note("t", "body", "a\x00b"), 400, "INVALID_FIELD", "body"},
		{"long created_by", note("t", "created_by", long(101)), 400, "INVALID_FIELD", "created_by"},
		{"too many scope entries", note("t", "scope", map[string]any{"widgets": distinct(51)}), 400, "INVALID_FIELD", "scope.widgets"},
		{"bad explicit id", note("t", "id", "Bad_ID"), 400, "INVALID_ID", "Bad_ID"},
		{"traversing id", note("t", "id", "../x"), 400, "INVALID_ID", "../x"},
		{"reserved id", note("t", "id", "raw"), 400, "INVALID_ID", "reserved"},
		{"long id", note("t", "id", long(65)), 400, "INVALID_ID", "64"},
		{"malformed JSON", `{"title": "t",`, 400, "INVALID", "malformed"},
		{"not an object", `["t"]`, 400, "INVALID", "object"},
		{"empty body", ``, 400, "INVALID", "empty"},
		{"trailing data", `{"title":"t","body":"b","scope":{"global":true}} {}`, 400, "INVALID", "single JSON value"},
		{"unknown field", note("t", "colour", "red"), 400, "INVALID", `"colour"`},
		{"unknown scope field", note("t", "scope", map[string]any{"global": true, "regions": []string{"eu"}}), 400, "INVALID", `"regions"`},
		{"version is not writable", note("t", "version", 7), 400, "INVALID", `"version"`},
		{"expected_version only on PUT", note("t", "expected_version", 1), 400, "INVALID", `"expected_version"`},
		{"wrong type", note("t", "tags", "wifi"), 400, "INVALID", "tags"},
		{"oversize", note("t", "body", long(300<<10)), 413, "TOO_LARGE", "bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			m := e.fail("POST", "/api/notes", tt.body, tt.status, tt.code)
			if d := m["detail"].(string); !strings.Contains(d, tt.detail) {
				t.Fatalf("detail %q does not mention %q", d, tt.detail)
			}
			if n := len(e.store.all()); n != 0 {
				t.Fatalf("a refused create stored %d notes", n)
			}
			if entries, _ := os.ReadDir(e.dir); len(entries) != 0 {
				t.Fatalf("a refused create left files: %v", entries)
			}
		})
	}
}

func TestCreateRefusesOtherContentTypes(t *testing.T) {
	e := newEnv(t)
	req, _ := http.NewRequest("POST", e.srv.URL+"/api/notes", strings.NewReader(`{"title":"t","body":"b","scope":{"global":true}}`))
	req.Header.Set("Content-Type", "text/plain")
	identity.SignRequest(testSecret, req, alice, time.Now())
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("status %d, want 415", resp.StatusCode)
	}
}

func TestSlugCollisionSuffix(t *testing.T) {
	e := newEnv(t)
	var ids []string
	for range 3 {
		ids = append(ids, e.create(note("Wi-Fi: band steering!")).ID)
	}
	if want := []string{"wi-fi-band-steering", "wi-fi-band-steering-2", "wi-fi-band-steering-3"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("ids %v, want %v", ids, want)
	}
	// An explicit id must be free; a derived one takes the next suffix.
	e.fail("POST", "/api/notes", note("x", "id", "wi-fi-band-steering-2"), http.StatusConflict, "NOTE_EXISTS")
	if id := e.create(note("x", "id", "wi-fi-band-steering-4")).ID; id != "wi-fi-band-steering-4" {
		t.Fatalf("explicit id became %q", id)
	}
	if id := e.create(note("Wi-Fi band steering")).ID; id != "wi-fi-band-steering-5" {
		t.Fatalf("next derived id %q, want wi-fi-band-steering-5", id)
	}
	// A deprecated note keeps its id.
	e.call("DELETE", "/api/notes/wi-fi-band-steering", nil, http.StatusOK)
	e.fail("POST", "/api/notes", note("x", "id", "wi-fi-band-steering"), http.StatusConflict, "NOTE_EXISTS")
	// Route words are never derived ids.
	if id := e.create(note("Raw")).ID; id != "raw-2" {
		t.Fatalf("title Raw gave id %q, want raw-2", id)
	}
}

func TestBadPathIDs(t *testing.T) {
	e := newEnv(t)
	e.create(note("Good"))
	for _, p := range []string{"..%2Fx", "..%2F..%2Fetc%2Fpasswd", "Good", "a_b", "a%20b", "-a", "a-", "a--b", "%2E%2E", strings.Repeat("a", 65)} {
		for _, m := range []string{"GET", "PUT", "DELETE"} {
			t.Run(m+" "+p, func(t *testing.T) {
				var body any
				if m == "PUT" {
					body = note("t")
				}
				e.fail(m, "/api/notes/"+p, body, http.StatusBadRequest, "INVALID_ID")
			})
		}
	}
	if n := e.store.all(); len(n) != 1 || n[0].Version != 1 {
		t.Fatalf("bad ids changed the store: %+v", n)
	}
}

func TestGetMissingNote(t *testing.T) {
	e := newEnv(t)
	e.fail("GET", "/api/notes/nothing-here", nil, http.StatusNotFound, "NOTE_NOT_FOUND")
}

func TestOptions(t *testing.T) {
	e := newEnv(t)
	var got map[string][]string
	decodeInto(t, e.call("GET", "/api/notes/_meta/options", nil, http.StatusOK), &got)
	want := map[string][]string{
		"severity":   {"info", "warning", "critical"},
		"status":     {"active", "draft", "deprecated"},
		"kpi_types":  {"download_speed", "upload_speed", "latency", "jitter", "packet_loss", "wifi_signal", "wifi_interference", "user_experience"},
		"topologies": {"gateway_only", "gateway_extender", "mesh", "bridge", "dual_wan"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("options %v, want %v", got, want)
	}
	// Every listed value is accepted on write.
	e.create(note("All values", "severity", "critical", "status", "draft",
		"scope", map[string]any{"kpi_types": want["kpi_types"], "topologies": want["topologies"]}))
}

func TestRawServesEveryNoteInStoredShape(t *testing.T) {
	e := newEnv(t)
	e.create(note("Beta"))
	e.create(note("Alpha", "status", "draft"))
	e.create(note("Gamma"))
	e.call("DELETE", "/api/notes/gamma", nil, http.StatusOK)

	var raw []map[string]any
	decodeInto(t, e.call("GET", "/api/notes/raw", nil, http.StatusOK), &raw)
	var ids []string
	for i, n := range raw {
		ids = append(ids, n["id"].(string))
		// The stored document, byte for byte as a value.
		var stored map[string]any
		b, err := os.ReadFile(filepath.Join(e.dir, n["id"].(string)+".json"))
		if err != nil {
			t.Fatal(err)
		}
		decodeInto(t, b, &stored)
		if !reflect.DeepEqual(n, stored) {
			t.Fatalf("raw[%d] = %v, stored %v", i, n, stored)
		}
	}
	if want := []string{"alpha", "beta", "gamma"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("raw ids %v, want %v (every note, by id)", ids, want)
	}
	if raw[2]["status"] != "deprecated" {
		t.Fatalf("deprecated note shown as %v", raw[2]["status"])
	}
	var fields []string
	for k := range raw[0] {
		fields = append(fields, k)
	}
	if len(fields) != 10 {
		t.Fatalf("stored shape has fields %v, want the 10 note fields", fields)
	}
}

func TestTooManyNotes(t *testing.T) {
	e := newEnv(t)
	e.store.maxNote = 2
	e.create(note("One"))
	e.create(note("Two"))
	e.fail("POST", "/api/notes", note("Three"), http.StatusConflict, "TOO_MANY_NOTES")
	e.call("DELETE", "/api/notes/two?hard=true", nil, http.StatusNoContent)
	e.create(note("Three"))
}
