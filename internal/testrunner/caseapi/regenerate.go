package caseapi

import (
	"errors"
	"net/http"

	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/testcase"
)

// Regenerated is the answer of POST /api/tests/{filename}/regenerate.
type Regenerated struct {
	File string `json:"file"`
	// EmulatorSetup is the case's emulator_setup now; Previous what it was.
	EmulatorSetup testcase.EmulatorSetup `json:"emulator_setup"`
	Previous      testcase.EmulatorSetup `json:"previous"`
	// Changed names the fields that changed (tree_file, serial, model);
	// empty when the file was left as it was.
	Changed []string `json:"changed"`
	// UnknownTrees are .xml names the text mentions that are not in the
	// tree folder (upload them, then regenerate again).
	UnknownTrees []string `json:"unknown_trees"`
}

var errUnchanged = errors.New("emulator setup unchanged")

// regenerate derives emulator_setup from the case's own text (deriveSetup)
// and writes the fields it found that differ. A field it finds nothing for
// keeps its value; with nothing to change the file is not rewritten, so
// its comments stay.
func (a *API) regenerate(w http.ResponseWriter, r *http.Request, _ identity.Identity) error {
	file := r.PathValue("filename")
	if err := testcase.ValidFileName(file); err != nil {
		return err
	}
	trees, err := a.trees.names()
	if err != nil {
		return err
	}
	res := Regenerated{File: file, Changed: []string{}, UnknownTrees: []string{}}
	err = a.cases.Update(file, func(c *testcase.Case) error {
		d := deriveSetup(c, trees)
		res.Previous = c.EmulatorSetup
		next := c.EmulatorSetup
		for _, f := range []struct {
			name    string
			cur     *string
			derived string
		}{
			{"tree_file", &next.TreeFile, d.Setup.TreeFile},
			{"serial", &next.Serial, d.Setup.Serial},
			{"model", &next.Model, d.Setup.Model},
		} {
			if f.derived != "" && f.derived != *f.cur {
				*f.cur = f.derived
				res.Changed = append(res.Changed, f.name)
			}
		}
		res.EmulatorSetup = next
		if d.UnknownTrees != nil {
			res.UnknownTrees = d.UnknownTrees
		}
		if len(res.Changed) == 0 {
			return errUnchanged
		}
		c.EmulatorSetup = next
		return nil
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return testcase.StoredFileError(file, err)
	}
	return httpx.WriteJSON(w, http.StatusOK, res)
}
