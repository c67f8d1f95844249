package notes

import (
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"
)

// seed creates the notes the filter tests query, oldest first.
func seed(e *env) {
	e.create(map[string]any{"id": "gauge-rounding", "title": "Gauge rounding", "body": "The speed GAUGE rounds down to whole Mbps.",
		"scope": map[string]any{"widgets": []string{"Speed-Gauge"}, "kpi_types": []string{"download_speed"}}, "severity": "warning", "tags": []string{"ui"}})
	e.create(map[string]any{"id": "mesh-latency", "title": "Mesh latency", "body": "Latency doubles behind a satellite.",
		"scope": map[string]any{"topologies": []string{"mesh"}, "kpi_types": []string{"latency"}, "test_ids": []string{"TC-42"}}, "severity": "critical", "tags": []string{"known-issue", "wifi"}})
	e.create(map[string]any{"id": "everywhere", "title": "Everywhere", "body": "Applies to all runs.",
		"scope": map[string]any{"global": true}, "tags": []string{"process"}})
	e.create(map[string]any{"id": "draft-idea", "title": "Draft idea", "body": "Maybe check jitter.",
		"scope": map[string]any{"kpi_types": []string{"jitter"}}, "status": "draft"})
	e.create(map[string]any{"id": "old-news", "title": "Old news", "body": "Speed gauge fixed in 2.1.",
		"scope": map[string]any{"widgets": []string{"speed-gauge"}}, "tags": []string{"ui"}})
	e.call("DELETE", "/api/notes/old-news", nil, http.StatusOK)
}

func TestListFilters(t *testing.T) {
	e := newEnv(t)
	seed(e)
	tests := []struct {
		query string
		want  []string // ids, newest first
	}{
		{"", []string{"everywhere", "mesh-latency", "gauge-rounding"}},
		{"status=active", []string{"everywhere", "mesh-latency", "gauge-rounding"}},
		{"status=all", []string{"old-news", "draft-idea", "everywhere", "mesh-latency", "gauge-rounding"}},
		{"status=draft", []string{"draft-idea"}},
		{"status=deprecated", []string{"old-news"}},
		{"include_deprecated=true", []string{"old-news", "everywhere", "mesh-latency", "gauge-rounding"}},
		{"include_deprecated=false", []string{"everywhere", "mesh-latency", "gauge-rounding"}},
		{"status=draft&include_deprecated=1", []string{"old-news", "draft-idea"}},
		{"severity=critical", []string{"mesh-latency"}},
		{"severity=info&status=all", []string{"old-news", "draft-idea", "everywhere"}},
		{"scope_widget=speed-gauge", []string{"everywhere", "gauge-rounding"}},
		{"scope_widget=SPEED-GAUGE&include_deprecated=true", []string{"old-news", "everywhere", "gauge-rounding"}},
		{"scope_kpi=latency", []string{"everywhere", "mesh-latency"}},
		{"scope_kpi=Jitter&status=all", []string{"draft-idea", "everywhere"}},
		{"scope_test_id=tc-42", []string{"everywhere", "mesh-latency"}},
		{"scope_topology=mesh", []string{"everywhere", "mesh-latency"}},
		{"scope_topology=bridge", []string{"everywhere"}},
		{"scope_topology=mesh&scope_kpi=latency&scope_test_id=TC-42", []string{"everywhere", "mesh-latency"}},
		{"scope_topology=mesh&scope_widget=speed-gauge", []string{"everywhere"}},
		{"tag=ui", []string{"gauge-rounding"}},
		{"tag=Known%20Issue", []string{"mesh-latency"}},
		{"tag=ui&status=all", []string{"old-news", "gauge-rounding"}},
		{"q=gauge", []string{"gauge-rounding"}},
		{"q=GAUGE&include_deprecated=true", []string{"old-news", "gauge-rounding"}},
		{"q=mesh", []string{"mesh-latency"}},
		{"q=" + url.QueryEscape("behind a SATELLITE"), []string{"mesh-latency"}},
		{"q=nothing-matches", []string{}},
		{"q=gauge&severity=critical", []string{}},
		{"unknown=ignored", []string{"everywhere", "mesh-latency", "gauge-rounding"}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			raw := e.call("GET", "/api/notes?"+tt.query, nil, http.StatusOK)
			if strings.TrimSpace(string(raw)) == "null" {
				t.Fatal("empty list is null, want []")
			}
			var rows []Row
			decodeInto(t, raw, &rows)
			ids := []string{}
			for _, r := range rows {
				ids = append(ids, r.ID)
			}
			if !reflect.DeepEqual(ids, tt.want) {
				t.Fatalf("ids %v, want %v", ids, tt.want)
			}
		})
	}
}

func TestListRejectsBadQueries(t *testing.T) {
	e := newEnv(t)
	for _, q := range []string{
		"status=gone", "severity=fatal", "scope_kpi=bogus", "scope_topology=ring",
		"include_deprecated=maybe", "tag=no$pe", "q=" + strings.Repeat("x", 201),
	} {
		t.Run(q, func(t *testing.T) {
			e.fail("GET", "/api/notes?"+q, nil, http.StatusBadRequest, "INVALID_QUERY")
		})
	}
}

func TestListRows(t *testing.T) {
	e := newEnv(t)
	long := strings.Repeat("word ", 100) // 500 characters
	first := e.create(note("First", "body", "  Line one\n\n\tline   two  ", "tags", []string{"a"}))
	second := e.create(note("Second", "body", long))
	var rows []map[string]any
	decodeInto(t, e.call("GET", "/api/notes", nil, http.StatusOK), &rows)
	if len(rows) != 2 || rows[0]["id"] != second.ID || rows[1]["id"] != first.ID {
		t.Fatalf("rows %v, want newest first", rows)
	}
	want := []string{"id", "title", "snippet", "severity", "status", "scope", "tags", "version", "updated_at"}
	for _, r := range rows {
		if len(r) != len(want) {
			t.Fatalf("row has fields %v, want %v", keys(r), want)
		}
		for _, k := range want {
			if _, ok := r[k]; !ok {
				t.Fatalf("row lacks %s: %v", k, r)
			}
		}
	}
	if s := rows[1]["snippet"]; s != "Line one line two" {
		t.Fatalf("snippet %q", s)
	}
	if s := rows[0]["snippet"].(string); s != strings.TrimSpace(long[:200])+"…" {
		t.Fatalf("long snippet %q", s)
	}
}

// Equal updated_at values fall back to the id order.
func TestListTiesOrderedByID(t *testing.T) {
	e := newEnv(t)
	fixed := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	e.store.now = func() time.Time { return fixed }
	for _, title := range []string{"Charlie", "Alpha", "Bravo"} {
		e.create(note(title))
	}
	var rows []Row
	decodeInto(t, e.call("GET", "/api/notes", nil, http.StatusOK), &rows)
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	if want := []string{"alpha", "bravo", "charlie"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("ids %v, want %v", ids, want)
	}
}

func TestSnippet(t *testing.T) {
	tests := []struct{ in, want string }{
		{"short", "short"},
		{"  a\n\tb  ", "a b"},
		{strings.Repeat("ж", 200), strings.Repeat("ж", 200)},
		{strings.Repeat("ж", 201), strings.Repeat("ж", 200) + "…"},
		{strings.Repeat("x", 199) + " y", strings.Repeat("x", 199) + "…"},
	}
	for _, tt := range tests {
		if got := snippet(tt.in); got != tt.want {
			t.Errorf("snippet(%.20q…) = %.30q…, want %.30q…", tt.in, got, tt.want)
		}
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
