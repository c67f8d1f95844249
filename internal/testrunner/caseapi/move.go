package caseapi

import (
	"errors"
	"net/http"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/testrunner/testcase"
)

// move is one case whose project field changes from From to To.
type move struct {
	File, From, To string
}

// errMoved says a case's project is no longer what the move expected: the
// case was edited (PUT, upload) since it was looked at. It is then left
// alone, like a case deleted meanwhile.
var errMoved = errors.New("case project changed meanwhile")

// moveCases applies the moves one by one through Store.Update, which
// rewrites each file atomically in canonical form. When a move fails for
// another reason, the moves already made are undone before the error is
// returned, so a failed rename, delete or assignment does not leave its
// cases half in one project and half in another. It returns the files
// that moved. The caller holds projects.mu.
func (a *API) moveCases(moves []move) ([]string, error) {
	done := make([]move, 0, len(moves))
	for _, m := range moves {
		err := a.cases.Update(m.File, setProject(m.From, m.To))
		switch {
		case err == nil:
			done = append(done, m)
		case errors.Is(err, errMoved) || apperr.Status(err) == http.StatusNotFound:
		default:
			a.undo(done)
			return nil, testcase.StoredFileError(m.File, err)
		}
	}
	files := make([]string, len(done))
	for i, m := range done {
		files[i] = m.File
	}
	return files, nil
}

func (a *API) undo(done []move) {
	for i := len(done) - 1; i >= 0; i-- {
		m := done[i]
		if err := a.cases.Update(m.File, setProject(m.To, m.From)); err != nil && !errors.Is(err, errMoved) {
			a.log.Error("could not undo a project change of a case", "file", m.File, "project", m.To, "want", m.From, "error", err)
		}
	}
}

func setProject(from, to string) func(*testcase.Case) error {
	return func(c *testcase.Case) error {
		if c.Project != from {
			return errMoved
		}
		c.Project = to
		return nil
	}
}
