package caseapi

import (
	"net/http"
	"sort"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/testcase"
)

// maxAssignFiles caps the files of one assignment.
const maxAssignFiles = 10000

type createProjectBody struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

type patchProjectBody struct {
	NewName     *string `json:"new_name"`
	Description *string `json:"description"`
}

type assignBody struct {
	Project *string  `json:"project"`
	Files   []string `json:"files"`
}

// DeletedProject is the answer of DELETE /api/projects/{name}.
type DeletedProject struct {
	Deleted string `json:"deleted"`
	// Unassigned counts the cases whose project became "" (Unassigned).
	Unassigned int `json:"unassigned"`
}

// projectCases maps each project named by a parsable case to its files.
func (a *API) projectCases() (map[string][]string, error) {
	sums, _, err := a.cases.List()
	if err != nil {
		return nil, err
	}
	m := map[string][]string{}
	for _, s := range sums {
		if s.Project != "" {
			m[s.Project] = append(m[s.Project], s.File)
		}
	}
	return m, nil
}

func (a *API) listProjects(w http.ResponseWriter, _ *http.Request, _ identity.Identity) error {
	a.projects.mu.Lock()
	defer a.projects.mu.Unlock()
	byProject, err := a.projectCases()
	if err != nil {
		return err
	}
	out := []Project{}
	for _, sp := range a.projects.list {
		out = append(out, Project{Name: sp.Name, Description: sp.Description, CaseCount: len(byProject[sp.Name])})
	}
	for name, files := range byProject {
		if _, stored := a.projects.find(name); !stored {
			out = append(out, Project{Name: name, CaseCount: len(files)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return httpx.WriteJSON(w, http.StatusOK, out)
}

func (a *API) createProject(w http.ResponseWriter, r *http.Request, _ identity.Identity) error {
	var body createProjectBody
	if err := httpx.DecodeJSON(r, &body, httpx.DecodeOptions{DisallowUnknownFields: true}); err != nil {
		return err
	}
	name, err := projectName(body.Name)
	if err != nil {
		return err
	}
	desc, err := projectDescription(body.Description)
	if err != nil {
		return err
	}
	a.projects.mu.Lock()
	defer a.projects.mu.Unlock()
	byProject, err := a.projectCases()
	if err != nil {
		return err
	}
	if err := a.checkFree(name, byProject); err != nil {
		return err
	}
	if err := a.projects.replace(append(a.projects.snapshot(), storedProject{Name: name, Description: desc})); err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusCreated, Project{Name: name, Description: desc})
}

// checkFree refuses a name that is taken by a stored project or by the
// project field of a case. The caller holds projects.mu.
func (a *API) checkFree(name string, byProject map[string][]string) error {
	_, stored := a.projects.find(name)
	if stored || len(byProject[name]) > 0 {
		return apperr.Conflict("PROJECT_EXISTS", "project %s already exists", name)
	}
	return nil
}

// patchProject renames a project and/or changes its description. A rename
// rewrites the project field of every case of the project.
func (a *API) patchProject(w http.ResponseWriter, r *http.Request, _ identity.Identity) error {
	name := r.PathValue("name")
	var body patchProjectBody
	if err := httpx.DecodeJSON(r, &body, httpx.DecodeOptions{DisallowUnknownFields: true}); err != nil {
		return err
	}
	if body.NewName == nil && body.Description == nil {
		return apperr.Invalid("EMPTY_PATCH", "give new_name, description or both")
	}
	target := name
	if body.NewName != nil {
		n, err := projectName(*body.NewName)
		if err != nil {
			return err
		}
		target = n
	}
	var desc *string
	if body.Description != nil {
		d, err := projectDescription(*body.Description)
		if err != nil {
			return err
		}
		desc = &d
	}

	a.projects.mu.Lock()
	defer a.projects.mu.Unlock()
	byProject, err := a.projectCases()
	if err != nil {
		return err
	}
	i, stored := a.projects.find(name)
	files := byProject[name]
	if !stored && len(files) == 0 {
		return projectNotFound(name)
	}
	if target != name {
		if err := a.checkFree(target, byProject); err != nil {
			return err
		}
	}
	next := a.projects.snapshot()
	row := storedProject{Name: target}
	if stored {
		row.Description = next[i].Description
		next = append(next[:i], next[i+1:]...)
	}
	if desc != nil {
		row.Description = *desc
	}
	next = append(next, row)

	moved := files
	if target != name {
		moves := make([]move, len(files))
		for k, f := range files {
			moves[k] = move{File: f, From: name, To: target}
		}
		if moved, err = a.moveCases(moves); err != nil {
			return err
		}
		if err := a.projects.replace(next); err != nil {
			a.undo(movesOf(moved, name, target))
			return err
		}
	} else if err := a.projects.replace(next); err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, Project{Name: row.Name, Description: row.Description, CaseCount: len(moved)})
}

func movesOf(files []string, from, to string) []move {
	out := make([]move, len(files))
	for i, f := range files {
		out[i] = move{File: f, From: from, To: to}
	}
	return out
}

// deleteProject removes a project; its cases become Unassigned.
func (a *API) deleteProject(w http.ResponseWriter, r *http.Request, _ identity.Identity) error {
	name := r.PathValue("name")
	a.projects.mu.Lock()
	defer a.projects.mu.Unlock()
	byProject, err := a.projectCases()
	if err != nil {
		return err
	}
	i, stored := a.projects.find(name)
	files := byProject[name]
	if !stored && len(files) == 0 {
		return projectNotFound(name)
	}
	moved, err := a.moveCases(movesOf(files, name, ""))
	if err != nil {
		return err
	}
	if stored {
		next := a.projects.snapshot()
		if err := a.projects.replace(append(next[:i], next[i+1:]...)); err != nil {
			a.undo(movesOf(moved, name, ""))
			return err
		}
	}
	return httpx.WriteJSON(w, http.StatusOK, DeletedProject{Deleted: name, Unassigned: len(moved)})
}

// assignProject sets the project of the listed cases; project "" makes
// them Unassigned. Every file is checked before any is changed: an invalid
// name is 400, a missing file 404 CASE_NOT_FOUND naming it, a file that
// does not parse 422. A project that neither projects.json nor any case
// holds is 404 PROJECT_NOT_FOUND, like the other project routes. Cases
// already in the project are not rewritten (their comments stay). The
// answer's assigned counts the listed cases that are in the project
// afterwards.
func (a *API) assignProject(w http.ResponseWriter, r *http.Request, _ identity.Identity) error {
	var body assignBody
	if err := httpx.DecodeJSON(r, &body, httpx.DecodeOptions{DisallowUnknownFields: true}); err != nil {
		return err
	}
	if body.Project == nil {
		return apperr.Invalid("INVALID_PROJECT_NAME", `project is required ("" unassigns)`)
	}
	project := *body.Project
	files, err := assignFiles(body.Files)
	if err != nil {
		return err
	}

	a.projects.mu.Lock()
	defer a.projects.mu.Unlock()
	if project != "" {
		byProject, err := a.projectCases()
		if err != nil {
			return err
		}
		if _, stored := a.projects.find(project); !stored && len(byProject[project]) == 0 {
			return projectNotFound(project)
		}
	}
	var moves []move
	for _, f := range files {
		c, err := a.cases.Get(f)
		if err != nil {
			return testcase.StoredFileError(f, err)
		}
		if c.Project != project {
			moves = append(moves, move{File: f, From: c.Project, To: project})
		}
	}
	moved, err := a.moveCases(moves)
	if err != nil {
		return err
	}
	assigned := len(files) - len(moves) + len(moved)
	return httpx.WriteJSON(w, http.StatusOK, map[string]int{"assigned": assigned})
}

// assignFiles checks the file list and drops repeats, keeping the order.
func assignFiles(files []string) ([]string, error) {
	if len(files) == 0 {
		return nil, apperr.Invalid("NO_FILES", "files must name at least one case")
	}
	if len(files) > maxAssignFiles {
		return nil, apperr.Invalid("TOO_MANY_FILES", "at most %d files per assignment", maxAssignFiles)
	}
	seen := make(map[string]bool, len(files))
	out := make([]string, 0, len(files))
	for i, f := range files {
		if err := testcase.ValidFileName(f); err != nil {
			return nil, apperr.Invalid("INVALID_FILE_NAME", "files[%d] %q: %s", i, f, apperr.PublicMessage(err))
		}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out, nil
}

func projectNotFound(name string) error {
	return apperr.NotFound("PROJECT_NOT_FOUND", "project %s not found", name)
}
