package caseapi

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"cpesuite/internal/platform/apperr"
)

// maxFormOverhead is what a multipart body may hold besides the file's
// bytes: boundaries, part headers and a few small fields.
const maxFormOverhead = 64 << 10

// maxParts caps the parts read before the file part turns up.
const maxParts = 16

// upload is the file of a multipart form.
type upload struct {
	// Name is the file name exactly as the client sent it. mime/multipart's
	// Part.FileName keeps only the last path element, which would turn
	// "../x.xml" into a harmless-looking "x.xml"; the name is checked as
	// sent instead, so a traversal attempt is refused, not rewritten.
	Name string
	Data []byte
}

// readUpload streams the multipart body of r and returns its part named
// field, which must carry a file name and at most limit bytes. Nothing is
// spooled to disk. codePrefix names the upload in error codes (TREE,
// CASE): an oversized file is 413 <prefix>_TOO_LARGE.
func readUpload(w http.ResponseWriter, r *http.Request, field string, limit int64, codePrefix string) (upload, error) {
	tooLarge := func() error {
		return apperr.New(apperr.ErrTooLarge, codePrefix+"_TOO_LARGE", "the uploaded file exceeds %d bytes", limit)
	}
	if r.ContentLength > limit+maxFormOverhead {
		return upload{}, tooLarge()
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit+maxFormOverhead)
	mr, err := r.MultipartReader()
	if err != nil {
		return upload{}, apperr.Invalid("INVALID_UPLOAD", "the request must be multipart/form-data with a file field %q", field)
	}
	for range maxParts {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return upload{}, readError(err, tooLarge)
		}
		if part.FormName() != field {
			// Other fields are skipped, but their bytes count against the body limit.
			if _, err := io.Copy(io.Discard, part); err != nil {
				return upload{}, readError(err, tooLarge)
			}
			continue
		}
		_, params, _ := mime.ParseMediaType(part.Header.Get("Content-Disposition"))
		name, ok := params["filename"]
		if !ok {
			return upload{}, apperr.Invalid("INVALID_UPLOAD", "form field %q must be a file (with a file name)", field)
		}
		data, err := io.ReadAll(io.LimitReader(part, limit+1))
		if err != nil {
			return upload{}, readError(err, tooLarge)
		}
		if int64(len(data)) > limit {
			return upload{}, tooLarge()
		}
		return upload{Name: name, Data: data}, nil
	}
	return upload{}, apperr.Invalid("INVALID_UPLOAD", "the form has no file field %q", field)
}

func readError(err error, tooLarge func() error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge()
	}
	return apperr.Wrap(apperr.ErrInvalid, fmt.Errorf("reading multipart body: %w", err), "INVALID_UPLOAD", "the multipart body could not be read")
}
