package notes

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
)

func TestUpdate(t *testing.T) {
	full := note("Edited title", "severity", "warning", "status", "draft", "tags", []string{"new"}, "created_by", "someone-else",
		"scope", map[string]any{"kpi_types": []string{"jitter"}})
	tests := []struct {
		name   string
		body   map[string]any
		check  func(t *testing.T, before, after Note)
		status int
		code   string
	}{
		{
			name: "full replace", body: full, status: 200,
			check: func(t *testing.T, before, after Note) {
				want := Note{ID: before.ID, Title: "Edited title", Body: "Body of Edited title",
					Scope:    Scope{TestIDs: []string{}, Widgets: []string{}, KPITypes: []string{"jitter"}, Topologies: []string{}},
					Severity: "warning", Status: "draft", Tags: []string{"new"}, CreatedBy: "someone-else",
					Version: 2, UpdatedAt: after.UpdatedAt}
				if !reflect.DeepEqual(after, want) || !after.UpdatedAt.After(before.UpdatedAt) {
					t.Fatalf("after PUT\n%+v\nwant\n%+v", after, want)
				}
			},
		},
		{
			name: "omitted optional fields keep their values", body: note("Edited"), status: 200,
			check: func(t *testing.T, before, after Note) {
				if after.Severity != before.Severity || after.Status != before.Status || after.CreatedBy != before.CreatedBy ||
					!reflect.DeepEqual(after.Tags, before.Tags) || after.Title != "Edited" || after.Version != 2 {
					t.Fatalf("before %+v after %+v", before, after)
				}
			},
		},
		{
			name: "empty tags clear them", body: note("Edited", "tags", []string{}), status: 200,
			check: func(t *testing.T, _, after Note) {
				if len(after.Tags) != 0 || after.Tags == nil {
					t.Fatalf("tags %#v, want []", after.Tags)
				}
			},
		},
		{
			name: "status from body", body: note("Edited", "status", "deprecated"), status: 200,
			check: func(t *testing.T, _, after Note) {
				if after.Status != StatusDeprecated {
					t.Fatalf("status %q", after.Status)
				}
			},
		},
		{name: "matching expected_version", body: note("Edited", "expected_version", 1), status: 200,
			check: func(t *testing.T, _, after Note) {
				if after.Version != 2 {
					t.Fatalf("version %d", after.Version)
				}
			}},
		{name: "same id in body", body: note("Edited", "id", "original"), status: 200},
		{name: "other id in body", body: note("Edited", "id", "renamed"), status: 400, code: "ID_MISMATCH"},
		{name: "title still required", body: note(""), status: 400, code: "TITLE_REQUIRED"},
		{name: "scope still required", body: map[string]any{"title": "t", "body": "b"}, status: 400, code: "SCOPE_REQUIRED"},
		{name: "bad severity", body: note("t", "severity", "low"), status: 400, code: "INVALID_SEVERITY"},
		{name: "unknown field", body: note("t", "version", 1), status: 400, code: "INVALID"},
		{name: "expected_version not a number", body: note("t", "expected_version", "1"), status: 400, code: "INVALID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			before := e.create(note("Original", "severity", "critical", "tags", []string{"old"}))
			if tt.code != "" {
				e.fail("PUT", "/api/notes/original", tt.body, tt.status, tt.code)
				var still Note
				decodeInto(t, e.call("GET", "/api/notes/original", nil, 200), &still)
				if !reflect.DeepEqual(still, before) {
					t.Fatalf("a refused PUT changed the note: %+v", still)
				}
				return
			}
			var after Note
			decodeInto(t, e.call("PUT", "/api/notes/original", tt.body, tt.status), &after)
			if tt.check != nil {
				tt.check(t, before, after)
			}
			// Saved to disk: a fresh store reads the same note.
			e.store.hook.wait()
			e.open()
			var reread Note
			decodeInto(t, e.call("GET", "/api/notes/original", nil, 200), &reread)
			if !reread.UpdatedAt.Equal(after.UpdatedAt) {
				t.Fatalf("reloaded updated_at %v, want %v", reread.UpdatedAt, after.UpdatedAt)
			}
			reread.UpdatedAt = after.UpdatedAt
			if !reflect.DeepEqual(reread, after) {
				t.Fatalf("reloaded %+v, want %+v", reread, after)
			}
		})
	}
}

func TestUpdateVersionConflictBody(t *testing.T) {
	e := newEnv(t)
	e.create(note("Original"))
	e.call("PUT", "/api/notes/original", note("Second", "expected_version", 1), http.StatusOK)
	raw := e.call("PUT", "/api/notes/original", note("Third", "expected_version", 1), http.StatusConflict)
	var got map[string]any
	decodeInto(t, raw, &got)
	want := map[string]any{
		"detail":           "note original is at version 2, not the expected 1; reload it and apply your change again",
		"code":             "VERSION_CONFLICT",
		"current_version":  float64(2),
		"expected_version": float64(1),
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("409 body %s, want %v", raw, want)
	}
	var n Note
	decodeInto(t, e.call("GET", "/api/notes/original", nil, http.StatusOK), &n)
	if n.Title != "Second" || n.Version != 2 {
		t.Fatalf("the conflicting PUT changed the note: %+v", n)
	}
	// Without expected_version the write is unconditional.
	decodeInto(t, e.call("PUT", "/api/notes/original", note("Fourth"), http.StatusOK), &n)
	if n.Version != 3 {
		t.Fatalf("version %d, want 3", n.Version)
	}
}

func TestUpdateMissingNote(t *testing.T) {
	e := newEnv(t)
	e.fail("PUT", "/api/notes/not-there", note("t"), http.StatusNotFound, "NOTE_NOT_FOUND")
	e.fail("PUT", "/api/notes/not-there", note("t", "expected_version", 1), http.StatusNotFound, "NOTE_NOT_FOUND")
	if _, err := os.Stat(filepath.Join(e.dir, "not-there.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("PUT of a missing note created a file: %v", err)
	}
}

// Two editors PUT against the same version at once: exactly one wins.
func TestConcurrentPutsWithSameExpectedVersion(t *testing.T) {
	e := newEnv(t)
	e.create(note("Contended"))
	for round := 1; round <= 20; round++ {
		const writers = 4
		statuses := make([]int, writers)
		bodies := make([][]byte, writers)
		var start, done sync.WaitGroup
		start.Add(1)
		for i := range writers {
			done.Add(1)
			go func() {
				defer done.Done()
				start.Wait()
				resp, body := e.do(&alice, "PUT", "/api/notes/contended", note("Contended", "expected_version", round))
				statuses[i], bodies[i] = resp.StatusCode, body
			}()
		}
		start.Done()
		done.Wait()
		ok, conflicts := 0, 0
		for i, s := range statuses {
			switch s {
			case http.StatusOK:
				ok++
			case http.StatusConflict:
				conflicts++
				var m map[string]any
				if err := json.Unmarshal(bodies[i], &m); err != nil || m["current_version"] != float64(round+1) || m["expected_version"] != float64(round) {
					t.Fatalf("round %d: 409 body %s", round, bodies[i])
				}
			default:
				t.Fatalf("round %d: status %d: %s", round, s, bodies[i])
			}
		}
		if ok != 1 || conflicts != writers-1 {
			t.Fatalf("round %d: %d×200 and %d×409, want 1 and %d", round, ok, conflicts, writers-1)
		}
	}
	n, err := e.store.get("contended")
	if err != nil || n.Version != 21 {
		t.Fatalf("final version %v (%v), want 21", n, err)
	}
}

func TestDelete(t *testing.T) {
	e := newEnv(t)
	created := e.create(note("Retire me"))
	file := filepath.Join(e.dir, "retire-me.json")

	// Soft delete: deprecated, version up, document kept.
	var soft Note
	decodeInto(t, e.call("DELETE", "/api/notes/retire-me", nil, http.StatusOK), &soft)
	if soft.Status != StatusDeprecated || soft.Version != 2 || !soft.UpdatedAt.After(created.UpdatedAt) {
		t.Fatalf("after soft delete: %+v", soft)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("soft delete removed the document: %v", err)
	}
	var rows []Row
	decodeInto(t, e.call("GET", "/api/notes", nil, http.StatusOK), &rows)
	if len(rows) != 0 {
		t.Fatalf("default list shows the deprecated note: %+v", rows)
	}
	decodeInto(t, e.call("GET", "/api/notes?include_deprecated=true", nil, http.StatusOK), &rows)
	if len(rows) != 1 || rows[0].Status != StatusDeprecated {
		t.Fatalf("include_deprecated list: %+v", rows)
	}
	// A second soft delete changes nothing.
	var again Note
	decodeInto(t, e.call("DELETE", "/api/notes/retire-me?hard=false", nil, http.StatusOK), &again)
	if !reflect.DeepEqual(again, soft) {
		t.Fatalf("second soft delete: %+v, want %+v", again, soft)
	}
	// A PUT revives it.
	var revived Note
	decodeInto(t, e.call("PUT", "/api/notes/retire-me", note("Retire me", "status", "active", "expected_version", 2), http.StatusOK), &revived)
	if revived.Status != StatusActive || revived.Version != 3 {
		t.Fatalf("revived: %+v", revived)
	}

	e.fail("DELETE", "/api/notes/retire-me?hard=perhaps", nil, http.StatusBadRequest, "INVALID_QUERY")
	// Hard delete: gone from memory and disk.
	if resp, body := e.do(&alice, "DELETE", "/api/notes/retire-me?hard=true", nil); resp.StatusCode != http.StatusNoContent || len(body) != 0 {
		t.Fatalf("hard delete: %d %q", resp.StatusCode, body)
	}
	if _, err := os.Stat(file); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("hard delete left the document: %v", err)
	}
	e.fail("GET", "/api/notes/retire-me", nil, http.StatusNotFound, "NOTE_NOT_FOUND")
	e.fail("DELETE", "/api/notes/retire-me?hard=true", nil, http.StatusNotFound, "NOTE_NOT_FOUND")
	e.fail("DELETE", "/api/notes/retire-me", nil, http.StatusNotFound, "NOTE_NOT_FOUND")
	// The id is free again, and the hard-deleted note stays gone after a restart.
	e.store.hook.wait()
	e.open()
	e.fail("GET", "/api/notes/retire-me", nil, http.StatusNotFound, "NOTE_NOT_FOUND")
	if id := e.create(note("Retire me")).ID; id != "retire-me" {
		t.Fatalf("id after hard delete: %q", id)
	}
}

func TestSoftDeleteOfADraft(t *testing.T) {
	e := newEnv(t)
	e.create(note("Draft", "status", "draft"))
	var n Note
	decodeInto(t, e.call("DELETE", "/api/notes/draft", nil, http.StatusOK), &n)
	if n.Status != StatusDeprecated || n.Version != 2 {
		t.Fatalf("soft-deleted draft: %+v", n)
	}
}
