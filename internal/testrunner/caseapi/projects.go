package caseapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/fsx"
)

// ProjectsFileName is the file under DataDir that holds the projects.
const ProjectsFileName = "projects.json"

// Limits of project fields. A project name ends up in the project field of
// cases, which testcase caps at 200 characters.
const (
	MaxProjectNameRunes   = 200
	MaxDescriptionRunes   = 2000
	maxProjectsFileLength = 16 << 20
)

// Project is one row of GET /api/projects.
type Project struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	CaseCount   int    `json:"case_count"`
}

type storedProject struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type projectsFile struct {
	Projects []storedProject `json:"projects"`
}

// projects is the project list of projects.json. mu serialises every
// project change and assignment together with the case rewrites they
// make, so two renames cannot interleave their rewrites.
type projects struct {
	path string
	mu   sync.Mutex
	list []storedProject // sorted by name
}

func loadProjects(dataDir string) (*projects, error) {
	p := &projects{path: filepath.Join(dataDir, ProjectsFileName)}
	data, err := readFileMax(p.path, maxProjectsFileLength)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", ProjectsFileName, err)
	}
	// A broken file stops the start instead of being replaced by an empty
	// list at the next change: the descriptions in it are someone's work.
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var pf projectsFile
	if err := dec.Decode(&pf); err != nil {
		return nil, fmt.Errorf("reading %s: %w", p.path, err)
	}
	seen := map[string]bool{}
	for _, sp := range pf.Projects {
		if _, err := projectName(sp.Name); err != nil {
			return nil, fmt.Errorf("reading %s: project %q: %s", p.path, sp.Name, apperr.PublicMessage(err))
		}
		if seen[sp.Name] {
			return nil, fmt.Errorf("reading %s: project %q is listed twice", p.path, sp.Name)
		}
		seen[sp.Name] = true
	}
	p.list = pf.Projects
	sortProjects(p.list)
	return p, nil
}

// find returns the index of name in the list. The caller holds mu.
func (p *projects) find(name string) (int, bool) {
	for i, sp := range p.list {
		if sp.Name == name {
			return i, true
		}
	}
	return -1, false
}

// replace writes list to projects.json and then makes it the current one,
// so a failed write changes nothing. The caller holds mu.
func (p *projects) replace(list []storedProject) error {
	sortProjects(list)
	data, err := json.MarshalIndent(projectsFile{Projects: list}, "", "  ")
	if err != nil {
		return apperr.Internal(fmt.Errorf("encoding projects: %w", err))
	}
	if err := fsx.WriteFileAtomic(p.path, append(data, '\n')); err != nil {
		return apperr.Internal(fmt.Errorf("writing %s: %w", ProjectsFileName, err))
	}
	p.list = list
	return nil
}

// snapshot copies the list. The caller holds mu.
func (p *projects) snapshot() []storedProject {
	return append([]storedProject(nil), p.list...)
}

func sortProjects(list []storedProject) {
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
}

// projectName checks a new project name and returns it without the
// surrounding spaces: 1 to 200 characters, no control characters.
func projectName(s string) (string, error) {
	name := strings.TrimSpace(s)
	switch {
	case name == "":
		return "", apperr.Invalid("INVALID_PROJECT_NAME", "project name is required")
	case !utf8.ValidString(name) || hasControl(name):
		return "", apperr.Invalid("INVALID_PROJECT_NAME", "project name must not contain control characters")
	case utf8.RuneCountInString(name) > MaxProjectNameRunes:
		return "", apperr.Invalid("INVALID_PROJECT_NAME", "project name must be at most %d characters", MaxProjectNameRunes)
	}
	return name, nil
}

// projectDescription checks a description: at most 2000 characters, line
// breaks and tabs but no other control characters.
func projectDescription(s string) (string, error) {
	switch {
	case !utf8.ValidString(s) || hasControl(strings.NewReplacer("\n", "", "\r", "", "\t", "").Replace(s)):
		return "", apperr.Invalid("INVALID_DESCRIPTION", "description must not contain control characters other than line breaks and tabs")
	case utf8.RuneCountInString(s) > MaxDescriptionRunes:
		return "", apperr.Invalid("INVALID_DESCRIPTION", "description must be at most %d characters", MaxDescriptionRunes)
	}
	return s, nil
}

// readFileMax reads a file of at most limit bytes.
func readFileMax(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return data, nil
}
