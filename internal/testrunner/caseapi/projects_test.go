package caseapi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/testcase"
)

func (e *env) projects() []Project {
	e.t.Helper()
	r := e.do("GET", "/api/projects", nil)
	expect(e.t, r, 200, "")
	var out []Project
	r.json(e.t, &out)
	return out
}

func TestProjectCreateAndList(t *testing.T) {
	e := newEnv(t)
	if got := e.projects(); len(got) != 0 {
		t.Fatalf("empty list %v", got)
	}
	r := e.do("POST", "/api/projects", map[string]string{"name": "  Regression  ", "description": "nightly\nset"})
	expect(t, r, 201, "")
	var p Project
	r.json(t, &p)
	if p != (Project{Name: "Regression", Description: "nightly\nset"}) {
		t.Fatalf("created %+v", p)
	}
	expect(t, e.do("POST", "/api/projects", map[string]string{"name": "Smoke"}), 201, "")

	e.writeCase("a.yaml", caseYAML("a", "Regression"))
	e.writeCase("b.yaml", caseYAML("b", "Regression"))
	e.writeCase("c.yaml", caseYAML("c", ""))
	// A project only a case names (imported from a test-management system).
	e.writeCase("d.yaml", caseYAML("d", "Imported"))
	e.writeCase("broken.yaml", "project: Regression\n")

	want := []Project{
		{Name: "Imported", CaseCount: 1},
		{Name: "Regression", Description: "nightly\nset", CaseCount: 2},
		{Name: "Smoke"},
	}
	if got := e.projects(); !reflect.DeepEqual(got, want) {
		t.Fatalf("list\n got %+v\nwant %+v", got, want)
	}

	for _, tc := range []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"duplicate", map[string]string{"name": "Smoke"}, 409, "PROJECT_EXISTS"},
		{"duplicate after trim", map[string]string{"name": " Smoke"}, 409, "PROJECT_EXISTS"},
		{"named by a case", map[string]string{"name": "Imported"}, 409, "PROJECT_EXISTS"},
		{"empty", map[string]string{"name": ""}, 400, "INVALID_PROJECT_NAME"},
		{"blank", map[string]string{"name": " \t "}, 400, "INVALID_PROJECT_NAME"},
		{"missing", map[string]string{"description": "x"}, 400, "INVALID_PROJECT_NAME"},
		{"control character", map[string]string{"name": "a\x00b"}, 400, "INVALID_PROJECT_NAME"},
		{"line break", map[string]string{"name": "a\nb"}, 400, "INVALID_PROJECT_NAME"},
		{"C1 control", map[string]string{"name": "a\u0085b"}, 400, "INVALID_PROJECT_NAME"},
		{"too long", map[string]string{"name": strings.Repeat("n", MaxProjectNameRunes+1)}, 400, "INVALID_PROJECT_NAME"},
		{"description too long", map[string]string{"name": "x", "description": strings.Repeat("d", MaxDescriptionRunes+1)}, 400, "INVALID_DESCRIPTION"},
		{"description control", map[string]string{"name": "x", "description": "a\x07"}, 400, "INVALID_DESCRIPTION"},
		{"unknown field", map[string]string{"name": "x", "owner": "me"}, 400, "INVALID"},
		{"not JSON", "name=x", 400, "INVALID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			expect(t, e.do("POST", "/api/projects", tc.body), tc.status, tc.code)
		})
	}
	// The longest name is accepted and fits a case's project field.
	long := strings.Repeat("é", MaxProjectNameRunes)
	expect(t, e.do("POST", "/api/projects", map[string]string{"name": long}), 201, "")
	expect(t, e.do("POST", "/api/tests/assign-project", map[string]any{"project": long, "files": []string{"c.yaml"}}), 200, "")

	// The projects survive a restart, and the file is the one named.
	api2, err := New(Config{Cases: e.cases, TreesDir: e.treesDir, DataDir: e.dataDir, Guard: identity.Guard{Secret: testSecret}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(api2.projects.list); n != 3 {
		t.Fatalf("reloaded %d stored projects", n)
	}
	var pf projectsFile
	data, _ := os.ReadFile(filepath.Join(e.dataDir, ProjectsFileName))
	if err := json.Unmarshal(data, &pf); err != nil || len(pf.Projects) != 3 {
		t.Fatalf("projects.json: %v %s", err, data)
	}
}

func TestProjectsFileProblemsStopTheStart(t *testing.T) {
	for name, content := range map[string]string{
		"malformed":     `{"projects": [`,
		"unknown field": `{"projects": [], "x": 1}`,
		"duplicate":     `{"projects": [{"name": "a"}, {"name": "a"}]}`,
		"bad name":      `{"projects": [{"name": ""}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			st, err := testcase.OpenStore(filepath.Join(dir, "tests"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ProjectsFileName), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err = New(Config{Cases: st, TreesDir: filepath.Join(dir, "trees"), DataDir: dir, Guard: identity.Guard{Secret: testSecret}})
			if err == nil || !strings.Contains(err.Error(), ProjectsFileName) {
				t.Fatalf("New = %v", err)
			}
		})
	}
}

func TestProjectRename(t *testing.T) {
	e := newEnv(t)
	expect(t, e.do("POST", "/api/projects", map[string]string{"name": "Old", "description": "keep me"}), 201, "")
	expect(t, e.do("POST", "/api/projects", map[string]string{"name": "Other"}), 201, "")
	e.writeCase("a.yaml", caseYAML("a", "Old"))
	e.writeCase("b.yaml", "# comment\n"+caseYAML("b", "Old"))
	e.writeCase("c.yaml", caseYAML("c", "Other"))
	e.writeCase("d.yaml", caseYAML("d", ""))

	r := e.do("PATCH", "/api/projects/Old", map[string]string{"new_name": "New Name"})
	expect(t, r, 200, "")
	var p Project
	r.json(t, &p)
	if p != (Project{Name: "New Name", Description: "keep me", CaseCount: 2}) {
		t.Fatalf("renamed %+v", p)
	}
	for file, want := range map[string]string{"a.yaml": "New Name", "b.yaml": "New Name", "c.yaml": "Other", "d.yaml": ""} {
		if got := e.project(file); got != want {
			t.Fatalf("%s: project %q, want %q", file, got, want)
		}
	}
	want := []Project{{Name: "New Name", Description: "keep me", CaseCount: 2}, {Name: "Other", CaseCount: 1}}
	if got := e.projects(); !reflect.DeepEqual(got, want) {
		t.Fatalf("list %+v", got)
	}

	// Description only; a name in the path with a space and a slash.
	expect(t, e.do("POST", "/api/projects", map[string]string{"name": "A/B"}), 201, "")
	r = e.do("PATCH", "/api/projects/A%2FB", map[string]string{"description": "slashed"})
	expect(t, r, 200, "")
	r = e.do("PATCH", "/api/projects/New%20Name", map[string]any{"new_name": "New Name", "description": ""})
	expect(t, r, 200, "")
	p = Project{}
	r.json(t, &p)
	if p != (Project{Name: "New Name", CaseCount: 2}) {
		t.Fatalf("description cleared: %+v", p)
	}

	// A project only cases name is renamed too, and recorded.
	e.writeCase("e.yaml", caseYAML("e", "Imported"))
	r = e.do("PATCH", "/api/projects/Imported", map[string]string{"new_name": "Adopted", "description": "from TMS"})
	expect(t, r, 200, "")
	if got := e.project("e.yaml"); got != "Adopted" {
		t.Fatalf("e.yaml project %q", got)
	}
	if _, stored := e.api.projects.find("Adopted"); !stored {
		t.Fatal("Adopted not recorded")
	}

	for _, tc := range []struct {
		name, path string
		body       any
		status     int
		code       string
	}{
		{"missing", "/api/projects/Nope", map[string]string{"new_name": "X"}, 404, "PROJECT_NOT_FOUND"},
		{"onto a stored project", "/api/projects/Other", map[string]string{"new_name": "Adopted"}, 409, "PROJECT_EXISTS"},
		{"onto a project cases name", "/api/projects/Other", map[string]string{"new_name": "Stray"}, 409, "PROJECT_EXISTS"},
		{"empty new name", "/api/projects/Other", map[string]string{"new_name": " "}, 400, "INVALID_PROJECT_NAME"},
		{"control character", "/api/projects/Other", map[string]string{"new_name": "a\tb"}, 400, "INVALID_PROJECT_NAME"},
		{"nothing to change", "/api/projects/Other", map[string]string{}, 400, "EMPTY_PATCH"},
		{"unknown field", "/api/projects/Other", map[string]string{"name": "x"}, 400, "INVALID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "onto a project cases name" {
				e.writeCase("stray.yaml", caseYAML("stray", "Stray"))
			}
			expect(t, e.do("PATCH", tc.path, tc.body), tc.status, tc.code)
		})
	}
	if got := e.project("c.yaml"); got != "Other" {
		t.Fatalf("refused renames changed c.yaml: %q", got)
	}
}

// TestProjectChangesUndoOnFailure: when projects.json cannot be written
// after the cases were rewritten, the cases go back, so a failed rename or
// delete leaves no project half changed.
func TestProjectChangesUndoOnFailure(t *testing.T) {
	e := newEnv(t)
	expect(t, e.do("POST", "/api/projects", map[string]string{"name": "P"}), 201, "")
	e.writeCase("a.yaml", caseYAML("a", "P"))
	e.writeCase("b.yaml", caseYAML("b", "P"))
	// A non-empty folder in place of projects.json: renaming the new file
	// over it fails, for root too.
	path := filepath.Join(e.dataDir, ProjectsFileName)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	expect(t, e.do("PATCH", "/api/projects/P", map[string]string{"new_name": "Q"}), 500, "INTERNAL")
	expect(t, e.do("DELETE", "/api/projects/P", nil), 500, "INTERNAL")
	for _, f := range []string{"a.yaml", "b.yaml"} {
		if got := e.project(f); got != "P" {
			t.Fatalf("%s: project %q after a failed change", f, got)
		}
	}
	if got := e.projects(); len(got) != 1 || got[0].Name != "P" || got[0].CaseCount != 2 {
		t.Fatalf("projects %+v", got)
	}
}

func TestProjectDelete(t *testing.T) {
	e := newEnv(t)
	expect(t, e.do("POST", "/api/projects", map[string]string{"name": "Gone"}), 201, "")
	expect(t, e.do("POST", "/api/projects", map[string]string{"name": "Empty"}), 201, "")
	e.writeCase("a.yaml", caseYAML("a", "Gone"))
	e.writeCase("b.yaml", caseYAML("b", "Gone"))
	e.writeCase("c.yaml", caseYAML("c", "Kept"))

	r := e.do("DELETE", "/api/projects/Gone", nil)
	expect(t, r, 200, "")
	var d DeletedProject
	r.json(t, &d)
	if d != (DeletedProject{Deleted: "Gone", Unassigned: 2}) {
		t.Fatalf("deleted %+v", d)
	}
	for file, want := range map[string]string{"a.yaml": "", "b.yaml": "", "c.yaml": "Kept"} {
		if got := e.project(file); got != want {
			t.Fatalf("%s: project %q, want %q", file, got, want)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(e.casesDir, "a.yaml"))
	if strings.Contains(string(raw), "project") {
		t.Fatalf("an Unassigned case keeps a project key:\n%s", raw)
	}
	expect(t, e.do("DELETE", "/api/projects/Empty", nil), 200, "")
	// A project only cases name is deleted by unassigning them.
	expect(t, e.do("DELETE", "/api/projects/Kept", nil), 200, "")
	if got := e.project("c.yaml"); got != "" {
		t.Fatalf("c.yaml project %q", got)
	}
	expect(t, e.do("DELETE", "/api/projects/Gone", nil), 404, "PROJECT_NOT_FOUND")
	if got := e.projects(); len(got) != 0 {
		t.Fatalf("projects left %+v", got)
	}
}

func TestAssignProject(t *testing.T) {
	e := newEnv(t)
	expect(t, e.do("POST", "/api/projects", map[string]string{"name": "P"}), 201, "")
	e.writeCase("a.yaml", caseYAML("a", ""))
	e.writeCase("b.yaml", "# kept comment\n"+caseYAML("b", "P"))
	e.writeCase("c.yaml", caseYAML("c", "Other"))
	e.writeCase("broken.yaml", "id: [\n")

	assign := func(body any) reply { return e.do("POST", "/api/tests/assign-project", body) }
	r := assign(map[string]any{"project": "P", "files": []string{"a.yaml", "b.yaml", "c.yaml", "a.yaml"}})
	expect(t, r, 200, "")
	var got map[string]int
	r.json(t, &got)
	if !reflect.DeepEqual(got, map[string]int{"assigned": 3}) {
		t.Fatalf("answer %v", got)
	}
	for _, f := range []string{"a.yaml", "b.yaml", "c.yaml"} {
		if p := e.project(f); p != "P" {
			t.Fatalf("%s: project %q", f, p)
		}
	}
	if raw, _ := os.ReadFile(filepath.Join(e.casesDir, "b.yaml")); !strings.HasPrefix(string(raw), "# kept comment") {
		t.Fatalf("a case already in the project was rewritten:\n%s", raw)
	}
	if ps := e.projects(); len(ps) != 1 || ps[0].CaseCount != 3 {
		t.Fatalf("projects %+v", ps)
	}

	for _, tc := range []struct {
		name   string
		body   any
		status int
		code   string
		detail string
	}{
		{"unknown project", map[string]any{"project": "Nope", "files": []string{"a.yaml"}}, 404, "PROJECT_NOT_FOUND", "Nope"},
		{"unknown file", map[string]any{"project": "", "files": []string{"a.yaml", "ghost.yaml"}}, 404, "CASE_NOT_FOUND", "ghost.yaml"},
		{"broken file", map[string]any{"project": "", "files": []string{"a.yaml", "broken.yaml"}}, 422, "INVALID_CASE", "broken.yaml"},
		{"traversal", map[string]any{"project": "", "files": []string{"a.yaml", "../x.yaml"}}, 400, "INVALID_FILE_NAME", "../x.yaml"},
		{"no files", map[string]any{"project": "P", "files": []string{}}, 400, "NO_FILES", ""},
		{"no project", map[string]any{"files": []string{"a.yaml"}}, 400, "INVALID_PROJECT_NAME", ""},
		{"unknown field", map[string]any{"project": "P", "files": []string{"a.yaml"}, "all": true}, 400, "INVALID", ""},
		{"files not a list", map[string]any{"project": "P", "files": "a.yaml"}, 400, "INVALID", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := expect(t, assign(tc.body), tc.status, tc.code)
			if !strings.Contains(b.Detail, tc.detail) {
				t.Fatalf("detail %q does not name %q", b.Detail, tc.detail)
			}
			// Nothing half done: a.yaml, listed first, kept its project.
			if p := e.project("a.yaml"); p != "P" {
				t.Fatalf("a.yaml moved to %q by a refused assignment", p)
			}
		})
	}

	// "" unassigns.
	r = assign(map[string]any{"project": "", "files": []string{"a.yaml", "c.yaml"}})
	expect(t, r, 200, "")
	r.json(t, &got)
	if got["assigned"] != 2 || e.project("a.yaml") != "" || e.project("c.yaml") != "" || e.project("b.yaml") != "P" {
		t.Fatalf("unassign: %v", got)
	}
	// A project that only a case names can be assigned to.
	e.writeCase("d.yaml", caseYAML("d", "Imported"))
	expect(t, assign(map[string]any{"project": "Imported", "files": []string{"a.yaml"}}), 200, "")
	if p := e.project("a.yaml"); p != "Imported" {
		t.Fatalf("a.yaml project %q", p)
	}
}

// TestMoveCasesUndo: a move that fails part-way puts the cases it already
// moved back; a case edited or deleted meanwhile is skipped, not an error.
func TestMoveCasesUndo(t *testing.T) {
	e := newEnv(t)
	e.writeCase("a.yaml", caseYAML("a", "P"))
	e.writeCase("b.yaml", caseYAML("b", "P"))
	e.writeCase("broken.yaml", "id: [\n")
	e.writeCase("edited.yaml", caseYAML("edited", "Elsewhere"))

	e.api.projects.mu.Lock()
	_, err := e.api.moveCases([]move{
		{File: "a.yaml", From: "P", To: "Q"},
		{File: "b.yaml", From: "P", To: "Q"},
		{File: "broken.yaml", From: "P", To: "Q"},
	})
	e.api.projects.mu.Unlock()
	if err == nil || !strings.Contains(err.Error(), "broken.yaml") {
		t.Fatalf("moveCases = %v", err)
	}
	for _, f := range []string{"a.yaml", "b.yaml"} {
		if got := e.project(f); got != "P" {
			t.Fatalf("%s not moved back: %q", f, got)
		}
	}

	e.api.projects.mu.Lock()
	moved, err := e.api.moveCases([]move{
		{File: "a.yaml", From: "P", To: "Q"},
		{File: "edited.yaml", From: "P", To: "Q"},
		{File: "deleted.yaml", From: "P", To: "Q"},
	})
	e.api.projects.mu.Unlock()
	if err != nil || !reflect.DeepEqual(moved, []string{"a.yaml"}) {
		t.Fatalf("moveCases = %v, %v", moved, err)
	}
	if got := e.project("edited.yaml"); got != "Elsewhere" {
		t.Fatalf("edited.yaml overwritten: %q", got)
	}
}
