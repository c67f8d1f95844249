package caseapi

import (
	"net/http"
	"net/url"
	"strconv"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/testcase"
)

// ErrorCountHeader carries, on every GET /api/tests answer, how many case
// files of the folder could not be read or parsed and are therefore
// missing from the list.
const ErrorCountHeader = "X-Case-Errors"

// CaseView is the JSON view of a stored case: its file name and its fields.
type CaseView struct {
	File string `json:"file"`
	*testcase.Case
}

// CaseList is the answer of GET /api/tests?with_errors=true.
type CaseList struct {
	Tests  []testcase.Summary   `json:"tests"`
	Errors []testcase.FileError `json:"errors"`
}

// Uploaded is the answer of POST /api/tests/upload-yaml.
type Uploaded struct {
	File     string `json:"file"`
	ID       string `json:"id"`
	Title    string `json:"title"`
	Created  bool   `json:"created"`
	Replaced bool   `json:"replaced"`
}

// caseBody is the body of POST /api/tests and PUT /api/tests/{filename}:
// the JSON view, whose file is optional. Unknown fields are refused at
// every level, like unknown keys of a YAML case.
type caseBody struct {
	File string `json:"file"`
	testcase.Case
}

func (a *API) listCases(w http.ResponseWriter, r *http.Request, _ identity.Identity) error {
	withErrors, err := boolQuery(r, "with_errors")
	if err != nil {
		return err
	}
	sums, bad, err := a.cases.List()
	if err != nil {
		return err
	}
	w.Header().Set(ErrorCountHeader, strconv.Itoa(len(bad)))
	if withErrors {
		return httpx.WriteJSON(w, http.StatusOK, CaseList{Tests: sums, Errors: bad})
	}
	return httpx.WriteJSON(w, http.StatusOK, sums)
}

func (a *API) getCase(w http.ResponseWriter, r *http.Request, _ identity.Identity) error {
	file := r.PathValue("filename")
	c, err := a.cases.Get(file)
	if err != nil {
		return testcase.StoredFileError(file, err)
	}
	return httpx.WriteJSON(w, http.StatusOK, CaseView{File: file, Case: c})
}

func (a *API) getCaseYAML(w http.ResponseWriter, r *http.Request, _ identity.Identity) error {
	file := r.PathValue("filename")
	data, err := a.cases.Raw(file)
	if err != nil {
		return testcase.StoredFileError(file, err)
	}
	h := w.Header()
	h.Set("Content-Type", "application/yaml; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(data)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
	return nil
}

func (a *API) createCase(w http.ResponseWriter, r *http.Request, _ identity.Identity) error {
	var body caseBody
	if err := a.decodeCase(r, &body); err != nil {
		return err
	}
	file := body.File
	if file == "" {
		file = testcase.FileNameFor(&body.Case)
	}
	if err := a.cases.Create(file, &body.Case); err != nil {
		return err
	}
	w.Header().Set("Location", "/api/tests/"+url.PathEscape(file))
	return httpx.WriteJSON(w, http.StatusCreated, CaseView{File: file, Case: &body.Case})
}

func (a *API) putCase(w http.ResponseWriter, r *http.Request, _ identity.Identity) error {
	file := r.PathValue("filename")
	if err := testcase.ValidFileName(file); err != nil {
		return err
	}
	var body caseBody
	if err := a.decodeCase(r, &body); err != nil {
		return err
	}
	if body.File != "" && body.File != file {
		return apperr.Invalid("FILE_MISMATCH", "body file %q differs from the file %q in the path; a case is renamed by creating the new file and deleting the old one", body.File, file)
	}
	if err := a.cases.Put(file, &body.Case); err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, CaseView{File: file, Case: &body.Case})
}

func (a *API) decodeCase(r *http.Request, body *caseBody) error {
	return httpx.DecodeJSON(r, body, httpx.DecodeOptions{MaxBytes: a.cfg.MaxUpload, DisallowUnknownFields: true})
}

func (a *API) deleteCase(w http.ResponseWriter, r *http.Request, _ identity.Identity) error {
	file := r.PathValue("filename")
	if err := a.cases.Delete(file); err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, map[string]string{"deleted": file})
}

func (a *API) deleteAllCases(w http.ResponseWriter, _ *http.Request, _ identity.Identity) error {
	n, err := a.cases.DeleteAll()
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, map[string]int{"deleted": n})
}

func (a *API) listSections(w http.ResponseWriter, _ *http.Request, _ identity.Identity) error {
	sections, err := a.cases.Sections()
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, sections)
}

// uploadYAML stores a hand-edited case byte for byte (comments survive)
// after the strict parse: 201 for a new file, 200 for a replaced one.
func (a *API) uploadYAML(w http.ResponseWriter, r *http.Request, _ identity.Identity) error {
	up, err := readUpload(w, r, "file", a.cfg.MaxUpload, "CASE")
	if err != nil {
		return err
	}
	created, err := a.cases.PutRaw(up.Name, up.Data)
	if err != nil {
		return err
	}
	// PutRaw parsed the same bytes successfully.
	c, err := testcase.Parse(up.Data)
	if err != nil {
		return apperr.Internal(err)
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		w.Header().Set("Location", "/api/tests/"+url.PathEscape(up.Name))
	}
	return httpx.WriteJSON(w, status, Uploaded{File: up.Name, ID: c.ID, Title: c.Title, Created: created, Replaced: !created})
}

// boolQuery reads an optional boolean query parameter.
func boolQuery(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, apperr.Invalid("INVALID_QUERY", "query parameter %s must be true or false, not %q", name, v)
	}
	return b, nil
}
