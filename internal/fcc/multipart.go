package fcc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"cpesuite/internal/platform/apperr"
)

// upload is a multipart form of the serial-list endpoints and the
// configuration import: a required file part and an optional JSON request
// part.
type upload struct {
	file     []byte
	fileName string
	request  []byte // nil when the part is absent
}

// requestPartMax bounds the JSON request part: it holds paging and a few
// filters, never a selection.
const requestPartMax = 1 << 20

func isMultipart(r *http.Request) bool {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return mt == "multipart/form-data"
}

// fileTypes are the content types a file part may declare; an absent one
// is what most clients send.
func fileTypeAccepted(ct string) bool {
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	switch {
	case mt == "application/octet-stream", mt == "application/xml", mt == "text/xml", mt == "text/plain", mt == "text/csv",
		strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+xml"):
		return true
	}
	return false
}

// readUpload reads the whole form within limit (FCC_SERIAL_FILE_MAX_SIZE
// feeds both the request and the file limit). Nothing is stored, so a
// refusal at any point leaves nothing behind.
func readUpload(w http.ResponseWriter, r *http.Request, limit int64) (upload, error) {
	var up upload
	if !isMultipart(r) {
		return up, apperr.New(apperr.ErrUnsupportedMedia, "", "this endpoint takes a multipart/form-data upload with a file part; got Content-Type %q", r.Header.Get("Content-Type"))
	}
	if r.ContentLength > limit {
		return up, tooLarge(limit)
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	mr, err := r.MultipartReader()
	if err != nil {
		return up, invalid("malformed multipart body: %v", err)
	}
	sawFile := false
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return up, uploadError(err, limit)
		}
		switch part.FormName() {
		case "file":
			if sawFile {
				return up, invalid("the multipart form holds more than one file part")
			}
			sawFile = true
			if ct := part.Header.Get("Content-Type"); !fileTypeAccepted(ct) {
				return up, apperr.New(apperr.ErrUnsupportedMedia, "", "the file part's content type %q is not accepted (XML or a plain serial list)", ct)
			}
			if up.file, err = io.ReadAll(io.LimitReader(part, limit+1)); err != nil {
				return up, uploadError(err, limit)
			}
			if int64(len(up.file)) > limit {
				return up, tooLarge(limit)
			}
			up.fileName = part.FileName()
		case "request":
			if up.request != nil {
				return up, invalid("the multipart form holds more than one request part")
			}
			ct := part.Header.Get("Content-Type")
			mt, _, _ := mime.ParseMediaType(ct)
			if mt != "application/json" {
				if ct == "" {
					return up, apperr.New(apperr.ErrUnsupportedMedia, "", "the request part needs its own content type application/json")
				}
				return up, apperr.New(apperr.ErrUnsupportedMedia, "", "the request part's content type %q is not accepted; use application/json", ct)
			}
			b, err := io.ReadAll(io.LimitReader(part, requestPartMax+1))
			if err != nil {
				return up, uploadError(err, limit)
			}
			if len(b) > requestPartMax {
				return up, tooLarge(limit)
			}
			up.request = b
		default:
			return up, invalid("unexpected multipart part %q (expected file and optionally request)", part.FormName())
		}
	}
	if !sawFile {
		return up, invalid("the multipart part file is required")
	}
	return up, nil
}

func uploadError(err error, limit int64) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge(limit)
	}
	return invalid("malformed multipart body: %v", err)
}

// decodePart decodes the JSON request part into v.
func decodePart(b []byte, v any) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		return invalid("request part: %v", jsonProblem(err))
	}
	if dec.More() {
		return invalid("request part must contain a single JSON value")
	}
	return nil
}

// jsonProblem words a JSON decoding error for a client.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return "malformed JSON at offset " + itoa(int(se.Offset))
	case errors.As(err, &te):
		return "field " + te.Field + " must be " + te.Type.String()
	}
	return err.Error()
}
