package testcase

import (
	"encoding/json"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Patterns and limits of the validation rules. schema.json repeats them and
// a test keeps the two in step.
const (
	idPattern         = `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`
	serverPattern     = `^[a-z0-9][a-z0-9_-]{0,63}$`
	toolNamePattern   = `^[A-Za-z0-9_.-]{1,128}$`
	maxTitleRunes     = 300
	maxOrgFieldRunes  = 200
	maxTagRunes       = 64
	maxTreeFileLength = 200
)

var (
	idRe       = regexp.MustCompile(idPattern)
	serverRe   = regexp.MustCompile(serverPattern)
	toolNameRe = regexp.MustCompile(toolNamePattern)
)

// Validate checks a case that did not come from YAML, such as a JSON
// request body. Its problems carry no lines.
func (c *Case) Validate() error {
	if c == nil {
		return invalidCase([]Problem{{Message: "a case is required"}})
	}
	p := &problems{}
	validate(c, p, true)
	return p.err()
}

// validate adds the problems of c's content to p, in field order. Parse
// builds arguments from JSON-safe values only, so it saves the JSON check
// (a deep argument tree makes encoding/json slow).
func validate(c *Case, p *problems, checkJSON bool) {
	switch {
	case c.ID == "":
		p.add("id", "required")
	case !idRe.MatchString(c.ID):
		p.add("id", "must match %s (letters, digits, '.', '_' and '-', at most 128)", idPattern)
	}
	switch {
	case strings.TrimSpace(c.Title) == "":
		p.add("title", "required")
	case utf8.RuneCountInString(c.Title) > maxTitleRunes:
		p.add("title", "must be at most %d characters", maxTitleRunes)
	}
	for _, f := range []struct{ name, value string }{
		{"project", c.Project}, {"references", c.References}, {"priority", c.Priority},
		{"type", c.Type}, {"section", c.Section},
	} {
		if utf8.RuneCountInString(f.value) > maxOrgFieldRunes {
			p.add(f.name, "must be at most %d characters", maxOrgFieldRunes)
		}
	}
	for i, tag := range c.Tags {
		switch {
		case strings.TrimSpace(tag) == "":
			p.add(indexPath("tags", i), "must not be empty")
		case utf8.RuneCountInString(tag) > maxTagRunes:
			p.add(indexPath("tags", i), "must be at most %d characters", maxTagRunes)
		}
	}
	if tf := c.EmulatorSetup.TreeFile; tf != "" {
		if msg := treeFileProblem(tf); msg != "" {
			p.add("emulator_setup.tree_file", "%s", msg)
		}
	}
	if len(c.Steps) == 0 {
		p.add("steps", "at least one step is required")
	}
	for i := range c.Steps {
		validateStep(&c.Steps[i], indexPath("steps", i), p, checkJSON)
	}
}

func validateStep(s *Step, path string, p *problems, checkJSON bool) {
	if strings.TrimSpace(s.Action) == "" {
		p.add(path+".action", "required")
	}
	t := s.Tool
	if t == nil {
		return
	}
	path += ".tool"
	switch {
	case t.Server == "":
		p.add(path+".server", "required")
	case !serverRe.MatchString(t.Server):
		p.add(path+".server", "must match %s", serverPattern)
	}
	switch {
	case t.Name == "":
		p.add(path+".name", "required")
	case !toolNameRe.MatchString(t.Name):
		p.add(path+".name", "must match %s", toolNamePattern)
	}
	if checkJSON && t.Arguments != nil {
		// Arguments travel to the tool server as JSON.
		if _, err := json.Marshal(t.Arguments); err != nil {
			p.add(path+".arguments", "cannot be sent as JSON")
		}
	}
	if t.Expect != nil && t.Expect.Matches != "" {
		if _, err := regexp.Compile(t.Expect.Matches); err != nil {
			p.add(path+".expect.matches", "not a valid regular expression: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		}
	}
}

// treeFileProblem says what is wrong with a tree file name, or "" when it
// is a plain .xml file name of the tree folder.
func treeFileProblem(name string) string {
	switch {
	case len(name) > maxTreeFileLength:
		return "must be at most 200 bytes"
	case strings.ContainsAny(name, `/\`) || strings.Contains(name, ".."):
		return "must be a plain file name (no '/', '\\' or '..')"
	case strings.HasPrefix(name, "."):
		return "must not start with '.'"
	case hasControl(name):
		return "must not contain control characters"
	case len(name) <= len(".xml") || !strings.EqualFold(name[len(name)-len(".xml"):], ".xml"):
		return "must be an .xml file name"
	}
	return ""
}

// hasControl reports control characters (and invalid UTF-8, which would
// smuggle bytes past the check).
func hasControl(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return true
		}
	}
	return false
}
