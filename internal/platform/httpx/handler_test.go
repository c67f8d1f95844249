package httpx_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
)

func TestAdapterMapsKindsToStatus(t *testing.T) {
	tests := []struct {
		err    error
		status int
		code   string
	}{
		{apperr.Invalid("BAD_ID", "bad id"), 400, "BAD_ID"},
		{apperr.ErrUnauthorized, 401, "UNAUTHORIZED"},
		{apperr.ErrForbidden, 403, "FORBIDDEN"},
		{fmt.Errorf("campaign 7: %w", apperr.ErrNotFound), 404, "NOT_FOUND"},
		{apperr.Conflict("EMULATOR_NOT_STOPPED", "emulator is running"), 409, "EMULATOR_NOT_STOPPED"},
		{apperr.ErrTooLarge, 413, "TOO_LARGE"},
		{apperr.ErrUnsupportedMedia, 415, "UNSUPPORTED_MEDIA"},
		{apperr.ErrUnprocessable, 422, "UNPROCESSABLE"},
		{apperr.ErrTooManyRequests, 429, "TOO_MANY_REQUESTS"},
		{apperr.ErrUpstream, 502, "UPSTREAM"},
		{apperr.ErrUnavailable, 503, "UNAVAILABLE"},
		{errors.New("boom"), 500, "INTERNAL"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			log, _ := newLogger()
			a := httpx.Adapter{Log: log}
			rec := httptest.NewRecorder()
			a.H(func(http.ResponseWriter, *http.Request) error { return tt.err })(rec, httptest.NewRequest("GET", "/", nil))
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d", rec.Code, tt.status)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type = %q", ct)
			}
			if body := decodeBody(t, rec); body["code"] != tt.code || body["message"] == "" {
				t.Fatalf("body = %v, want code %q and a message", body, tt.code)
			}
		})
	}
}

func TestAdapterNilErrorWritesNothingExtra(t *testing.T) {
	rec := httptest.NewRecorder()
	httpx.Adapter{}.H(func(w http.ResponseWriter, _ *http.Request) error {
		return httpx.WriteJSON(w, http.StatusCreated, map[string]int{"id": 1})
	})(rec, httptest.NewRequest("POST", "/", nil))
	if rec.Code != http.StatusCreated || strings.TrimSpace(rec.Body.String()) != `{"id":1}` {
		t.Fatalf("got %d %q", rec.Code, rec.Body.String())
	}
}

func TestAdapter5xxHidesCauseAndLogsIt(t *testing.T) {
	const secret = "dial tcp 10.0.0.5:5432: password=hunter2"
	log, logs := newLogger()
	a := httpx.Adapter{Log: log}
	h := httpx.Chain(a.H(func(http.ResponseWriter, *http.Request) error {
		return fmt.Errorf("loading campaign: %w", errors.New(secret))
	}), httpx.RequestID)

	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/FCC/items", nil)
	req.Header.Set(httpx.RequestIDHeader, "req-123")
	h.ServeHTTP(rec, req)

	if rec.Code != 500 {
		t.Fatalf("status = %d, want 500", rec.Code)
	}
	if strings.Contains(rec.Body.String(), "hunter2") || strings.Contains(rec.Body.String(), "loading campaign") {
		t.Fatalf("body leaks the cause: %s", rec.Body.String())
	}
	if body := decodeBody(t, rec); body["message"] != "internal server error" {
		t.Fatalf("body = %v", body)
	}
	recs := logs.records(t)
	if len(recs) != 1 || recs[0]["level"] != "ERROR" || recs[0]["request_id"] != "req-123" ||
		!strings.Contains(fmt.Sprint(recs[0]["error"]), secret) {
		t.Fatalf("want one ERROR log with request id and full cause, got %v", recs)
	}
}

func TestAdapterUsesServiceErrorWriter(t *testing.T) {
	type seen struct {
		status int
		err    error
	}
	var got seen
	custom := func(w http.ResponseWriter, _ *http.Request, status int, err error) {
		got = seen{status, err}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"errorCode":"custom"}`))
	}
	log, _ := newLogger()
	a := httpx.Adapter{Errors: custom, Log: log}

	cause := errors.New("constraint users_pkey violated")
	rec := httptest.NewRecorder()
	a.H(func(http.ResponseWriter, *http.Request) error {
		return apperr.Wrap(apperr.ErrConflict, cause, "USER_EXISTS", "user exists").WithDetails([]string{"name"})
	})(rec, httptest.NewRequest("POST", "/", nil))

	if rec.Code != 409 || rec.Body.String() != `{"errorCode":"custom"}` {
		t.Fatalf("custom writer not used: %d %q", rec.Code, rec.Body.String())
	}
	e, ok := apperr.As(got.err)
	if !ok || got.status != 409 || e.Code != "USER_EXISTS" || e.Message != "user exists" || e.Details == nil {
		t.Fatalf("writer got status %d err %#v", got.status, got.err)
	}
	if errors.Is(got.err, cause) || strings.Contains(got.err.Error(), "users_pkey") {
		t.Fatalf("writer must receive the public error only, got %q", got.err.Error())
	}
}

func TestAdapterDoesNotWriteTwice(t *testing.T) {
	log, logs := newLogger()
	a := httpx.Adapter{Log: log}
	rec := httptest.NewRecorder()
	a.H(func(w http.ResponseWriter, _ *http.Request) error {
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte("partial"))
		return errors.New("stream broke")
	})(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != http.StatusAccepted || rec.Body.String() != "partial" {
		t.Fatalf("response changed after it started: %d %q", rec.Code, rec.Body.String())
	}
	recs := logs.records(t)
	if len(recs) != 1 || recs[0]["level"] != "WARN" {
		t.Fatalf("want one WARN log, got %v", recs)
	}
}

func TestDefaultErrorWriterSanitizesRawErrors(t *testing.T) {
	rec := httptest.NewRecorder()
	httpx.DefaultErrorWriter(rec, httptest.NewRequest("GET", "/", nil), 500, errors.New("secret detail"))
	if strings.Contains(rec.Body.String(), "secret") {
		t.Fatalf("body leaks: %s", rec.Body.String())
	}
	body := decodeBody(t, rec)
	if body["code"] != "INTERNAL" || body["message"] != "internal server error" {
		t.Fatalf("body = %v", body)
	}
	if _, has := body["details"]; has {
		t.Fatal("details must be omitted when empty")
	}
}
