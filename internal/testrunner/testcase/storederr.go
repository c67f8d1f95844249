package testcase

import (
	"net/http"

	"cpesuite/internal/platform/apperr"
)

// StoredFileError turns the parse failure of a stored case file (Get,
// Update) into 422 INVALID_CASE or CASE_TOO_LARGE naming the file, with the
// parser's problems: the request was fine, the file is not (someone edited
// it by hand). Other errors pass unchanged.
func StoredFileError(file string, err error) error {
	e, ok := apperr.As(err)
	if !ok || apperr.Status(err) != http.StatusBadRequest && apperr.Status(err) != http.StatusRequestEntityTooLarge {
		return err
	}
	if e.Code != "INVALID_CASE" && e.Code != "CASE_TOO_LARGE" {
		return err
	}
	return apperr.Wrap(apperr.ErrUnprocessable, err, e.Code,
		"stored test case "+file+" is not valid: "+apperr.PublicMessage(err)).WithDetails(e.Details)
}
