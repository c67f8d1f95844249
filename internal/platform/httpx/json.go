package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"cpesuite/internal/platform/apperr"
)

// DefaultMaxBytes is the request body limit when DecodeOptions.MaxBytes is 0.
const DefaultMaxBytes = 1 << 20

// DecodeOptions tunes DecodeJSON. The zero value is the usual policy: 1 MiB
// limit, unknown fields ignored.
type DecodeOptions struct {
	// MaxBytes limits the body; 0 means DefaultMaxBytes.
	MaxBytes int64
	// DisallowUnknownFields rejects objects with fields v does not have.
	DisallowUnknownFields bool
}

// DecodeJSON decodes the request body, which must hold exactly one JSON
// value, into v. Every client mistake becomes an *apperr.Error with a
// message naming the problem: ErrUnsupportedMedia for a Content-Type other
// than application/json or application/*+json (a missing Content-Type is
// accepted, as many clients omit it), ErrTooLarge above the limit, and
// ErrInvalid for an empty body, malformed JSON, a wrongly typed or unknown
// field, or data after the value.
func DecodeJSON(r *http.Request, v any, opt DecodeOptions) error {
	if err := checkJSONContentType(r.Header.Get("Content-Type")); err != nil {
		return err
	}
	limit := opt.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	if r.ContentLength > limit {
		return tooLarge(limit)
	}
	if r.Body == nil || r.Body == http.NoBody {
		return apperr.Invalid("", "request body is empty")
	}
	// A nil ResponseWriter is allowed: it only costs the hint that makes the
	// server close the connection after an oversized body.
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, limit))
	if opt.DisallowUnknownFields {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return apperr.Invalid("", "request body is empty")
		}
		return decodeError(err, limit)
	}
	// A second value or garbage after the first is a client bug that
	// Decode alone would silently ignore.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge(limit)
		}
		return apperr.Invalid("", "request body must contain a single JSON value")
	}
	return nil
}

func checkJSONContentType(ct string) error {
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
		return nil
	}
	return apperr.New(apperr.ErrUnsupportedMedia, "", "content type %q is not supported; use application/json", ct)
}

func tooLarge(limit int64) error {
	return apperr.New(apperr.ErrTooLarge, "", "request body exceeds %d bytes", limit)
}

func decodeError(err error, limit int64) error {
	var (
		syntaxErr *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
		maxErr    *http.MaxBytesError
		invalid   *json.InvalidUnmarshalError
	)
	switch {
	case errors.As(err, &maxErr):
		return tooLarge(limit)
	case errors.As(err, &syntaxErr):
		return apperr.Wrap(apperr.ErrInvalid, err, "",
			fmt.Sprintf("malformed JSON at offset %d: %s", syntaxErr.Offset, strings.TrimPrefix(syntaxErr.Error(), "json: ")))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return apperr.Wrap(apperr.ErrInvalid, err, "", "malformed JSON: unexpected end of body")
	case errors.As(err, &typeErr):
		want := jsonTypeName(typeErr.Type)
		if want == "number" && strings.HasPrefix(typeErr.Value, "number") {
			return apperr.Wrap(apperr.ErrInvalid, err, "",
				fmt.Sprintf("field %q: %s is out of range", typeErr.Field, typeErr.Value))
		}
		if typeErr.Field == "" {
			return apperr.Wrap(apperr.ErrInvalid, err, "",
				fmt.Sprintf("request body must be a JSON %s, not %s", want, typeErr.Value))
		}
		return apperr.Wrap(apperr.ErrInvalid, err, "",
			fmt.Sprintf("field %q must be a JSON %s, not %s", typeErr.Field, want, typeErr.Value))
	case errors.As(err, &invalid):
		// The caller passed a non-pointer: a programming error, so a 500.
		return apperr.Internal(err)
	}
	// encoding/json reports unknown fields only as text.
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if unq, uerr := strconv.Unquote(name); uerr == nil {
			name = unq
		}
		return apperr.Wrap(apperr.ErrInvalid, err, "", fmt.Sprintf("unknown field %q", name))
	}
	// Anything else is a failure to read the body (client went away).
	return apperr.Wrap(apperr.ErrInvalid, err, "", "could not read request body")
}

// jsonTypeName names the JSON type a Go type decodes from, so messages speak
// the client's language ("number") rather than Go's ("int64").
func jsonTypeName(t reflect.Type) string {
	if t == nil {
		return "value"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Pointer:
		return jsonTypeName(t.Elem())
	}
	return "value"
}

// jsonBuffers recycles response buffers: answers of several megabytes (a
// page of 20,000 devices) otherwise spend a tenth of their CPU growing and
// clearing fresh buffers.
var jsonBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBuffer = 8 << 20

// WriteJSON writes v as JSON with the given status. It encodes into a buffer
// first, so an encoding failure returns an error (a 500 through the
// Adapter) instead of a 200 with half a body.
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	buf := jsonBuffers.Get().(*bytes.Buffer)
	defer func() {
		// Huge buffers are not kept: one 50 MB answer must not pin 50 MB.
		if buf.Cap() <= maxPooledBuffer {
			buf.Reset()
			jsonBuffers.Put(buf)
		}
	}()
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		return apperr.Internal(fmt.Errorf("encoding response: %w", err))
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("writing response: %w", err)
	}
	return nil
}
