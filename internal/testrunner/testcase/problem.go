package testcase

import (
	"fmt"
	"strings"

	"cpesuite/internal/platform/apperr"
)

// maxProblems caps the problems one error lists, so a megabyte of nonsense
// cannot turn into a response many times its size.
const maxProblems = 100

// Problem is one reason a case document is invalid. Field is a path such as
// "steps[2].tool.name" (empty for the document as a whole); Line is 1-based
// and 0 when unknown, as for JSON bodies.
type Problem struct {
	Field   string `json:"field"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

// String renders the problem the way error messages show it, for example
// "steps[2].tool.name: required (line 14)".
func (p Problem) String() string {
	var b strings.Builder
	if p.Field != "" {
		b.WriteString(p.Field)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	if p.Line > 0 {
		fmt.Fprintf(&b, " (line %d)", p.Line)
	}
	return b.String()
}

// problems collects the problems of one document. lines maps field paths
// to the line they start on, so validation (which sees only the decoded
// Case) can still point at the document; bad marks fields that failed to
// decode, whose zero values would otherwise draw follow-up complaints.
type problems struct {
	list  []Problem
	lines map[string]int
	bad   map[string]bool
	more  int
}

// at records a problem with field's value at a known line; validation
// will not complain about that value again.
func (p *problems) at(field string, line int, format string, args ...any) {
	if p.bad == nil {
		p.bad = map[string]bool{}
	}
	p.bad[field] = true
	p.note(field, line, format, args...)
}

// note records a problem at a known line that leaves field's value usable,
// such as a bad key inside it.
func (p *problems) note(field string, line int, format string, args ...any) {
	if len(p.list) >= maxProblems {
		p.more++
		return
	}
	p.list = append(p.list, Problem{Field: field, Line: line, Message: fmt.Sprintf(format, args...)})
}

// atPath is at for paths spelled out lazily; past the cap it does not
// spell them out at all.
func (p *problems) atPath(path *fieldPath, line int, format string, args ...any) {
	if len(p.list) >= maxProblems {
		p.more++
		return
	}
	p.at(path.String(), line, format, args...)
}

// add records a validation problem; its line is that of the field or, when
// the field is absent, of the nearest enclosing one. Problems under a field
// that failed to decode are dropped: they repeat what was already said.
func (p *problems) add(field, format string, args ...any) {
	for f := field; ; f = parentPath(f) {
		if p.bad[f] {
			return
		}
		if f == "" {
			break
		}
	}
	line := 0
	if p.lines != nil {
		for f := field; ; f = parentPath(f) {
			if l, ok := p.lines[f]; ok {
				line = l
				break
			}
			if f == "" {
				break
			}
		}
	}
	p.note(field, line, format, args...)
}

func (p *problems) push(pr Problem) {
	if len(p.list) >= maxProblems {
		p.more++
		return
	}
	p.list = append(p.list, pr)
}

// err turns the collected problems into the INVALID_CASE error, or nil.
func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	list := p.list
	if p.more > 0 {
		list = append(list[:len(list):len(list)], Problem{Message: fmt.Sprintf("%d more problems not shown", p.more)})
	}
	return invalidCase(list)
}

func invalidCase(list []Problem) error {
	return apperr.Invalid("INVALID_CASE", "%s", list[0].String()).
		WithDetails(map[string]any{"problems": list})
}

// parentPath strips the last segment of a field path: "steps[2].tool" ->
// "steps[2]" -> "steps" -> "".
func parentPath(field string) string {
	i := strings.LastIndexAny(field, ".[")
	if i < 0 {
		return ""
	}
	return field[:i]
}

// indexPath appends a list index to a field path.
func indexPath(path string, i int) string {
	return fmt.Sprintf("%s[%d]", path, i)
}
