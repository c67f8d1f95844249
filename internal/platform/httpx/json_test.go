package httpx_test

import (
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
)

type item struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
	Inner struct {
		Flag bool `json:"flag"`
	} `json:"inner"`
	Small uint8 `json:"small"`
}

func TestDecodeJSON(t *testing.T) {
	tests := []struct {
		name        string
		body        string
		contentType string
		opt         httpx.DecodeOptions
		wantKind    error  // nil means success
		wantMsg     string // substring of the public message
	}{
		{name: "ok", body: `{"name":"a","count":2}`, contentType: "application/json"},
		{name: "ok with charset", body: `{"name":"a"}`, contentType: "application/json; charset=utf-8"},
		{name: "ok +json suffix", body: `{"name":"a"}`, contentType: "application/merge-patch+json"},
		{name: "ok without content type", body: `{"name":"a"}`},
		{name: "ok trailing whitespace", body: "{\"name\":\"a\"}\n\t "},
		{name: "unknown field allowed by default", body: `{"name":"a","extra":1}`},
		{name: "unknown field denied", body: `{"name":"a","extra":1}`, opt: httpx.DecodeOptions{DisallowUnknownFields: true},
			wantKind: apperr.ErrInvalid, wantMsg: `unknown field "extra"`},
		{name: "wrong content type", body: `{}`, contentType: "text/plain",
			wantKind: apperr.ErrUnsupportedMedia, wantMsg: "text/plain"},
		{name: "malformed content type", body: `{}`, contentType: "application/json; =",
			wantKind: apperr.ErrUnsupportedMedia},
		{name: "json suffix outside application", body: `{}`, contentType: "text/x+json",
			wantKind: apperr.ErrUnsupportedMedia},
		{name: "too large", body: `{"name":"` + strings.Repeat("x", 100) + `"}`, opt: httpx.DecodeOptions{MaxBytes: 32},
			wantKind: apperr.ErrTooLarge, wantMsg: "32 bytes"},
		{name: "trailing data too large", body: `{}` + strings.Repeat(" ", 40) + "x", opt: httpx.DecodeOptions{MaxBytes: 32},
			wantKind: apperr.ErrTooLarge},
		{name: "trailing value", body: `{"name":"a"}{"name":"b"}`,
			wantKind: apperr.ErrInvalid, wantMsg: "single JSON value"},
		{name: "trailing garbage", body: `{"name":"a"} x`,
			wantKind: apperr.ErrInvalid, wantMsg: "single JSON value"},
		{name: "empty", body: "",
			wantKind: apperr.ErrInvalid, wantMsg: "request body is empty"},
		{name: "whitespace only", body: "  \n",
			wantKind: apperr.ErrInvalid, wantMsg: "request body is empty"},
		{name: "syntax error", body: `{"name": x}`,
			wantKind: apperr.ErrInvalid, wantMsg: "offset 10"},
		{name: "truncated", body: `{"name": "a"`,
			wantKind: apperr.ErrInvalid, wantMsg: "unexpected end"},
		{name: "type error names the field", body: `{"count":"many"}`,
			wantKind: apperr.ErrInvalid, wantMsg: `field "count" must be a JSON number, not string`},
		{name: "nested type error", body: `{"inner":{"flag":1}}`,
			wantKind: apperr.ErrInvalid, wantMsg: `field "inner.flag" must be a JSON boolean`},
		{name: "out of range", body: `{"small":300}`,
			wantKind: apperr.ErrInvalid, wantMsg: `field "small": number 300 is out of range`},
		{name: "top level not an object", body: `[1,2]`,
			wantKind: apperr.ErrInvalid, wantMsg: "must be a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", "/", strings.NewReader(tt.body))
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			var v item
			err := httpx.DecodeJSON(req, &v, tt.opt)
			if tt.wantKind == nil {
				if err != nil {
					t.Fatalf("DecodeJSON: %v", err)
				}
				if v.Name != "a" {
					t.Fatalf("decoded %+v", v)
				}
				return
			}
			if !errors.Is(err, tt.wantKind) {
				t.Fatalf("err = %v, want kind %v", err, tt.wantKind)
			}
			if msg := apperr.PublicMessage(err); !strings.Contains(msg, tt.wantMsg) {
				t.Fatalf("public message %q does not contain %q", msg, tt.wantMsg)
			}
		})
	}
}

func TestDecodeJSONRejectsDeclaredOversizeWithoutReading(t *testing.T) {
	req := httptest.NewRequest("POST", "/", failingReader{})
	req.ContentLength = httpx.DefaultMaxBytes + 1
	err := httpx.DecodeJSON(req, &item{}, httpx.DecodeOptions{})
	if apperr.Status(err) != http.StatusRequestEntityTooLarge {
		t.Fatalf("err = %v, want 413", err)
	}
}

func TestDecodeJSONNoBody(t *testing.T) {
	req := httptest.NewRequest("POST", "/", nil)
	err := httpx.DecodeJSON(req, &item{}, httpx.DecodeOptions{})
	if apperr.PublicMessage(err) != "request body is empty" {
		t.Fatalf("err = %v", err)
	}
}

func TestDecodeJSONNonPointerIsInternal(t *testing.T) {
	req := httptest.NewRequest("POST", "/", strings.NewReader(`{}`))
	if err := httpx.DecodeJSON(req, item{}, httpx.DecodeOptions{}); apperr.Status(err) != 500 {
		t.Fatalf("err = %v, want a 500 for a programming error", err)
	}
}

func TestDecodeJSONReadFailure(t *testing.T) {
	req := httptest.NewRequest("POST", "/", failingReader{})
	err := httpx.DecodeJSON(req, &item{}, httpx.DecodeOptions{})
	if !errors.Is(err, apperr.ErrInvalid) || strings.Contains(apperr.PublicMessage(err), "connection reset") {
		t.Fatalf("err = %v (public %q)", err, apperr.PublicMessage(err))
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestWriteJSON(t *testing.T) {
	rec := httptest.NewRecorder()
	if err := httpx.WriteJSON(rec, http.StatusCreated, map[string]string{"a": "b"}); err != nil {
		t.Fatal(err)
	}
	if rec.Code != 201 || rec.Header().Get("Content-Type") != "application/json" ||
		rec.Header().Get("Content-Length") != "10" || rec.Body.String() != "{\"a\":\"b\"}\n" {
		t.Fatalf("got %d %v %q", rec.Code, rec.Header(), rec.Body.String())
	}
}

func TestWriteJSONEncodingErrorWritesNothing(t *testing.T) {
	rec := httptest.NewRecorder()
	err := httpx.WriteJSON(rec, http.StatusOK, map[string]float64{"x": math.Inf(1)})
	if apperr.Status(err) != 500 {
		t.Fatalf("err = %v, want a 500 error", err)
	}
	if rec.Body.Len() != 0 || rec.Header().Get("Content-Type") != "" {
		t.Fatalf("wrote a partial response: %q", rec.Body.String())
	}

	// Through the adapter the failure becomes a clean 500.
	rec = httptest.NewRecorder()
	log, _ := newLogger()
	httpx.Adapter{Log: log}.H(func(w http.ResponseWriter, _ *http.Request) error {
		return httpx.WriteJSON(w, http.StatusOK, map[string]any{"ch": make(chan int)})
	})(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != 500 {
		t.Fatalf("status = %d, want 500", rec.Code)
	}
}
